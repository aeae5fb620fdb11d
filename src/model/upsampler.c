/* Latent upsampler forward on the CPU (see upsampler.h). Reference: ltx-core 1.0.0
 * model/upsampler/{model,res_block,pixel_shuffle,spatial_rational_resampler,blur_downsample,
 * model_configurator}.py. */
#include "model/upsampler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "cpu/cpu_conv3d.h"
#include "cpu/cpu_ops.h"
#include "io/json.h"

/* torch.nn.GroupNorm(32, C) defaults: 32 groups, eps 1e-5. */
#define UPS_GN_GROUPS 32
#define UPS_GN_EPS 1e-5
/* BlurDownsample: binomial kernel of this size (rows of Pascal's triangle), zero padding size/2. */
#define UPS_BLUR_K 5
#define UPS_KEY_CAP 160

typedef struct ups_conv {
    ltx2_conv3d_desc desc; /* kt = 1 for the per-frame Conv2d */
    float *w, *b;
} ups_conv;

typedef struct ups_res {
    ups_conv c1, c2;
    float *n1w, *n1b, *n2w, *n2b;
} ups_res;

struct ltx2_upsampler {
    ltx2_upsampler_config cfg;
    ups_conv initial, up, final;
    float *init_nw, *init_nb;
    ups_res *pre, *post;
    int64_t num, den; /* rational resampler; plain spatial x2: 2 / 1; temporal: 1 / 1 */
};

typedef struct act {
    float *d;
    int64_t n, t, h, w, c;
} act;

static int64_t numel(const act *a) { return a->n * a->t * a->h * a->w * a->c; }

static ltx2_status act_alloc(ltx2_context *ctx, act *a, int64_t n, int64_t t, int64_t h, int64_t w, int64_t c) {
    *a = (act){NULL, n, t, h, w, c};
    a->d = malloc((size_t)numel(a) * sizeof(float));
    return a->d ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: activation of %lld floats", (long long)numel(a));
}

/* ------------------------------------------------------------------------------------------- */

static ltx2_status load_f32(ltx2_context *ctx, const ltx2_st_set *set, const char *key, int ndim,
                            const int64_t *shape, float **out) {
    const ltx2_st_tensor *t = ltx2_st_set_find(set, key, NULL);
    if (!t) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "upsampler: missing tensor %s", key);
    bool ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = t->shape[i] == shape[i];
    if (!ok) {
        char a[96], b[96];
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "upsampler: tensor %s has shape %s, expected %s (check the config)",
                          key, ltx2_shape_str(t->shape, t->ndim, a, 96), ltx2_shape_str(shape, ndim, b, 96));
    }
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    float *buf = malloc((size_t)n * sizeof(float));
    if (!buf) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: %s", key);
    ltx2_status st = ltx2_convert(ctx, buf, LTX2_F32, t->data, t->dtype, (size_t)n);
    if (st != LTX2_OK) {
        free(buf);
        ltx2_error_prefix(ctx, "upsampler: %s", key);
        return st;
    }
    *out = buf;
    return LTX2_OK;
}

/* `<name>.weight` [out, in, (3,) 3, 3] and `<name>.bias`; Conv2d when kt == 1. */
static ltx2_status load_conv(ltx2_context *ctx, const ltx2_st_set *set, const char *name, int64_t ci, int64_t co,
                             int64_t kt, ups_conv *c) {
    char key[UPS_KEY_CAP];
    c->desc = (ltx2_conv3d_desc){.c_in = ci, .c_out = co, .kt = kt, .kh = 3, .kw = 3, .st = 1, .sh = 1, .sw = 1,
                                 .tpad = LTX2_CONV_TPAD_NONE, .spad = LTX2_CONV_SPAD_ZEROS};
    const int64_t s3[5] = {co, ci, 3, 3, 3}, s2[4] = {co, ci, 3, 3};
    float *w = NULL;
    snprintf(key, sizeof(key), "%s.weight", name);
    LTX2_TRY(load_f32(ctx, set, key, kt == 3 ? 5 : 4, kt == 3 ? s3 : s2, &w));
    c->w = malloc((size_t)ltx2_conv3d_packed_numel(&c->desc) * sizeof(float));
    ltx2_status st = c->w ? ltx2_conv3d_pack_weight(ctx, &c->desc, w, c->w)
                          : LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: packed %s", key);
    free(w);
    if (st != LTX2_OK) return st;
    snprintf(key, sizeof(key), "%s.bias", name);
    return load_f32(ctx, set, key, 1, &co, &c->b);
}

static ltx2_status load_res(ltx2_context *ctx, const ltx2_st_set *set, const char *name, int64_t m, ups_res *r) {
    char key[UPS_KEY_CAP];
    snprintf(key, sizeof(key), "%s.conv1", name);
    LTX2_TRY(load_conv(ctx, set, key, m, m, 3, &r->c1));
    snprintf(key, sizeof(key), "%s.conv2", name);
    LTX2_TRY(load_conv(ctx, set, key, m, m, 3, &r->c2));
    float **dst[4] = {&r->n1w, &r->n1b, &r->n2w, &r->n2b};
    const char *suffix[4] = {"norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"};
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "%s.%s", name, suffix[i]);
        LTX2_TRY(load_f32(ctx, set, key, 1, &m, dst[i]));
    }
    return LTX2_OK;
}

static void conv_free(ups_conv *c) {
    free(c->w);
    free(c->b);
}

static void res_free(ups_res *r) {
    conv_free(&r->c1);
    conv_free(&r->c2);
    free(r->n1w), free(r->n1b), free(r->n2w), free(r->n2b);
}

void ltx2_upsampler_free(ltx2_upsampler *u) {
    if (!u) return;
    conv_free(&u->initial);
    conv_free(&u->up);
    conv_free(&u->final);
    free(u->init_nw);
    free(u->init_nb);
    for (int64_t i = 0; i < u->cfg.num_blocks_per_stage; i++) {
        if (u->pre) res_free(&u->pre[i]);
        if (u->post) res_free(&u->post[i]);
    }
    free(u->pre);
    free(u->post);
    free(u);
}

const ltx2_upsampler_config *ltx2_upsampler_get_config(const ltx2_upsampler *u) { return u ? &u->cfg : NULL; }

static bool get_bool(const ltx2_json *o, const char *key, bool dflt) {
    const ltx2_json *v = ltx2_json_get(o, key);
    return v && v->type == LTX2_JSON_BOOL ? v->boolean : dflt;
}

static ltx2_status parse_config(ltx2_context *ctx, const ltx2_st_set *set, ltx2_upsampler_config *c) {
    /* ltx-core LatentUpsamplerConfigurator defaults */
    *c = (ltx2_upsampler_config){128, 512, 4, 3, true, false, false, 2.0};
    if (!set->n_files) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "upsampler: no safetensors file");
    ltx2_json_doc *doc = NULL;
    LTX2_TRY(ltx2_st_meta_json(ctx, set->files[0], "config", "the upsampler architecture cannot be known", &doc));
    const ltx2_json *o = ltx2_json_root(doc);
    ltx2_json_get_int(o, "in_channels", &c->in_channels);
    ltx2_json_get_int(o, "mid_channels", &c->mid_channels);
    ltx2_json_get_int(o, "num_blocks_per_stage", &c->num_blocks_per_stage);
    ltx2_json_get_int(o, "dims", &c->dims);
    ltx2_json_get_num(o, "spatial_scale", &c->spatial_scale);
    c->spatial_upsample = get_bool(o, "spatial_upsample", true);
    c->temporal_upsample = get_bool(o, "temporal_upsample", false);
    c->rational_resampler = get_bool(o, "rational_resampler", false);
    ltx2_json_free(doc);
    if (c->dims != 3)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "upsampler: dims %lld unsupported (only 3)", (long long)c->dims);
    if (c->spatial_upsample == c->temporal_upsample)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "upsampler: spatial_upsample %d / temporal_upsample %d: exactly one must be true", c->spatial_upsample,
                          c->temporal_upsample);
    if (c->mid_channels < UPS_GN_GROUPS || c->mid_channels % UPS_GN_GROUPS != 0 || c->in_channels < 1 ||
        c->num_blocks_per_stage < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "upsampler: mid_channels %lld must be a multiple of %d",
                          (long long)c->mid_channels, UPS_GN_GROUPS);
    return LTX2_OK;
}

ltx2_status ltx2_upsampler_load(ltx2_context *ctx, const ltx2_st_set *set, ltx2_upsampler **out) {
    if (!set || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: NULL argument");
    *out = NULL;
    ltx2_upsampler *u = calloc(1, sizeof(*u));
    if (!u) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler struct");
    ltx2_status st = parse_config(ctx, set, &u->cfg);
    const int64_t M = u->cfg.mid_channels, C = u->cfg.in_channels, nb = u->cfg.num_blocks_per_stage;
    u->num = u->den = 1;
    if (st == LTX2_OK && u->cfg.spatial_upsample) {
        const double s = u->cfg.spatial_scale;
        if (!u->cfg.rational_resampler) {
            u->num = 2; /* ltx-core ignores spatial_scale without the rational resampler */
        } else if (s == 0.75 || s == 1.5 || s == 2.0 || s == 4.0) {
            u->num = s == 2.0 ? 2 : (s == 4.0 ? 4 : 3);
            u->den = s == 0.75 ? 4 : (s == 1.5 ? 2 : 1);
        } else {
            st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "upsampler: rational spatial_scale %g (supported 0.75, 1.5, 2, 4)", s);
        }
    }
    if (st == LTX2_OK) st = load_conv(ctx, set, "initial_conv", C, M, 3, &u->initial);
    if (st == LTX2_OK) st = load_f32(ctx, set, "initial_norm.weight", 1, &M, &u->init_nw);
    if (st == LTX2_OK) st = load_f32(ctx, set, "initial_norm.bias", 1, &M, &u->init_nb);
    if (st == LTX2_OK) {
        u->pre = calloc((size_t)(nb ? nb : 1), sizeof(ups_res));
        u->post = calloc((size_t)(nb ? nb : 1), sizeof(ups_res));
        if (!u->pre || !u->post) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: res blocks");
    }
    char key[UPS_KEY_CAP];
    for (int64_t i = 0; i < nb && st == LTX2_OK; i++) {
        snprintf(key, sizeof(key), "res_blocks.%lld", (long long)i);
        st = load_res(ctx, set, key, M, &u->pre[i]);
        snprintf(key, sizeof(key), "post_upsample_res_blocks.%lld", (long long)i);
        if (st == LTX2_OK) st = load_res(ctx, set, key, M, &u->post[i]);
    }
    if (st == LTX2_OK) {
        if (u->cfg.temporal_upsample) {
            st = load_conv(ctx, set, "upsampler.0", M, 2 * M, 3, &u->up);
        } else if (!u->cfg.rational_resampler) {
            st = load_conv(ctx, set, "upsampler.0", M, 4 * M, 1, &u->up);
        } else {
            st = load_conv(ctx, set, "upsampler.conv", M, u->num * u->num * M, 1, &u->up);
            /* The blur kernel is a fixed buffer; we recompute it, but the file must carry it. */
            const int64_t ks[4] = {1, 1, UPS_BLUR_K, UPS_BLUR_K};
            float *k = NULL;
            if (st == LTX2_OK) st = load_f32(ctx, set, "upsampler.blur_down.kernel", 4, ks, &k);
            free(k);
        }
    }
    if (st == LTX2_OK) st = load_conv(ctx, set, "final_conv", M, C, 3, &u->final);
    if (st != LTX2_OK) {
        ltx2_upsampler_free(u);
        return st;
    }
    *out = u;
    return LTX2_OK;
}

ltx2_status ltx2_upsampler_out_shape(ltx2_context *ctx, const ltx2_upsampler *u, const int64_t in[5], int64_t out[5]) {
    if (!u || !in || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: NULL argument");
    if (in[4] != u->cfg.in_channels || in[0] < 1 || in[1] < 1 || in[2] < 1 || in[3] < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "upsampler: latent [%lld, %lld, %lld, %lld, %lld] (NDHWC), expected %lld channels",
                          (long long)in[0], (long long)in[1], (long long)in[2], (long long)in[3], (long long)in[4],
                          (long long)u->cfg.in_channels);
    memcpy(out, in, 5 * sizeof(int64_t));
    if (u->cfg.temporal_upsample) {
        out[1] = 2 * in[1] - 1;
    } else {
        const int64_t pad = UPS_BLUR_K / 2;
        for (int a = 2; a < 4; a++)
            out[a] = u->den == 1 ? in[a] * u->num : (in[a] * u->num + 2 * pad - UPS_BLUR_K) / u->den + 1;
    }
    return LTX2_OK;
}

/* ------------------------------------------------------------------------------------------- */

/* Conv with zero padding in every axis: the 3-D convs get one zero frame on each side. */
static ltx2_status run_conv(ltx2_context *ctx, const ups_conv *c, const act *x, act *y) {
    act xp = *x;
    xp.d = NULL;
    const float *src = x->d;
    if (c->desc.kt == 3) {
        const int64_t fr = x->h * x->w * x->c;
        LTX2_TRY(act_alloc(ctx, &xp, x->n, x->t + 2, x->h, x->w, x->c));
        for (int64_t b = 0; b < x->n; b++) {
            float *d = xp.d + b * xp.t * fr;
            memset(d, 0, (size_t)fr * sizeof(float));
            memcpy(d + fr, x->d + b * x->t * fr, (size_t)(x->t * fr) * sizeof(float));
            memset(d + (x->t + 1) * fr, 0, (size_t)fr * sizeof(float));
        }
        src = xp.d;
    }
    int64_t o[3];
    ltx2_status st = ltx2_conv3d_out_shape(ctx, &c->desc, xp.t, xp.h, xp.w, o);
    if (st == LTX2_OK) st = act_alloc(ctx, y, x->n, o[0], o[1], o[2], c->desc.c_out);
    if (st == LTX2_OK) st = ltx2_cpu_conv3d(ctx, &c->desc, src, x->n, xp.t, xp.h, xp.w, c->w, c->b, y->d);
    if (st != LTX2_OK && y->d) {
        free(y->d);
        y->d = NULL;
    }
    free(xp.d);
    return st;
}

/* GroupNorm(32) per sample over (channels of the group, T, H, W), affine; stats in double. */
static void group_norm(act *a, const float *g, const float *bta) {
    const int64_t C = a->c, cg = C / UPS_GN_GROUPS, vox = a->t * a->h * a->w;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < a->n; b++)
        for (int64_t gi = 0; gi < UPS_GN_GROUPS; gi++) {
            float *base = a->d + b * vox * C;
            double s = 0, s2 = 0;
            for (int64_t v = 0; v < vox; v++)
                for (int64_t c = gi * cg; c < (gi + 1) * cg; c++) s += base[v * C + c];
            const double mean = s / (double)(vox * cg);
            for (int64_t v = 0; v < vox; v++)
                for (int64_t c = gi * cg; c < (gi + 1) * cg; c++) {
                    const double d = base[v * C + c] - mean;
                    s2 += d * d;
                }
            const double rstd = 1.0 / sqrt(s2 / (double)(vox * cg) + UPS_GN_EPS);
            for (int64_t v = 0; v < vox; v++)
                for (int64_t c = gi * cg; c < (gi + 1) * cg; c++)
                    base[v * C + c] = (float)((base[v * C + c] - mean) * rstd) * g[c] + bta[c];
        }
}

static ltx2_status conv_norm_silu(ltx2_context *ctx, const ups_conv *c, const float *g, const float *b, const act *x,
                                  act *y) {
    LTX2_TRY(run_conv(ctx, c, x, y));
    group_norm(y, g, b);
    return ltx2_cpu_silu(ctx, y->d, y->d, numel(y));
}

/* x = silu(gn2(conv2(silu(gn1(conv1(x))))) + x) */
static ltx2_status res_block(ltx2_context *ctx, const ups_res *r, act *x) {
    act h1 = {0}, h2 = {0};
    LTX2_TRY(conv_norm_silu(ctx, &r->c1, r->n1w, r->n1b, x, &h1));
    ltx2_status st = run_conv(ctx, &r->c2, &h1, &h2);
    free(h1.d);
    if (st != LTX2_OK) return st;
    group_norm(&h2, r->n2w, r->n2b);
    const int64_t n = numel(x);
    for (int64_t i = 0; i < n; i++) h2.d[i] += x->d[i];
    st = ltx2_cpu_silu(ctx, h2.d, h2.d, n);
    free(x->d);
    *x = h2;
    return st;
}

/* conv, then the channel -> space/time shuffle (+ blur-downsample or first-frame drop). */
static ltx2_status upsample(ltx2_context *ctx, const ltx2_upsampler *u, act *x) {
    act y = {0}, o = {0};
    LTX2_TRY(run_conv(ctx, &u->up, x, &y));
    const int64_t M = u->cfg.mid_channels;
    ltx2_status st;
    if (u->cfg.temporal_upsample) {
        /* "b (c p) f h w -> b c (f p) h w", drop frame 0 */
        st = act_alloc(ctx, &o, x->n, 2 * x->t - 1, x->h, x->w, M);
        const int64_t hw = x->h * x->w;
        for (int64_t b = 0; st == LTX2_OK && b < x->n; b++)
            for (int64_t t = 0; t < o.t; t++) {
                const int64_t ti = (t + 1) / 2, p = (t + 1) % 2;
                for (int64_t v = 0; v < hw; v++)
                    for (int64_t c = 0; c < M; c++)
                        o.d[((b * o.t + t) * hw + v) * M + c] = y.d[((b * y.t + ti) * hw + v) * y.c + c * 2 + p];
            }
    } else {
        /* "b (c p1 p2) h w -> b c (h p1) (w p2)" */
        const int64_t r = u->num, H = x->h * r, W = x->w * r;
        st = act_alloc(ctx, &o, x->n, x->t, H, W, M);
        for (int64_t bt = 0; st == LTX2_OK && bt < x->n * x->t; bt++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++) {
                    const float *src = y.d + ((bt * y.h + h / r) * y.w + w / r) * y.c + (h % r) * r + w % r;
                    float *dst = o.d + ((bt * H + h) * W + w) * M;
                    for (int64_t c = 0; c < M; c++) dst[c] = src[c * r * r];
                }
        if (st == LTX2_OK && u->den > 1) {
            /* BlurDownsample: depthwise outer([1,4,6,4,1])^2 / 256, zero pad 2, stride den */
            static const float k1[UPS_BLUR_K] = {1, 4, 6, 4, 1};
            const int64_t s = u->den, pad = UPS_BLUR_K / 2, Ho = (H + 2 * pad - UPS_BLUR_K) / s + 1,
                          Wo = (W + 2 * pad - UPS_BLUR_K) / s + 1;
            act z = {0};
            st = act_alloc(ctx, &z, x->n, x->t, Ho, Wo, M);
            for (int64_t bt = 0; st == LTX2_OK && bt < x->n * x->t; bt++)
                for (int64_t h = 0; h < Ho; h++)
                    for (int64_t w = 0; w < Wo; w++) {
                        float *dst = z.d + ((bt * Ho + h) * Wo + w) * M;
                        for (int64_t c = 0; c < M; c++) dst[c] = 0.0f;
                        for (int64_t i = 0; i < UPS_BLUR_K; i++) {
                            const int64_t hs = h * s + i - pad;
                            if (hs < 0 || hs >= H) continue;
                            for (int64_t j = 0; j < UPS_BLUR_K; j++) {
                                const int64_t ws = w * s + j - pad;
                                if (ws < 0 || ws >= W) continue;
                                const float kv = k1[i] * k1[j] / 256.0f;
                                const float *src = o.d + ((bt * H + hs) * W + ws) * M;
                                for (int64_t c = 0; c < M; c++) dst[c] += kv * src[c];
                            }
                        }
                    }
            free(o.d);
            o = z;
        }
    }
    free(y.d);
    if (st != LTX2_OK) {
        free(o.d);
        return st;
    }
    free(x->d);
    *x = o;
    return LTX2_OK;
}

static bool is_f32_ndhwc(const ltx2_tensor *t) {
    return t && t->data && t->dtype == LTX2_F32 && t->device == LTX2_DEVICE_CPU && t->ndim == 5 &&
           ltx2_tensor_is_contiguous(t);
}

ltx2_status ltx2_upsampler_forward(ltx2_context *ctx, const ltx2_upsampler *u, const ltx2_tensor *x, ltx2_tensor *y) {
    if (!u || !is_f32_ndhwc(x) || !is_f32_ndhwc(y))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: need a model and contiguous f32 CPU NDHWC tensors");
    int64_t want[5];
    LTX2_TRY(ltx2_upsampler_out_shape(ctx, u, x->shape, want));
    for (int i = 0; i < 5; i++)
        if (y->shape[i] != want[i]) {
            char a[96], b[96];
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "upsampler: output is %s, expected %s",
                              ltx2_shape_str(y->shape, 5, a, 96), ltx2_shape_str(want, 5, b, 96));
        }
    act in = {x->data, x->shape[0], x->shape[1], x->shape[2], x->shape[3], x->shape[4]}, h = {0}, o = {0};
    ltx2_status st = conv_norm_silu(ctx, &u->initial, u->init_nw, u->init_nb, &in, &h);
    for (int64_t i = 0; i < u->cfg.num_blocks_per_stage && st == LTX2_OK; i++) st = res_block(ctx, &u->pre[i], &h);
    if (st == LTX2_OK) st = upsample(ctx, u, &h);
    for (int64_t i = 0; i < u->cfg.num_blocks_per_stage && st == LTX2_OK; i++) st = res_block(ctx, &u->post[i], &h);
    if (st == LTX2_OK) st = run_conv(ctx, &u->final, &h, &o);
    free(h.d);
    if (st == LTX2_OK) memcpy(y->data, o.d, (size_t)numel(&o) * sizeof(float));
    free(o.d);
    return st;
}

ltx2_status ltx2_upsampler_upsample_latent(ltx2_context *ctx, const ltx2_upsampler *u, const float *mean_of_means,
                                           const float *std_of_means, const ltx2_tensor *x, ltx2_tensor *y) {
    if (!mean_of_means || !std_of_means || !u || !is_f32_ndhwc(x))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: NULL statistics, model or latent");
    const int64_t C = u->cfg.in_channels, n = ltx2_tensor_numel(x);
    if (x->shape[4] != C)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "upsampler: latent has %lld channels, expected %lld",
                          (long long)x->shape[4], (long long)C);
    float *un = malloc((size_t)n * sizeof(float));
    if (!un) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: latent copy");
    const float *xd = x->data;
    for (int64_t i = 0; i < n; i++) un[i] = xd[i] * std_of_means[i % C] + mean_of_means[i % C];
    ltx2_tensor ut = ltx2_tensor_make(un, LTX2_F32, 5, x->shape);
    ltx2_status st = ltx2_upsampler_forward(ctx, u, &ut, y);
    free(un);
    if (st != LTX2_OK) return st;
    float *yd = y->data;
    const int64_t m = ltx2_tensor_numel(y);
    for (int64_t i = 0; i < m; i++) yd[i] = (yd[i] - mean_of_means[i % C]) / std_of_means[i % C];
    return LTX2_OK;
}
