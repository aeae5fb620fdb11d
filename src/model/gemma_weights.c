/* Gemma-3 weights: the language model's tensors from a checkpoint directory (one file or shards
 * with an index), found under whichever prefix the layout uses, laid out in one store on the
 * backend. The norms' (1 + w) is applied once here, in fp32 as the reference computes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "core/rng.h"
#include "io/file.h"
#include "model/gemma.h"

/* Where the language model sits: Google's multimodal files (language_model.model.), transformers
 * 5's own saves of the multimodal model (model.language_model.), text-only Gemma3ForCausalLM
 * (model.). */
static const char *const k_prefixes[] = {"language_model.model.", "model.language_model.", "model."};
/* Tensors of the multimodal checkpoint that are not the language model. */
static const char *const k_foreign[] = {"vision_tower.", "multi_modal_projector.", "model.vision_tower.",
                                        "model.multi_modal_projector.", "lm_head."};

static bool starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static bool owns(const char *name, const void *user) {
    const char *prefix = user;
    for (size_t i = 0; i < sizeof k_foreign / sizeof k_foreign[0]; i++)
        if (starts(name, k_foreign[i])) return false;
    /* the embedding table is read row by row at run time, not loaded */
    return starts(name, prefix) && strcmp(name + strlen(prefix), "embed_tokens.weight") != 0;
}

static void build_table(ltx2_wtable *t, ltx2_gemma_weights *w) {
    const ltx2_gemma_config *c = &w->cfg;
    const int64_t D = c->hidden, Q = c->heads * c->head_dim, KV = c->kv_heads * c->head_dim;
    char n[LTX2_WNAME_CAP];
    for (int64_t i = 0; i < c->layers; i++) {
        ltx2_gemma_layer_w *L = &w->layers[i];
#define NAME(s) (snprintf(n, sizeof n, "layers.%lld." s, (long long)i), n)
        ltx2_wtable_add_linear(t, NAME("self_attn.q_proj"), Q, D, false, &L->q);
        ltx2_wtable_add_linear(t, NAME("self_attn.k_proj"), KV, D, false, &L->k);
        ltx2_wtable_add_linear(t, NAME("self_attn.v_proj"), KV, D, false, &L->v);
        ltx2_wtable_add_linear(t, NAME("self_attn.o_proj"), D, Q, false, &L->o);
        ltx2_wtable_add(t, NAME("self_attn.q_norm.weight"), 1, c->head_dim, 0, &L->q_norm);
        ltx2_wtable_add(t, NAME("self_attn.k_norm.weight"), 1, c->head_dim, 0, &L->k_norm);
        ltx2_wtable_add_linear(t, NAME("mlp.gate_proj"), c->ffn, D, false, &L->gate);
        ltx2_wtable_add_linear(t, NAME("mlp.up_proj"), c->ffn, D, false, &L->up);
        ltx2_wtable_add_linear(t, NAME("mlp.down_proj"), D, c->ffn, false, &L->down);
        ltx2_wtable_add(t, NAME("input_layernorm.weight"), 1, D, 0, &L->in_norm);
        ltx2_wtable_add(t, NAME("post_attention_layernorm.weight"), 1, D, 0, &L->post_attn_norm);
        ltx2_wtable_add(t, NAME("pre_feedforward_layernorm.weight"), 1, D, 0, &L->pre_ff_norm);
        ltx2_wtable_add(t, NAME("post_feedforward_layernorm.weight"), 1, D, 0, &L->post_ff_norm);
#undef NAME
    }
    ltx2_wtable_add(t, "norm.weight", 1, D, 0, &w->final_norm);
}

ltx2_status ltx2_gemma_norm_one_plus(ltx2_context *ctx, const ltx2_backend *be, ltx2_tensor *t, float *tmp) {
    LTX2_TRY(ltx2_backend_to_host_f32(ctx, be, t, tmp));
    const int64_t n = ltx2_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) tmp[i] = 1.0f + tmp[i];
    return ltx2_backend_from_host_f32(ctx, be, tmp, t);
}

static ltx2_status apply_one_plus(ltx2_context *ctx, ltx2_gemma_weights *w) {
    const int64_t cap = w->cfg.hidden > w->cfg.head_dim ? w->cfg.hidden : w->cfg.head_dim;
    float *tmp = malloc((size_t)cap * sizeof(float));
    if (!tmp) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma norms");
    ltx2_status st = ltx2_gemma_norm_one_plus(ctx, w->be, &w->final_norm, tmp);
    for (int64_t i = 0; st == LTX2_OK && i < w->cfg.layers; i++) {
        ltx2_gemma_layer_w *L = &w->layers[i];
        ltx2_tensor *norms[] = {&L->in_norm, &L->post_attn_norm, &L->pre_ff_norm, &L->post_ff_norm, &L->q_norm,
                                &L->k_norm};
        for (size_t k = 0; st == LTX2_OK && k < sizeof norms / sizeof norms[0]; k++)
            st = ltx2_gemma_norm_one_plus(ctx, w->be, norms[k], tmp);
    }
    free(tmp);
    return st;
}

/* The prefix under which the files hold the embedding table, and the table itself. */
static ltx2_status find_embed(ltx2_context *ctx, ltx2_gemma_weights *w, const char *dir) {
    for (size_t i = 0; i < sizeof k_prefixes / sizeof k_prefixes[0]; i++) {
        char name[LTX2_WNAME_CAP];
        snprintf(name, sizeof name, "%sembed_tokens.weight", k_prefixes[i]);
        const ltx2_st_tensor *t = ltx2_st_find(&w->view, name);
        if (!t) continue;
        snprintf(w->prefix, sizeof w->prefix, "%s", k_prefixes[i]);
        if (t->ndim != 2 || t->shape[0] != w->cfg.vocab || t->shape[1] != w->cfg.hidden)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s: %s is [%lld, %lld], the config says [%lld, %lld]", dir, name,
                              (long long)t->shape[0], (long long)(t->ndim > 1 ? t->shape[1] : 0),
                              (long long)w->cfg.vocab, (long long)w->cfg.hidden);
        if (t->dtype != LTX2_F32 && t->dtype != LTX2_BF16 && t->dtype != LTX2_F16)
            return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "%s: %s is %s (supported: f32, bf16, f16)", dir, name,
                              ltx2_dtype_name(t->dtype));
        w->embed = t;
        return LTX2_OK;
    }
    return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                      "%s: no Gemma-3 embedding table (language_model.model.embed_tokens.weight, "
                      "model.language_model.embed_tokens.weight or model.embed_tokens.weight): not a Gemma-3 "
                      "checkpoint",
                      dir);
}

/* fp8: the Linear weights stored in e4m3, quantised per tensor as they load (gemma.h). */
static ltx2_status load(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype, const char *dir, bool fp8,
                        ltx2_gemma_weights **out) {
    *out = NULL;
    ltx2_gemma_weights *w = calloc(1, sizeof *w);
    if (!w) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma weights");
    ltx2_wtable t = {0};
    ltx2_status st = ltx2_gemma_config_load(ctx, dir, &w->cfg);
    if (st == LTX2_OK) {
        w->layers = calloc((size_t)w->cfg.layers, sizeof *w->layers);
        if (!w->layers) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma weights: %lld layers", (long long)w->cfg.layers);
    }
    if (st == LTX2_OK) st = ltx2_st_set_open(ctx, dir, &w->set);
    if (st == LTX2_OK) st = ltx2_st_set_view(ctx, w->set, dir, &w->view);
    if (st == LTX2_OK) st = find_embed(ctx, w, dir);
    if (st == LTX2_OK) {
        build_table(&t, w);
        st = fp8 ? ltx2_wstore_layout_fp8_stored(ctx, &w->store, &t, be, dtype)
                 : ltx2_wstore_layout_for(ctx, &w->store, &t, be, dtype, &w->view, w->prefix, false, false);
    }
    if (st == LTX2_OK) {
        w->be = be;
        w->dtype = dtype;
        char cfgdesc[200];
        snprintf(cfgdesc, sizeof cfgdesc, "Gemma-3 %lld layers of %lld, %lld/%lld heads x %lld, MLP %lld",
                 (long long)w->cfg.layers, (long long)w->cfg.hidden, (long long)w->cfg.heads,
                 (long long)w->cfg.kv_heads, (long long)w->cfg.head_dim, (long long)w->cfg.ffn);
        const ltx2_wload how = {.f = &w->view, .prefix = w->prefix, .what = "Gemma-3 weights", .cfgdesc = cfgdesc,
                                .owns = owns, .owns_user = w->prefix, .quantize_fp8 = fp8};
        st = ltx2_wtable_load(ctx, &t, &w->store, &how);
    }
    if (st == LTX2_OK) st = apply_one_plus(ctx, w);
    ltx2_wtable_free(&t);
    if (st != LTX2_OK) {
        ltx2_gemma_weights_free(w);
        return st;
    }
    *out = w;
    return LTX2_OK;
}

ltx2_status ltx2_gemma_weights_load_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype, const char *dir,
                                       ltx2_gemma_weights **out) {
    return load(ctx, be, dtype, dir, false, out);
}

ltx2_status ltx2_gemma_weights_load_fp8_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype, const char *dir,
                                           ltx2_gemma_weights **out) {
    return load(ctx, be, dtype, dir, true, out);
}

ltx2_status ltx2_gemma_weights_random(ltx2_context *ctx, const ltx2_gemma_config *cfg, uint64_t seed, float scale,
                                      ltx2_gemma_weights **out) {
    *out = NULL;
    ltx2_gemma_weights *w = calloc(1, sizeof *w);
    if (!w) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma weights");
    w->cfg = *cfg;
    w->layers = calloc((size_t)cfg->layers, sizeof *w->layers);
    const int64_t n_embed = cfg->vocab * cfg->hidden;
    w->embed_data = malloc((size_t)n_embed * sizeof(float));
    ltx2_wtable t = {0};
    ltx2_status st = LTX2_OK;
    if (!w->layers || !w->embed_data)
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma random weights: %lld layers, %lld embeddings", (long long)cfg->layers,
                        (long long)n_embed);
    if (st == LTX2_OK) {
        build_table(&t, w);
        st = ltx2_wstore_layout(ctx, &w->store, &t, ltx2_backend_cpu(), LTX2_F32, false);
    }
    if (st == LTX2_OK) st = ltx2_wtable_random(ctx, &t, &w->store, seed, scale);
    if (st == LTX2_OK) {
        ltx2_rng_normal(seed, 1, 0, (size_t)n_embed, w->embed_data);
        w->embed_own = (ltx2_st_tensor){.name = "embed_tokens.weight", .dtype = LTX2_F32, .ndim = 2,
                                        .shape = {cfg->vocab, cfg->hidden}, .end = (uint64_t)n_embed * 4,
                                        .data = w->embed_data};
        w->embed = &w->embed_own;
        w->be = ltx2_backend_cpu();
        w->dtype = LTX2_F32;
        st = apply_one_plus(ctx, w);
    }
    ltx2_wtable_free(&t);
    if (st != LTX2_OK) {
        ltx2_gemma_weights_free(w);
        return st;
    }
    *out = w;
    return LTX2_OK;
}

ltx2_status ltx2_gemma_weights_to(ltx2_context *ctx, const ltx2_gemma_weights *src, const ltx2_backend *be,
                                  ltx2_dtype dtype, ltx2_gemma_weights **out) {
    *out = NULL;
    ltx2_gemma_weights *w = calloc(1, sizeof *w);
    if (!w) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma weights");
    w->cfg = src->cfg;
    w->embed = src->embed;
    snprintf(w->prefix, sizeof w->prefix, "%s", src->prefix);
    w->layers = calloc((size_t)w->cfg.layers, sizeof *w->layers);
    ltx2_wtable ts = {0}, td = {0};
    ltx2_status st = w->layers ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma weights: layers");
    /* the source's views are read through a table over a copy of its struct and layers (building
     * a table rewrites the linears' shapes) */
    ltx2_gemma_weights s2 = *src;
    s2.layers = malloc((size_t)w->cfg.layers * sizeof *s2.layers);
    if (st == LTX2_OK && !s2.layers) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma weights copy: layers");
    if (st == LTX2_OK) {
        memcpy(s2.layers, src->layers, (size_t)w->cfg.layers * sizeof *s2.layers);
        build_table(&ts, &s2);
        build_table(&td, w);
        st = ltx2_wstore_layout(ctx, &w->store, &td, be, dtype, false);
    }
    if (st == LTX2_OK) st = ltx2_wtable_copy(ctx, &ts, &src->store, &td, &w->store);
    ltx2_wtable_free(&ts);
    ltx2_wtable_free(&td);
    free(s2.layers);
    if (st != LTX2_OK) {
        ltx2_gemma_weights_free(w);
        return st;
    }
    w->be = be;
    w->dtype = dtype;
    *out = w;
    return LTX2_OK;
}

void ltx2_gemma_weights_free(ltx2_gemma_weights *w) {
    if (!w) return;
    free(w->embed_data);
    ltx2_wstore_free(&w->store);
    ltx2_st_set_view_close(&w->view);
    ltx2_st_set_close(w->set);
    free(w->layers);
    free(w);
}
