/* The op-table entries a kernel library runs (every op but the GEMMs and the memory runtime):
 * arguments, already checked by backend.c, marshalled into the launchers of kernels/ltx2_kernels.h
 * reached through a launcher table. The CUDA backend (backend_cuda.c) fills these with the real
 * kernels; the CPU emulator's backend (tests/emu/backend_emu.c) with the same kernels run on the
 * CPU; both run exactly this code. Also the environment switches that pick between two kernels of
 * one op (ltx2_kernel_impl_from_env), which both backends read. */
#include "backend/backend_kernels.h"

#include <stdlib.h>
#include <string.h>

#include "core/tensor_ops.h"
#include "cpu/broadcast.h"

static const ltx2_kernel_rt *krt(const ltx2_backend *be) { return (const ltx2_kernel_rt *)be->impl; }
static int kdt(ltx2_dtype dt) { return dt == LTX2_BF16 ? LTX2_KDT_BF16 : LTX2_KDT_F32; }

/* A launcher's result: 0, or an error reported with the statement, the backend and its device. */
#define KCHECK(be, ctx, call)                                                                             \
    do {                                                                                                  \
        const int kerr_ = (call);                                                                         \
        if (kerr_ != 0)                                                                                   \
            return LTX2_ERROR((ctx), LTX2_ERR_DEVICE, "%s error %s in `%s` on device %d", (be)->name,      \
                              krt(be)->error_text(kerr_), #call, krt(be)->dev);                           \
    } while (0)

static int krope(ltx2_rope_type t) { return t == LTX2_ROPE_INTERLEAVED ? LTX2_KROPE_INTERLEAVED : LTX2_KROPE_SPLIT; }

static ltx2_status k_rms_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 const ltx2_tensor *weight, float eps, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    int64_t d = x->shape[x->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->rms_norm(rt->stream, kdt(x->dtype), x->data, y->data,
                                               weight ? weight->data : NULL,
                                               ltx2_tensor_numel(x) / d, d, eps));
    return LTX2_OK;
}

static ltx2_status k_row_sumsq(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *ss) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t d = x->shape[x->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->row_sumsq(rt->stream, kdt(x->dtype), x->data, ss->data,
                                                ltx2_tensor_numel(x) / d, d));
    return LTX2_OK;
}

static ltx2_status k_rms_apply(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                  const ltx2_tensor *ss, int64_t n, const ltx2_tensor *weight, float eps,
                                  ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t d = x->shape[x->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->rms_apply(rt->stream, kdt(x->dtype), x->data, y->data,
                                                weight ? weight->data : NULL, ss->data, ltx2_tensor_numel(x) / d, d,
                                                (float)n, eps));
    return LTX2_OK;
}

static ltx2_status k_layer_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   const ltx2_tensor *weight, const ltx2_tensor *bias, float eps,
                                   ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    int64_t d = x->shape[x->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->layer_norm(rt->stream, kdt(x->dtype), x->data, y->data,
                                                 weight ? weight->data : NULL, bias ? bias->data : NULL,
                                                 ltx2_tensor_numel(x) / d, d, eps));
    return LTX2_OK;
}

static ltx2_status k_softmax(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    int64_t d = x->shape[x->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->softmax(rt->stream, kdt(x->dtype), x->data, y->data,
                                              ltx2_tensor_numel(x) / d, d));
    return LTX2_OK;
}

static int kunary(ltx2_op op) {
    switch (op) {
    case LTX2_OP_GELU_TANH: return LTX2_KUNARY_GELU_TANH;
    case LTX2_OP_SILU: return LTX2_KUNARY_SILU;
    case LTX2_OP_LEAKY_RELU: return LTX2_KUNARY_LEAKY_RELU;
    case LTX2_OP_TANH: return LTX2_KUNARY_TANH;
    case LTX2_OP_HARDTANH: return LTX2_KUNARY_HARDTANH;
    case LTX2_OP_LOG_FLOOR: return LTX2_KUNARY_LOG_FLOOR;
    default: return LTX2_KUNARY_DIV_SCALAR; /* backend.c admits only the pointwise ops */
    }
}

static ltx2_status k_unary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, float alpha,
                              const ltx2_tensor *x, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->unary(rt->stream, kdt(x->dtype), kunary(op), x->data, y->data,
                                            ltx2_tensor_numel(x), alpha));
    return LTX2_OK;
}

static ltx2_status k_binary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                               const ltx2_tensor *a, const ltx2_tensor *b, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    ltx2_broadcast_plan p;
    LTX2_TRY(ltx2_broadcast_plan_make(ctx, a, b, y, &p));
    if (p.numel == 0) return LTX2_OK;
    int kop = op == LTX2_OP_ADD ? LTX2_KBINARY_ADD : LTX2_KBINARY_MUL;
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->binary(rt->stream, kdt(a->dtype), kop, a->data, b->data, y->data,
                                             p.ndim, p.shape, p.a_strides, p.b_strides, p.out_strides));
    return LTX2_OK;
}

static ltx2_status k_convert(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->convert(rt->stream, kdt(x->dtype), x->data, kdt(y->dtype), y->data,
                                              ltx2_tensor_numel(x)));
    return LTX2_OK;
}

static ltx2_status k_attention(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *q,
                               const ltx2_tensor *k, const ltx2_tensor *v, const ltx2_attn_args *a,
                               ltx2_tensor *out) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t d = q->shape[2] / a->heads;
    /* Gemma-3's masks (grouped-query, causal, sliding window, empty rows zero) run on the per-row
     * kernel, which normalises and rotates nothing of k itself under them */
    const bool gemma_masks =
        (a->kv_heads > 0 && a->kv_heads != a->heads) || a->causal || a->window > 0 || a->empty_zero || a->blocks;
    if (gemma_masks && (a->q_norm || a->q_cos))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s attention: grouped-query, causal or windowed masks together with QK norm or RoPE inside "
                          "the op (apply them before it, as the Gemma forward does)", be->name);
    /* 64, 128 and 256 take the tensor-core kernels; other head dims up to the limit a per-row fp32
     * kernel (kernels/attention_small.cu: the tiny models, not a speed path) */
    if (d > LTX2_KATTN_MAX_HEAD_DIM)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s attention: head_dim %lld (supported: up to %d)", be->name,
                          (long long)d, LTX2_KATTN_MAX_HEAD_DIM);
    ltx2_k_attn_args ka = {
        .q = q->data, .k = k->data, .v = v->data, .out = out->data,
        .B = q->shape[0], .Sq = q->shape[1], .Skv = k->shape[1], .heads = a->heads, .head_dim = d,
        .scale = a->scale, .key_mask = a->key_mask ? a->key_mask->data : NULL,
        .q_norm = a->q_norm ? a->q_norm->data : NULL, .k_norm = a->k_norm ? a->k_norm->data : NULL,
        .norm_eps = a->norm_eps, .rope = a->q_cos ? krope(a->rope_type) : LTX2_KROPE_NONE,
        .q_cos = a->q_cos ? a->q_cos->data : NULL, .q_sin = a->q_sin ? a->q_sin->data : NULL,
        .k_cos = a->k_cos ? a->k_cos->data : NULL, .k_sin = a->k_sin ? a->k_sin->data : NULL,
        .impl = rt->attn_impl, .kv_heads = a->kv_heads, .causal = a->causal, .window = a->window,
        .empty_zero = a->empty_zero, .blocks = a->blocks ? a->blocks->data : NULL, .prep = rt->attn_prep,
        .fp8 = a->fp8,
    };
    if (a->fp8 && !ltx2_kernel_fp8_attention_allowed(rt))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s attention: e4m3 attention runs on the sm_90a wgmma kernel with its pre-pass; the "
                          "attention kernel or its layout is forced otherwise (LTX2_ATTN_IMPL / LTX2_ATTN_PREP)",
                          be->name);
    LTX2_TRY(rt->enter(be, ctx));
    ka.workspace_bytes = rt->k->attention_workspace(&ka);
    /* stream-ordered scratch (normalised/rotated K and Q, q inverse RMS): freed after the kernels */
    if (ka.workspace_bytes) LTX2_TRY(rt->scratch(be, ctx, ka.workspace_bytes, &ka.workspace));
    const int e = rt->k->attention(rt->stream, &ka);
    ltx2_status st = LTX2_OK;
    if (e == LTX2_KERR_NOT_SUPPORTED && ka.fp8)
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                        "%s attention: e4m3 attention needs the sm_90a wgmma kernel (an H100 / H200 and a build with "
                        "the 90a architecture); device %d has none",
                        be->name, rt->dev);
    else if (e == LTX2_KERR_NOT_SUPPORTED && ka.impl == LTX2_KATTN_WGMMA)
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                        "%s attention B=%lld Sq=%lld Skv=%lld H=%lld d=%lld: the sm_90a wgmma kernel was forced but "
                        "does not take this launch (head_dim 64/128/256, scale > 0, no image blocks, empty rows "
                        "zeroed under a causal or windowed mask)",
                        be->name, (long long)ka.B, (long long)ka.Sq, (long long)ka.Skv, (long long)ka.heads,
                        (long long)d);
    else if (e != 0)
        st = LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "%s attention B=%lld Sq=%lld Skv=%lld H=%lld d=%lld: %s on device %d",
                        be->name, (long long)ka.B, (long long)ka.Sq, (long long)ka.Skv, (long long)ka.heads,
                        (long long)d, rt->error_text(e), rt->dev);
    if (ka.workspace) rt->scratch_free(be, ka.workspace);
    return st;
}

static ltx2_status k_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                             ltx2_rope_type type, int64_t heads, const ltx2_tensor *cos_t,
                             const ltx2_tensor *sin_t, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    LTX2_TRY(rt->enter(be, ctx));
    /* split tables [B or 1, heads or 1, S, d/2] (ltx2_backend_rope's rule); interleaved ones full */
    const bool split = type == LTX2_ROPE_SPLIT;
    KCHECK(be, ctx, rt->k->rope(rt->stream, kdt(x->dtype), krope(type), x->data, y->data, cos_t->data,
                                           sin_t->data, x->shape[0], x->shape[1], heads, x->shape[2] / heads,
                                           split ? cos_t->shape[0] : x->shape[0], split ? cos_t->shape[1] : heads));
    return LTX2_OK;
}

_Static_assert(LTX2_KATTN_AUTO == 0 && LTX2_KATTN_MMA_SYNC == 1 && LTX2_KATTN_WGMMA == 2 && LTX2_KCONV_AUTO == 0 &&
                   LTX2_KCONV_MMA_SYNC == 1 && LTX2_KCONV_WGMMA == 2,
               "ltx2_kernel_impl_from_env's values");

ltx2_status ltx2_kernel_impl_from_env(ltx2_context *ctx, const char *env, const char *kernel,
                                      int (*wgmma_available)(void), int dev, int *out) {
    const char *v = getenv(env);
    *out = 0;
    if (!v || !*v || !strcmp(v, "auto")) return LTX2_OK;
    if (!strcmp(v, "mma_sync")) {
        *out = 1;
        return LTX2_OK;
    }
    if (strcmp(v, "wgmma") != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s=\"%s\": expected auto, mma_sync or wgmma%s", env, v,
                          strcmp(env, LTX2_CONV3D_IMPL_ENV) ? "" : " (or cudnn on the CUDA backend)");
    if (!wgmma_available())
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s=wgmma: device %d cannot run the sm_90a %s kernel (needs compute capability 9.x and "
                          "a build whose CUDA architectures include 90a)",
                          env, dev, kernel);
    *out = 2;
    return LTX2_OK;
}

ltx2_status ltx2_kernel_choices_from_env(ltx2_context *ctx, int dev, bool library, ltx2_kernel_rt *rt) {
    LTX2_TRY(ltx2_kernel_impl_from_env(ctx, LTX2_ATTN_IMPL_ENV, "attention", rt->k->attention_wgmma_available, dev,
                                       &rt->attn_impl));
    const char *cv = getenv(LTX2_CONV3D_IMPL_ENV);
    if (cv && !strcmp(cv, "cudnn")) {
        if (!library)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s=cudnn: this backend runs its kernels only (cuDNN is the "
                              "CUDA backend's)", LTX2_CONV3D_IMPL_ENV);
        rt->conv_impl = LTX2_CONV3D_IMPL_LIBRARY;
    } else {
        LTX2_TRY(ltx2_kernel_impl_from_env(ctx, LTX2_CONV3D_IMPL_ENV, "conv3d", rt->k->conv3d_wgmma_available, dev,
                                           &rt->conv_impl));
    }
    const char *v = getenv(LTX2_ATTN_PREP_ENV);
    rt->attn_prep = LTX2_KATTN_PREP_AUTO;
    if (v && *v && strcmp(v, "auto") != 0) {
        if (strcmp(v, "in_kernel") != 0)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s=\"%s\": expected auto or in_kernel", LTX2_ATTN_PREP_ENV, v);
        rt->attn_prep = LTX2_KATTN_PREP_IN_KERNEL;
    }
    return LTX2_OK;
}

static ltx2_status k_conv3d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d,
                               const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, bool silu,
                               ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    if (d->c_in % 8 || d->c_out % 8)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s conv3d: c_in %lld and c_out %lld must be multiples of 8",
                          be->name, (long long)d->c_in, (long long)d->c_out);
    int64_t front, back;
    ltx2_conv3d_tpad_amounts(d, &front, &back);
    ltx2_k_conv3d_args ka = {
        .x = x->data, .w = w->data, .bias = bias ? bias->data : NULL, .y = y->data,
        .n = x->shape[0], .t = x->shape[1], .h = x->shape[2], .w_ = x->shape[3], .c_in = d->c_in, .c_out = d->c_out,
        .kt = d->kt, .kh = d->kh, .kw = d->kw, .st = d->st, .sh = d->sh, .sw = d->sw, .t_front = front,
        .t_zero = ltx2_conv3d_tpad_zeros(d), .reflect = d->spad == LTX2_CONV_SPAD_REFLECT, .to = y->shape[1], .ho = y->shape[2], .wo = y->shape[3],
        .silu = silu, .impl = rt->conv_impl == LTX2_CONV3D_IMPL_LIBRARY ? LTX2_KCONV_AUTO : rt->conv_impl,
    };
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->conv3d(rt->stream, &ka));
    return LTX2_OK;
}

static ltx2_status k_pixel_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float eps,
                                   bool silu, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    int64_t d = x->shape[x->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->pixel_norm(rt->stream, kdt(x->dtype), x->data, y->data,
                                                 ltx2_tensor_numel(x) / d, d, eps, silu));
    return LTX2_OK;
}

static ltx2_status k_group_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t groups,
                                float eps, const ltx2_tensor *weight, const ltx2_tensor *bias, bool silu,
                                ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t c = x->shape[x->ndim - 1], n = x->shape[0];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->group_norm(rt->stream, kdt(x->dtype), x->data, y->data, n, ltx2_tensor_numel(x) / (n * c),
                                      c, groups, eps, weight ? weight->data : NULL, bias ? bias->data : NULL, silu));
    return LTX2_OK;
}

static ltx2_status k_blur_downsample(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t stride,
                                     ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->blur_downsample(rt->stream, kdt(x->dtype), x->data, y->data, x->shape[0] * x->shape[1],
                                           x->shape[2], x->shape[3], x->shape[4], stride));
    return LTX2_OK;
}

static ltx2_status k_depth_to_space(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                       const ltx2_d2s_args *a, const ltx2_tensor *residual, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t prod = a->stride[0] * a->stride[1] * a->stride[2];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->depth_to_space(rt->stream, kdt(x->dtype), x->data, residual ? residual->data : NULL, y->data,
                                       x->shape[0], x->shape[1], x->shape[2], x->shape[3], x->shape[4] / prod,
                                       a->stride[0], a->stride[1], a->stride[2], a->drop_first,
                                       residual ? residual->shape[4] / prod : 0));
    return LTX2_OK;
}

static ltx2_status k_space_to_depth(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   const ltx2_s2d_args *a, const ltx2_tensor *residual, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->space_to_depth(rt->stream, kdt(x->dtype), x->data, residual ? residual->data : NULL,
                                          y->data, x->shape[0], x->shape[1], x->shape[2], x->shape[3], x->shape[4],
                                          a->stride[0], a->stride[1], a->stride[2],
                                          residual ? residual->shape[4] : 0));
    return LTX2_OK;
}

/* the op's fp8 copies pass straight through to the kernel's */
_Static_assert(LTX2_K_FP8_OUTS_MAX == LTX2_FP8_OUTS_MAX, "kernel and backend fp8 copy limits differ");

/* An op's fp8 copies (NULL: none) as the launchers take them: each scale as its reciprocal, as k_fp8
 * passes it to the quantise kernel. */
static ltx2_k_fp8_outs k_fp8_outs(const ltx2_fp8_outs *q) {
    ltx2_k_fp8_outs k = {0};
    for (int i = 0; q && i < q->n; i++) {
        k.q[i] = q->q[i]->data;
        k.inv_scale[i] = 1.0f / q->scale[i];
    }
    k.n = q ? q->n : 0;
    k.no_y = q && q->no_y;
    return k;
}

static ltx2_status k_norm_modulate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                      ltx2_norm_kind norm, float eps, const ltx2_tensor *scale,
                                      const ltx2_tensor *shift, const ltx2_mod_rows *m, ltx2_tensor *y,
                                      const ltx2_fp8_outs *q) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t D = x->shape[x->ndim - 1];
    ltx2_k_modulate_args ka = {
        .x = x->data, .y = y->data, .rows = ltx2_tensor_numel(x) / D, .dim = D,
        .norm = norm == LTX2_NORM_RMS ? LTX2_KNORM_RMS : norm == LTX2_NORM_LAYER ? LTX2_KNORM_LAYER : LTX2_KNORM_NONE,
        .eps = eps, .scale = scale->data, .shift = shift->data, .mod_stride = scale->strides[0],
        .row_idx = m->row_idx ? m->row_idx->data : NULL, .rows_per_group = m->rows_per_group,
    };
    ka.q = k_fp8_outs(q);
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->norm_modulate(rt->stream, kdt(x->dtype), &ka));
    return LTX2_OK;
}

static ltx2_status k_gated_add(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                  const ltx2_tensor *gate, const ltx2_mod_rows *m) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t D = x->shape[x->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->gated_add(rt->stream, kdt(x->dtype), x->data, y->data, gate ? gate->data : NULL,
                                  gate ? gate->strides[0] : 0, gate && m->row_idx ? m->row_idx->data : NULL,
                                  gate ? m->rows_per_group : 1, ltx2_tensor_numel(x) / D, D));
    return LTX2_OK;
}

static ltx2_status k_head_gate(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o, const ltx2_tensor *logits,
                                  int64_t heads, const ltx2_fp8_outs *q) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t inner = o->shape[o->ndim - 1];
    const ltx2_k_fp8_outs kq = k_fp8_outs(q);
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->head_gate(rt->stream, kdt(o->dtype), o->data, logits->data,
                                                ltx2_tensor_numel(o) / inner, heads, inner / heads, &kq));
    return LTX2_OK;
}

static ltx2_status k_fp8(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float scale,
                            ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t n = ltx2_tensor_numel(x);
    LTX2_TRY(rt->enter(be, ctx));
    if (y->dtype == LTX2_F8_E4M3)
        KCHECK(be, ctx, rt->k->fp8_quant(rt->stream, kdt(x->dtype), x->data, y->data, n, 1.0f / scale));
    else
        KCHECK(be, ctx, rt->k->fp8_dequant(rt->stream, x->data, kdt(y->dtype), y->data, n, scale));
    return LTX2_OK;
}

static ltx2_status k_conv1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv1d_desc *d,
                            const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->conv1d(rt->stream, kdt(x->dtype), x->data, w->data, bias ? bias->data : NULL, y->data,
                                  x->shape[0], x->shape[1], d->c_in, d->c_out, d->k, d->stride, d->dilation,
                                  d->pad_left, y->shape[1]));
    return LTX2_OK;
}

static ltx2_status k_conv_transpose1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_convt1d_desc *d,
                                      const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias,
                                      ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->conv_transpose1d(rt->stream, kdt(x->dtype), x->data, w->data, bias ? bias->data : NULL,
                                            y->data, x->shape[0], x->shape[1], d->c_in, d->c_out, d->k, d->stride,
                                            d->padding, y->shape[1]));
    return LTX2_OK;
}

static ltx2_status k_fir(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_fir_desc *d,
                         const ltx2_tensor *x, const ltx2_tensor *filt, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    LTX2_TRY(rt->enter(be, ctx));
    if (op == LTX2_OP_FIR_UPSAMPLE)
        KCHECK(be, ctx, rt->k->fir_upsample(rt->stream, kdt(x->dtype), x->data, filt->data, y->data, x->shape[0],
                                            x->shape[1], x->shape[2], d->taps, d->ratio, d->pad_left, d->pad_right,
                                            d->crop_left, y->shape[1]));
    else
        KCHECK(be, ctx, rt->k->fir_downsample(rt->stream, kdt(x->dtype), x->data, filt->data, y->data, x->shape[0],
                                              x->shape[1], x->shape[2], d->taps, d->ratio, d->pad_left, y->shape[1]));
    return LTX2_OK;
}

static ltx2_status k_snake(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *alpha,
                           const ltx2_tensor *inv_beta, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t c = x->shape[x->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->snake(rt->stream, kdt(x->dtype), x->data, y->data, alpha->data, inv_beta->data,
                                 ltx2_tensor_numel(x) / c, c));
    return LTX2_OK;
}

static ltx2_status k_row_stats(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *st) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t d = x->shape[x->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->row_stats(rt->stream, kdt(x->dtype), x->data, st->data, ltx2_tensor_numel(x) / d, d));
    return LTX2_OK;
}

static ltx2_status k_add_rms_norm(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                  const ltx2_tensor *wy, const ltx2_tensor *w, float eps, ltx2_tensor *out) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t d = x->shape[x->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->add_rms_norm(rt->stream, kdt(x->dtype), x->data, y->data, wy ? wy->data : NULL,
                                        w ? w->data : NULL, out->data, ltx2_tensor_numel(x) / d, d, eps));
    return LTX2_OK;
}

static ltx2_status k_rms_norm_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   const ltx2_tensor *w, float eps, int64_t heads, const ltx2_tensor *cos_t,
                                   const ltx2_tensor *sin_t, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t B = x->shape[0], S = x->shape[1], d = x->shape[2] / heads;
    LTX2_TRY(rt->enter(be, ctx));
    const int e = rt->k->rms_norm_rope(rt->stream, kdt(x->dtype), x->data, y->data, w ? w->data : NULL, cos_t->data,
                                       sin_t->data, B, S, heads, d, eps, cos_t->shape[0], cos_t->shape[1]);
    if (e == 0) return LTX2_OK;
    if (e != LTX2_KERR_NOT_SUPPORTED)
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "%s rms_norm_rope B=%lld S=%lld heads=%lld d=%lld: %s on device %d",
                          be->name, (long long)B, (long long)S, (long long)heads, (long long)d, rt->error_text(e),
                          rt->dev);
    /* a head wider than the kernel stages: the two kernels it fuses, y normalised in place */
    ltx2_tensor rows = *y;
    const int64_t rs[2] = {B * S * heads, d};
    LTX2_TRY(ltx2_tensor_reshape(ctx, y, 2, rs, &rows));
    ltx2_tensor xr = *x;
    LTX2_TRY(ltx2_tensor_reshape(ctx, x, 2, rs, &xr));
    LTX2_TRY(k_rms_norm(be, ctx, &xr, w, eps, &rows));
    return k_rope(be, ctx, y, LTX2_ROPE_SPLIT, heads, cos_t, sin_t, y);
}

static ltx2_status k_complex_abs(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y) {
    const ltx2_kernel_rt *rt = krt(be);
    const int64_t nf = y->shape[y->ndim - 1];
    LTX2_TRY(rt->enter(be, ctx));
    KCHECK(be, ctx, rt->k->complex_abs(rt->stream, kdt(x->dtype), x->data, y->data, ltx2_tensor_numel(y) / nf, nf));
    return LTX2_OK;
}

void ltx2_backend_kernels_fill(ltx2_backend *be) {
    be->rms_norm = k_rms_norm;
    be->row_sumsq = k_row_sumsq;
    be->row_stats = k_row_stats;
    be->add_rms_norm = k_add_rms_norm;
    be->rms_norm_rope = k_rms_norm_rope;
    be->rms_apply = k_rms_apply;
    be->layer_norm = k_layer_norm;
    be->softmax = k_softmax;
    be->unary = k_unary;
    be->binary = k_binary;
    be->convert = k_convert;
    be->attention = k_attention;
    be->rope = k_rope;
    be->conv3d = k_conv3d;
    be->pixel_norm = k_pixel_norm;
    be->group_norm = k_group_norm;
    be->blur_downsample = k_blur_downsample;
    be->conv1d = k_conv1d;
    be->conv_transpose1d = k_conv_transpose1d;
    be->fir = k_fir;
    be->snake = k_snake;
    be->complex_abs = k_complex_abs;
    be->depth_to_space = k_depth_to_space;
    be->space_to_depth = k_space_to_depth;
    be->norm_modulate = k_norm_modulate;
    be->gated_add = k_gated_add;
    be->head_gate = k_head_gate;
    be->fp8 = k_fp8;
}
