/* Prompt hidden states cached on disk, so a repeated prompt skips Gemma: one prompt-embeds file
 * (what --prompt-embeds reads) per key, key = SHA-256 of the prompt, the token length and the
 * encoder's fingerprint. The fingerprint covers config.json and tokenizer.model whole, and of each
 * weight file its name, size, modification time, safetensors header and a 4 KiB sample every
 * 16 MiB: hashing all of a 24 GB encoder per run would cost more than running it on a GPU, and a
 * file changed in place changes its time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/sha256.h"
#include "io/file.h"
#include "pipeline/pipeline.h"

#define CACHE_VERSION "ltx2c text cache v1"
#define SAMPLE_BYTES 4096
#define SAMPLE_STRIDE ((int64_t)16 << 20)
/* The safetensors header is 8 length bytes then the JSON; cap what is hashed of it. */
#define HEADER_CAP ((uint64_t)64 << 20)

static void hash_u64(ltx2_sha256 *s, uint64_t v) { ltx2_sha256_update(s, &v, sizeof v); }

/* A whole small file into the hash (its size first). */
static ltx2_status hash_file(ltx2_context *ctx, ltx2_sha256 *s, const char *path) {
    char *buf = NULL;
    size_t n = 0;
    LTX2_TRY(ltx2_file_read_all(ctx, path, &buf, &n));
    hash_u64(s, n);
    ltx2_sha256_update(s, buf, n);
    free(buf);
    return LTX2_OK;
}

/* A weight file: name, size, mtime, header, samples. */
static ltx2_status hash_weights(ltx2_context *ctx, ltx2_sha256 *s, const char *path) {
    FILE *f = fopen(path, "rb");
    struct stat sb;
    if (!f || fstat(fileno(f), &sb) != 0) {
        const int e = errno;
        if (f) fclose(f);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "text cache: %s: %s", path, strerror(e));
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    ltx2_sha256_update(s, base, strlen(base) + 1);
    hash_u64(s, (uint64_t)sb.st_size);
    hash_u64(s, (uint64_t)sb.st_mtim.tv_sec);
    hash_u64(s, (uint64_t)sb.st_mtim.tv_nsec);
    uint8_t buf[SAMPLE_BYTES];
    uint64_t hlen = 0;
    size_t got = fread(buf, 1, 8, f);
    for (size_t i = 0; i < got; i++) hlen |= (uint64_t)buf[i] << (8 * i);
    ltx2_sha256_update(s, buf, got);
    if (hlen > HEADER_CAP) hlen = HEADER_CAP;
    for (uint64_t left = hlen; left > 0;) {
        const size_t take = left < SAMPLE_BYTES ? (size_t)left : SAMPLE_BYTES;
        const size_t r = fread(buf, 1, take, f);
        if (r == 0) break;
        ltx2_sha256_update(s, buf, r);
        left -= r;
    }
    for (int64_t off = 0; off < (int64_t)sb.st_size; off += SAMPLE_STRIDE) {
        if (fseeko(f, (off_t)off, SEEK_SET) != 0) break;
        const size_t r = fread(buf, 1, SAMPLE_BYTES, f);
        ltx2_sha256_update(s, buf, r);
    }
    fclose(f);
    return LTX2_OK;
}

ltx2_status ltx2_text_cache_open(ltx2_context *ctx, const char *cache_dir, const char *encoder_dir, const char *variant,
                                 ltx2_text_cache *out) {
    memset(out, 0, sizeof *out);
    if (snprintf(out->dir, sizeof out->dir, "%s", cache_dir) >= (int)sizeof out->dir)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "text cache: directory name too long: %s", cache_dir);
    ltx2_sha256 s;
    ltx2_sha256_init(&s);
    ltx2_sha256_update(&s, CACHE_VERSION, sizeof CACHE_VERSION);
    if (variant) ltx2_sha256_update(&s, variant, strlen(variant) + 1);
    const char *small[2] = {"config.json", "tokenizer.model"};
    ltx2_status st = LTX2_OK;
    for (int i = 0; st == LTX2_OK && i < 2; i++) {
        char *p = ltx2_path_join(encoder_dir, small[i]);
        st = p ? hash_file(ctx, &s, p) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "text cache: path");
        free(p);
    }
    ltx2_st_set *set = NULL;
    if (st == LTX2_OK) st = ltx2_st_set_open(ctx, encoder_dir, &set);
    for (size_t i = 0; st == LTX2_OK && i < set->n_files; i++) st = hash_weights(ctx, &s, set->files[i]->path);
    ltx2_st_set_close(set);
    if (st != LTX2_OK) return st;
    ltx2_sha256_hex(&s, out->fingerprint);
    return LTX2_OK;
}

void ltx2_text_cache_path(const ltx2_text_cache *c, const char *prompt, int64_t tokens, char *path, size_t cap) {
    ltx2_sha256 s;
    ltx2_sha256_init(&s);
    ltx2_sha256_update(&s, c->fingerprint, sizeof c->fingerprint);
    hash_u64(&s, (uint64_t)tokens);
    ltx2_sha256_update(&s, prompt, strlen(prompt));
    char key[65];
    ltx2_sha256_hex(&s, key);
    snprintf(path, cap, "%s/%s.safetensors", c->dir, key);
}

/* mkdir -p of dir (0777 before the umask). */
ltx2_status ltx2_text_cache_mkdir(ltx2_context *ctx, const char *dir) {
    char p[LTX2_TEXT_CACHE_PATH_CAP];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "text cache: directory name too long: %s", dir);
    for (char *q = p + 1;; q++) {
        const bool end = *q == '\0';
        if (*q == '/' || end) {
            *q = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return LTX2_ERROR(ctx, LTX2_ERR_IO, "text cache: cannot create %s: %s", p, strerror(errno));
            if (end) break;
            *q = '/';
        }
    }
    if (!ltx2_path_is_dir(dir)) return LTX2_ERROR(ctx, LTX2_ERR_IO, "text cache: %s is not a directory", dir);
    return LTX2_OK;
}
