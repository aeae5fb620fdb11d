/* The CPU op table: fp32 ops from src/cpu/ (the reference), plus f32 <-> bf16 conversion.
 * Memory is ordinary host memory; upload/download/copy are memcpy and sync is a no-op. */
#include "backend/backend.h"

#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"

/* Host buffers are cache-line aligned, like the packed GEMM panels. */
#define CPU_ALLOC_ALIGN 64

static bool cpu_supports(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt) {
    (void)be;
    if (op == LTX2_OP_CONVERT) return dt == LTX2_F32 || dt == LTX2_BF16;
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
    return ltx2_cpu_gemm(ctx, M, N, K, 1.0f, x->data, K, w->data, ldb, w_layout, 0.0f, y->data, N,
                         bias ? bias->data : NULL);
}

static ltx2_status cpu_rms_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                const ltx2_tensor *weight, float eps, ltx2_tensor *y) {
    (void)be;
    int64_t d = x->shape[x->ndim - 1];
    return ltx2_cpu_rms_norm(ctx, x->data, y->data, ltx2_tensor_numel(x) / d, d,
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

static ltx2_status cpu_unary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                             const ltx2_tensor *x, ltx2_tensor *y) {
    (void)be;
    int64_t n = ltx2_tensor_numel(x);
    if (op == LTX2_OP_GELU_TANH) return ltx2_cpu_gelu_tanh(ctx, x->data, y->data, n);
    return ltx2_cpu_silu(ctx, x->data, y->data, n);
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

static const ltx2_backend cpu_backend = {
    .name = "cpu",
    .device = LTX2_DEVICE_CPU,
    .device_index = 0,
    .impl = NULL,
    .supports = cpu_supports,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .upload = cpu_memcpy,
    .download = cpu_memcpy,
    .copy = cpu_memcpy,
    .sync = cpu_sync,
    .gemm = cpu_gemm,
    .rms_norm = cpu_rms_norm,
    .layer_norm = cpu_layer_norm,
    .softmax = cpu_softmax,
    .unary = cpu_unary,
    .binary = cpu_binary,
    .convert = cpu_convert,
    .destroy = NULL,
};

const ltx2_backend *ltx2_backend_cpu(void) { return &cpu_backend; }
