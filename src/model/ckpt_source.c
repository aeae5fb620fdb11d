/* A checkpoint source: one single file, a diffusers directory or split files seen as one single
 * file (see ckpt_source.h). Split files: each key is put under its Lightricks prefix (bare video /
 * audio VAE keys told apart by their conv weights' rank, 5-D video, 4-D audio), components are
 * counted per file, and each config section comes from the file holding that component, else from
 * the one other file that has it (logged), else the open is refused. */
#include "model/ckpt_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/file.h"
#include "io/json.h"
#include "model/detect.h"
#include "model/dit_config.h"
#include "model/md_weights.h"
#include "model/names.h"

#define NAME_CAP 512
#define DIT_PREFIX "model.diffusion_model."
#define N_SECTIONS 4

struct ltx2_ckpt_source {
    ltx2_ckpt_kind kind;
    ltx2_st_set *opened;    /* single file: the set itself */
    ltx2_df_view *df;       /* diffusers directory */
    ltx2_st_file **parts;   /* split files */
    int n_parts;
    ltx2_st_file merged;    /* split files: every tensor renamed, the assembled config */
    ltx2_st_meta meta[1];
    char *config;
    ltx2_st_set view;       /* borrowed set over the diffusers view, the merged file or `over` */
    ltx2_st_file *view_files[1];
    ltx2_md_weights *md;    /* a MaxDiffusion cache in place of the DiT */
    ltx2_st_file over;      /* then: the other components' tensors + the cache's, borrowed names */
};

const ltx2_st_set *ltx2_ckpt_source_set(const ltx2_ckpt_source *s) {
    return !s ? NULL : s->opened && !s->md ? s->opened : &s->view;
}
ltx2_ckpt_kind ltx2_ckpt_source_kind(const ltx2_ckpt_source *s) { return s ? s->kind : LTX2_CKPT_SINGLE_FILE; }

void ltx2_ckpt_source_close(ltx2_ckpt_source *s) {
    if (!s) return;
    ltx2_st_set_close(s->opened);
    ltx2_df_view_close(s->df);
    free(s->view.tensors);
    free(s->view.owners);
    for (size_t i = 0; i < s->merged.n_tensors; i++) free((char *)s->merged.tensors[i].name);
    free(s->merged.tensors);
    free(s->merged.path);
    free(s->config);
    for (int i = 0; i < s->n_parts; i++) ltx2_st_close(s->parts[i]);
    free(s->parts);
    free(s->over.tensors);
    free(s->over.path);
    ltx2_md_weights_close(s->md);
    free(s);
}

/* s->view: one borrowed file, its tensors in name order. */
static ltx2_status make_view(ltx2_context *ctx, ltx2_ckpt_source *s, const ltx2_st_file *f) {
    s->view_files[0] = (ltx2_st_file *)f;
    s->view.n_files = 1;
    s->view.files = s->view_files;
    s->view.n_tensors = f->n_tensors;
    s->view.tensors = malloc((f->n_tensors ? f->n_tensors : 1) * sizeof *s->view.tensors);
    s->view.owners = malloc((f->n_tensors ? f->n_tensors : 1) * sizeof *s->view.owners);
    if (!s->view.tensors || !s->view.owners) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: tensor list", f->path);
    for (size_t i = 0; i < f->n_tensors; i++) {
        s->view.tensors[i] = &f->tensors[i];
        s->view.owners[i] = f;
    }
    return LTX2_OK;
}

static bool starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static ltx2_status md_alone(ltx2_context *ctx, const char *path) {
    return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: a MaxDiffusion converted-weights cache holds the DiT only; "
                      "give it with the checkpoint it was converted from (the diffusers directory: the config and "
                      "the other components)", path);
}

/* The components a whole diffusers directory must have for generation. */
static ltx2_status check_diffusers(ltx2_context *ctx, const char *dir, const ltx2_df_view *v) {
    static const char *const what[LTX2_DF_COUNT] = {"the DiT", "the text connectors", "the video VAE",
                                                    "the audio VAE", "the vocoder"};
    for (int c = 0; c < LTX2_DF_COUNT; c++)
        if (!ltx2_df_view_has(v, (ltx2_df_component)c))
            return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: the diffusers directory has no %s/config.json (%s)", dir,
                              ltx2_df_folder((ltx2_df_component)c), what[c]);
    return LTX2_OK;
}

/* ---- split files ---- */

typedef enum bare_kind { BARE_NONE = 0, BARE_VIDEO_VAE, BARE_AUDIO_VAE } bare_kind;

static const char *const k_dit_roots[] = {"transformer_blocks.", "patchify_proj.", "audio_patchify_proj.",
                                          "adaln_single.", "audio_adaln_single.", "caption_projection.",
                                          "audio_caption_projection.", "proj_out.", "audio_proj_out.",
                                          "scale_shift_table", "audio_scale_shift_table", "av_ca_",
                                          "prompt_adaln_single.", "audio_prompt_adaln_single.",
                                          "video_embeddings_connector.", "audio_embeddings_connector."};
static const char *const k_vocoder_roots[] = {"conv_pre.", "conv_post.", "ups.", "resblocks.", "act_post.",
                                              "vocoder.", "bwe_generator.", "mel_stft."};
static const char *const k_lt_prefixes[] = {DIT_PREFIX, "text_embedding_projection.", "vae.", "audio_vae."};

/* Bare encoder / decoder / per_channel_statistics keys: video (5-D convs) or audio (4-D) VAE. */
static bare_kind bare_vae_kind(const ltx2_st_file *f) {
    static const char *const probes[] = {"decoder.conv_in.conv.weight", "encoder.conv_in.conv.weight"};
    for (size_t i = 0; i < 2; i++) {
        const ltx2_st_tensor *t = ltx2_st_find(f, probes[i]);
        if (t) return t->ndim == 5 ? BARE_VIDEO_VAE : t->ndim == 4 ? BARE_AUDIO_VAE : BARE_NONE;
    }
    return BARE_NONE;
}

/* Lightricks name of key k of file f ("" when it is one already). False: not an LTX-2 key. */
static bool normalise(const ltx2_st_file *f, bare_kind vk, const char *k, char *out, size_t cap) {
    int n = -1;
    if (starts_with(k, DIT_PREFIX "text_embedding_projection."))
        n = snprintf(out, cap, "%s", k + strlen(DIT_PREFIX));
    for (size_t i = 0; n < 0 && i < sizeof k_lt_prefixes / sizeof k_lt_prefixes[0]; i++)
        if (starts_with(k, k_lt_prefixes[i])) n = snprintf(out, cap, "%s", k);
    /* vocoder.: a prefixed vocoder, unless the file is a bare 2.3 vocoder (vocoder.* + bwe_generator.*) */
    if (n < 0 && starts_with(k, "vocoder.")) {
        const bool bare23 = ltx2_st_find(f, "bwe_generator.conv_pre.weight") != NULL;
        n = snprintf(out, cap, "%s%s", bare23 ? "vocoder." : "", k);
    }
    if (n < 0 && (starts_with(k, "encoder.") || starts_with(k, "decoder.") || starts_with(k, "per_channel_statistics."))) {
        if (vk == BARE_NONE) return false;
        n = snprintf(out, cap, "%s%s", vk == BARE_VIDEO_VAE ? "vae." : "audio_vae.", k);
    }
    for (size_t i = 0; n < 0 && i < sizeof k_vocoder_roots / sizeof k_vocoder_roots[0]; i++)
        if (starts_with(k, k_vocoder_roots[i])) n = snprintf(out, cap, "vocoder.%s", k);
    for (size_t i = 0; n < 0 && i < sizeof k_dit_roots / sizeof k_dit_roots[0]; i++)
        if (starts_with(k, k_dit_roots[i])) n = snprintf(out, cap, DIT_PREFIX "%s", k);
    return n >= 0 && (size_t)n < cap;
}

static const char *const k_sections[N_SECTIONS] = {"transformer", "vae", "audio_vae", "vocoder"};
/* the components whose config each section is */
static bool section_needed_by(int sec, ltx2_component c) {
    switch (sec) {
    case 0: return c == LTX2_COMP_TRANSFORMER || c == LTX2_COMP_CONNECTORS || c == LTX2_COMP_TEXT_PROJECTION;
    case 1: return c == LTX2_COMP_VIDEO_VAE;
    case 2: return c == LTX2_COMP_AUDIO_VAE;
    default: return c == LTX2_COMP_VOCODER;
    }
}

static int cmp_tensor(const void *a, const void *b) {
    return strcmp(((const ltx2_st_tensor *)a)->name, ((const ltx2_st_tensor *)b)->name);
}

static ltx2_status open_split(ltx2_context *ctx, ltx2_ckpt_source *s, const char *const *paths, int n) {
    static const ltx2_component needed[] = {LTX2_COMP_TRANSFORMER, LTX2_COMP_CONNECTORS,
                                            LTX2_COMP_TEXT_PROJECTION, LTX2_COMP_VIDEO_VAE,
                                            LTX2_COMP_AUDIO_VAE, LTX2_COMP_VOCODER};
    static const char *const what[LTX2_COMP_COUNT] = {"DiT", "text connectors", "text projection", "video VAE",
                                                      "audio VAE", "vocoder", "latent upsampler", "?"};
    int holder[LTX2_COMP_COUNT];
    for (int c = 0; c < LTX2_COMP_COUNT; c++) holder[c] = -1;
    s->parts = calloc((size_t)n, sizeof *s->parts);
    if (!s->parts) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "split checkpoint: %d files", n);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (ltx2_path_is_dir(paths[i]))
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: a directory among split files (give a diffusers "
                              "directory alone)", paths[i]);
        LTX2_TRY(ltx2_st_open(ctx, paths[i], &s->parts[i]));
        s->n_parts = i + 1;
        if (ltx2_md_weights_is_cache(s->parts[i])) /* alone: ltx2_ckpt_source_open takes it beside others */
            return md_alone(ctx, paths[i]);
        total += s->parts[i]->n_tensors;
    }
    s->merged.tensors = calloc(total ? total : 1, sizeof *s->merged.tensors);
    if (!s->merged.tensors) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "split checkpoint: %zu tensors", total);
    for (int i = 0; i < n; i++) {
        const ltx2_st_file *f = s->parts[i];
        const bare_kind vk = bare_vae_kind(f);
        bool has[LTX2_COMP_COUNT] = {false};
        for (size_t j = 0; j < f->n_tensors; j++) {
            char lt[NAME_CAP];
            if (!normalise(f, vk, f->tensors[j].name, lt, sizeof lt))
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: tensor %.200s is not a key of any LTX-2 component%s",
                                  paths[i], f->tensors[j].name,
                                  vk == BARE_NONE && (starts_with(f->tensors[j].name, "encoder.") ||
                                                      starts_with(f->tensors[j].name, "decoder."))
                                      ? " (bare VAE keys without a conv_in weight: video or audio VAE?)"
                                      : "");
            const ltx2_component c = ltx2_component_of_key(lt);
            if (c == LTX2_COMP_UPSAMPLER || c == LTX2_COMP_OTHER)
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: tensor %.200s is %s", paths[i], f->tensors[j].name,
                                  c == LTX2_COMP_UPSAMPLER ? "a latent upsampler's (give it with "
                                                             "--spatial-upsampler-path)"
                                                           : "not a key of any LTX-2 component");
            has[c] = true;
            ltx2_st_tensor *d = &s->merged.tensors[s->merged.n_tensors];
            *d = f->tensors[j];
            d->name = malloc(strlen(lt) + 1);
            if (!d->name) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "split checkpoint: names");
            memcpy((char *)d->name, lt, strlen(lt) + 1);
            s->merged.n_tensors++;
        }
        for (int c = 0; c < LTX2_COMP_COUNT; c++) {
            if (!has[c]) continue;
            if (holder[c] >= 0)
                return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "split checkpoint: the %s is in both %s and %s", what[c],
                                  paths[holder[c]], paths[i]);
            holder[c] = i;
        }
    }
    char missing[256] = "";
    for (size_t k = 0; k < sizeof needed / sizeof needed[0]; k++)
        if (holder[needed[k]] < 0) {
            const size_t len = strlen(missing);
            snprintf(missing + len, sizeof missing - len, "%s%s", len ? ", " : "", what[needed[k]]);
        }
    if (missing[0]) {
        char files[512] = "";
        for (int i = 0; i < n; i++) {
            const size_t len = strlen(files);
            snprintf(files + len, sizeof files - len, "%s%s", i ? ", " : "", paths[i]);
        }
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "no %s in the given files (%s)", missing, files);
    }
    qsort(s->merged.tensors, s->merged.n_tensors, sizeof *s->merged.tensors, cmp_tensor);
    for (size_t j = 1; j < s->merged.n_tensors; j++)
        if (!strcmp(s->merged.tensors[j - 1].name, s->merged.tensors[j].name))
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "split checkpoint: tensor %s is in two files",
                              s->merged.tensors[j].name);

    /* the config: each section from the file holding its component, else the one other file with it */
    ltx2_json_doc **docs = calloc((size_t)n, sizeof *docs);
    if (!docs) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "split checkpoint: configs");
    ltx2_status st = LTX2_OK;
    for (int i = 0; i < n && st == LTX2_OK; i++)
        if (ltx2_st_meta_get(s->parts[i], "config"))
            st = ltx2_st_meta_json(ctx, s->parts[i], "config", "the model config", &docs[i]);
    ltx2_sbuf cfg = {0};
    ltx2_sbuf_append(&cfg, "{", 1);
    for (int sec = 0; sec < N_SECTIONS && st == LTX2_OK; sec++) {
        int own = -1; /* the file holding the section's first component */
        for (int c = 0; c < LTX2_COMP_COUNT && own < 0; c++)
            if (section_needed_by(sec, (ltx2_component)c) && holder[c] >= 0) {
                const ltx2_json *v = docs[holder[c]] ? ltx2_json_get(ltx2_json_root(docs[holder[c]]), k_sections[sec]) : NULL;
                if (v) own = holder[c];
            }
        int from = own;
        if (from < 0) {
            for (int i = 0; i < n; i++) {
                const ltx2_json *v = docs[i] ? ltx2_json_get(ltx2_json_root(docs[i]), k_sections[sec]) : NULL;
                if (!v) continue;
                if (from >= 0) {
                    ltx2_sbuf a = {0}, b = {0};
                    ltx2_sbuf_json_value(&a, v);
                    ltx2_sbuf_json_value(&b, ltx2_json_get(ltx2_json_root(docs[from]), k_sections[sec]));
                    const bool same = a.buf && b.buf && !strcmp(a.buf, b.buf);
                    ltx2_sbuf_free(&a);
                    ltx2_sbuf_free(&b);
                    if (!same) {
                        st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "split checkpoint: the \"%s\" config differs "
                                        "between %s and %s and the file with its weights has none", k_sections[sec],
                                        paths[from], paths[i]);
                        break;
                    }
                    continue;
                }
                from = i;
            }
            if (st != LTX2_OK) break;
            int holder_file = -1;
            for (int c = 0; c < LTX2_COMP_COUNT && holder_file < 0; c++)
                if (section_needed_by(sec, (ltx2_component)c)) holder_file = holder[c];
            if (from < 0) {
                st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "split checkpoint: no \"%s\" config: none of the given "
                                "files has __metadata__[\"config\"][\"%s\"] (its weights are in %s)", k_sections[sec],
                                k_sections[sec], paths[holder_file]);
                break;
            }
            LTX2_LOGI(ctx, "split checkpoint: the \"%s\" config comes from %s (%s, with its weights, has none)",
                      k_sections[sec], paths[from], paths[holder_file]);
        }
        if (sec) ltx2_sbuf_append(&cfg, ",\n", 2);
        ltx2_sbuf_json_string(&cfg, k_sections[sec], strlen(k_sections[sec]));
        ltx2_sbuf_append(&cfg, ": ", 2);
        ltx2_sbuf_json_value(&cfg, ltx2_json_get(ltx2_json_root(docs[from]), k_sections[sec]));
    }
    ltx2_sbuf_append(&cfg, "}\n", 2);
    for (int i = 0; i < n; i++) ltx2_json_free(docs[i]);
    free(docs);
    if (st == LTX2_OK && cfg.oom) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "split checkpoint: config");
    if (st != LTX2_OK) {
        ltx2_sbuf_free(&cfg);
        return st;
    }
    s->config = cfg.buf;
    s->meta[0].key = "config";
    s->meta[0].value = s->config;
    s->merged.meta = s->meta;
    s->merged.n_meta = 1;
    const size_t plen = strlen(paths[0]) + 1;
    s->merged.path = malloc(plen);
    if (!s->merged.path) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "split checkpoint: label");
    memcpy(s->merged.path, paths[0], plen);
    return make_view(ctx, s, &s->merged);
}

/* A single file with the DiT, both VAEs and the vocoder under their Lightricks prefixes. */
static bool has_every_component(const ltx2_st_set *set) {
    bool has[LTX2_COMP_COUNT] = {false};
    for (size_t i = 0; i < set->n_tensors; i++) has[ltx2_component_of_key(set->tensors[i]->name)] = true;
    return has[LTX2_COMP_TRANSFORMER] && has[LTX2_COMP_VIDEO_VAE] && has[LTX2_COMP_AUDIO_VAE] && has[LTX2_COMP_VOCODER];
}

/* ---- a MaxDiffusion cache in place of the DiT ---- */

static ltx2_status is_md_cache(ltx2_context *ctx, const char *path, bool *yes) {
    *yes = false;
    if (ltx2_path_is_dir(path)) return LTX2_OK;
    ltx2_st_file *f = NULL;
    LTX2_TRY(ltx2_st_open(ctx, path, &f));
    *yes = ltx2_md_weights_is_cache(f);
    ltx2_st_close(f);
    return LTX2_OK;
}

/* s's namespace with the DiT's tensors those of the cache at md_path; the config and every other
 * component stay the checkpoint's. */
static ltx2_status apply_md(ltx2_context *ctx, ltx2_ckpt_source *s, const char *md_path) {
    const ltx2_st_file *base = ltx2_ckpt_source_set(s)->files[0];
    size_t n_dit = 0;
    for (size_t i = 0; i < base->n_tensors; i++) n_dit += ltx2_component_of_key(base->tensors[i].name) == LTX2_COMP_TRANSFORMER;
    ltx2_dit_config cfg;
    LTX2_TRY(ltx2_dit_config_from_st(ctx, base, &cfg));
    LTX2_TRY(ltx2_md_weights_open(ctx, md_path, &s->md));
    const ltx2_st_file *mf = ltx2_md_weights_file(s->md);
    const int64_t want = cfg.num_layers, got = ltx2_md_weights_layers(s->md);
    if (want != got)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s holds a DiT of %lld blocks, the checkpoint %s one of %lld: "
                          "the cache of another model", md_path, (long long)got, base->path, (long long)want);
    s->over.tensors = calloc(base->n_tensors - n_dit + mf->n_tensors + 1, sizeof *s->over.tensors);
    if (!s->over.tensors) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: tensor list", md_path);
    for (size_t i = 0; i < base->n_tensors; i++)
        if (ltx2_component_of_key(base->tensors[i].name) != LTX2_COMP_TRANSFORMER)
            s->over.tensors[s->over.n_tensors++] = base->tensors[i];
    for (size_t i = 0; i < mf->n_tensors; i++) {
        if (ltx2_component_of_key(mf->tensors[i].name) != LTX2_COMP_TRANSFORMER)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: tensor %s is not the DiT's (the cache holds the transformer "
                              "only)", md_path, mf->tensors[i].name);
        s->over.tensors[s->over.n_tensors++] = mf->tensors[i];
    }
    qsort(s->over.tensors, s->over.n_tensors, sizeof *s->over.tensors, cmp_tensor);
    s->over.meta = base->meta;
    s->over.n_meta = base->n_meta;
    const size_t plen = strlen(base->path) + strlen(md_path) + sizeof " with the DiT of ";
    if (!(s->over.path = malloc(plen))) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: label", md_path);
    snprintf(s->over.path, plen, "%s with the DiT of %s", base->path, md_path);
    LTX2_LOGI(ctx, "the DiT's weights: MaxDiffusion's converted-weights cache %s (%lld blocks); config and the "
              "other components: %s", md_path, (long long)got, base->path);
    free(s->view.tensors);
    free(s->view.owners);
    memset(&s->view, 0, sizeof s->view);
    return make_view(ctx, s, &s->over);
}

static ltx2_status open_base(ltx2_context *ctx, ltx2_ckpt_source *s, const char *const *paths, int n) {
    ltx2_status st = LTX2_OK;
    if (n == 1 && ltx2_names_is_diffusers_dir(paths[0])) {
        s->kind = LTX2_CKPT_DIFFUSERS_DIR;
        st = ltx2_df_view_open(ctx, paths[0], &s->df);
        if (st == LTX2_OK) st = check_diffusers(ctx, paths[0], s->df);
        if (st == LTX2_OK) st = make_view(ctx, s, ltx2_df_view_file(s->df));
    } else if (n == 1 && ltx2_path_is_dir(paths[0])) {
        st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: a directory, but not a diffusers LTX-2 directory (no "
                        "transformer/config.json)", paths[0]);
    } else if (n == 1) {
        s->kind = LTX2_CKPT_SINGLE_FILE;
        st = ltx2_st_set_open(ctx, paths[0], &s->opened);
        if (st == LTX2_OK && s->opened->n_files != 1)
            st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: generation needs a single-file checkpoint, a diffusers "
                            "directory or split component files, got %zu shards", paths[0], s->opened->n_files);
        if (st == LTX2_OK && !has_every_component(s->opened)) { /* one component file: the split rules say what */
            ltx2_st_set_close(s->opened);
            s->opened = NULL;
            s->kind = LTX2_CKPT_SPLIT_FILES;
            st = open_split(ctx, s, paths, n);
        }
    } else {
        s->kind = LTX2_CKPT_SPLIT_FILES;
        st = open_split(ctx, s, paths, n);
    }
    return st;
}

ltx2_status ltx2_ckpt_source_open(ltx2_context *ctx, const char *const *paths, int n, ltx2_ckpt_source **out) {
    if (!paths || n < 1 || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "checkpoint: no path given");
    *out = NULL;
    for (int i = 0; i < n; i++)
        if (!paths[i]) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "checkpoint: path %d is NULL", i);
    /* a MaxDiffusion cache among several paths takes the DiT's place in the others (a lone one is
     * refused where a lone file is opened: no second header read of the usual single file) */
    const char **rest = malloc((size_t)n * sizeof *rest);
    if (!rest) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "checkpoint: %d paths", n);
    const char *md = NULL;
    int n_rest = 0;
    ltx2_status st = LTX2_OK;
    for (int i = 0; i < n && st == LTX2_OK; i++) {
        bool yes = false;
        if (n > 1 && (st = is_md_cache(ctx, paths[i], &yes)) != LTX2_OK) break;
        if (yes && md)
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "two MaxDiffusion converted-weights caches (%s, %s): one DiT "
                            "at a time", md, paths[i]);
        else if (yes)
            md = paths[i];
        else
            rest[n_rest++] = paths[i];
    }
    ltx2_ckpt_source *s = st == LTX2_OK ? calloc(1, sizeof *s) : NULL;
    if (st == LTX2_OK && !s) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "checkpoint source");
    if (st == LTX2_OK) st = open_base(ctx, s, rest, n_rest);
    if (st == LTX2_OK && md) st = apply_md(ctx, s, md);
    free(rest);
    if (st != LTX2_OK) {
        ltx2_ckpt_source_close(s);
        return st;
    }
    *out = s;
    return LTX2_OK;
}
