/* DiT weight loading: the config implies a list of (name, shape, destination); every entry is
 * looked up, checked and converted into one allocation on the target backend (host f32 directly,
 * a device through a staging buffer of one tensor), then the file is scanned for DiT tensors nobody
 * asked for. All problems are gathered first so one message names them. The replicated variant
 * walks the same list but leaves the blocks' attention / FFN tensors (flagged `layer`) unloaded: a
 * tensor-parallel rank reads only its shard of those (model/dit_shard_load.c). The same list also
 * drives the backend copy (ltx2_dit_weights_to) and the random weights. */
#include "model/dit_weights.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/fp8_cast.h"
#include "model/lora.h"
#include "model/names.h"
#include "model/weight_fetch.h"

/* Sub-trees under model.diffusion_model. that belong to the text connectors, not the DiT. */
static const char *const k_connector_prefixes[] = {"video_embeddings_connector.", "audio_embeddings_connector."};
/* Audio latent width when the config lacks it (ltx-core's default; every LTX-2 audio VAE: 8 ch x 16 mel). */
#define DEFAULT_AUDIO_IN_CHANNELS 128

#define NAME_CAP LTX2_WNAME_CAP

/* Every DiT Linear has a bias (attention_bias true in every config). */
static void add_linear(ltx2_wtable *l, const char *p, int64_t out, int64_t in, ltx2_dit_linear *lin) {
    ltx2_wtable_add_linear(l, p, out, in, true, lin);
}

static void add_adaln(ltx2_wtable *l, const char *p, int64_t dim, int64_t rows, ltx2_dit_adaln_w *a) {
    char n[NAME_CAP];
    a->dim = dim;
    a->rows = rows;
    snprintf(n, sizeof n, "%s.emb.timestep_embedder.linear_1", p);
    add_linear(l, n, dim, LTX2_DIT_TIMESTEP_CHANNELS, &a->l1);
    snprintf(n, sizeof n, "%s.emb.timestep_embedder.linear_2", p);
    add_linear(l, n, dim, dim, &a->l2);
    snprintf(n, sizeof n, "%s.linear", p);
    add_linear(l, n, rows * dim, dim, &a->lin);
}

static void add_attn(ltx2_wtable *l, const char *blk, const char *name, int64_t qdim, int64_t cdim, int64_t heads,
                     int64_t head_dim, bool gated, ltx2_dit_attn_w *a) {
    char n[NAME_CAP];
    int64_t inner = heads * head_dim;
    a->heads = heads;
    a->head0 = 0;
    a->heads_total = heads;
    a->head_dim = head_dim;
    a->query_dim = qdim;
    a->context_dim = cdim;
    snprintf(n, sizeof n, "%s.%s.to_q", blk, name);
    add_linear(l, n, inner, qdim, &a->q);
    snprintf(n, sizeof n, "%s.%s.to_k", blk, name);
    add_linear(l, n, inner, cdim, &a->k);
    snprintf(n, sizeof n, "%s.%s.to_v", blk, name);
    add_linear(l, n, inner, cdim, &a->v);
    snprintf(n, sizeof n, "%s.%s.to_out.0", blk, name);
    add_linear(l, n, qdim, inner, &a->o);
    snprintf(n, sizeof n, "%s.%s.q_norm.weight", blk, name);
    ltx2_wtable_add(l, n, 1, inner, 0, &a->q_norm);
    snprintf(n, sizeof n, "%s.%s.k_norm.weight", blk, name);
    ltx2_wtable_add(l, n, 1, inner, 0, &a->k_norm);
    if (gated) {
        snprintf(n, sizeof n, "%s.%s.to_gate_logits", blk, name);
        add_linear(l, n, heads, qdim, &a->gate);
    }
}

static void add_ff(ltx2_wtable *l, const char *blk, const char *name, int64_t dim, ltx2_dit_ff_w *f) {
    char n[NAME_CAP];
    snprintf(n, sizeof n, "%s.%s.net.0.proj", blk, name);
    add_linear(l, n, 4 * dim, dim, &f->proj_in);
    snprintf(n, sizeof n, "%s.%s.net.2", blk, name);
    add_linear(l, n, dim, 4 * dim, &f->proj_out);
}

static void build_list(ltx2_wtable *l, ltx2_dit_weights *w) {
    const ltx2_dit_config *c = &w->cfg;
    const int64_t Dv = c->inner_dim, Da = c->audio_inner_dim, k = c->adaln_rows;
    add_linear(l, "patchify_proj", Dv, c->in_channels, &w->patchify);
    add_linear(l, "audio_patchify_proj", Da, c->audio_in_channels, &w->audio_patchify);
    if (c->caption_projection) {
        add_linear(l, "caption_projection.linear_1", Dv, c->caption_channels, &w->caption1);
        add_linear(l, "caption_projection.linear_2", Dv, Dv, &w->caption2);
        add_linear(l, "audio_caption_projection.linear_1", Da, c->caption_channels, &w->audio_caption1);
        add_linear(l, "audio_caption_projection.linear_2", Da, Da, &w->audio_caption2);
    }
    add_adaln(l, "adaln_single", Dv, k, &w->adaln);
    add_adaln(l, "audio_adaln_single", Da, k, &w->audio_adaln);
    if (c->cross_attention_adaln) {
        add_adaln(l, "prompt_adaln_single", Dv, 2, &w->prompt_adaln);
        add_adaln(l, "audio_prompt_adaln_single", Da, 2, &w->audio_prompt_adaln);
    }
    add_adaln(l, "av_ca_video_scale_shift_adaln_single", Dv, 4, &w->av_video_ss);
    add_adaln(l, "av_ca_audio_scale_shift_adaln_single", Da, 4, &w->av_audio_ss);
    add_adaln(l, "av_ca_a2v_gate_adaln_single", Dv, 1, &w->av_a2v_gate);
    add_adaln(l, "av_ca_v2a_gate_adaln_single", Da, 1, &w->av_v2a_gate);
    ltx2_wtable_add(l, "scale_shift_table", 2, 2, Dv, &w->sst);
    ltx2_wtable_add(l, "audio_scale_shift_table", 2, 2, Da, &w->audio_sst);
    add_linear(l, "proj_out", c->out_channels, Dv, &w->proj_out);
    add_linear(l, "audio_proj_out", c->audio_out_channels, Da, &w->audio_proj_out);
    const bool g = c->apply_gated_attention;
    for (int64_t i = 0; i < c->num_layers; i++) {
        ltx2_dit_block_w *b = &w->blocks[i];
        char p[64], n[NAME_CAP];
        snprintf(p, sizeof p, "transformer_blocks.%lld", (long long)i);
        const size_t n0 = l->n;
        add_attn(l, p, "attn1", Dv, Dv, c->heads, c->head_dim, g, &b->attn1);
        add_attn(l, p, "attn2", Dv, c->cross_attention_dim, c->heads, c->head_dim, g, &b->attn2);
        add_attn(l, p, "audio_attn1", Da, Da, c->audio_heads, c->audio_head_dim, g, &b->audio_attn1);
        add_attn(l, p, "audio_attn2", Da, c->audio_cross_attention_dim, c->audio_heads, c->audio_head_dim, g,
                 &b->audio_attn2);
        /* Both A/V directions use the audio heads and head dim (inner = Da). */
        add_attn(l, p, "audio_to_video_attn", Dv, Da, c->audio_heads, c->audio_head_dim, g, &b->a2v);
        add_attn(l, p, "video_to_audio_attn", Da, Dv, c->audio_heads, c->audio_head_dim, g, &b->v2a);
        add_ff(l, p, "ff", Dv, &b->ff);
        add_ff(l, p, "audio_ff", Da, &b->audio_ff);
        ltx2_wtable_mark_layers(l, n0);
        snprintf(n, sizeof n, "%s.scale_shift_table", p);
        ltx2_wtable_add(l, n, 2, k, Dv, &b->sst);
        snprintf(n, sizeof n, "%s.audio_scale_shift_table", p);
        ltx2_wtable_add(l, n, 2, k, Da, &b->audio_sst);
        snprintf(n, sizeof n, "%s.scale_shift_table_a2v_ca_video", p);
        ltx2_wtable_add(l, n, 2, 5, Dv, &b->sst_a2v_video);
        snprintf(n, sizeof n, "%s.scale_shift_table_a2v_ca_audio", p);
        ltx2_wtable_add(l, n, 2, 5, Da, &b->sst_a2v_audio);
        if (c->cross_attention_adaln) {
            snprintf(n, sizeof n, "%s.prompt_scale_shift_table", p);
            ltx2_wtable_add(l, n, 2, 2, Dv, &b->prompt_sst);
            snprintf(n, sizeof n, "%s.audio_prompt_scale_shift_table", p);
            ltx2_wtable_add(l, n, 2, 2, Da, &b->audio_prompt_sst);
        }
    }
}

static bool is_connector(const char *rel) {
    for (size_t i = 0; i < sizeof(k_connector_prefixes) / sizeof(k_connector_prefixes[0]); i++)
        if (strncmp(rel, k_connector_prefixes[i], strlen(k_connector_prefixes[i])) == 0) return true;
    return false;
}

/* A file tensor under the DiT prefix that is not a connector's is the DiT's. */
static bool dit_owns(const char *name, const void *user) {
    const char *prefix = user;
    const size_t plen = strlen(prefix);
    return strncmp(name, prefix, plen) == 0 && !is_connector(name + plen);
}

/* A weights struct for cfg with its blocks, no tensors yet (the caller may still adjust w->cfg). */
static ltx2_status weights_new(ltx2_context *ctx, const ltx2_dit_config *cfg, ltx2_dit_weights **out) {
    ltx2_dit_weights *w = calloc(1, sizeof *w);
    if (!w) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit weights: struct");
    w->cfg = *cfg;
    w->blocks = calloc((size_t)cfg->num_layers, sizeof *w->blocks);
    if (!w->blocks) {
        free(w);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit weights: %lld blocks", (long long)cfg->num_layers);
    }
    *out = w;
    return LTX2_OK;
}

/* How a load lays its table out: everything in dtype; as the file allows (bf16 Linear weights kept,
 * on the CPU as views of the file: ltx2_wstore_layout_for; with fp8, its scaled fp8 ones kept fp8);
 * its scaled fp8 ones kept fp8 and the rest in dtype (a LoRA-fused fp8 load); or every block's
 * Linear weights fp8 with no file (benches). */
typedef enum layout_mode { LAYOUT_PLAIN, LAYOUT_FILE, LAYOUT_FILE_FP8, LAYOUT_FP8_FROM, LAYOUT_FP8_ALL } layout_mode;

/* The table of w->cfg, laid out on be in dtype as mode says (f and prefix for the file modes). */
static ltx2_status weights_layout(ltx2_context *ctx, ltx2_dit_weights *w, ltx2_wtable *l, bool skip_layers,
                                  const ltx2_backend *be, ltx2_dtype dtype, const ltx2_st_file *f, const char *prefix,
                                  layout_mode mode) {
    build_list(l, w);
    if (mode == LAYOUT_FP8_ALL)
        LTX2_TRY(ltx2_wstore_layout_fp8(ctx, &w->store, l, be, dtype));
    else if (mode == LAYOUT_FP8_FROM)
        LTX2_TRY(ltx2_wstore_layout_fp8_from(ctx, &w->store, l, be, dtype, f, prefix));
    else if (mode != LAYOUT_PLAIN)
        LTX2_TRY(ltx2_wstore_layout_for(ctx, &w->store, l, be, dtype, f, prefix, skip_layers, mode == LAYOUT_FILE_FP8));
    else
        LTX2_TRY(ltx2_wstore_layout(ctx, &w->store, l, be, dtype, skip_layers));
    w->be = be;
    w->dtype = dtype;
    w->layers_skipped = skip_layers;
    return LTX2_OK;
}

/* keep_bf16: the single-process forward's weights (Linear weights stay as the file's bf16 on the
 * CPU); the replicated and sliced copies of the parallel path stay all f32. */
static ltx2_status fuse_lora(ltx2_context *ctx, const char *name, float *w, int64_t out, int64_t in, void *user) {
    return ltx2_lora_fuse(ctx, user, name, w, out, in);
}

static ltx2_status fuse_lora_fp8(ltx2_context *ctx, const char *name, float *w, int64_t out, int64_t in, bool *changed,
                                 void *user) {
    return ltx2_lora_fuse_fp8(ctx, user, name, w, out, in, changed);
}

/* How one load treats the file's values. */
typedef struct load_opts {
    bool skip_layers; /* the replicated copy: the layer tensors are read by shard later */
    bool keep_bf16;   /* the file's bf16 Linear weights stay bf16 (on the CPU as views of the mapping) */
    bool keep_fp8;    /* the file's scaled fp8 Linear weights stay fp8 */
    bool cast_fp8;    /* ltx-core's fp8_cast policy on the loaded values (fp8_cast.h); not with loras */
} load_opts;
static const load_opts LOAD_F32 = {false, false, false, false}, LOAD_AS_FILE = {false, true, false, false};

static ltx2_status load(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype, const ltx2_st_file *f,
                        const char *prefix, const ltx2_dit_config *cfg, load_opts o, ltx2_lora_set *loras,
                        ltx2_dit_weights **out) {
    const bool skip_layers = o.skip_layers, keep_fp8 = o.keep_fp8, cast_fp8 = o.cast_fp8;
    bool keep_bf16 = o.keep_bf16;
    if (!be || !f || !cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit weights: NULL argument");
    *out = NULL;
    if (!prefix) prefix = LTX2_DIT_PREFIX;
    ltx2_dit_weights *w = NULL;
    LTX2_TRY(weights_new(ctx, cfg, &w));
    char full[NAME_CAP + 64];
    if (w->cfg.audio_in_channels == 0) {
        /* Real metadata has no audio_in_channels: the input projection's shape says it. */
        snprintf(full, sizeof full, "%saudio_patchify_proj.weight", prefix);
        const ltx2_st_tensor *t = ltx2_st_find(f, full);
        w->cfg.audio_in_channels = (t && t->ndim == 2 && t->shape[1] > 0) ? t->shape[1] : 128;
    }
    ltx2_wtable l = {0};
    if (cast_fp8 && (loras || keep_fp8))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "fp8-cast: not with %s", loras ? "LoRAs" : "kept fp8 weights");
    /* fused or cast weights are no longer the file's: stored in dtype, never viewed in the mapping */
    if (loras || cast_fp8) keep_bf16 = false;
    const layout_mode mode = keep_fp8 ? (keep_bf16 ? LAYOUT_FILE_FP8 : LAYOUT_FP8_FROM)
                             : keep_bf16 ? LAYOUT_FILE : LAYOUT_PLAIN;
    ltx2_status st = weights_layout(ctx, w, &l, skip_layers, be, dtype, f, prefix, mode);
    if (st == LTX2_OK && keep_fp8 && w->store.n_fp8 == 0)
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: fp8 DiT weights need a pre-quantised checkpoint (fp8 e4m3 "
                        "Linear weights with %s and %s siblings, as Lightricks' *-fp8 files hold); this one has none",
                        f->path ? f->path : "checkpoint", LTX2_FP8_WEIGHT_SCALE_SUFFIX, LTX2_FP8_INPUT_SCALE_SUFFIX);
    if (st == LTX2_OK) {
        char cfgdesc[160];
        snprintf(cfgdesc, sizeof cfgdesc, "%lld layers, Dv %lld, Da %lld, %s%s", (long long)cfg->num_layers,
                 (long long)cfg->inner_dim, (long long)cfg->audio_inner_dim,
                 cfg->apply_gated_attention ? "gated attention, " : "",
                 cfg->cross_attention_adaln ? "cross-attention AdaLN" : "no cross-attention AdaLN");
        const ltx2_wload how = {.f = f, .prefix = prefix, .skip_layers = skip_layers, .what = "DiT weights",
                                .cfgdesc = cfgdesc, .owns = dit_owns, .owns_user = prefix,
                                .adjust = loras ? fuse_lora : cast_fp8 ? ltx2_fp8_cast_adjust : NULL,
                                .adjust_fp8 = loras ? fuse_lora_fp8 : NULL, .adjust_user = loras};
        st = ltx2_wtable_load(ctx, &l, &w->store, &how);
        if (st == LTX2_OK && cast_fp8) st = ltx2_fp8_cast_biases(ctx, w);
        /* the replicated part of a rank: its layer shards take the rest of the adapters later */
        if (st == LTX2_OK && !skip_layers) st = ltx2_lora_check_used(ctx, loras);
    }
    ltx2_wtable_free(&l);
    if (st != LTX2_OK) {
        ltx2_dit_weights_free(w);
        return st;
    }
    *out = w;
    return LTX2_OK;
}

ltx2_status ltx2_dit_weights_load(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix,
                                  const ltx2_dit_config *cfg, ltx2_dit_weights **out) {
    return load(ctx, ltx2_backend_cpu(), LTX2_F32, f, prefix, cfg, LOAD_F32, NULL, out);
}

ltx2_status ltx2_dit_weights_load_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                     const ltx2_st_file *f, const char *prefix, const ltx2_dit_config *cfg,
                                     ltx2_dit_weights **out) {
    return load(ctx, be, dtype, f, prefix, cfg, LOAD_AS_FILE, NULL, out);
}

const ltx2_tensor *ltx2_dit_weights_find(ltx2_dit_weights *w, const char *name) {
    ltx2_wtable l = {0};
    build_list(&l, w); /* the views of w's own tensors (it sets only shapes it already holds) */
    const ltx2_tensor *t = NULL;
    for (size_t i = 0; !l.oom && i < l.n && !t; i++)
        if (!strcmp(l.v[i].name, name)) t = l.v[i].dst->data ? l.v[i].dst : NULL;
    ltx2_wtable_free(&l);
    return t;
}

/* The Linear whose weight tensor entry e views (a matrix entry). */
static ltx2_dit_linear *linear_of(const ltx2_wspec *e) {
    return (ltx2_dit_linear *)((char *)e->dst - offsetof(ltx2_dit_linear, w));
}

const ltx2_dit_linear *ltx2_dit_weights_find_linear(ltx2_dit_weights *w, const char *module) {
    ltx2_wtable l = {0};
    build_list(&l, w);
    const ltx2_dit_linear *lin = NULL;
    char name[NAME_CAP];
    snprintf(name, sizeof name, "%s.weight", module);
    for (size_t i = 0; !l.oom && i < l.n && !lin; i++)
        if (l.v[i].matrix && !strcmp(l.v[i].name, name)) lin = linear_of(&l.v[i]);
    ltx2_wtable_free(&l);
    return lin;
}

ltx2_status ltx2_dit_weights_each_linear(ltx2_context *ctx, ltx2_dit_weights *w, ltx2_dit_linear_fn fn, void *user) {
    ltx2_wtable l = {0};
    build_list(&l, w);
    ltx2_status st = l.oom ? LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit weights: tensor list") : LTX2_OK;
    for (size_t i = 0; st == LTX2_OK && i < l.n; i++)
        if (l.v[i].matrix) st = fn(user, l.v[i].name, linear_of(&l.v[i]));
    ltx2_wtable_free(&l);
    return st;
}

ltx2_status ltx2_dit_weights_load_lora(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                       const ltx2_st_file *f, const char *prefix, const ltx2_dit_config *cfg,
                                       ltx2_lora_set *loras, ltx2_dit_weights **out) {
    return load(ctx, be, dtype, f, prefix, cfg, LOAD_AS_FILE, loras, out);
}

ltx2_status ltx2_dit_weights_load_fp8(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                      const ltx2_st_file *f, const char *prefix, const ltx2_dit_config *cfg,
                                      ltx2_lora_set *loras, ltx2_dit_weights **out) {
    return load(ctx, be, dtype, f, prefix, cfg, (load_opts){.keep_bf16 = true, .keep_fp8 = true}, loras, out);
}

ltx2_status ltx2_dit_weights_load_fp8_cast(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                           const ltx2_st_file *f, const char *prefix, const ltx2_dit_config *cfg,
                                           ltx2_dit_weights **out) {
    return load(ctx, be, dtype, f, prefix, cfg, (load_opts){.cast_fp8 = true}, NULL, out);
}

ltx2_status ltx2_dit_weights_load_replicated(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix,
                                             const ltx2_dit_config *cfg, ltx2_dit_weights **out) {
    return ltx2_dit_weights_load_replicated_on(ctx, ltx2_backend_cpu(), LTX2_F32, f, prefix, cfg, NULL, out);
}

ltx2_status ltx2_dit_weights_load_replicated_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                                const ltx2_st_file *f, const char *prefix,
                                                const ltx2_dit_config *cfg, ltx2_lora_set *loras,
                                                ltx2_dit_weights **out) {
    return load(ctx, be, dtype, f, prefix, cfg, (load_opts){.skip_layers = true}, loras, out);
}

ltx2_status ltx2_dit_weights_load_file(ltx2_context *ctx, const char *path, ltx2_dit_weights **out) {
    if (!path || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit weights: NULL argument");
    *out = NULL;
    if (ltx2_names_is_diffusers_dir(path)) {
        /* diffusers layout: the same loader over a view with the Lightricks names and config */
        ltx2_df_view *v = NULL;
        LTX2_TRY(ltx2_df_view_open(ctx, path, &v));
        ltx2_dit_config cfg;
        ltx2_status st = ltx2_dit_config_from_st(ctx, ltx2_df_view_file(v), &cfg);
        if (st == LTX2_OK)
            st = load(ctx, ltx2_backend_cpu(), LTX2_F32, ltx2_df_view_file(v), NULL, &cfg, LOAD_AS_FILE, NULL, out);
        ltx2_df_view_close(v);
        return st;
    }
    ltx2_st_file *f = NULL;
    LTX2_TRY(ltx2_st_open(ctx, path, &f));
    ltx2_dit_config cfg;
    ltx2_status st = ltx2_dit_config_from_st(ctx, f, &cfg);
    if (st == LTX2_OK) st = load(ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, LOAD_AS_FILE, NULL, out);
    ltx2_st_close(f);
    return st;
}

ltx2_status ltx2_dit_weights_random(ltx2_context *ctx, const ltx2_dit_config *cfg, uint64_t seed, float scale,
                                    ltx2_dit_weights **out) {
    if (!cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit weights (random): NULL argument");
    *out = NULL;
    ltx2_dit_weights *w = NULL;
    LTX2_TRY(weights_new(ctx, cfg, &w));
    if (w->cfg.audio_in_channels == 0) w->cfg.audio_in_channels = DEFAULT_AUDIO_IN_CHANNELS;
    ltx2_wtable l = {0};
    ltx2_status st = weights_layout(ctx, w, &l, false, ltx2_backend_cpu(), LTX2_F32, NULL, NULL, LAYOUT_PLAIN);
    if (st == LTX2_OK) st = ltx2_wtable_random(ctx, &l, &w->store, seed, scale);
    ltx2_wtable_free(&l);
    if (st != LTX2_OK) {
        ltx2_dit_weights_free(w);
        return st;
    }
    *out = w;
    return LTX2_OK;
}

static ltx2_status layout_only(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype, const ltx2_dit_config *cfg,
                               bool fp8_layers, bool skip_layers, const ltx2_st_file *f, ltx2_dit_weights **out) {
    if (!be || !cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit weights (layout): NULL argument");
    *out = NULL;
    ltx2_dit_weights *w = NULL;
    LTX2_TRY(weights_new(ctx, cfg, &w));
    if (w->cfg.audio_in_channels == 0) w->cfg.audio_in_channels = DEFAULT_AUDIO_IN_CHANNELS;
    ltx2_wtable l = {0};
    ltx2_status st = weights_layout(ctx, w, &l, skip_layers, be, dtype, f, LTX2_DIT_PREFIX,
                                    !fp8_layers ? LAYOUT_PLAIN : f ? LAYOUT_FILE_FP8 : LAYOUT_FP8_ALL);
    ltx2_wtable_free(&l);
    if (st != LTX2_OK) {
        ltx2_dit_weights_free(w);
        return st;
    }
    *out = w;
    return LTX2_OK;
}

ltx2_status ltx2_dit_weights_layout_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                       const ltx2_dit_config *cfg, ltx2_dit_weights **out) {
    return layout_only(ctx, be, dtype, cfg, false, false, NULL, out);
}

ltx2_status ltx2_dit_weights_layout_replicated_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                                  const ltx2_dit_config *cfg, ltx2_dit_weights **out) {
    return layout_only(ctx, be, dtype, cfg, false, true, NULL, out);
}

ltx2_status ltx2_dit_weights_layout_fp8(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                        const ltx2_dit_config *cfg, const ltx2_st_file *f, ltx2_dit_weights **out) {
    return layout_only(ctx, be, dtype, cfg, true, false, f, out);
}

ltx2_status ltx2_dit_weights_to(ltx2_context *ctx, const ltx2_dit_weights *src, const ltx2_backend *be,
                                ltx2_dtype dtype, ltx2_dit_weights **out) {
    if (!src || !be || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit weights copy: NULL argument");
    *out = NULL;
    ltx2_dit_weights *w = NULL;
    LTX2_TRY(weights_new(ctx, &src->cfg, &w));
    /* build_list records where each tensor field is (and rewrites shapes): run it over a copy of
     * src so its entries point at copies of src's views, in the same order as w's */
    ltx2_dit_weights tmp = *src;
    ltx2_wtable ls = {0}, l = {0};
    tmp.blocks = malloc((size_t)src->cfg.num_layers * sizeof *tmp.blocks);
    ltx2_status st = tmp.blocks ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit weights copy: blocks");
    if (st == LTX2_OK) {
        memcpy(tmp.blocks, src->blocks, (size_t)src->cfg.num_layers * sizeof *tmp.blocks);
        build_list(&ls, &tmp);
        st = weights_layout(ctx, w, &l, src->layers_skipped, be, dtype, NULL, NULL, LAYOUT_PLAIN);
    }
    if (st == LTX2_OK) st = ltx2_wtable_copy(ctx, &ls, &src->store, &l, &w->store);
    ltx2_wtable_free(&ls);
    ltx2_wtable_free(&l);
    free(tmp.blocks);
    if (st != LTX2_OK) {
        ltx2_dit_weights_free(w);
        return st;
    }
    *out = w;
    return LTX2_OK;
}

void ltx2_dit_weights_free(ltx2_dit_weights *w) {
    if (!w) return;
    ltx2_wstore_free(&w->store);
    free(w->blocks);
    free(w);
}
