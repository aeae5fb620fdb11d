/* The emulator's op table (backend_emu.h): a kernel runtime over host memory and the emulated
 * launchers, plus the cuBLASLt stand-in. */
#include "backend_emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_kernels.h"
#include "core/dtype.h"
#include "cpu/cpu_ops.h"
#include "emu.h"

/* Device allocations: cudaMalloc's alignment, so the kernels' 16-byte vector paths see what they
 * would on a GPU. */
#define EMU_ALLOC_ALIGN 256
const ltx2_k_table *ltx2_emu_k_table_get(void);

typedef struct emu_impl {
    ltx2_kernel_rt rt; /* first: backend_kernels.c reads it through be->impl */
} emu_impl;

static ltx2_status emu_enter(const ltx2_backend *be, ltx2_context *ctx) {
    (void)be, (void)ctx;
    return LTX2_OK;
}

static ltx2_status emu_alloc(const ltx2_backend *be, ltx2_context *ctx, size_t nbytes, void **out) {
    const size_t n = (nbytes + EMU_ALLOC_ALIGN - 1) / EMU_ALLOC_ALIGN * EMU_ALLOC_ALIGN;
    *out = aligned_alloc(EMU_ALLOC_ALIGN, n ? n : EMU_ALLOC_ALIGN);
    if (!*out) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s alloc: %zu bytes", be->name, nbytes);
    return LTX2_OK;
}

static void emu_free(const ltx2_backend *be, void *p) {
    (void)be;
    free(p);
}

static ltx2_status emu_copy(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src, size_t n) {
    (void)be, (void)ctx;
    if (n && dst != src) memmove(dst, src, n);
    return LTX2_OK;
}

static ltx2_status emu_copy_2d(const ltx2_backend *be, ltx2_context *ctx, void *dst, size_t dpitch, const void *src,
                               size_t spitch, size_t width, size_t rows) {
    (void)be, (void)ctx;
    for (size_t r = 0; r < rows && width; r++) memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    return LTX2_OK;
}

/* Launches run to completion when called: nothing is ever pending, but a fault is sticky. */
static ltx2_status emu_sync(const ltx2_backend *be, ltx2_context *ctx) {
    const int e = ltx2_emu_get_last_error();
    if (e != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "%s: kernel fault %d: %s", be->name, e, ltx2_emu_last_fault());
    return LTX2_OK;
}

static const char *emu_error_text(int err) {
    (void)err;
    return ltx2_emu_last_fault();
}

static bool emu_supports(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt) {
    if (op == LTX2_OP_GEMM_FP8) return dt == LTX2_F8_E4M3; /* the stand-in below, as on an sm_89+ GPU */
    /* e4m3 attention: the emulated sm_90 kernel, unless the environment forces another */
    if (op == LTX2_OP_ATTENTION && dt == LTX2_F8_E4M3) return ltx2_kernel_fp8_attention_allowed(be->impl);
    if (op == LTX2_OP_ATTENTION || op == LTX2_OP_CONV3D) return dt == LTX2_BF16; /* as on CUDA */
    return op >= 0 && op < LTX2_OP_COUNT && (dt == LTX2_F32 || dt == LTX2_BF16);
}

/* Host f32 copy of a tensor's values (the operand rounding cuBLASLt reads). */
static float *as_f32(ltx2_context *ctx, const ltx2_tensor *t) {
    const size_t n = (size_t)ltx2_tensor_numel(t);
    float *f = malloc((n ? n : 1) * sizeof(float));
    if (f && ltx2_convert(ctx, f, LTX2_F32, t->data, t->dtype, n) != LTX2_OK) {
        free(f);
        return NULL;
    }
    return f;
}

/* cuBLASLt's y = act(alpha x W^T + bias) + residual stand-in: fp32 products and sums, then one
 * rounding to y's dtype; alpha = x_scale * w_scale for fp8 x and w (exact products of e4m3 values),
 * else 1. */
static ltx2_status emu_gemm_ex(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *w,
                               const ltx2_gemm_ex_args *a, ltx2_tensor *y) {
    (void)be;
    const int64_t K = x->shape[x->ndim - 1], N = y->shape[y->ndim - 1], M = ltx2_tensor_numel(x) / K;
    float *xf = as_f32(ctx, x), *wf = as_f32(ctx, w), *bf = a->bias ? as_f32(ctx, a->bias) : NULL;
    float *rf = a->residual ? as_f32(ctx, a->residual) : NULL, *acc = malloc((size_t)(M * N) * sizeof(float));
    ltx2_status st = LTX2_OK;
    if (!xf || !wf || !acc || (a->bias && !bf) || (a->residual && !rf))
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "emu gemm M=%lld N=%lld K=%lld: host buffers", (long long)M, (long long)N,
                        (long long)K);
    if (st == LTX2_OK)
        st = ltx2_cpu_gemm(ctx, M, N, K, x->dtype == LTX2_F8_E4M3 ? a->x_scale * a->w_scale : 1.0f, xf, K, wf,
                           a->w_layout == LTX2_B_NK ? K : N, a->w_layout, 0.0f, acc, N, bf);
    if (st == LTX2_OK && rf)
        for (int64_t i = 0; i < M * N; i++) acc[i] += rf[i];
    if (st == LTX2_OK && a->gelu) st = ltx2_cpu_gelu_tanh(ctx, acc, acc, M * N);
    if (st == LTX2_OK) st = ltx2_convert(ctx, y->data, y->dtype, acc, LTX2_F32, (size_t)(M * N));
    free(xf), free(wf), free(bf), free(rf), free(acc);
    return st;
}

static ltx2_status emu_gemm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *w,
                            ltx2_b_layout w_layout, const ltx2_tensor *bias, ltx2_tensor *y) {
    ltx2_gemm_ex_args a = {.w_layout = w_layout, .bias = bias, .x_scale = 1.0f, .w_scale = 1.0f};
    return emu_gemm_ex(be, ctx, x, w, &a, y);
}

static void emu_destroy(ltx2_backend *be) {
    if (!be) return;
    free(be->impl);
    free(be);
}

ltx2_status ltx2_backend_emu_create(ltx2_context *ctx, ltx2_backend **out) {
    *out = NULL;
    ltx2_backend *be = calloc(1, sizeof *be);
    emu_impl *ei = calloc(1, sizeof *ei);
    if (!be || !ei) {
        free(be);
        free(ei);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "emu backend");
    }
    ei->rt.k = ltx2_emu_k_table_get();
    const ltx2_status st = ltx2_kernel_choices_from_env(ctx, 0, false, &ei->rt);
    if (st != LTX2_OK) {
        free(be);
        free(ei);
        return st;
    }
    ei->rt.enter = emu_enter;
    ei->rt.scratch = emu_alloc;
    ei->rt.scratch_free = emu_free;
    ei->rt.error_text = emu_error_text;
    be->name = "emu";
    be->device = LTX2_DEVICE_CUDA; /* an emulated device: host pointers are refused as on a GPU */
    be->impl = ei;
    be->supports = emu_supports;
    be->fp8_gemm_out = LTX2_BF16; /* as on CUDA */
    be->alloc = emu_alloc;
    be->free = emu_free;
    be->upload = emu_copy;
    be->download = emu_copy;
    be->copy = emu_copy;
    be->copy_2d = emu_copy_2d;
    be->sync = emu_sync;
    be->gemm = emu_gemm;
    be->gemm_ex = emu_gemm_ex;
    be->destroy = emu_destroy;
    ltx2_backend_kernels_fill(be);
    *out = be;
    return LTX2_OK;
}
