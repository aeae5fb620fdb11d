/* `ltx2 generate`'s checks of the paths and texts it is given (generate_cli.h), before any work:
 * the embedded model's files, outputs that must be writable and distinct, inputs that must be
 * readable, the text flags, the prompt cache's default place and a Gemma-3 directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/generate_cli.h"
#include "io/file.h"
#include "io/safetensors.h"
#include "model/md_weights.h"
#include "text/gemma_tokenizer.h"

#define CMD CLI_GENERATE_CMD
#define PATH_CAP CLI_GENERATE_PATH_CAP

/* Directory containing the running executable, "" when unknown. */
static void exe_dir(char *buf, size_t cap) {
    buf[0] = '\0';
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0) {
        buf[0] = '\0';
        return;
    }
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash) *slash = '\0';
}

/* Finds rel under the executable's dir, its parent, or the source tree. */
bool cli_generate_find_embedded(const char *rel, char *out, size_t cap) {
    char dir[PATH_CAP];
    exe_dir(dir, sizeof dir);
    const char *bases[3] = {dir, NULL, NULL};
    char parent[PATH_CAP + 4];
    snprintf(parent, sizeof parent, "%s/..", dir);
    bases[1] = parent;
#ifdef LTX2_SOURCE_DIR
    bases[2] = LTX2_SOURCE_DIR;
#endif
    for (int i = 0; i < 3; i++) {
        if (!bases[i] || !bases[i][0]) continue;
        int n = snprintf(out, cap, "%s/%s", bases[i], rel);
        if (n < 0 || (size_t)n >= cap) continue;
        if (ltx2_path_is_file(out)) return true;
    }
    return false;
}

/* The directory that will hold path must exist and be writable. */
bool cli_generate_parent_writable(const char *flag, const char *path) {
    char dir[PATH_CAP];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    if (!ltx2_path_is_dir(dir) || access(dir, W_OK) != 0) {
        fprintf(stderr, "ltx2 %s: %s %s: directory '%s' does not exist or is not writable\n", CMD, flag, path, dir);
        return false;
    }
    if (ltx2_path_is_dir(path)) {
        fprintf(stderr, "ltx2 %s: %s %s is a directory\n", CMD, flag, path);
        return false;
    }
    return true;
}

bool cli_generate_dir_usable(const char *flag, const char *path) {
    if (ltx2_path_is_dir(path)) {
        if (access(path, W_OK) != 0) {
            fprintf(stderr, "ltx2 %s: %s %s is not writable\n", CMD, flag, path);
            return false;
        }
        return true;
    }
    if (ltx2_path_is_file(path)) {
        fprintf(stderr, "ltx2 %s: %s %s exists and is not a directory\n", CMD, flag, path);
        return false;
    }
    return cli_generate_parent_writable(flag, path);
}

bool cli_generate_input_file(const char *flag, const char *path) {
    if (!ltx2_path_is_file(path) || access(path, R_OK) != 0) {
        fprintf(stderr, "ltx2 %s: %s %s: no such readable file\n", CMD, flag, path);
        return false;
    }
    return true;
}

bool cli_generate_md_weights(ltx2_context *ctx, const char *path, const char **ckpts, int *n, int cap) {
    static const char flag[] = "--maxdiffusion-weights";
    if (!cli_generate_input_file(flag, path)) return false;
    ltx2_st_file *f = NULL;
    if (ltx2_st_open(ctx, path, &f) != LTX2_OK) {
        fprintf(stderr, "ltx2 %s: %s %s: %s\n", CMD, flag, path, ltx2_last_error(ctx));
        return false;
    }
    const bool cache = ltx2_md_weights_is_cache(f);
    ltx2_st_close(f);
    if (!cache) {
        fprintf(stderr, "ltx2 %s: %s %s: not a MaxDiffusion converted-weights cache of an LTX-2 DiT (no "
                LTX2_MD_CACHE_MARK "; MaxDiffusion writes one into converted_weights_dir)\n", CMD, flag, path);
        return false;
    }
    if (*n >= cap) {
        fprintf(stderr, "ltx2 %s: more than %d checkpoint files with %s\n", CMD, cap - 1, flag);
        return false;
    }
    ckpts[(*n)++] = path;
    return true;
}

/* The text flags against each other and the prompt itself (valid UTF-8, not empty), before any work. */
bool cli_generate_text_flags_valid(const ltx2_generate_params *p, const char *pos, const char *neg) {
    if (p->context && (p->prompt || pos || neg)) {
        fprintf(stderr, "ltx2 %s: --context replaces --prompt and --prompt-embeds: give one of them\n", CMD);
        return false;
    }
    if (p->prompt && (pos || neg)) {
        fprintf(stderr, "ltx2 %s: --prompt and --prompt-embeds/--negative-prompt-embeds are exclusive\n", CMD);
        return false;
    }
    if ((p->negative_prompt || p->text_encoder) && !p->prompt) {
        fprintf(stderr, "ltx2 %s: %s needs --prompt\n", CMD, p->negative_prompt ? "--negative-prompt" : "--text-encoder");
        return false;
    }
    const char *texts[2] = {p->prompt, p->negative_prompt}, *flags[2] = {"--prompt", "--negative-prompt"};
    for (int i = 0; i < 2; i++) {
        if (!texts[i]) continue;
        const size_t n = strlen(texts[i]), bad = ltx2_utf8_invalid_at(texts[i], n);
        if (bad != n) {
            fprintf(stderr, "ltx2 %s: %s is not valid UTF-8 (byte %zu of %zu)\n", CMD, flags[i], bad, n);
            return false;
        }
    }
    size_t b, e;
    if (p->prompt) ltx2_text_strip(p->prompt, strlen(p->prompt), &b, &e);
    if (p->prompt && b == e) {
        fprintf(stderr, "ltx2 %s: --prompt is empty (or only whitespace): nothing to condition on\n", CMD);
        return false;
    }
    return true;
}

/* The outputs of one run are different paths (compared as given, trailing slashes aside): two
 * flags naming one place would fail only after the whole generation, or overwrite each other. */
bool cli_generate_outputs_distinct(const char *output, const char *wav, const char *png_dir, const char *dump,
                             const char *embeds) {
    const char *path[5] = {output, wav, png_dir, dump, embeds};
    const char *flag[5] = {"--output", "--wav", "--png-dir", "--dump", "--save-prompt-embeds"};
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++) {
            if (!path[i] || !path[j]) continue;
            size_t a = strlen(path[i]), b = strlen(path[j]);
            while (a > 1 && path[i][a - 1] == '/') a--;
            while (b > 1 && path[j][b - 1] == '/') b--;
            if (a == b && !strncmp(path[i], path[j], a)) {
                fprintf(stderr, "ltx2 %s: %s and %s both name %s\n", CMD, flag[i], flag[j], path[i]);
                return false;
            }
        }
    return true;
}

/* $XDG_CACHE_HOME/ltx2c/prompts, else $HOME/.cache/ltx2c/prompts; false without either. */
bool cli_generate_default_text_cache(char *out, size_t cap) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = -1;
    if (xdg && xdg[0] == '/') n = snprintf(out, cap, "%s/ltx2c/prompts", xdg);
    else if (home && home[0]) n = snprintf(out, cap, "%s/.cache/ltx2c/prompts", home);
    return n > 0 && (size_t)n < cap;
}

/* A Gemma-3 directory: its config.json and tokenizer.model are there (the weights are checked when
 * loaded). */
bool cli_generate_text_encoder_usable(const char *dir) {
    const char *need[2] = {"config.json", "tokenizer.model"};
    if (!ltx2_path_is_dir(dir)) {
        fprintf(stderr, "ltx2 %s: --text-encoder %s: not a directory (a Gemma-3 checkpoint directory: config.json, "
                "model*.safetensors, tokenizer.model)\n", CMD, dir);
        return false;
    }
    for (int i = 0; i < 2; i++) {
        char *path = ltx2_path_join(dir, need[i]);
        const bool ok = path && ltx2_path_is_file(path) && access(path, R_OK) == 0;
        if (!ok) fprintf(stderr, "ltx2 %s: --text-encoder %s: no readable %s\n", CMD, dir, need[i]);
        free(path);
        if (!ok) return false;
    }
    return true;
}
