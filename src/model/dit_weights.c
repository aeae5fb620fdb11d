/* DiT weight loading: the config implies a list of (name, shape, destination); every entry is
 * looked up, checked and converted into one fp32 block, then the file is scanned for DiT tensors
 * nobody asked for. All problems are gathered first so one message names them. The replicated
 * variant walks the same list but leaves the blocks' attention / FFN tensors (flagged `layer`)
 * unconverted: a tensor-parallel rank reads only its shard of those (dist/dit_shard_load.c). */
#include "model/dit_weights.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "model/names.h"
#include "model/weight_fetch.h"

/* Sub-trees under model.diffusion_model. that belong to the text connectors, not the DiT. */
static const char *const k_connector_prefixes[] = {"video_embeddings_connector.", "audio_embeddings_connector."};
/* How many offenders of each kind an error message names. */
#define REPORT_FIRST 3
#define NAME_CAP 192
/* Audio latent width for random weights when the config lacks it (every LTX-2 audio VAE: 8 ch x 16 mel). */
#define RANDOM_AUDIO_IN_CHANNELS 128

typedef struct wspec {
    char name[NAME_CAP];
    int ndim;
    int64_t shape[2];
    float **dst;
    bool layer; /* a block's attention / FFN tensor: the ones tensor parallelism splits */
} wspec;

typedef struct wlist {
    wspec *v;
    size_t n, cap;
    bool oom;
} wlist;

static void add(wlist *l, const char *name, int ndim, int64_t s0, int64_t s1, float **dst) {
    if (l->oom) return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        wspec *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->oom = true;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    wspec *s = &l->v[l->n++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->ndim = ndim;
    s->shape[0] = s0;
    s->shape[1] = s1;
    s->dst = dst;
    s->layer = false;
}

/* Flags the entries from index n0 on as block layer tensors. */
static void mark_layer(wlist *l, size_t n0) {
    for (size_t i = n0; i < l->n; i++) l->v[i].layer = true;
}

static void add_linear(wlist *l, const char *p, int64_t out, int64_t in, ltx2_dit_linear *lin) {
    char n[NAME_CAP];
    lin->out = out;
    lin->in = in;
    snprintf(n, sizeof n, "%s.weight", p);
    add(l, n, 2, out, in, &lin->w);
    snprintf(n, sizeof n, "%s.bias", p);
    add(l, n, 1, out, 0, &lin->b);
}

static void add_adaln(wlist *l, const char *p, int64_t dim, int64_t rows, ltx2_dit_adaln_w *a) {
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

static void add_attn(wlist *l, const char *blk, const char *name, int64_t qdim, int64_t cdim, int64_t heads,
                     int64_t head_dim, bool gated, ltx2_dit_attn_w *a) {
    char n[NAME_CAP];
    int64_t inner = heads * head_dim;
    a->heads = heads;
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
    add(l, n, 1, inner, 0, &a->q_norm);
    snprintf(n, sizeof n, "%s.%s.k_norm.weight", blk, name);
    add(l, n, 1, inner, 0, &a->k_norm);
    if (gated) {
        snprintf(n, sizeof n, "%s.%s.to_gate_logits", blk, name);
        add_linear(l, n, heads, qdim, &a->gate);
    }
}

static void add_ff(wlist *l, const char *blk, const char *name, int64_t dim, ltx2_dit_ff_w *f) {
    char n[NAME_CAP];
    snprintf(n, sizeof n, "%s.%s.net.0.proj", blk, name);
    add_linear(l, n, 4 * dim, dim, &f->proj_in);
    snprintf(n, sizeof n, "%s.%s.net.2", blk, name);
    add_linear(l, n, dim, 4 * dim, &f->proj_out);
}

static void build_list(wlist *l, ltx2_dit_weights *w) {
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
    add(l, "scale_shift_table", 2, 2, Dv, &w->sst);
    add(l, "audio_scale_shift_table", 2, 2, Da, &w->audio_sst);
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
        mark_layer(l, n0);
        snprintf(n, sizeof n, "%s.scale_shift_table", p);
        add(l, n, 2, k, Dv, &b->sst);
        snprintf(n, sizeof n, "%s.audio_scale_shift_table", p);
        add(l, n, 2, k, Da, &b->audio_sst);
        snprintf(n, sizeof n, "%s.scale_shift_table_a2v_ca_video", p);
        add(l, n, 2, 5, Dv, &b->sst_a2v_video);
        snprintf(n, sizeof n, "%s.scale_shift_table_a2v_ca_audio", p);
        add(l, n, 2, 5, Da, &b->sst_a2v_audio);
        if (c->cross_attention_adaln) {
            snprintf(n, sizeof n, "%s.prompt_scale_shift_table", p);
            add(l, n, 2, 2, Dv, &b->prompt_sst);
            snprintf(n, sizeof n, "%s.audio_prompt_scale_shift_table", p);
            add(l, n, 2, 2, Da, &b->audio_prompt_sst);
        }
    }
}

static int64_t spec_numel(const wspec *s) { return s->ndim == 1 ? s->shape[0] : s->shape[0] * s->shape[1]; }

static bool is_connector(const char *rel) {
    for (size_t i = 0; i < sizeof(k_connector_prefixes) / sizeof(k_connector_prefixes[0]); i++)
        if (strncmp(rel, k_connector_prefixes[i], strlen(k_connector_prefixes[i])) == 0) return true;
    return false;
}

/* Appends "name" to a short list of offenders (the first REPORT_FIRST), counting the rest. */
static void note(ltx2_sbuf *s, size_t *count, const char *fmt, const char *name, const char *extra) {
    if (*count < REPORT_FIRST) {
        if (*count) ltx2_sbuf_append(s, ", ", 2);
        ltx2_sbuf_printf(s, fmt, name, extra);
    }
    (*count)++;
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

/* Builds the tensor list for w->cfg and points every destination into one fp32 block; with
 * skip_layers the block layer tensors get no storage (their pointers stay NULL). */
static ltx2_status weights_layout(ltx2_context *ctx, ltx2_dit_weights *w, wlist *l, bool skip_layers) {
    build_list(l, w);
    if (l->oom) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit weights: tensor list");
    int64_t total = 0;
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        if (!(skip_layers && l->v[i].layer)) {
            total += spec_numel(&l->v[i]);
            n++;
        }
    w->storage_ = malloc((size_t)(total ? total : 1) * sizeof(float));
    if (!w->storage_) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit weights: %lld floats", (long long)total);
    w->n_floats = (size_t)total;
    w->n_tensors = n;
    w->layers_skipped = skip_layers;
    float *cur = w->storage_;
    for (size_t i = 0; i < l->n; i++) {
        if (skip_layers && l->v[i].layer) continue;
        *l->v[i].dst = cur;
        cur += spec_numel(&l->v[i]);
    }
    return LTX2_OK;
}

static ltx2_status load(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix, const ltx2_dit_config *cfg,
                        bool skip_layers, ltx2_dit_weights **out) {
    if (!f || !cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit weights: NULL argument");
    *out = NULL;
    if (!prefix) prefix = LTX2_DIT_PREFIX;
    const char *label = f->path ? f->path : "checkpoint";
    const size_t plen = strlen(prefix);
    ltx2_dit_weights *w = NULL;
    LTX2_TRY(weights_new(ctx, cfg, &w));
    char full[NAME_CAP + 64];
    if (w->cfg.audio_in_channels == 0) {
        /* Real metadata has no audio_in_channels: the input projection's shape says it. */
        snprintf(full, sizeof full, "%saudio_patchify_proj.weight", prefix);
        const ltx2_st_tensor *t = ltx2_st_find(f, full);
        w->cfg.audio_in_channels = (t && t->ndim == 2 && t->shape[1] > 0) ? t->shape[1] : 128;
    }
    wlist l = {0};
    bool *used = calloc(f->n_tensors ? f->n_tensors : 1, sizeof *used);
    ltx2_sbuf missing = {0}, shapes = {0}, unexpected = {0}, dtypes = {0};
    size_t n_missing = 0, n_shape = 0, n_unexpected = 0, n_dtype = 0;
    ltx2_status st = LTX2_OK;
    if (!used) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit weights: tensor list");
        goto done;
    }
    st = weights_layout(ctx, w, &l, skip_layers);
    if (st != LTX2_OK) goto done;
    for (size_t i = 0; i < l.n; i++) {
        wspec *s = &l.v[i];
        snprintf(full, sizeof full, "%s%s", prefix, s->name);
        const ltx2_st_tensor *t = ltx2_st_find(f, full);
        if (!t) {
            note(&missing, &n_missing, "%s%s", full, "");
            continue;
        }
        used[t - f->tensors] = true;
        bool ok = t->ndim == s->ndim && t->shape[0] == s->shape[0] && (s->ndim == 1 || t->shape[1] == s->shape[1]);
        if (!ok) {
            char got[96], want[96], both[224];
            ltx2_shape_str(t->shape, t->ndim, got, sizeof got);
            ltx2_shape_str(s->shape, s->ndim, want, sizeof want);
            snprintf(both, sizeof both, " (expected %s, got %s)", want, got);
            note(&shapes, &n_shape, "%s%s", full, both);
            continue;
        }
        if (!ltx2_weight_dtype_ok(t->dtype)) {
            char what[64];
            snprintf(what, sizeof what, " (%s)", ltx2_dtype_name(t->dtype));
            note(&dtypes, &n_dtype, "%s%s", full, what);
            continue;
        }
        if (skip_layers && s->layer) continue; /* checked; the caller reads its slice */
        st = ltx2_weight_to_f32(ctx, f, t, *s->dst, (size_t)spec_numel(s));
        if (st != LTX2_OK) goto done;
    }
    for (size_t i = 0; i < f->n_tensors; i++) {
        const char *name = f->tensors[i].name;
        if (used[i] || strncmp(name, prefix, plen) != 0 || is_connector(name + plen) ||
            ltx2_weight_is_fp8_aux(f, name))
            continue;
        note(&unexpected, &n_unexpected, "%s%s", name, "");
    }
    if (missing.oom || shapes.oom || unexpected.oom || dtypes.oom) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit weights: error message");
    } else if (n_missing || n_shape || n_dtype || n_unexpected) {
        ltx2_status code = n_missing ? LTX2_ERR_NOT_FOUND
                           : n_shape ? LTX2_ERR_SHAPE
                           : n_dtype ? LTX2_ERR_DTYPE
                                     : LTX2_ERR_FORMAT;
        char cfgdesc[160];
        snprintf(cfgdesc, sizeof cfgdesc, "%lld layers, Dv %lld, Da %lld, %s%s", (long long)cfg->num_layers,
                 (long long)cfg->inner_dim, (long long)cfg->audio_inner_dim,
                 cfg->apply_gated_attention ? "gated attention, " : "",
                 cfg->cross_attention_adaln ? "cross-attention AdaLN" : "no cross-attention AdaLN");
        st = LTX2_ERROR(ctx, code,
                        "%s: DiT weights do not match the config (%s): %zu missing%s%s%s; %zu wrong shape%s%s%s; "
                        "%zu unsupported dtype%s%s%s; %zu unexpected%s%s%s",
                        label, cfgdesc, n_missing, n_missing ? " [" : "", n_missing ? missing.buf : "",
                        n_missing ? (n_missing > REPORT_FIRST ? ", ...]" : "]") : "", n_shape, n_shape ? " [" : "",
                        n_shape ? shapes.buf : "", n_shape ? (n_shape > REPORT_FIRST ? ", ...]" : "]") : "", n_dtype,
                        n_dtype ? " [" : "", n_dtype ? dtypes.buf : "",
                        n_dtype ? (n_dtype > REPORT_FIRST ? ", ...]" : "]") : "", n_unexpected,
                        n_unexpected ? " [" : "", n_unexpected ? unexpected.buf : "",
                        n_unexpected ? (n_unexpected > REPORT_FIRST ? ", ...]" : "]") : "");
    }
done:
    ltx2_sbuf_free(&missing);
    ltx2_sbuf_free(&shapes);
    ltx2_sbuf_free(&unexpected);
    ltx2_sbuf_free(&dtypes);
    free(used);
    free(l.v);
    if (st != LTX2_OK) {
        ltx2_dit_weights_free(w);
        return st;
    }
    *out = w;
    return LTX2_OK;
}

ltx2_status ltx2_dit_weights_load(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix,
                                  const ltx2_dit_config *cfg, ltx2_dit_weights **out) {
    return load(ctx, f, prefix, cfg, false, out);
}

ltx2_status ltx2_dit_weights_load_replicated(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix,
                                             const ltx2_dit_config *cfg, ltx2_dit_weights **out) {
    return load(ctx, f, prefix, cfg, true, out);
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
        if (st == LTX2_OK) st = ltx2_dit_weights_load(ctx, ltx2_df_view_file(v), NULL, &cfg, out);
        ltx2_df_view_close(v);
        return st;
    }
    ltx2_st_file *f = NULL;
    LTX2_TRY(ltx2_st_open(ctx, path, &f));
    ltx2_dit_config cfg;
    ltx2_status st = ltx2_dit_config_from_st(ctx, f, &cfg);
    if (st == LTX2_OK) st = ltx2_dit_weights_load(ctx, f, NULL, &cfg, out);
    ltx2_st_close(f);
    return st;
}

ltx2_status ltx2_dit_weights_random(ltx2_context *ctx, const ltx2_dit_config *cfg, uint64_t seed, float scale,
                                    ltx2_dit_weights **out) {
    if (!cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit weights (random): NULL argument");
    *out = NULL;
    ltx2_dit_weights *w = NULL;
    LTX2_TRY(weights_new(ctx, cfg, &w));
    if (w->cfg.audio_in_channels == 0) w->cfg.audio_in_channels = RANDOM_AUDIO_IN_CHANNELS;
    wlist l = {0};
    ltx2_status st = weights_layout(ctx, w, &l, false);
    free(l.v);
    if (st != LTX2_OK) {
        ltx2_dit_weights_free(w);
        return st;
    }
    /* One stream for the whole block: tensor order is fixed by the list, so a seed is reproducible. */
    ltx2_rng_normal(seed, 0, 0, w->n_floats, w->storage_);
    for (size_t i = 0; i < w->n_floats; i++) w->storage_[i] *= scale;
    *out = w;
    return LTX2_OK;
}

void ltx2_dit_weights_free(ltx2_dit_weights *w) {
    if (!w) return;
    free(w->storage_);
    free(w->blocks);
    free(w);
}
