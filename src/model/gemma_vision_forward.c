/* Gemma-3's image features (gemma_vision.h) on the weights' backend: the patches are cut on the
 * host (a 896 px image is 4096 rows of 588), the tower runs on the op table, and the projector's
 * average pooling runs on the host between the tower's output and the projector's norm (4096 x
 * 1152 floats in, 256 rows out). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "model/gemma_vision.h"

typedef struct vision_run {
    ltx2_context *ctx;
    const ltx2_backend *be;
    ltx2_bpool *pool;
    ltx2_dtype dt;
} vision_run;

static ltx2_status tensor(vision_run *r, int64_t S, int64_t D, ltx2_tensor *out) {
    const int64_t s[3] = {1, S, D};
    return ltx2_bpool_tensor(r->ctx, r->pool, r->dt, 3, s, out);
}

static ltx2_status linear(vision_run *r, const ltx2_linear *L, const ltx2_tensor *x, ltx2_tensor *y) {
    return ltx2_backend_gemm(r->be, r->ctx, x, &L->w, LTX2_B_NK, L->b.data ? &L->b : NULL, y);
}

typedef struct layer_bufs {
    ltx2_tensor h, xn, q, k, v, o, y, f;
} layer_bufs;

/* SiglipEncoderLayer: h += attn(LN1(h)); h += fc2(gelu_tanh(fc1(LN2(h)))). */
static ltx2_status layer_forward(vision_run *r, const ltx2_gemma_vision_config *c, const ltx2_gemma_vision_layer_w *L,
                                 layer_bufs *b) {
    ltx2_context *ctx = r->ctx;
    const ltx2_backend *be = r->be;
    const float eps = (float)c->eps;
    LTX2_TRY(ltx2_backend_layer_norm(be, ctx, &b->h, &L->ln1_w, &L->ln1_b, eps, &b->xn));
    LTX2_TRY(linear(r, &L->q, &b->xn, &b->q));
    LTX2_TRY(linear(r, &L->k, &b->xn, &b->k));
    LTX2_TRY(linear(r, &L->v, &b->xn, &b->v));
    const ltx2_attn_args aa = {.heads = c->heads, .scale = (float)(1.0 / sqrt((double)(c->hidden / c->heads)))};
    LTX2_TRY(ltx2_backend_attention(be, ctx, &b->q, &b->k, &b->v, &aa, &b->o));
    LTX2_TRY(linear(r, &L->o, &b->o, &b->y));
    LTX2_TRY(ltx2_backend_gated_add(be, ctx, &b->h, &b->y, NULL, NULL));
    LTX2_TRY(ltx2_backend_layer_norm(be, ctx, &b->h, &L->ln2_w, &L->ln2_b, eps, &b->xn));
    LTX2_TRY(linear(r, &L->fc1, &b->xn, &b->f));
    LTX2_TRY(ltx2_backend_unary(be, ctx, LTX2_OP_GELU_TANH, &b->f, &b->f));
    LTX2_TRY(linear(r, &L->fc2, &b->f, &b->y));
    return ltx2_backend_gated_add(be, ctx, &b->h, &b->y, NULL, NULL);
}

/* pixels [C, H, W] -> rows [grid * grid, C * p * p]: row py * grid + px, column (c, ky, kx) as the
 * Conv2d weight flattens. */
static void cut_patches(const ltx2_gemma_vision_config *c, const float *pixels, float *rows) {
    const int64_t p = c->patch, grid = c->image_size / p, side = c->image_size, K = c->channels * p * p;
    for (int64_t py = 0; py < grid; py++)
        for (int64_t px = 0; px < grid; px++) {
            float *row = rows + (py * grid + px) * K;
            for (int64_t ch = 0; ch < c->channels; ch++)
                for (int64_t ky = 0; ky < p; ky++)
                    memcpy(row + (ch * p + ky) * p, pixels + (ch * side + py * p + ky) * side + px * p,
                           (size_t)p * sizeof(float));
        }
}

/* AvgPool2d(k, k) over the [grid, grid] patch map of h [grid * grid, D] -> [(grid / k)^2, D]. */
static void avg_pool(const float *h, int64_t grid, int64_t k, int64_t D, float *out) {
    const int64_t g = grid / k;
    for (int64_t ty = 0; ty < g; ty++)
        for (int64_t tx = 0; tx < g; tx++)
            for (int64_t d = 0; d < D; d++) {
                float s = 0.0f; /* torch's CPU avg_pool2d: a float sum in window order, then / k^2 */
                for (int64_t y = 0; y < k; y++)
                    for (int64_t x = 0; x < k; x++) s += h[((ty * k + y) * grid + tx * k + x) * D + d];
                out[(ty * g + tx) * D + d] = s / (float)(k * k);
            }
}

uint64_t ltx2_gemma_vision_device_bytes(const ltx2_gemma_vision_config *c, ltx2_dtype dtype) {
    const uint64_t D = (uint64_t)c->hidden, F = (uint64_t)c->ffn, grid = (uint64_t)(c->image_size / c->patch),
                   P = grid * grid, K = (uint64_t)(c->channels * c->patch * c->patch), T = (uint64_t)c->mm_tokens,
                   Th = (uint64_t)c->text_hidden, L = (uint64_t)c->layers;
    /* per layer: 2 LayerNorms, q/k/v/out with biases, fc1/fc2 with biases */
    const uint64_t layer = 4 * D + 4 * (D * D + D) + 2 * D * F + F + D;
    /* the patch Linear and bias, the positions, the post LayerNorm, the projector's norm and matrix */
    const uint64_t weights = D * K + D + P * D + 2 * D + L * layer + D + D * Th;
    /* the patch rows; h, xn, q, k, v, o, y and the MLP's f; the pooled rows, their norm, the output */
    const uint64_t acts = P * K + 7 * P * D + P * F + 2 * T * D + T * Th;
    return (weights + acts) * (uint64_t)ltx2_dtype_size(dtype);
}

ltx2_status ltx2_gemma_vision_forward(ltx2_context *ctx, const ltx2_gemma_vision_weights *w, const float *pixels,
                                      float *features) {
    if (!w || !pixels || !features) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma vision: NULL argument");
    const ltx2_gemma_vision_config *c = &w->cfg;
    const int64_t grid = c->image_size / c->patch, P = grid * grid, K = c->channels * c->patch * c->patch,
                  D = c->hidden, T = c->mm_tokens, kp = grid / (int64_t)llround(sqrt((double)T));
    vision_run r = {ctx, w->be, NULL, w->dtype};
    LTX2_TRY(ltx2_bpool_create(ctx, w->be, &r.pool));
    float *host = malloc((size_t)(P * (K > D ? K : D)) * sizeof *host), *pooled = malloc((size_t)(T * D) * sizeof *pooled);
    ltx2_status st = host && pooled ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma vision: %lld patches", (long long)P);
#define TRY_(e)                               \
    do {                                      \
        if ((st = (e)) != LTX2_OK) goto done; \
    } while (0)
    if (st != LTX2_OK) goto done;
    cut_patches(c, pixels, host);
    layer_bufs b;
    ltx2_tensor x, pooled_t, normed, out;
    const int64_t xs[3] = {1, P, K};
    TRY_(ltx2_bpool_upload_f32(ctx, r.pool, host, r.dt, 3, xs, &x));
    TRY_(tensor(&r, P, D, &b.h));
    TRY_(tensor(&r, P, D, &b.xn));
    TRY_(tensor(&r, P, D, &b.q));
    TRY_(tensor(&r, P, D, &b.k));
    TRY_(tensor(&r, P, D, &b.v));
    TRY_(tensor(&r, P, D, &b.o));
    TRY_(tensor(&r, P, D, &b.y));
    TRY_(tensor(&r, P, c->ffn, &b.f));
    /* the patch Conv2d as a GEMM, then the learned positions */
    TRY_(linear(&r, &w->patch, &x, &b.h));
    TRY_(ltx2_backend_binary(r.be, ctx, LTX2_OP_ADD, &b.h, &w->pos, &b.h));
    for (int64_t l = 0; l < c->layers; l++) TRY_(layer_forward(&r, c, &w->layers[l], &b));
    TRY_(ltx2_backend_layer_norm(r.be, ctx, &b.h, &w->post_w, &w->post_b, (float)c->eps, &b.xn));
    TRY_(ltx2_backend_to_host_f32(ctx, r.be, &b.xn, host));
    avg_pool(host, grid, kp, D, pooled);
    const int64_t ps[3] = {1, T, D}, os[3] = {1, T, c->text_hidden};
    TRY_(ltx2_bpool_upload_f32(ctx, r.pool, pooled, r.dt, 3, ps, &pooled_t));
    TRY_(ltx2_bpool_tensor(ctx, r.pool, r.dt, 3, ps, &normed));
    TRY_(ltx2_bpool_tensor(ctx, r.pool, r.dt, 3, os, &out));
    TRY_(ltx2_backend_rms_norm(r.be, ctx, &pooled_t, &w->mm_norm, (float)c->eps, &normed));
    TRY_(ltx2_backend_gemm(r.be, ctx, &normed, &w->mm_proj, LTX2_B_KN, NULL, &out));
    TRY_(ltx2_backend_to_host_f32(ctx, r.be, &out, features));
#undef TRY_
done:
    if (st != LTX2_OK) w->be->sync(w->be, NULL);
    free(host), free(pooled);
    ltx2_bpool_free(r.pool);
    return st;
}
