/* Loading of the text projection (`text_embedding_projection.*`) and the two embeddings
 * connectors from a single-file checkpoint: the config implies every (name, shape), a weight
 * table (model/weight_table.h) checks and places them on a backend, and unexpected tensors under
 * those prefixes are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/connectors.h"
#include "model/names.h"

#define NAME_CAP LTX2_WNAME_CAP

static void add_connector(ltx2_wtable *l, const char *prefix, const ltx2_connector_config *c, ltx2_connector_w *w) {
    char n[NAME_CAP], p[NAME_CAP - 16]; /* room for ".weight" */
    const int64_t D = c->inner_dim;
    snprintf(n, sizeof n, "%slearnable_registers", prefix);
    ltx2_wtable_add(l, n, 2, LTX2_CONNECTOR_REGISTERS, D, &w->registers);
    for (int64_t j = 0; j < c->num_layers; j++) {
        ltx2_connector_block_w *b = &w->blocks[j];
        ltx2_dit_attn_w *a = &b->attn1;
        a->heads = a->heads_total = c->heads;
        a->head0 = 0;
        a->head_dim = c->head_dim;
        a->query_dim = a->context_dim = D;
        const char *parts[4] = {"to_q", "to_k", "to_v", "to_out.0"};
        ltx2_dit_linear *lins[4] = {&a->q, &a->k, &a->v, &a->o};
        for (int i = 0; i < 4; i++) {
            snprintf(p, sizeof p, "%stransformer_1d_blocks.%lld.attn1.%s", prefix, (long long)j, parts[i]);
            ltx2_wtable_add_linear(l, p, D, D, true, lins[i]);
        }
        snprintf(n, sizeof n, "%stransformer_1d_blocks.%lld.attn1.q_norm.weight", prefix, (long long)j);
        ltx2_wtable_add(l, n, 1, D, 0, &a->q_norm);
        snprintf(n, sizeof n, "%stransformer_1d_blocks.%lld.attn1.k_norm.weight", prefix, (long long)j);
        ltx2_wtable_add(l, n, 1, D, 0, &a->k_norm);
        if (c->gated) {
            snprintf(p, sizeof p, "%stransformer_1d_blocks.%lld.attn1.to_gate_logits", prefix, (long long)j);
            ltx2_wtable_add_linear(l, p, c->heads, D, true, &a->gate);
        }
        snprintf(p, sizeof p, "%stransformer_1d_blocks.%lld.ff.net.0.proj", prefix, (long long)j);
        ltx2_wtable_add_linear(l, p, 4 * D, D, true, &b->ff.proj_in);
        snprintf(p, sizeof p, "%stransformer_1d_blocks.%lld.ff.net.2", prefix, (long long)j);
        ltx2_wtable_add_linear(l, p, D, 4 * D, true, &b->ff.proj_out);
    }
}

/* The projections (V1: aggregate_embed -> Gemma D, no bias, which must be each connector's width)
 * and both connectors. */
static void build_list(ltx2_wtable *l, ltx2_connectors_weights *w) {
    const ltx2_connectors_config *cfg = &w->cfg;
    if (cfg->fe == LTX2_TEXT_FE_V2) {
        ltx2_wtable_add_linear(l, LTX2_TEXT_PROJ_PREFIX "video_aggregate_embed", cfg->dit_video_dim, w->text_dim, true,
                               &w->proj_video);
        ltx2_wtable_add_linear(l, LTX2_TEXT_PROJ_PREFIX "audio_aggregate_embed", cfg->dit_audio_dim, w->text_dim, true,
                               &w->proj_audio);
    } else {
        ltx2_wtable_add_linear(l, LTX2_TEXT_PROJ_PREFIX "aggregate_embed", cfg->video.inner_dim, w->text_dim, false,
                               &w->proj_video);
    }
    add_connector(l, LTX2_CONNECTOR_VIDEO_PREFIX, &cfg->video, &w->video);
    add_connector(l, LTX2_CONNECTOR_AUDIO_PREFIX, &cfg->audio, &w->audio);
}

static bool owned_prefix(const char *name, const void *user) {
    (void)user;
    return strncmp(name, LTX2_CONNECTOR_VIDEO_PREFIX, strlen(LTX2_CONNECTOR_VIDEO_PREFIX)) == 0 ||
           strncmp(name, LTX2_CONNECTOR_AUDIO_PREFIX, strlen(LTX2_CONNECTOR_AUDIO_PREFIX)) == 0 ||
           strncmp(name, LTX2_TEXT_PROJ_PREFIX, strlen(LTX2_TEXT_PROJ_PREFIX)) == 0;
}

/* The projection input width (Gemma D * L) is not in the config: read it from the file. */
static ltx2_status text_dim_from_file(ltx2_context *ctx, const ltx2_st_file *f, const char *label, const char *key,
                                      int64_t *out) {
    const ltx2_st_tensor *t = ltx2_st_find(f, key);
    if (!t)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: text projection tensor %s is missing", label, key);
    if (t->ndim != 2 || t->shape[1] <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s: %s must be 2-D [out, Gemma dim x layers] (got %d-D)", label, key,
                          t->ndim);
    *out = t->shape[1];
    return LTX2_OK;
}

ltx2_status ltx2_connectors_text_dim(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_connectors_config *cfg,
                                     int64_t *out) {
    return text_dim_from_file(ctx, f, f->path ? f->path : "checkpoint",
                              cfg->fe == LTX2_TEXT_FE_V2 ? LTX2_TEXT_PROJ_PREFIX "video_aggregate_embed.weight"
                                                         : LTX2_TEXT_PROJ_PREFIX "aggregate_embed.weight",
                              out);
}

static ltx2_status weights_new(ltx2_context *ctx, const ltx2_connectors_config *cfg, int64_t text_dim,
                               ltx2_connectors_weights **out) {
    ltx2_connectors_weights *w = calloc(1, sizeof *w);
    if (!w) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "connectors weights: struct");
    w->cfg = *cfg;
    w->text_dim = text_dim;
    w->video.blocks = calloc((size_t)cfg->video.num_layers, sizeof *w->video.blocks);
    w->audio.blocks = calloc((size_t)cfg->audio.num_layers, sizeof *w->audio.blocks);
    if (!w->video.blocks || !w->audio.blocks) {
        ltx2_connectors_weights_free(w);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "connectors weights: blocks");
    }
    *out = w;
    return LTX2_OK;
}

ltx2_status ltx2_connectors_weights_load_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                            const ltx2_st_file *f, const ltx2_connectors_config *cfg,
                                            ltx2_connectors_weights **out) {
    if (!be || !f || !cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "connectors weights: NULL argument");
    *out = NULL;
    const bool v2 = cfg->fe == LTX2_TEXT_FE_V2;
    int64_t text_dim = 0;
    LTX2_TRY(ltx2_connectors_text_dim(ctx, f, cfg, &text_dim));
    ltx2_connectors_weights *w = NULL;
    LTX2_TRY(weights_new(ctx, cfg, text_dim, &w));
    ltx2_wtable l = {0};
    build_list(&l, w);
    /* the file's bf16 Linear weights stay bf16 on the CPU, read in place from the mapping (no copy; the
     * same results bitwise) */
    ltx2_status st = ltx2_wstore_layout_for(ctx, &w->store, &l, be, dtype, f, "", false, false);
    if (st == LTX2_OK) {
        w->be = be;
        w->dtype = dtype;
        char cfgdesc[160];
        snprintf(cfgdesc, sizeof cfgdesc, "%s projection, video %lld x %lld layers, audio %lld x %lld layers%s",
                 v2 ? "V2" : "V1", (long long)cfg->video.inner_dim, (long long)cfg->video.num_layers,
                 (long long)cfg->audio.inner_dim, (long long)cfg->audio.num_layers, cfg->video.gated ? ", gated" : "");
        const ltx2_wload how = {.f = f, .prefix = "", .what = "text connector weights", .cfgdesc = cfgdesc,
                                .owns = owned_prefix};
        st = ltx2_wtable_load(ctx, &l, &w->store, &how);
    }
    ltx2_wtable_free(&l);
    if (st != LTX2_OK) {
        ltx2_connectors_weights_free(w);
        return st;
    }
    *out = w;
    return LTX2_OK;
}

ltx2_status ltx2_connectors_weights_layout_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                              const ltx2_connectors_config *cfg, int64_t text_dim,
                                              ltx2_connectors_weights **out) {
    if (!be || !cfg || !out || text_dim < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "connectors weights (layout): bad argument");
    *out = NULL;
    ltx2_connectors_weights *w = NULL;
    LTX2_TRY(weights_new(ctx, cfg, text_dim, &w));
    ltx2_wtable l = {0};
    build_list(&l, w);
    ltx2_status st = ltx2_wstore_layout(ctx, &w->store, &l, be, dtype, false);
    ltx2_wtable_free(&l);
    if (st != LTX2_OK) {
        ltx2_connectors_weights_free(w);
        return st;
    }
    w->be = be;
    w->dtype = dtype;
    *out = w;
    return LTX2_OK;
}

ltx2_status ltx2_connectors_weights_load(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_connectors_config *cfg,
                                         ltx2_connectors_weights **out) {
    return ltx2_connectors_weights_load_on(ctx, ltx2_backend_cpu(), LTX2_F32, f, cfg, out);
}

ltx2_status ltx2_connectors_weights_to(ltx2_context *ctx, const ltx2_connectors_weights *src, const ltx2_backend *be,
                                       ltx2_dtype dtype, ltx2_connectors_weights **out) {
    if (!src || !be || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "connectors weights copy: NULL argument");
    *out = NULL;
    ltx2_connectors_weights *w = NULL, tmp = *src;
    LTX2_TRY(weights_new(ctx, &src->cfg, src->text_dim, &w));
    /* the source's table over a copy of its struct (build_list rewrites the copy's shapes only) */
    ltx2_connector_block_w *vb = malloc((size_t)src->cfg.video.num_layers * sizeof *vb);
    ltx2_connector_block_w *ab = malloc((size_t)src->cfg.audio.num_layers * sizeof *ab);
    ltx2_wtable ls = {0}, l = {0};
    ltx2_status st = vb && ab ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "connectors weights copy: blocks");
    if (st == LTX2_OK) {
        memcpy(vb, src->video.blocks, (size_t)src->cfg.video.num_layers * sizeof *vb);
        memcpy(ab, src->audio.blocks, (size_t)src->cfg.audio.num_layers * sizeof *ab);
        tmp.video.blocks = vb;
        tmp.audio.blocks = ab;
        build_list(&ls, &tmp);
        build_list(&l, w);
        st = ltx2_wstore_layout(ctx, &w->store, &l, be, dtype, false);
    }
    if (st == LTX2_OK) {
        w->be = be;
        w->dtype = dtype;
        st = ltx2_wtable_copy(ctx, &ls, &src->store, &l, &w->store);
    }
    ltx2_wtable_free(&ls);
    ltx2_wtable_free(&l);
    free(vb);
    free(ab);
    if (st != LTX2_OK) {
        ltx2_connectors_weights_free(w);
        return st;
    }
    *out = w;
    return LTX2_OK;
}

ltx2_status ltx2_connectors_weights_load_file(ltx2_context *ctx, const char *path, ltx2_connectors_weights **out) {
    if (!path || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "connectors weights: NULL argument");
    *out = NULL;
    if (ltx2_names_is_diffusers_dir(path)) {
        ltx2_df_view *v = NULL;
        LTX2_TRY(ltx2_df_view_open(ctx, path, &v));
        ltx2_status st = LTX2_OK;
        if (!ltx2_df_view_has_connectors(v))
            st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: diffusers directory has no connectors/config.json", path);
        ltx2_connectors_config cfg;
        if (st == LTX2_OK) st = ltx2_connectors_config_from_st(ctx, ltx2_df_view_file(v), &cfg);
        if (st == LTX2_OK) st = ltx2_connectors_weights_load(ctx, ltx2_df_view_file(v), &cfg, out);
        ltx2_df_view_close(v);
        return st;
    }
    ltx2_st_file *f = NULL;
    LTX2_TRY(ltx2_st_open(ctx, path, &f));
    ltx2_connectors_config cfg;
    ltx2_status st = ltx2_connectors_config_from_st(ctx, f, &cfg);
    if (st == LTX2_OK) st = ltx2_connectors_weights_load(ctx, f, &cfg, out);
    ltx2_st_close(f);
    return st;
}

void ltx2_connectors_weights_free(ltx2_connectors_weights *w) {
    if (!w) return;
    ltx2_wstore_free(&w->store);
    free(w->video.blocks);
    free(w->audio.blocks);
    free(w);
}
