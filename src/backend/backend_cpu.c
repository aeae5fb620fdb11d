/* The CPU op table: fp32 ops from src/cpu/ (the reference), plus f32 <-> bf16 conversion.
 * Memory is ordinary host memory; upload/download/copy are memcpy and sync is a no-op. */
#include "backend/backend.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend_cpu_fused.h"
#include "core/dtype.h"
#include "cpu/cpu_attention.h"
#include "cpu/cpu_conv3d.h"
#include "cpu/cpu_depth_to_space.h"
#include "cpu/cpu_ops.h"
#include "cpu/cpu_rope.h"
#include "cpu/cpu_conv1d.h"
#include "cpu/cpu_space_to_depth.h"

/* Host buffers are cache-line aligned, like the packed GEMM panels. */
#define CPU_ALLOC_ALIGN 64

static bool cpu_supports(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt) {
    (void)be;
    if (op == LTX2_OP_CONVERT) return dt == LTX2_F32 || dt == LTX2_BF16;
    if (op == LTX2_OP_GEMM_FP8) return dt == LTX2_F8_E4M3; /* dequantised, then the f32 GEMM */
    if (op == LTX2_OP_ATTENTION && dt == LTX2_F8_E4M3) return true; /* e4m3 attention: ltx2_cpu_attention_fp8 */
    /* every other op, the fused ones included, is the fp32 reference */
    return op >= 0 && op < LTX2_OP_COUNT && dt == LTX2_F32;
}

static ltx2_status cpu_alloc(const ltx2_backend *be, ltx2_context *ctx, size_t nbytes, void **out) {
    (void)be;
    size_t n = (nbytes + CPU_ALLOC_ALIGN - 1) / CPU_ALLOC_ALIGN * CPU_ALLOC_ALIGN;
    if (n == 0) n = CPU_ALLOC_ALIGN;
    *out = aligned_alloc(CPU_ALLOC_ALIGN, n);
    if (!*out) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu alloc: cannot allocate %zu bytes", nbytes);
    return LTX2_OK;
}

static void cpu_free(const ltx2_backend *be, void *ptr) {
    (void)be;
    free(ptr);
}

static ltx2_status cpu_memcpy(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src,
                              size_t nbytes) {
    (void)be;
    (void)ctx;
    if (nbytes && dst != src) memmove(dst, src, nbytes);
    return LTX2_OK;
}

static ltx2_status cpu_copy_2d(const ltx2_backend *be, ltx2_context *ctx, void *dst, size_t dpitch,
                               const void *src, size_t spitch, size_t width, size_t rows) {
    (void)be;
    (void)ctx;
    for (size_t r = 0; r < rows && width; r++) memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    return LTX2_OK;
}

static ltx2_status cpu_sync(const ltx2_backend *be, ltx2_context *ctx) {
    (void)be;
    (void)ctx;
    return LTX2_OK;
}

static ltx2_status cpu_gemm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                            const ltx2_tensor *w, ltx2_b_layout w_layout, const ltx2_tensor *bias,
                            ltx2_tensor *y) {
    (void)be;
    int64_t K = x->shape[x->ndim - 1];
    int64_t N = y->shape[y->ndim - 1];
    int64_t M = 1;
    for (int i = 0; i + 1 < x->ndim; i++) M *= x->shape[i];
    int64_t ldb = w_layout == LTX2_B_NK ? K : N;
    return ltx2_cpu_gemm_wdt(ctx, M, N, K, 1.0f, x->data, K, w->data, w->dtype, ldb, w_layout, 0.0f, y->data, N,
                             bias ? bias->data : NULL);
}

static ltx2_status cpu_rms_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                const ltx2_tensor *weight, float eps, ltx2_tensor *y) {
    (void)be;
    int64_t d = x->shape[x->ndim - 1];
    return ltx2_cpu_rms_norm(ctx, x->data, y->data, ltx2_tensor_numel(x) / d, d,
                             weight ? weight->data : NULL, eps);
}

static ltx2_status cpu_row_sumsq(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *ss) {
    (void)be;
    const int64_t d = x->shape[x->ndim - 1];
    return ltx2_cpu_row_sumsq(ctx, x->data, ss->data, ltx2_tensor_numel(x) / d, d);
}

static ltx2_status cpu_rms_apply(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 const ltx2_tensor *ss, int64_t n, const ltx2_tensor *weight, float eps,
                                 ltx2_tensor *y) {
    (void)be;
    const int64_t d = x->shape[x->ndim - 1];
    return ltx2_cpu_rms_apply(ctx, x->data, ss->data, n, y->data, ltx2_tensor_numel(x) / d, d,
                              weight ? weight->data : NULL, eps);
}

static ltx2_status cpu_layer_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                  const ltx2_tensor *weight, const ltx2_tensor *bias, float eps,
                                  ltx2_tensor *y) {
    (void)be;
    int64_t d = x->shape[x->ndim - 1];
    return ltx2_cpu_layer_norm(ctx, x->data, y->data, ltx2_tensor_numel(x) / d, d,
                               weight ? weight->data : NULL, bias ? bias->data : NULL, eps);
}

static ltx2_status cpu_softmax(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                               ltx2_tensor *y) {
    (void)be;
    int64_t d = x->shape[x->ndim - 1];
    return ltx2_cpu_softmax(ctx, x->data, y->data, ltx2_tensor_numel(x) / d, d);
}

static ltx2_status cpu_unary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, float alpha,
                             const ltx2_tensor *x, ltx2_tensor *y) {
    (void)be;
    const int64_t n = ltx2_tensor_numel(x);
    switch (op) {
    case LTX2_OP_GELU_TANH: return ltx2_cpu_gelu_tanh(ctx, x->data, y->data, n);
    case LTX2_OP_SILU: return ltx2_cpu_silu(ctx, x->data, y->data, n);
    case LTX2_OP_LEAKY_RELU: return ltx2_cpu_leaky_relu(ctx, x->data, y->data, n, alpha);
    case LTX2_OP_TANH: return ltx2_cpu_tanh(ctx, x->data, y->data, n);
    case LTX2_OP_HARDTANH: return ltx2_cpu_hardtanh(ctx, x->data, y->data, n);
    case LTX2_OP_LOG_FLOOR: return ltx2_cpu_log_floor(ctx, x->data, y->data, n, alpha);
    case LTX2_OP_DIV_SCALAR: return ltx2_cpu_div_scalar(ctx, x->data, y->data, n, alpha);
    default: return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu unary: op %d", (int)op);
    }
}

static ltx2_status cpu_binary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                              const ltx2_tensor *a, const ltx2_tensor *b, ltx2_tensor *y) {
    (void)be;
    return ltx2_cpu_binary(ctx, op == LTX2_OP_ADD ? LTX2_BINARY_ADD : LTX2_BINARY_MUL, a, b, y);
}

static ltx2_status cpu_convert(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                               ltx2_tensor *y) {
    (void)be;
    return ltx2_convert(ctx, y->data, y->dtype, x->data, x->dtype, (size_t)ltx2_tensor_numel(x));
}

/* Applies RMSNorm (weight over the whole inner dim) and RoPE to a private copy of q or k. */
static ltx2_status cpu_prep_qk(ltx2_context *ctx, const ltx2_attn_args *a, int64_t heads, const ltx2_tensor *t,
                               const ltx2_tensor *norm_w, const ltx2_tensor *c, const ltx2_tensor *s,
                               float **out) {
    const int64_t B = t->shape[0], S = t->shape[1], D = t->shape[2];
    *out = malloc((size_t)(B * S * D) * sizeof(float));
    if (!*out) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu attention: %lld floats for q/k", (long long)(B * S * D));
    memcpy(*out, t->data, (size_t)(B * S * D) * sizeof(float));
    if (norm_w) LTX2_TRY(ltx2_cpu_rms_norm(ctx, *out, *out, B * S, D, norm_w->data, a->norm_eps));
    if (!c) return LTX2_OK;
    if (a->rope_type == LTX2_ROPE_SPLIT)
        return ltx2_cpu_rope_apply_split(ctx, *out, c->data, s->data, B, S, heads, D / heads);
    return ltx2_cpu_rope_apply_interleaved(ctx, *out, c->data, s->data, B, S, D);
}

static ltx2_status cpu_attention(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *q,
                                 const ltx2_tensor *k, const ltx2_tensor *v, const ltx2_attn_args *a,
                                 ltx2_tensor *out) {
    (void)be;
    float *qp = NULL, *kp = NULL;
    uint8_t *mask = NULL;
    const int64_t kvh = a->kv_heads > 0 ? a->kv_heads : a->heads;
    ltx2_status st = cpu_prep_qk(ctx, a, a->heads, q, a->q_norm, a->q_cos, a->q_sin, &qp);
    if (st == LTX2_OK) st = cpu_prep_qk(ctx, a, kvh, k, a->k_norm, a->k_cos, a->k_sin, &kp);
    if (st == LTX2_OK && a->key_mask) {
        /* u8 and bool are both one byte per key; normalise to 0/1 for the reference */
        int64_t n = ltx2_tensor_numel(a->key_mask);
        mask = malloc((size_t)(n ? n : 1));
        if (!mask) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu attention: mask copy");
        for (int64_t i = 0; mask && i < n; i++) mask[i] = ((const uint8_t *)a->key_mask->data)[i] != 0;
    }
    const ltx2_cpu_attn_keys keys = {
        .key_mask = mask, .kv_heads = kvh, .causal = a->causal, .window = a->window, .empty_zero = a->empty_zero,
        .probs_bf16 = a->probs_bf16, .blocks = a->blocks ? a->blocks->data : NULL};
    if (st == LTX2_OK)
        st = (a->fp8 ? ltx2_cpu_attention_fp8 : ltx2_cpu_attention)(ctx, qp, kp, v->data, out->data, q->shape[0],
                                                                    q->shape[1], k->shape[1], a->heads,
                                                                    q->shape[2] / a->heads, &keys, a->scale);
    free(qp);
    free(kp);
    free(mask);
    return st;
}

static ltx2_status cpu_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                            ltx2_rope_type type, int64_t heads, const ltx2_tensor *cos_t,
                            const ltx2_tensor *sin_t, ltx2_tensor *y) {
    (void)be;
    const int64_t B = x->shape[0], S = x->shape[1], D = x->shape[2];
    if (y->data != x->data) memcpy(y->data, x->data, (size_t)(B * S * D) * sizeof(float));
    if (type == LTX2_ROPE_SPLIT) /* tables [B or 1, heads or 1, S, d/2] (ltx2_backend_rope) */
        return ltx2_cpu_rope_apply_split_tab(ctx, y->data, cos_t->data, sin_t->data, B, S, heads, D / heads,
                                             cos_t->shape[0], cos_t->shape[1]);
    return ltx2_cpu_rope_apply_interleaved(ctx, y->data, cos_t->data, sin_t->data, B, S, D);
}

static ltx2_status cpu_conv3d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d,
                              const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, bool silu,
                              ltx2_tensor *y) {
    (void)be;
    LTX2_TRY(ltx2_cpu_conv3d(ctx, d, x->data, x->shape[0], x->shape[1], x->shape[2], x->shape[3], w->data,
                             bias ? bias->data : NULL, y->data));
    return silu ? ltx2_cpu_silu(ctx, y->data, y->data, ltx2_tensor_numel(y)) : LTX2_OK;
}

static ltx2_status cpu_group_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t groups,
                                  float eps, const ltx2_tensor *weight, const ltx2_tensor *bias, bool silu,
                                  ltx2_tensor *y) {
    (void)be;
    const int64_t c = x->shape[x->ndim - 1], n = x->shape[0];
    return ltx2_cpu_group_norm(ctx, x->data, y->data, n, ltx2_tensor_numel(x) / (n * c), c, groups, eps,
                               weight ? weight->data : NULL, bias ? bias->data : NULL, silu);
}

static ltx2_status cpu_blur_downsample(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                       int64_t stride, ltx2_tensor *y) {
    (void)be;
    return ltx2_cpu_blur_downsample(ctx, x->data, x->shape[0] * x->shape[1], x->shape[2], x->shape[3], x->shape[4],
                                    stride, y->data);
}

static ltx2_status cpu_pixel_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float eps,
                                  bool silu, ltx2_tensor *y) {
    (void)be;
    int64_t d = x->shape[x->ndim - 1], n = ltx2_tensor_numel(x);
    LTX2_TRY(ltx2_cpu_rms_norm(ctx, x->data, y->data, n / d, d, NULL, eps));
    return silu ? ltx2_cpu_silu(ctx, y->data, y->data, n) : LTX2_OK;
}

static ltx2_status cpu_depth_to_space(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                      const ltx2_d2s_args *a, const ltx2_tensor *residual, ltx2_tensor *y) {
    (void)be;
    const int64_t prod = a->stride[0] * a->stride[1] * a->stride[2];
    return ltx2_cpu_depth_to_space(ctx, x->data, x->shape[0], x->shape[1], x->shape[2], x->shape[3],
                                   x->shape[4] / prod, a->stride, a->drop_first, residual ? residual->data : NULL,
                                   residual ? residual->shape[4] / prod : 0, y->data);
}

static ltx2_status cpu_space_to_depth(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                      const ltx2_s2d_args *a, const ltx2_tensor *residual, ltx2_tensor *y) {
    (void)be;
    return ltx2_cpu_space_to_depth(ctx, x->data, x->shape[0], x->shape[1], x->shape[2], x->shape[3], x->shape[4],
                                   a->stride, residual ? residual->data : NULL, residual ? residual->shape[4] : 0,
                                   y->data);
}

static ltx2_status cpu_conv1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv1d_desc *d,
                              const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y) {
    (void)be;
    return ltx2_cpu_conv1d(ctx, d, x->data, x->shape[0], x->shape[1], w->data, bias ? bias->data : NULL, y->data);
}

static ltx2_status cpu_conv_transpose1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_convt1d_desc *d,
                                        const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias,
                                        ltx2_tensor *y) {
    (void)be;
    return ltx2_cpu_conv_transpose1d(ctx, d, x->data, x->shape[0], x->shape[1], w->data, bias ? bias->data : NULL,
                                     y->data);
}

static ltx2_status cpu_fir(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_fir_desc *d,
                           const ltx2_tensor *x, const ltx2_tensor *filt, ltx2_tensor *y) {
    (void)be;
    return (op == LTX2_OP_FIR_UPSAMPLE ? ltx2_cpu_fir_upsample : ltx2_cpu_fir_downsample)(
        ctx, d, x->data, x->shape[0], x->shape[1], x->shape[2], filt->data, y->data);
}

static ltx2_status cpu_snake(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *alpha,
                             const ltx2_tensor *inv_beta, ltx2_tensor *y) {
    (void)be;
    const int64_t c = x->shape[x->ndim - 1];
    return ltx2_cpu_snake(ctx, x->data, y->data, alpha->data, inv_beta->data, ltx2_tensor_numel(x) / c, c);
}

static ltx2_status cpu_row_stats(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *st) {
    (void)be;
    const int64_t d = x->shape[x->ndim - 1];
    return ltx2_cpu_row_stats(ctx, x->data, st->data, ltx2_tensor_numel(x) / d, d);
}

static ltx2_status cpu_complex_abs(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y) {
    (void)be;
    const int64_t nf = y->shape[y->ndim - 1];
    return ltx2_cpu_complex_abs(ctx, x->data, y->data, ltx2_tensor_numel(y) / nf, nf);
}

static const ltx2_backend cpu_backend = {
    .name = "cpu",
    .device = LTX2_DEVICE_CPU,
    .device_index = 0,
    .impl = NULL,
    .gemm_bf16_weights = true,
    .fp8_gemm_out = LTX2_F32,
    .supports = cpu_supports,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .upload = cpu_memcpy,
    .download = cpu_memcpy,
    .copy = cpu_memcpy,
    .copy_2d = cpu_copy_2d,
    .sync = cpu_sync,
    .gemm = cpu_gemm,
    .rms_norm = cpu_rms_norm,
    .layer_norm = cpu_layer_norm,
    .softmax = cpu_softmax,
    .unary = cpu_unary,
    .binary = cpu_binary,
    .convert = cpu_convert,
    .attention = cpu_attention,
    .rope = cpu_rope,
    .conv3d = cpu_conv3d,
    .pixel_norm = cpu_pixel_norm,
    .group_norm = cpu_group_norm,
    .blur_downsample = cpu_blur_downsample,
    .conv1d = cpu_conv1d,
    .conv_transpose1d = cpu_conv_transpose1d,
    .fir = cpu_fir,
    .snake = cpu_snake,
    .complex_abs = cpu_complex_abs,
    .depth_to_space = cpu_depth_to_space,
    .space_to_depth = cpu_space_to_depth,
    .norm_modulate = ltx2_cpu_be_norm_modulate,
    .gated_add = ltx2_cpu_be_gated_add,
    .head_gate = ltx2_cpu_be_head_gate,
    .gemm_ex = ltx2_cpu_be_gemm_ex,
    .fp8 = ltx2_cpu_be_fp8,
    .row_sumsq = cpu_row_sumsq,
    .row_stats = cpu_row_stats,
    .add_rms_norm = ltx2_cpu_be_add_rms_norm,
    .rms_norm_rope = ltx2_cpu_be_rms_norm_rope,
    .rms_apply = cpu_rms_apply,
    .destroy = NULL,
};

const ltx2_backend *ltx2_backend_cpu(void) { return &cpu_backend; }
