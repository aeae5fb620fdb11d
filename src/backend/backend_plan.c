/* The planning backend (backend_plan.h): every op is a no-op, every allocation a fake address, and
 * the bytes held are counted. It tags its tensors as CUDA device memory and takes the dtypes the
 * CUDA backend takes, so a forward runs the same device path it would run on a GPU. */
#include "backend/backend_plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "att90_layout.h" /* the packed key mask's size */
#include "ltx2_kernels.h" /* the attention workspace's alignment */

/* Fake addresses start here (never 0, never a plausible host pointer) and advance by each
 * allocation rounded up to this alignment (cudaMalloc's is at least 256 bytes). */
#define PLAN_BASE_ADDR ((uintptr_t)1 << 44)
#define PLAN_ALIGN 256

typedef struct plan_buf {
    uintptr_t addr;
    size_t bytes;
} plan_buf;

typedef struct plan_impl {
    uintptr_t next;
    plan_buf *live;
    size_t n_live, cap_live;
    size_t cur, peak;
    bool oom; /* the live table could not grow: the counts are incomplete */
} plan_impl;

static plan_impl *impl_of(const ltx2_backend *be) { return (plan_impl *)be->impl; }

static bool plan_supports(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt) {
    (void)be;
    /* as the CUDA backend: the tensor-core ops bf16 only; fp8 GEMMs are planned like bf16 ones */
    if (op == LTX2_OP_GEMM_FP8) return dt == LTX2_F8_E4M3;
    if (op == LTX2_OP_ATTENTION || op == LTX2_OP_CONV3D) return dt == LTX2_BF16;
    return op >= 0 && op < LTX2_OP_COUNT && (dt == LTX2_F32 || dt == LTX2_BF16);
}

static ltx2_status plan_alloc(const ltx2_backend *be, ltx2_context *ctx, size_t nbytes, void **out) {
    plan_impl *p = impl_of(be);
    if (p->n_live == p->cap_live) {
        const size_t cap = p->cap_live ? 2 * p->cap_live : 64;
        plan_buf *nb = realloc(p->live, cap * sizeof *nb);
        if (!nb) {
            p->oom = true;
            return LTX2_ERROR(ctx, LTX2_ERR_OOM, "planning backend: allocation table");
        }
        p->live = nb;
        p->cap_live = cap;
    }
    const size_t bytes = (nbytes + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
    p->live[p->n_live++] = (plan_buf){p->next, bytes};
    *out = (void *)p->next;
    p->next += bytes ? bytes : PLAN_ALIGN;
    p->cur += bytes;
    if (p->cur > p->peak) p->peak = p->cur;
    return LTX2_OK;
}

static void plan_free(const ltx2_backend *be, void *ptr) {
    plan_impl *p = impl_of(be);
    for (size_t i = 0; ptr && i < p->n_live; i++)
        if (p->live[i].addr == (uintptr_t)ptr) {
            p->cur -= p->live[i].bytes;
            p->live[i] = p->live[--p->n_live];
            return;
        }
}

static ltx2_status plan_xfer(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src, size_t n) {
    (void)be, (void)ctx, (void)dst, (void)src, (void)n;
    return LTX2_OK;
}

static ltx2_status plan_download(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src, size_t n) {
    (void)be, (void)ctx, (void)src;
    memset(dst, 0, n); /* host readers see zeros, never uninitialised memory */
    return LTX2_OK;
}

static ltx2_status plan_copy_2d(const ltx2_backend *be, ltx2_context *ctx, void *dst, size_t dpitch, const void *src,
                                size_t spitch, size_t width, size_t rows) {
    (void)be, (void)ctx, (void)dst, (void)dpitch, (void)src, (void)spitch, (void)width, (void)rows;
    return LTX2_OK;
}

static ltx2_status plan_sync(const ltx2_backend *be, ltx2_context *ctx) {
    (void)ctx;
    return impl_of(be)->oom ? LTX2_ERR_OOM : LTX2_OK;
}

/* ---- ops: nothing to compute ---- */

#define PLAN_UNUSED6(a, b, c, d, e, f) (void)(a), (void)(b), (void)(c), (void)(d), (void)(e), (void)(f)

static ltx2_status plan_gemm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *w,
                             ltx2_b_layout l, const ltx2_tensor *bias, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, w, l, bias), (void)y;
    return LTX2_OK;
}
static ltx2_status plan_rms_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 const ltx2_tensor *weight, float eps, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, weight, eps, y);
    return LTX2_OK;
}
static ltx2_status plan_layer_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   const ltx2_tensor *weight, const ltx2_tensor *bias, float eps, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, weight, bias, eps), (void)y;
    return LTX2_OK;
}
static ltx2_status plan_softmax(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y) {
    (void)be, (void)ctx, (void)x, (void)y;
    return LTX2_OK;
}
static ltx2_status plan_unary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, float alpha, const ltx2_tensor *x,
                              ltx2_tensor *y) {
    (void)be, (void)ctx, (void)op, (void)alpha, (void)x, (void)y;
    return LTX2_OK;
}
static ltx2_status plan_conv1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv1d_desc *d,
                               const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, d, x, w, bias), (void)y;
    return LTX2_OK;
}
static ltx2_status plan_convt1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_convt1d_desc *d,
                                const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, d, x, w, bias), (void)y;
    return LTX2_OK;
}
static ltx2_status plan_fir(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_fir_desc *d,
                            const ltx2_tensor *x, const ltx2_tensor *filt, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, op, d, x, filt), (void)y;
    return LTX2_OK;
}
static ltx2_status plan_snake(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *alpha,
                              const ltx2_tensor *inv_beta, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, alpha, inv_beta, y);
    return LTX2_OK;
}
static ltx2_status plan_complex_abs(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y) {
    (void)be, (void)ctx, (void)x, (void)y;
    return LTX2_OK;
}
static ltx2_status plan_binary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_tensor *a,
                               const ltx2_tensor *b, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, op, a, b, y);
    return LTX2_OK;
}
static ltx2_status plan_convert(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y) {
    (void)be, (void)ctx, (void)x, (void)y;
    return LTX2_OK;
}

/* One part of the attention workspace, rounded as the kernel library lays it out. */
static size_t ws_part(size_t n) { return (n + LTX2_KATTN_WS_ALIGN - 1) / LTX2_KATTN_WS_ALIGN * LTX2_KATTN_WS_ALIGN; }

/* The CUDA attention's workspace (kernels/attention.cu, ltx2_k_attention_workspace), taken and
 * returned around the kernel, so it counts toward the peak. The plan does not know which kernel a
 * device picks, so it counts the larger layout, the wgmma kernel's: bf16 copies of K and Q when they
 * are normalised or rotated on the fly (the mma.sync kernel takes f32 per-row q scales instead of
 * the Q copy), and the key mask packed a bit per key, padded to whole 128-key tiles; with fp8, also
 * the e4m3 pre-pass's codes and scales (att90_f8_ws_parts). */
static ltx2_status plan_attention(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *q,
                                  const ltx2_tensor *k, const ltx2_tensor *v, const ltx2_attn_args *a,
                                  ltx2_tensor *out) {
    (void)v, (void)out;
    size_t bytes = 0;
    if (a->k_norm || a->q_norm || a->k_cos) {
        const size_t q_inv = (size_t)(q->shape[0] * q->shape[1]) * sizeof(float), q2 = (size_t)ltx2_tensor_numel(q) * 2;
        bytes += ws_part((size_t)ltx2_tensor_numel(k) * 2) + ws_part(q2 > q_inv ? q2 : q_inv);
    }
    if (a->key_mask) bytes += ws_part((size_t)(k->shape[0] * att90_mask_words(k->shape[1])) * sizeof(uint32_t));
    if (a->fp8) {
        size_t part[A90_F8_WS_PARTS];
        const int64_t d = q->shape[2] / a->heads;
        bytes += att90_f8_ws_parts(q->shape[0], q->shape[1], k->shape[1], a->heads, k->shape[2] / d, LTX2_KATTN_WS_ALIGN,
                                   part);
    }
    if (!bytes) return LTX2_OK;
    void *ws = NULL;
    LTX2_TRY(plan_alloc(be, ctx, bytes, &ws));
    plan_free(be, ws);
    return LTX2_OK;
}
static ltx2_status plan_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_rope_type type,
                             int64_t heads, const ltx2_tensor *cos_t, const ltx2_tensor *sin_t, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, type, heads, cos_t), (void)sin_t, (void)y;
    return LTX2_OK;
}
static ltx2_status plan_conv3d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d,
                               const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, bool silu,
                               ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, d, x, w, bias), (void)silu, (void)y;
    return LTX2_OK;
}
static ltx2_status plan_pixel_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float eps,
                                   bool silu, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, eps, silu, y);
    return LTX2_OK;
}
static ltx2_status plan_group_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t groups,
                                   float eps, const ltx2_tensor *weight, const ltx2_tensor *bias, bool silu,
                                   ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, groups, eps, weight), (void)bias, (void)silu, (void)y;
    return LTX2_OK;
}
static ltx2_status plan_blur(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t stride,
                             ltx2_tensor *y) {
    (void)be, (void)ctx, (void)x, (void)stride, (void)y;
    return LTX2_OK;
}
static ltx2_status plan_d2s(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_d2s_args *a,
                            const ltx2_tensor *residual, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, a, residual, y);
    return LTX2_OK;
}
static ltx2_status plan_s2d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_s2d_args *a,
                            const ltx2_tensor *residual, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, a, residual, y);
    return LTX2_OK;
}
static ltx2_status plan_norm_modulate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                      ltx2_norm_kind norm, float eps, const ltx2_tensor *scale,
                                      const ltx2_tensor *shift, const ltx2_mod_rows *m, ltx2_tensor *y,
                                      const ltx2_fp8_outs *q) {
    PLAN_UNUSED6(be, ctx, x, norm, eps, scale), (void)shift, (void)m, (void)y, (void)q;
    return LTX2_OK;
}
static ltx2_status plan_gated_add(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                  const ltx2_tensor *gate, const ltx2_mod_rows *m) {
    PLAN_UNUSED6(be, ctx, x, y, gate, m);
    return LTX2_OK;
}
static ltx2_status plan_head_gate(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o, const ltx2_tensor *logits,
                                  int64_t heads, const ltx2_fp8_outs *q) {
    (void)be, (void)ctx, (void)o, (void)logits, (void)heads, (void)q;
    return LTX2_OK;
}
static ltx2_status plan_gemm_ex(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *w,
                                const ltx2_gemm_ex_args *a, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, w, a, y);
    return LTX2_OK;
}
static ltx2_status plan_row_sumsq(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *ss) {
    (void)be, (void)ctx, (void)x, (void)ss;
    return LTX2_OK;
}
static ltx2_status plan_add_rms_norm(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                    const ltx2_tensor *wy, const ltx2_tensor *w, float eps, ltx2_tensor *out) {
    (void)be, (void)ctx, (void)x, (void)y, (void)wy, (void)w, (void)eps, (void)out;
    return LTX2_OK;
}
static ltx2_status plan_rms_norm_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                     const ltx2_tensor *w, float eps, int64_t heads, const ltx2_tensor *cos_t,
                                     const ltx2_tensor *sin_t, ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, w, heads, cos_t), (void)eps, (void)sin_t, (void)y;
    return LTX2_OK;
}
static ltx2_status plan_rms_apply(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                  const ltx2_tensor *ss, int64_t n, const ltx2_tensor *weight, float eps,
                                  ltx2_tensor *y) {
    PLAN_UNUSED6(be, ctx, x, ss, n, weight), (void)eps, (void)y;
    return LTX2_OK;
}
static ltx2_status plan_fp8(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float scale,
                            ltx2_tensor *y) {
    (void)be, (void)ctx, (void)x, (void)scale, (void)y;
    return LTX2_OK;
}

static void plan_destroy(ltx2_backend *be) {
    plan_impl *p = impl_of(be);
    if (p) free(p->live);
    free(p);
    free(be);
}

ltx2_status ltx2_backend_plan_create(ltx2_context *ctx, ltx2_backend **out) {
    *out = NULL;
    ltx2_backend *be = calloc(1, sizeof *be);
    plan_impl *p = calloc(1, sizeof *p);
    if (!be || !p) {
        free(be);
        free(p);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "planning backend");
    }
    p->next = PLAN_BASE_ADDR;
    *be = (ltx2_backend){
        .name = "plan", .device = LTX2_DEVICE_CUDA, .device_index = 0, .impl = p, .fp8_gemm_out = LTX2_BF16,
        .supports = plan_supports, .alloc = plan_alloc, .free = plan_free, .upload = plan_xfer,
        .download = plan_download, .copy = plan_xfer, .copy_2d = plan_copy_2d, .sync = plan_sync,
        .gemm = plan_gemm, .rms_norm = plan_rms_norm, .layer_norm = plan_layer_norm, .softmax = plan_softmax,
        .unary = plan_unary, .binary = plan_binary, .convert = plan_convert, .attention = plan_attention,
        .rope = plan_rope, .conv3d = plan_conv3d, .pixel_norm = plan_pixel_norm,
        .group_norm = plan_group_norm, .blur_downsample = plan_blur, .conv1d = plan_conv1d,
        .conv_transpose1d = plan_convt1d, .fir = plan_fir, .snake = plan_snake, .complex_abs = plan_complex_abs, .depth_to_space = plan_d2s,
        .space_to_depth = plan_s2d, .norm_modulate = plan_norm_modulate, .gated_add = plan_gated_add,
        .head_gate = plan_head_gate, .gemm_ex = plan_gemm_ex, .row_sumsq = plan_row_sumsq,
        .row_stats = plan_row_sumsq, /* the same nothing: a per-row output, no scratch */
        .add_rms_norm = plan_add_rms_norm, .rms_norm_rope = plan_rms_norm_rope,
        .rms_apply = plan_rms_apply, .fp8 = plan_fp8, .destroy = plan_destroy,
    };
    *out = be;
    return LTX2_OK;
}

void ltx2_backend_plan_counts(const ltx2_backend *be, size_t *current, size_t *peak) {
    const plan_impl *p = impl_of(be);
    if (current) *current = p->cur;
    if (peak) *peak = p->peak;
}

void ltx2_backend_plan_reset_peak(ltx2_backend *be) {
    plan_impl *p = impl_of(be);
    p->peak = p->cur;
}
