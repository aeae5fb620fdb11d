/* Loading of the text projection (`text_embedding_projection.*`) and the two embeddings
 * connectors from a single-file checkpoint: the config implies every (name, shape); all tensors
 * are checked and converted into one fp32 block, and unexpected tensors under those prefixes are
 * refused. The first offender of each kind is named, with counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "model/connectors.h"
#include "model/names.h"
#include "model/weight_fetch.h"

#define NAME_CAP 192
/* Tensors one connector block has at most (attn q/k/v/o/gate w+b, 2 norms, ff 2x w+b). */
#define TENSORS_PER_BLOCK 16

typedef struct cspec {
    char name[NAME_CAP];
    int ndim;
    int64_t shape[2];
    float **dst;
} cspec;

typedef struct clist {
    cspec *v;
    size_t n, cap;
} clist;

static void add(clist *l, const char *name, int ndim, int64_t s0, int64_t s1, float **dst) {
    if (l->n == l->cap) return; /* sized up front; never reached */
    cspec *s = &l->v[l->n++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->ndim = ndim;
    s->shape[0] = s0;
    s->shape[1] = s1;
    s->dst = dst;
}

static void add_linear(clist *l, const char *p, int64_t out, int64_t in, bool bias, ltx2_dit_linear *lin) {
    char n[NAME_CAP];
    lin->out = out;
    lin->in = in;
    lin->b = NULL;
    snprintf(n, sizeof n, "%s.weight", p);
    add(l, n, 2, out, in, &lin->w);
    if (bias) {
        snprintf(n, sizeof n, "%s.bias", p);
        add(l, n, 1, out, 0, &lin->b);
    }
}

static void add_connector(clist *l, const char *prefix, const ltx2_connector_config *c, ltx2_connector_w *w) {
    char n[NAME_CAP], p[NAME_CAP - 16]; /* room for ".weight" */
    const int64_t D = c->inner_dim;
    snprintf(n, sizeof n, "%slearnable_registers", prefix);
    add(l, n, 2, LTX2_CONNECTOR_REGISTERS, D, &w->registers);
    for (int64_t j = 0; j < c->num_layers; j++) {
        ltx2_connector_block_w *b = &w->blocks[j];
        ltx2_dit_attn_w *a = &b->attn1;
        a->heads = c->heads;
        a->head_dim = c->head_dim;
        a->query_dim = a->context_dim = D;
        const char *parts[4] = {"to_q", "to_k", "to_v", "to_out.0"};
        ltx2_dit_linear *lins[4] = {&a->q, &a->k, &a->v, &a->o};
        for (int i = 0; i < 4; i++) {
            snprintf(p, sizeof p, "%stransformer_1d_blocks.%lld.attn1.%s", prefix, (long long)j, parts[i]);
            add_linear(l, p, D, D, true, lins[i]);
        }
        snprintf(n, sizeof n, "%stransformer_1d_blocks.%lld.attn1.q_norm.weight", prefix, (long long)j);
        add(l, n, 1, D, 0, &a->q_norm);
        snprintf(n, sizeof n, "%stransformer_1d_blocks.%lld.attn1.k_norm.weight", prefix, (long long)j);
        add(l, n, 1, D, 0, &a->k_norm);
        if (c->gated) {
            snprintf(p, sizeof p, "%stransformer_1d_blocks.%lld.attn1.to_gate_logits", prefix, (long long)j);
            add_linear(l, p, c->heads, D, true, &a->gate);
        }
        snprintf(p, sizeof p, "%stransformer_1d_blocks.%lld.ff.net.0.proj", prefix, (long long)j);
        add_linear(l, p, 4 * D, D, true, &b->ff.proj_in);
        snprintf(p, sizeof p, "%stransformer_1d_blocks.%lld.ff.net.2", prefix, (long long)j);
        add_linear(l, p, D, 4 * D, true, &b->ff.proj_out);
    }
}

static int64_t numel(const cspec *s) { return s->ndim == 1 ? s->shape[0] : s->shape[0] * s->shape[1]; }

static bool owned_prefix(const char *name) {
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

ltx2_status ltx2_connectors_weights_load(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_connectors_config *cfg,
                                         ltx2_connectors_weights **out) {
    if (!f || !cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "connectors weights: NULL argument");
    *out = NULL;
    const char *label = f->path ? f->path : "checkpoint";
    const bool v2 = cfg->fe == LTX2_TEXT_FE_V2;
    int64_t text_dim = 0;
    LTX2_TRY(text_dim_from_file(ctx, f, label,
                                v2 ? LTX2_TEXT_PROJ_PREFIX "video_aggregate_embed.weight"
                                   : LTX2_TEXT_PROJ_PREFIX "aggregate_embed.weight",
                                &text_dim));
    ltx2_connectors_weights *w = calloc(1, sizeof *w);
    if (!w) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "connectors weights: struct");
    w->cfg = *cfg;
    w->text_dim = text_dim;
    w->video.blocks = calloc((size_t)cfg->video.num_layers, sizeof *w->video.blocks);
    w->audio.blocks = calloc((size_t)cfg->audio.num_layers, sizeof *w->audio.blocks);
    clist l = {0};
    l.cap = 8 + (size_t)(cfg->video.num_layers + cfg->audio.num_layers) * TENSORS_PER_BLOCK;
    l.v = calloc(l.cap, sizeof *l.v);
    bool *used = calloc(f->n_tensors ? f->n_tensors : 1, sizeof *used);
    ltx2_status st = LTX2_OK;
    if (!w->video.blocks || !w->audio.blocks || !l.v || !used) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "connectors weights: tensor list");
        goto done;
    }
    /* V1: aggregate_embed -> Gemma D (no bias), which must be each connector's width. */
    if (v2) {
        add_linear(&l, LTX2_TEXT_PROJ_PREFIX "video_aggregate_embed", cfg->dit_video_dim, text_dim, true,
                   &w->proj_video);
        add_linear(&l, LTX2_TEXT_PROJ_PREFIX "audio_aggregate_embed", cfg->dit_audio_dim, text_dim, true,
                   &w->proj_audio);
    } else {
        add_linear(&l, LTX2_TEXT_PROJ_PREFIX "aggregate_embed", cfg->video.inner_dim, text_dim, false,
                   &w->proj_video);
    }
    add_connector(&l, LTX2_CONNECTOR_VIDEO_PREFIX, &cfg->video, &w->video);
    add_connector(&l, LTX2_CONNECTOR_AUDIO_PREFIX, &cfg->audio, &w->audio);
    int64_t total = 0;
    for (size_t i = 0; i < l.n; i++) total += numel(&l.v[i]);
    w->storage_ = malloc((size_t)total * sizeof(float));
    if (!w->storage_) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "connectors weights: %lld floats", (long long)total);
        goto done;
    }
    char first_missing[NAME_CAP] = "", first_shape[NAME_CAP + 96] = "", first_unexp[NAME_CAP] = "";
    size_t n_missing = 0, n_shape = 0, n_unexp = 0;
    float *cur = w->storage_;
    for (size_t i = 0; i < l.n; i++) {
        cspec *s = &l.v[i];
        *s->dst = cur;
        cur += numel(s);
        const ltx2_st_tensor *t = ltx2_st_find(f, s->name);
        if (!t) {
            if (!n_missing++) snprintf(first_missing, sizeof first_missing, "%s", s->name);
            continue;
        }
        used[t - f->tensors] = true;
        bool ok = t->ndim == s->ndim && t->shape[0] == s->shape[0] && (s->ndim == 1 || t->shape[1] == s->shape[1]);
        if (!ok) {
            char got[96], want[96];
            ltx2_shape_str(t->shape, t->ndim, got, sizeof got);
            ltx2_shape_str(s->shape, s->ndim, want, sizeof want);
            if (!n_shape++)
                snprintf(first_shape, sizeof first_shape, "%.160s (expected %.40s, got %.40s)", s->name, want, got);
            continue;
        }
        st = ltx2_weight_to_f32(ctx, f, t, *s->dst, (size_t)numel(s));
        if (st != LTX2_OK) goto done;
    }
    for (size_t i = 0; i < f->n_tensors; i++) {
        if (used[i] || !owned_prefix(f->tensors[i].name) || ltx2_weight_is_fp8_aux(f, f->tensors[i].name)) continue;
        if (!n_unexp++) snprintf(first_unexp, sizeof first_unexp, "%s", f->tensors[i].name);
    }
    if (n_missing || n_shape || n_unexp) {
        ltx2_status code = n_missing ? LTX2_ERR_NOT_FOUND : n_shape ? LTX2_ERR_SHAPE : LTX2_ERR_FORMAT;
        st = LTX2_ERROR(ctx, code,
                        "%s: text connector weights do not match the config (%s projection, video %lld x %lld "
                        "layers, audio %lld x %lld layers%s): %zu missing%s%s; %zu wrong shape%s%s; %zu unexpected%s%s",
                        label, v2 ? "V2" : "V1", (long long)cfg->video.inner_dim, (long long)cfg->video.num_layers,
                        (long long)cfg->audio.inner_dim, (long long)cfg->audio.num_layers,
                        cfg->video.gated ? ", gated" : "", n_missing, n_missing ? ", first " : "", first_missing,
                        n_shape, n_shape ? ", first " : "", first_shape, n_unexp, n_unexp ? ", first " : "",
                        first_unexp);
    }
done:
    free(used);
    free(l.v);
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
    free(w->storage_);
    free(w->video.blocks);
    free(w->audio.blocks);
    free(w);
}
