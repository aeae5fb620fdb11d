/* Backend-independent part of the op table: op names and the validating wrappers, so every
 * backend sees the same shape/dtype/device rules and error messages. */
#include "backend/backend.h"
#include "backend/backend_checks.h"
#include "att90_layout.h"

_Static_assert(LTX2_ATTN_FP8_HEAD_DIM == A90_F8_D, "the e4m3 attention's head dim is the kernel's");

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[LTX2_OP_COUNT] = {
    "gemm", "rms_norm", "layer_norm", "softmax", "gelu_tanh", "silu", "add", "mul", "convert",
    "attention", "rope", "conv3d", "pixel_norm", "depth_to_space", "norm_modulate", "gated_add",
    "head_gate", "gemm_ex", "gemm_fp8", "fp8", "row_sumsq", "rms_apply", "space_to_depth", "group_norm",
    "blur_downsample", "leaky_relu", "tanh", "hardtanh", "log_floor", "div_scalar", "conv1d", "conv_transpose1d",
    "fir_upsample", "fir_downsample", "snake", "complex_abs", "row_stats", "add_rms_norm", "rms_norm_rope",
};

const char *ltx2_op_name(ltx2_op op) {
    return (op >= 0 && op < LTX2_OP_COUNT) ? op_names[op] : NULL;
}

bool ltx2_op_from_name(const char *name, ltx2_op *out) {
    for (int i = 0; name && i < LTX2_OP_COUNT; i++) {
        if (strcmp(name, op_names[i]) == 0) {
            *out = (ltx2_op)i;
            return true;
        }
    }
    return false;
}

void ltx2_backend_free(const ltx2_backend *be) {
    /* Only heap backends from *_create have destroy; the const view is ours to release. */
    if (be && be->destroy) be->destroy((ltx2_backend *)be);
}

bool ltx2_backend_supports(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt) {
    return be && be->supports && op >= 0 && op < LTX2_OP_COUNT && be->supports(be, op, dt);
}

ltx2_status ltx2_backend_gemm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                              const ltx2_tensor *w, ltx2_b_layout w_layout,
                              const ltx2_tensor *bias, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_GEMM;
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_tensor(be, ctx, op, "w", w, true));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    LTX2_TRY(check_weight_dtype(be, ctx, op, w, x->dtype));
    LTX2_TRY(check_dtype(be, ctx, op, "y", y, x->dtype));
    if (w_layout != LTX2_B_NK && w_layout != LTX2_B_KN)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s gemm: unknown weight layout %d", be->name, (int)w_layout);
    char sx[128], sw[128], sy[128];
    if (x->ndim < 1 || w->ndim != 2 || y->ndim != x->ndim)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s gemm: bad ranks x %s, w %s, y %s", be->name,
                          shape_txt(x, sx, sizeof(sx)), shape_txt(w, sw, sizeof(sw)),
                          shape_txt(y, sy, sizeof(sy)));
    int64_t K = x->shape[x->ndim - 1];
    int64_t N = w_layout == LTX2_B_NK ? w->shape[0] : w->shape[1];
    int64_t Kw = w_layout == LTX2_B_NK ? w->shape[1] : w->shape[0];
    bool ok = Kw == K && y->shape[y->ndim - 1] == N;
    for (int i = 0; i + 1 < x->ndim; i++) ok = ok && x->shape[i] == y->shape[i];
    if (!ok)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s gemm: x %s, w %s (%s), y %s do not match", be->name,
                          shape_txt(x, sx, sizeof(sx)), shape_txt(w, sw, sizeof(sw)),
                          w_layout == LTX2_B_NK ? "[N,K]" : "[K,N]", shape_txt(y, sy, sizeof(sy)));
    LTX2_TRY(check_vector(be, ctx, op, "bias", bias, N, x->dtype));
    return be->gemm(be, ctx, x, w, w_layout, bias, y);
}

ltx2_status ltx2_backend_rms_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                  const ltx2_tensor *weight, float eps, ltx2_tensor *y) {
    LTX2_TRY(check_rowwise(be, ctx, LTX2_OP_RMS_NORM, x, y));
    LTX2_TRY(check_vector(be, ctx, LTX2_OP_RMS_NORM, "weight", weight, x->shape[x->ndim - 1], x->dtype));
    return be->rms_norm(be, ctx, x, weight, eps, y);
}

ltx2_status ltx2_backend_layer_norm(const ltx2_backend *be, ltx2_context *ctx,
                                    const ltx2_tensor *x, const ltx2_tensor *weight,
                                    const ltx2_tensor *bias, float eps, ltx2_tensor *y) {
    LTX2_TRY(check_rowwise(be, ctx, LTX2_OP_LAYER_NORM, x, y));
    int64_t d = x->shape[x->ndim - 1];
    LTX2_TRY(check_vector(be, ctx, LTX2_OP_LAYER_NORM, "weight", weight, d, x->dtype));
    LTX2_TRY(check_vector(be, ctx, LTX2_OP_LAYER_NORM, "bias", bias, d, x->dtype));
    return be->layer_norm(be, ctx, x, weight, bias, eps, y);
}

ltx2_status ltx2_backend_softmax(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 ltx2_tensor *y) {
    LTX2_TRY(check_rowwise(be, ctx, LTX2_OP_SOFTMAX, x, y));
    return be->softmax(be, ctx, x, y);
}

ltx2_status ltx2_backend_unary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                               const ltx2_tensor *x, ltx2_tensor *y) {
    if (op != LTX2_OP_GELU_TANH && op != LTX2_OP_SILU)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s unary: op %d is not an activation", be->name, (int)op);
    return ltx2_backend_unary_a(be, ctx, op, 0.0f, x, y);
}

ltx2_status ltx2_backend_unary_a(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, float alpha,
                                 const ltx2_tensor *x, ltx2_tensor *y) {
    const bool pointwise = op == LTX2_OP_GELU_TANH || op == LTX2_OP_SILU || op == LTX2_OP_LEAKY_RELU ||
                           op == LTX2_OP_TANH || op == LTX2_OP_HARDTANH || op == LTX2_OP_LOG_FLOOR ||
                           op == LTX2_OP_DIV_SCALAR;
    if (!pointwise)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s unary: op %d is not a pointwise op", be->name, (int)op);
    if ((op == LTX2_OP_LOG_FLOOR && !(alpha > 0.0f)) || (op == LTX2_OP_DIV_SCALAR && !(alpha != 0.0f)) ||
        !isfinite(alpha))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: parameter %g (log_floor needs a floor > 0, div_scalar a "
                          "finite non-zero divisor)", be->name, ltx2_op_name(op), (double)alpha);
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    LTX2_TRY(check_dtype(be, ctx, op, "y", y, x->dtype));
    LTX2_TRY(check_same_shape(be, ctx, op, "x", x, "y", y));
    if (ltx2_tensor_numel(x) == 0) return LTX2_OK;
    return be->unary(be, ctx, op, alpha, x, y);
}

ltx2_status ltx2_backend_binary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                                const ltx2_tensor *a, const ltx2_tensor *b, ltx2_tensor *y) {
    if (op != LTX2_OP_ADD && op != LTX2_OP_MUL)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s binary: op %d is not add/mul", be->name, (int)op);
    LTX2_TRY(check_tensor(be, ctx, op, "a", a, false));
    LTX2_TRY(check_tensor(be, ctx, op, "b", b, false));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, false));
    LTX2_TRY(check_supported(be, ctx, op, a->dtype));
    LTX2_TRY(check_dtype(be, ctx, op, "b", b, a->dtype));
    LTX2_TRY(check_dtype(be, ctx, op, "y", y, a->dtype));
    return be->binary(be, ctx, op, a, b, y);
}

ltx2_status ltx2_backend_convert(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_CONVERT;
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    LTX2_TRY(check_supported(be, ctx, op, y->dtype));
    LTX2_TRY(check_same_shape(be, ctx, op, "x", x, "y", y));
    return be->convert(be, ctx, x, y);
}

/* A tensor of exactly the given rank and shape. */
static ltx2_status check_shape(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const char *arg,
                               const ltx2_tensor *t, int ndim, const int64_t *want) {
    bool ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = t->shape[i] == want[i];
    if (!ok) {
        char sg[128], sw[128];
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: '%s' has shape %s, expected %s", be->name,
                          ltx2_op_name(op), arg, shape_txt(t, sg, sizeof(sg)),
                          ltx2_shape_str(want, ndim, sw, sizeof(sw)));
    }
    return LTX2_OK;
}

/* A required or optional (t may be NULL when !required) contiguous input of a given shape/dtype. */
static ltx2_status check_input(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const char *arg,
                               const ltx2_tensor *t, ltx2_dtype dt, int ndim, const int64_t *shape) {
    LTX2_TRY(check_tensor(be, ctx, op, arg, t, true));
    LTX2_TRY(check_dtype(be, ctx, op, arg, t, dt));
    return check_shape(be, ctx, op, arg, t, ndim, shape);
}

/* RoPE tables (f32) for tokens [B, S] of `heads` heads of head_dim: split [B, heads, S, d/2], or
 * with bcast [B or 1, heads or 1, S, d/2] (a table of one row / head serves them all: the rope
 * op's, not attention's); interleaved [B, S, heads * d]. */
static ltx2_status check_rope_tables(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const char *which,
                                     ltx2_rope_type type, const ltx2_tensor *c, const ltx2_tensor *s,
                                     int64_t B, int64_t S, int64_t heads, int64_t head_dim, bool bcast) {
    if (type != LTX2_ROPE_SPLIT && type != LTX2_ROPE_INTERLEAVED)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: unknown rope type %d", be->name, ltx2_op_name(op),
                          (int)type);
    if (head_dim % 2 != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: rope needs an even head_dim, got %lld", be->name,
                          ltx2_op_name(op), (long long)head_dim);
    int64_t split[4] = {B, heads, S, head_dim / 2}, inter[3] = {B, S, heads * head_dim};
    if (bcast && c && c->ndim == 4) {
        if (c->shape[0] == 1) split[0] = 1;
        if (c->shape[1] == 1) split[1] = 1;
    }
    char nc[32], ns[32];
    snprintf(nc, sizeof(nc), "%s_cos", which);
    snprintf(ns, sizeof(ns), "%s_sin", which);
    bool sp = type == LTX2_ROPE_SPLIT;
    LTX2_TRY(check_input(be, ctx, op, nc, c, LTX2_F32, sp ? 4 : 3, sp ? split : inter));
    return check_input(be, ctx, op, ns, s, LTX2_F32, sp ? 4 : 3, sp ? split : inter);
}

/* [B, S, heads*head_dim] token tensors: returns B, S. */
static ltx2_status check_tokens(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const char *arg,
                                const ltx2_tensor *t, int64_t heads, int64_t *B, int64_t *S, int64_t *head_dim) {
    LTX2_TRY(check_tensor(be, ctx, op, arg, t, true));
    char sx[128];
    if (t->ndim != 3 || heads < 1 || t->shape[2] % heads != 0 || t->shape[2] == 0 || t->shape[1] < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: '%s' %s must be [B, S >= 1, heads*head_dim] with heads %lld",
                          be->name, ltx2_op_name(op), arg, shape_txt(t, sx, sizeof(sx)), (long long)heads);
    *B = t->shape[0];
    *S = t->shape[1];
    *head_dim = t->shape[2] / heads;
    return LTX2_OK;
}

ltx2_status ltx2_backend_attention(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *q,
                                   const ltx2_tensor *k, const ltx2_tensor *v,
                                   const ltx2_attn_args *a, ltx2_tensor *out) {
    const ltx2_op op = LTX2_OP_ATTENTION;
    if (!a) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s attention: NULL args", be->name);
    int64_t B = 0, Sq = 0, d = 0, Bk = 0, Skv = 0, dk = 0;
    const int64_t kvh = a->kv_heads > 0 ? a->kv_heads : a->heads;
    if (a->kv_heads < 0 || a->window < 0 || a->heads % kvh != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "%s attention: kv_heads %lld must divide heads %lld, window %lld must be >= 0", be->name,
                          (long long)a->kv_heads, (long long)a->heads, (long long)a->window);
    LTX2_TRY(check_tokens(be, ctx, op, "q", q, a->heads, &B, &Sq, &d));
    LTX2_TRY(check_tokens(be, ctx, op, "k", k, kvh, &Bk, &Skv, &dk));
    if (a->probs_bf16 && be->device != LTX2_DEVICE_CPU)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s attention: bf16-rounded probabilities (--precision tpu) run on the CPU backend only",
                          be->name);
    if (a->fp8 && (d != LTX2_ATTN_FP8_HEAD_DIM || a->causal || a->window > 0 || a->empty_zero || a->blocks || a->probs_bf16))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s attention: e4m3 attention takes head_dim %d without causal, windowed, empty-zero, "
                          "image-block or bf16-probability masks (head_dim %lld here)",
                          be->name, LTX2_ATTN_FP8_HEAD_DIM, (long long)d);
    if (a->blocks) {
        const int64_t bs[2] = {B, Sq};
        LTX2_TRY(check_tensor(be, ctx, op, "blocks", a->blocks, true));
        if (a->blocks->dtype != LTX2_I32 || !a->causal)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s attention: blocks must be i32 and come with causal",
                              be->name);
        LTX2_TRY(check_shape(be, ctx, op, "blocks", a->blocks, 2, bs));
    }
    if ((a->causal || a->window > 0) && Sq != Skv)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s attention: a causal or windowed mask needs as many queries as keys "
                          "(%lld, %lld)", be->name, (long long)Sq, (long long)Skv);
    LTX2_TRY(check_supported(be, ctx, op, q->dtype));
    if (Bk != B || dk != d) {
        char sq[128], sk[128];
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s attention: q %s and k %s disagree on batch or inner dim",
                          be->name, shape_txt(q, sq, sizeof(sq)), shape_txt(k, sk, sizeof(sk)));
    }
    LTX2_TRY(check_input(be, ctx, op, "k", k, q->dtype, 3, k->shape));
    LTX2_TRY(check_input(be, ctx, op, "v", v, q->dtype, 3, k->shape));
    LTX2_TRY(check_input(be, ctx, op, "out", out, q->dtype, 3, q->shape));
    if (out->data == q->data || out->data == k->data || out->data == v->data)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s attention: out must not alias q, k or v", be->name);
    if (a->key_mask) {
        int64_t ms[2] = {B, Skv};
        LTX2_TRY(check_tensor(be, ctx, op, "key_mask", a->key_mask, true));
        if (a->key_mask->dtype != LTX2_U8 && a->key_mask->dtype != LTX2_BOOL)
            return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "%s attention: key_mask has dtype %s, expected u8 or bool",
                              be->name, ltx2_dtype_name(a->key_mask->dtype));
        LTX2_TRY(check_shape(be, ctx, op, "key_mask", a->key_mask, 2, ms));
    }
    if (!a->q_norm != !a->k_norm)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s attention: q_norm and k_norm come together", be->name);
    if (a->q_norm) {
        int64_t D = a->heads * d, Dk = kvh * d;
        LTX2_TRY(check_input(be, ctx, op, "q_norm", a->q_norm, q->dtype, 1, &D));
        LTX2_TRY(check_input(be, ctx, op, "k_norm", a->k_norm, q->dtype, 1, &Dk));
    }
    bool any_rope = a->q_cos || a->q_sin || a->k_cos || a->k_sin;
    if (any_rope) {
        if (!a->q_cos || !a->q_sin || !a->k_cos || !a->k_sin)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s attention: RoPE needs q_cos, q_sin, k_cos and k_sin",
                              be->name);
        LTX2_TRY(check_rope_tables(be, ctx, op, "q", a->rope_type, a->q_cos, a->q_sin, B, Sq, a->heads, d, false));
        LTX2_TRY(check_rope_tables(be, ctx, op, "k", a->rope_type, a->k_cos, a->k_sin, B, Skv, kvh, d, false));
    }
    if (B == 0) return LTX2_OK;
    return be->attention(be, ctx, q, k, v, a, out);
}

ltx2_status ltx2_backend_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                              ltx2_rope_type type, int64_t heads, const ltx2_tensor *cos_t,
                              const ltx2_tensor *sin_t, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_ROPE;
    int64_t B = 0, S = 0, d = 0;
    LTX2_TRY(check_tokens(be, ctx, op, "x", x, heads, &B, &S, &d));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    LTX2_TRY(check_input(be, ctx, op, "y", y, x->dtype, 3, x->shape));
    LTX2_TRY(check_rope_tables(be, ctx, op, "rope", type, cos_t, sin_t, B, S, heads, d, true));
    if (B == 0) return LTX2_OK;
    return be->rope(be, ctx, x, type, heads, cos_t, sin_t, y);
}

ltx2_status ltx2_backend_conv3d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d,
                                const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias,
                                bool silu, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_CONV3D;
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    char sx[128];
    if (x->ndim != 5 || !d || x->shape[4] != d->c_in || x->shape[0] < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s conv3d: x %s must be [N >= 1, T, H, W, c_in = %lld]", be->name,
                          shape_txt(x, sx, sizeof(sx)), d ? (long long)d->c_in : -1LL);
    int64_t o[3];
    LTX2_TRY(ltx2_conv3d_out_shape(ctx, d, x->shape[1], x->shape[2], x->shape[3], o));
    int64_t ws[2] = {ltx2_conv3d_packed_numel(d) / d->c_out, d->c_out};
    int64_t ys[5] = {x->shape[0], o[0], o[1], o[2], d->c_out};
    LTX2_TRY(check_input(be, ctx, op, "w", w, x->dtype, 2, ws));
    LTX2_TRY(check_vector(be, ctx, op, "bias", bias, d->c_out, x->dtype));
    LTX2_TRY(check_input(be, ctx, op, "y", y, x->dtype, 5, ys));
    /* every output reads a window of inputs: no implementation can write over x as it goes */
    const uintptr_t x0 = (uintptr_t)x->data, x1 = x0 + ltx2_tensor_nbytes(x), y0 = (uintptr_t)y->data,
                    y1 = y0 + ltx2_tensor_nbytes(y);
    if (x0 < y1 && y0 < x1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s conv3d: y overlaps x", be->name);
    return be->conv3d(be, ctx, d, x, w, bias, silu, y);
}

ltx2_status ltx2_backend_group_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t groups,
                                    float eps, const ltx2_tensor *weight, const ltx2_tensor *bias, bool silu,
                                    ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_GROUP_NORM;
    LTX2_TRY(check_rowwise(be, ctx, op, x, y));
    const int64_t C = x->shape[x->ndim - 1];
    if (x->ndim < 2 || groups < 1 || C % groups != 0 || !(eps >= 0.0f)) {
        char s[128];
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s group_norm: x %s in %lld groups, eps %g (need [N, ..., C] with C "
                          "a multiple of the groups, eps >= 0)", be->name, shape_txt(x, s, sizeof s),
                          (long long)groups, (double)eps);
    }
    LTX2_TRY(check_vector(be, ctx, op, "weight", weight, C, x->dtype));
    LTX2_TRY(check_vector(be, ctx, op, "bias", bias, C, x->dtype));
    if (ltx2_tensor_numel(x) == 0) return LTX2_OK;
    return be->group_norm(be, ctx, x, groups, eps, weight, bias, silu, y);
}

ltx2_status ltx2_backend_blur_downsample(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                         int64_t stride, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_BLUR_DOWNSAMPLE;
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    char sx[128], sy[128];
    if (x->ndim != 5 || stride < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s blur_downsample: x %s with stride %lld (need [N, T, H, W, C], "
                          "stride >= 1)", be->name, shape_txt(x, sx, sizeof sx), (long long)stride);
    const int64_t ys[5] = {x->shape[0], x->shape[1], (x->shape[2] - 1) / stride + 1, (x->shape[3] - 1) / stride + 1,
                           x->shape[4]};
    LTX2_TRY(check_input(be, ctx, op, "y", y, x->dtype, 5, ys));
    if (ltx2_tensor_numel(y) == 0) return LTX2_OK;
    if (y->data == x->data)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s blur_downsample: y %s must not alias x", be->name,
                          shape_txt(y, sy, sizeof sy));
    return be->blur_downsample(be, ctx, x, stride, y);
}

ltx2_status ltx2_backend_pixel_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                    float eps, bool silu, ltx2_tensor *y) {
    LTX2_TRY(check_rowwise(be, ctx, LTX2_OP_PIXEL_NORM, x, y));
    return be->pixel_norm(be, ctx, x, eps, silu, y);
}

ltx2_status ltx2_backend_depth_to_space(const ltx2_backend *be, ltx2_context *ctx,
                                        const ltx2_tensor *x, const ltx2_d2s_args *a,
                                        const ltx2_tensor *residual, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_DEPTH_TO_SPACE;
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    if (!a) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s depth_to_space: NULL args", be->name);
    const int64_t *s = a->stride;
    char sx[128];
    if (s[0] < 1 || s[1] < 1 || s[2] < 1 || x->ndim != 5 || x->shape[4] % (s[0] * s[1] * s[2]) != 0 ||
        x->shape[1] * s[0] - (a->drop_first ? 1 : 0) < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "%s depth_to_space: x %s must be [N, T, H, W, C*%lld*%lld*%lld] with frames left", be->name,
                          shape_txt(x, sx, sizeof(sx)), (long long)s[0], (long long)s[1], (long long)s[2]);
    const int64_t prod = s[0] * s[1] * s[2], C = x->shape[4] / prod;
    int64_t ys[5] = {x->shape[0], x->shape[1] * s[0] - (a->drop_first ? 1 : 0), x->shape[2] * s[1],
                     x->shape[3] * s[2], C};
    LTX2_TRY(check_input(be, ctx, op, "y", y, x->dtype, 5, ys));
    if (residual) {
        LTX2_TRY(check_tensor(be, ctx, op, "residual", residual, true));
        LTX2_TRY(check_dtype(be, ctx, op, "residual", residual, x->dtype));
        bool ok = residual->ndim == 5 && residual->shape[4] % prod == 0 && residual->shape[4] > 0 &&
                  C % (residual->shape[4] / prod) == 0;
        for (int i = 0; ok && i < 4; i++) ok = residual->shape[i] == x->shape[i];
        if (!ok)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                              "%s depth_to_space: residual %s must be [N, T, H, W, Cr*%lld] like x with %lld %% Cr == 0",
                              be->name, shape_txt(residual, sx, sizeof(sx)), (long long)prod, (long long)C);
    }
    if (y->data == x->data || (residual && y->data == residual->data))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s depth_to_space: y must not alias x or residual", be->name);
    return be->depth_to_space(be, ctx, x, a, residual, y);
}

ltx2_status ltx2_backend_space_to_depth(const ltx2_backend *be, ltx2_context *ctx,
                                        const ltx2_tensor *x, const ltx2_s2d_args *a,
                                        const ltx2_tensor *residual, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_SPACE_TO_DEPTH;
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    if (!a) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s space_to_depth: NULL args", be->name);
    const int64_t *s = a->stride;
    char sx[128];
    if (s[0] < 1 || s[1] < 1 || s[2] < 1 || x->ndim != 5 || x->shape[1] % s[0] != 0 || x->shape[2] % s[1] != 0 ||
        x->shape[3] % s[2] != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s space_to_depth: x %s must be [N, T, H, W, C] with T, H, W "
                          "divisible by %lldx%lldx%lld", be->name, shape_txt(x, sx, sizeof(sx)),
                          (long long)s[0], (long long)s[1], (long long)s[2]);
    const int64_t prod = s[0] * s[1] * s[2], C = x->shape[4] * prod;
    const int64_t ys[5] = {x->shape[0], x->shape[1] / s[0], x->shape[2] / s[1], x->shape[3] / s[2], C};
    LTX2_TRY(check_input(be, ctx, op, "y", y, x->dtype, 5, ys));
    if (residual) {
        LTX2_TRY(check_tensor(be, ctx, op, "residual", residual, true));
        LTX2_TRY(check_dtype(be, ctx, op, "residual", residual, x->dtype));
        bool ok = residual->ndim == 5 && residual->shape[4] > 0 && (residual->shape[4] * prod) % C == 0;
        for (int i = 0; ok && i < 4; i++) ok = residual->shape[i] == x->shape[i];
        if (!ok)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                              "%s space_to_depth: residual %s must be [N, T, H, W, Cr] like x with Cr*%lld a "
                              "multiple of %lld", be->name, shape_txt(residual, sx, sizeof(sx)), (long long)prod,
                              (long long)C);
    }
    if (y->data == x->data || (residual && y->data == residual->data))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s space_to_depth: y must not alias x or residual", be->name);
    return be->space_to_depth(be, ctx, x, a, residual, y);
}

/* ---- fused DiT elementwise, GEMM epilogues, fp8 ---- */

/* A modulation table: f32 [U, D] on the device with unit inner stride and rows >= D apart, and a
 * row rule that stays inside it for `rows` tokens (row_idx values are checked by the caller that
 * builds them; here its shape and dtype). */
static ltx2_status check_mod(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const char *arg,
                             const ltx2_tensor *t, int64_t D, int64_t rows, const ltx2_mod_rows *m) {
    char s[128];
    LTX2_TRY(check_tensor(be, ctx, op, arg, t, false));
    LTX2_TRY(check_dtype(be, ctx, op, arg, t, LTX2_F32));
    if (t->ndim != 2 || t->shape[1] != D || t->strides[1] != 1 || t->strides[0] < D || t->shape[0] < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: '%s' %s must be an f32 [U >= 1, %lld] row view", be->name,
                          ltx2_op_name(op), arg, shape_txt(t, s, sizeof(s)), (long long)D);
    if (!m) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: no modulation row rule", be->name, ltx2_op_name(op));
    if (m->row_idx) {
        LTX2_TRY(check_tensor(be, ctx, op, "row_idx", m->row_idx, true));
        LTX2_TRY(check_dtype(be, ctx, op, "row_idx", m->row_idx, LTX2_I32));
        if (ltx2_tensor_numel(m->row_idx) != rows)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: row_idx has %lld entries, expected %lld rows", be->name,
                              ltx2_op_name(op), (long long)ltx2_tensor_numel(m->row_idx), (long long)rows);
    } else if (m->rows_per_group < 1 || (rows + m->rows_per_group - 1) / m->rows_per_group > t->shape[0]) {
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: %lld rows in groups of %lld need more than the %lld rows of '%s'",
                          be->name, ltx2_op_name(op), (long long)rows, (long long)m->rows_per_group,
                          (long long)t->shape[0], arg);
    }
    return LTX2_OK;
}

/* The checks of both norm_modulate forms; *rows: x's row count. */
static ltx2_status check_norm_modulate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                       ltx2_norm_kind norm, const ltx2_tensor *scale, const ltx2_tensor *shift,
                                       const ltx2_mod_rows *m, const ltx2_tensor *y, int64_t *rows) {
    const ltx2_op op = LTX2_OP_NORM_MODULATE;
    LTX2_TRY(check_rowwise(be, ctx, op, x, y));
    if (norm != LTX2_NORM_NONE && norm != LTX2_NORM_RMS && norm != LTX2_NORM_LAYER)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s norm_modulate: unknown norm %d", be->name, (int)norm);
    const int64_t D = x->shape[x->ndim - 1];
    *rows = ltx2_tensor_numel(x) / D;
    LTX2_TRY(check_mod(be, ctx, op, "scale", scale, D, *rows, m));
    LTX2_TRY(check_mod(be, ctx, op, "shift", shift, D, *rows, m));
    if (scale->strides[0] != shift->strides[0])
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s norm_modulate: scale and shift rows must be equally far apart",
                          be->name);
    return LTX2_OK;
}

ltx2_status ltx2_backend_norm_modulate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                       ltx2_norm_kind norm, float eps, const ltx2_tensor *scale,
                                       const ltx2_tensor *shift, const ltx2_mod_rows *m, ltx2_tensor *y) {
    int64_t rows = 0;
    LTX2_TRY(check_norm_modulate(be, ctx, x, norm, scale, shift, m, y, &rows));
    if (rows == 0) return LTX2_OK;
    return be->norm_modulate(be, ctx, x, norm, eps, scale, shift, m, y, NULL);
}

/* The fp8 copies of an op's output y (ltx2_fp8_outs): 1..LTX2_FP8_OUTS_MAX fp8 tensors of y's shape,
 * finite positive scales, and a backend that quantises y's dtype. */
static ltx2_status check_fp8_outs(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_tensor *y,
                                  const ltx2_fp8_outs *q) {
    if (!q || q->n < 1 || q->n > LTX2_FP8_OUTS_MAX)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: %d fp8 copies (1..%d)", be->name, ltx2_op_name(op),
                          q ? q->n : 0, LTX2_FP8_OUTS_MAX);
    LTX2_TRY(check_supported(be, ctx, LTX2_OP_FP8, y->dtype));
    for (int i = 0; i < q->n; i++) {
        char arg[16];
        snprintf(arg, sizeof arg, "q[%d]", i);
        if (!q->q[i])
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: %s is NULL", be->name, ltx2_op_name(op), arg);
        LTX2_TRY(check_tensor(be, ctx, op, arg, q->q[i], true));
        LTX2_TRY(check_dtype(be, ctx, op, arg, q->q[i], LTX2_F8_E4M3));
        LTX2_TRY(check_same_shape(be, ctx, op, "y", y, arg, q->q[i]));
        if (!(q->scale[i] > 0.0f) || !isfinite(q->scale[i]))
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: fp8 scale[%d] %g must be finite and > 0", be->name,
                              ltx2_op_name(op), i, (double)q->scale[i]);
    }
    return LTX2_OK;
}

ltx2_status ltx2_backend_norm_modulate_fp8(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                           ltx2_norm_kind norm, float eps, const ltx2_tensor *scale,
                                           const ltx2_tensor *shift, const ltx2_mod_rows *m, ltx2_tensor *y,
                                           const ltx2_fp8_outs *q) {
    int64_t rows = 0;
    LTX2_TRY(check_norm_modulate(be, ctx, x, norm, scale, shift, m, y, &rows));
    LTX2_TRY(check_fp8_outs(be, ctx, LTX2_OP_NORM_MODULATE, y, q));
    if (rows == 0) return LTX2_OK;
    return be->norm_modulate(be, ctx, x, norm, eps, scale, shift, m, y, q);
}

ltx2_status ltx2_backend_gated_add(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x,
                                   const ltx2_tensor *y, const ltx2_tensor *gate, const ltx2_mod_rows *m) {
    const ltx2_op op = LTX2_OP_GATED_ADD;
    LTX2_TRY(check_rowwise(be, ctx, op, y, x));
    const int64_t D = x->shape[x->ndim - 1], rows = ltx2_tensor_numel(x) / D;
    if (gate) LTX2_TRY(check_mod(be, ctx, op, "gate", gate, D, rows, m));
    if (y->data == x->data)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s gated_add: y must not alias x (x += y * gate)", be->name);
    if (rows == 0) return LTX2_OK;
    return be->gated_add(be, ctx, x, y, gate, m);
}

static ltx2_status check_head_gate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *o,
                                   const ltx2_tensor *logits, int64_t heads) {
    const ltx2_op op = LTX2_OP_HEAD_GATE;
    LTX2_TRY(check_tensor(be, ctx, op, "o", o, true));
    LTX2_TRY(check_tensor(be, ctx, op, "logits", logits, true));
    LTX2_TRY(check_supported(be, ctx, op, o->dtype));
    LTX2_TRY(check_dtype(be, ctx, op, "logits", logits, o->dtype));
    char so[128], sl[128];
    const int64_t inner = o->ndim ? o->shape[o->ndim - 1] : 0;
    bool ok = o->ndim >= 1 && logits->ndim == o->ndim && heads >= 1 && inner % heads == 0 && inner > 0 &&
              logits->shape[o->ndim - 1] == heads;
    for (int i = 0; ok && i + 1 < o->ndim; i++) ok = o->shape[i] == logits->shape[i];
    if (!ok)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s head_gate: o %s must be [.., %lld*d] and logits %s [.., %lld]",
                          be->name, shape_txt(o, so, sizeof(so)), (long long)heads,
                          shape_txt(logits, sl, sizeof(sl)), (long long)heads);
    return LTX2_OK;
}

ltx2_status ltx2_backend_head_gate(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o,
                                   const ltx2_tensor *logits, int64_t heads) {
    LTX2_TRY(check_head_gate(be, ctx, o, logits, heads));
    if (ltx2_tensor_numel(o) == 0) return LTX2_OK;
    return be->head_gate(be, ctx, o, logits, heads, NULL);
}

ltx2_status ltx2_backend_head_gate_fp8(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o,
                                       const ltx2_tensor *logits, int64_t heads, const ltx2_fp8_outs *q) {
    LTX2_TRY(check_head_gate(be, ctx, o, logits, heads));
    LTX2_TRY(check_fp8_outs(be, ctx, LTX2_OP_HEAD_GATE, o, q));
    if (ltx2_tensor_numel(o) == 0) return LTX2_OK;
    return be->head_gate(be, ctx, o, logits, heads, q);
}

ltx2_status ltx2_backend_gemm_ex(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 const ltx2_tensor *w, const ltx2_gemm_ex_args *a, ltx2_tensor *y) {
    if (!a) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s gemm_ex: NULL args", be->name);
    const bool fp8 = x && x->dtype == LTX2_F8_E4M3;
    const ltx2_op op = fp8 ? LTX2_OP_GEMM_FP8 : LTX2_OP_GEMM_EX;
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_tensor(be, ctx, op, "w", w, true));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    LTX2_TRY(check_weight_dtype(be, ctx, op, w, x->dtype));
    const ltx2_dtype ydt = fp8 ? be->fp8_gemm_out : x->dtype;
    LTX2_TRY(check_dtype(be, ctx, op, "y", y, ydt));
    if (a->w_layout != LTX2_B_NK && (fp8 || a->w_layout != LTX2_B_KN))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: weight layout %d not supported%s", be->name,
                          ltx2_op_name(op), (int)a->w_layout, fp8 ? " (fp8 needs [N, K])" : "");
    if (a->gelu && a->residual)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: GELU and residual epilogues are exclusive", be->name,
                          ltx2_op_name(op));
    char sx[128], sw[128], sy[128];
    if (x->ndim < 1 || w->ndim != 2 || y->ndim != x->ndim)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: bad ranks x %s, w %s, y %s", be->name, ltx2_op_name(op),
                          shape_txt(x, sx, sizeof(sx)), shape_txt(w, sw, sizeof(sw)), shape_txt(y, sy, sizeof(sy)));
    const int64_t K = x->shape[x->ndim - 1];
    const int64_t N = a->w_layout == LTX2_B_NK ? w->shape[0] : w->shape[1];
    const int64_t Kw = a->w_layout == LTX2_B_NK ? w->shape[1] : w->shape[0];
    bool ok = Kw == K && y->shape[y->ndim - 1] == N && K > 0;
    for (int i = 0; i + 1 < x->ndim; i++) ok = ok && x->shape[i] == y->shape[i];
    if (!ok)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: x %s, w %s, y %s do not match (K > 0)", be->name,
                          ltx2_op_name(op), shape_txt(x, sx, sizeof(sx)), shape_txt(w, sw, sizeof(sw)),
                          shape_txt(y, sy, sizeof(sy)));
    LTX2_TRY(check_vector(be, ctx, op, "bias", a->bias, N, ydt));
    if (a->residual) LTX2_TRY(check_input(be, ctx, op, "residual", a->residual, ydt, y->ndim, y->shape));
    if (ltx2_tensor_numel(y) == 0) return LTX2_OK;
    return be->gemm_ex(be, ctx, x, w, a, y);
}

ltx2_status ltx2_backend_fp8_convert(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                     float scale, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_FP8;
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, true));
    LTX2_TRY(check_same_shape(be, ctx, op, "x", x, "y", y));
    const bool quant = y->dtype == LTX2_F8_E4M3;
    const ltx2_tensor *wide = quant ? x : y, *narrow = quant ? y : x;
    LTX2_TRY(check_dtype(be, ctx, op, quant ? "y" : "x", narrow, LTX2_F8_E4M3));
    LTX2_TRY(check_supported(be, ctx, op, wide->dtype));
    if (!(scale > 0.0f) || !isfinite(scale))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s fp8: scale %g must be finite and > 0", be->name, (double)scale);
    if (ltx2_tensor_numel(x) == 0) return LTX2_OK;
    return be->fp8(be, ctx, x, scale, y);
}

/* x [.., D] contiguous and a contiguous f32 tensor of per values a row. */
static ltx2_status check_per_row_n(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_tensor *x,
                                   const ltx2_tensor *ss, int64_t per) {
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_tensor(be, ctx, op, "ss", ss, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    LTX2_TRY(check_dtype(be, ctx, op, "ss", ss, LTX2_F32));
    if (x->ndim < 1 || x->shape[x->ndim - 1] < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: x needs a non-empty last dim", be->name, ltx2_op_name(op));
    const int64_t rows = ltx2_tensor_numel(x) / x->shape[x->ndim - 1];
    if (ltx2_tensor_numel(ss) != rows * per)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: the output has %lld elements, x has %lld rows (%lld each)",
                          be->name, ltx2_op_name(op), (long long)ltx2_tensor_numel(ss), (long long)rows,
                          (long long)per);
    return LTX2_OK;
}

static ltx2_status check_per_row(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_tensor *x,
                                 const ltx2_tensor *ss) {
    return check_per_row_n(be, ctx, op, x, ss, 1);
}

ltx2_status ltx2_backend_add_rms_norm(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                      const ltx2_tensor *wy, const ltx2_tensor *w, float eps, ltx2_tensor *out) {
    const ltx2_op op = LTX2_OP_ADD_RMS_NORM;
    LTX2_TRY(check_rowwise(be, ctx, op, x, out));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, true));
    LTX2_TRY(check_dtype(be, ctx, op, "y", y, x->dtype));
    LTX2_TRY(check_same_shape(be, ctx, op, "x", x, "y", y));
    const int64_t d = x->shape[x->ndim - 1];
    LTX2_TRY(check_vector(be, ctx, op, "wy", wy, d, x->dtype));
    LTX2_TRY(check_vector(be, ctx, op, "w", w, d, x->dtype));
    if (out->data == x->data)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: out aliases x (the residual it updates)", be->name,
                          ltx2_op_name(op));
    if (ltx2_tensor_numel(x) == 0) return LTX2_OK;
    return be->add_rms_norm(be, ctx, x, y, wy, w, eps, out);
}

ltx2_status ltx2_backend_rms_norm_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                       const ltx2_tensor *w, float eps, int64_t heads, const ltx2_tensor *cos_t,
                                       const ltx2_tensor *sin_t, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_RMS_NORM_ROPE;
    int64_t B = 0, S = 0, d = 0;
    LTX2_TRY(check_tokens(be, ctx, op, "x", x, heads, &B, &S, &d));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    LTX2_TRY(check_input(be, ctx, op, "y", y, x->dtype, 3, x->shape));
    LTX2_TRY(check_vector(be, ctx, op, "w", w, d, x->dtype));
    LTX2_TRY(check_rope_tables(be, ctx, op, "rope", LTX2_ROPE_SPLIT, cos_t, sin_t, B, S, heads, d, true));
    if (B == 0) return LTX2_OK;
    return be->rms_norm_rope(be, ctx, x, w, eps, heads, cos_t, sin_t, y);
}

ltx2_status ltx2_backend_row_stats(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   ltx2_tensor *st) {
    LTX2_TRY(check_per_row_n(be, ctx, LTX2_OP_ROW_STATS, x, st, 3));
    if (ltx2_tensor_numel(st) == 0) return LTX2_OK;
    return be->row_stats(be, ctx, x, st);
}

ltx2_status ltx2_backend_row_sumsq(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   ltx2_tensor *ss) {
    LTX2_TRY(check_per_row(be, ctx, LTX2_OP_ROW_SUMSQ, x, ss));
    if (ltx2_tensor_numel(ss) == 0) return LTX2_OK;
    return be->row_sumsq(be, ctx, x, ss);
}

ltx2_status ltx2_backend_rms_apply(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   const ltx2_tensor *ss, int64_t n, const ltx2_tensor *weight, float eps,
                                   ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_RMS_APPLY;
    LTX2_TRY(check_per_row(be, ctx, op, x, ss));
    LTX2_TRY(check_rowwise(be, ctx, op, x, y));
    const int64_t D = x->shape[x->ndim - 1];
    LTX2_TRY(check_vector(be, ctx, op, "weight", weight, D, x->dtype));
    if (n < D)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s rms_apply: whole row width %lld is less than this part's %lld",
                          be->name, (long long)n, (long long)D);
    if (ltx2_tensor_numel(ss) == 0) return LTX2_OK;
    return be->rms_apply(be, ctx, x, ss, n, weight, eps, y);
}

void ltx2_backend_describe(const ltx2_backend *be, char *buf, size_t cap) {
    if (!be || !cap) return;
    if (be->device == LTX2_DEVICE_CUDA && !strcmp(be->name, "cuda")) {
        ltx2_backend_cuda_describe(be, buf, cap);
        return;
    }
    if (be->device == LTX2_DEVICE_CPU)
        snprintf(buf, cap, "cpu (%d OpenMP threads)", omp_get_max_threads());
    else
        snprintf(buf, cap, "%s", be->name);
}

ltx2_status ltx2_backend_open(ltx2_context *ctx, const char *spec, const ltx2_backend **out, char *desc, size_t cap) {
    if (!out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "backend open: out is NULL");
    *out = NULL;
    char tmp[256];
    if (!desc || !cap) desc = tmp, cap = sizeof tmp;
    desc[0] = 0;
    if (spec && !strcmp(spec, "cpu")) {
        *out = ltx2_backend_cpu();
        ltx2_backend_describe(*out, desc, cap);
        return LTX2_OK;
    }
    ltx2_backend *cuda = NULL;
    if (!spec || !*spec || !strcmp(spec, "auto")) {
        /* CUDA when usable; otherwise the CPU, saying why (a user who expected a GPU sees it) */
        if (ltx2_backend_cuda_create(ctx, 0, &cuda) == LTX2_OK) {
            *out = cuda;
            ltx2_backend_describe(cuda, desc, cap);
            return LTX2_OK;
        }
        char why[200];
        snprintf(why, sizeof why, "%s", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
        *out = ltx2_backend_cpu();
        char cpu[96];
        ltx2_backend_describe(*out, cpu, sizeof cpu);
        snprintf(desc, cap, "%s; auto: no CUDA (%s)", cpu, why);
        return LTX2_OK;
    }
    int index = 0;
    if (!strcmp(spec, "cuda")) {
        index = 0;
    } else if (!strncmp(spec, "cuda:", 5)) {
        char *end = NULL;
        const long v = strtol(spec + 5, &end, 10);
        if (!spec[5] || *end || v < 0 || v > 1023)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "device \"%s\": expected cuda:N with N a device index", spec);
        index = (int)v;
    } else {
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "device \"%s\": expected cpu, cuda, cuda:N or auto", spec);
    }
    ltx2_status st = ltx2_backend_cuda_create(ctx, index, &cuda);
    if (st != LTX2_OK) return ltx2_error_prefix(ctx, "device %s", spec);
    *out = cuda;
    ltx2_backend_describe(cuda, desc, cap);
    return LTX2_OK;
}

ltx2_status ltx2_backend_require_fp8_gemm(ltx2_context *ctx, const ltx2_backend *be, const char *what) {
    if (ltx2_backend_supports(be, LTX2_OP_GEMM_FP8, LTX2_F8_E4M3)) return LTX2_OK;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: backend %s has no fp8 GEMM%s", what, be->name,
                      be->device == LTX2_DEVICE_CPU ? "" : " (it needs compute capability 8.9 or newer)");
}

ltx2_status ltx2_backend_require_fp8_attention(ltx2_context *ctx, const ltx2_backend *be, const char *what) {
    if (ltx2_backend_supports(be, LTX2_OP_ATTENTION, LTX2_F8_E4M3)) return LTX2_OK;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: backend %s has no e4m3 attention (the sm_90a kernel with its "
                      "pre-pass: an H100 / H200, a build with the 90a architecture, and LTX2_ATTN_IMPL / LTX2_ATTN_PREP "
                      "not forcing another kernel or layout)", what, be->name);
}

ltx2_status ltx2_backend_open_rank(ltx2_context *ctx, const char *spec, int index, const ltx2_backend **out, char *desc,
                                   size_t cap) {
    const bool any_gpu = !spec || !*spec || !strcmp(spec, "auto") || !strcmp(spec, "cuda");
    const int n = any_gpu ? ltx2_backend_cuda_device_count() : 0;
    if (n < 1 || index < 0) return ltx2_backend_open(ctx, spec, out, desc, cap);
    char one[32];
    snprintf(one, sizeof one, "cuda:%d", index % n);
    return ltx2_backend_open(ctx, one, out, desc, cap);
}

/* ---- the vocoders' 1-D ops ---- */

/* x [N >= 1, L >= 1, c] (c < 0: any c >= 1), contiguous, in a supported dtype. */
static ltx2_status check_seq_x(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_tensor *x, int64_t c) {
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    if (x->ndim != 3 || x->shape[0] < 1 || x->shape[1] < 1 || x->shape[2] < 1 || (c >= 0 && x->shape[2] != c)) {
        char sx[128], want[32] = "C";
        if (c >= 0) snprintf(want, sizeof want, "%lld", (long long)c);
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: x %s, expected [N >= 1, L >= 1, %s]", be->name,
                          ltx2_op_name(op), shape_txt(x, sx, sizeof sx), want);
    }
    return LTX2_OK;
}

/* y [N, out_len, c_out] in x's dtype, not x's buffer. */
static ltx2_status check_seq_y(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_tensor *x,
                               const ltx2_tensor *y, int64_t out_len, int64_t c_out) {
    const int64_t ys[3] = {x->shape[0], out_len, c_out};
    LTX2_TRY(check_input(be, ctx, op, "y", y, x->dtype, 3, ys));
    if (y->data == x->data)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: y must not alias x", be->name, ltx2_op_name(op));
    return LTX2_OK;
}

ltx2_status ltx2_backend_conv1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv1d_desc *d,
                                const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_CONV1D;
    int64_t ol = 0;
    if (!d) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s conv1d: NULL descriptor", be->name);
    LTX2_TRY(check_seq_x(be, ctx, op, x, d->c_in));
    LTX2_TRY(ltx2_conv1d_out_len(ctx, d, x->shape[1], &ol));
    LTX2_TRY(check_seq_y(be, ctx, op, x, y, ol, d->c_out));
    const int64_t ws[2] = {d->k * d->c_in, d->c_out};
    LTX2_TRY(check_input(be, ctx, op, "w", w, x->dtype, 2, ws));
    LTX2_TRY(check_vector(be, ctx, op, "bias", bias, d->c_out, x->dtype));
    return be->conv1d(be, ctx, d, x, w, bias, y);
}

ltx2_status ltx2_backend_conv_transpose1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_convt1d_desc *d,
                                          const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias,
                                          ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_CONV_TRANSPOSE1D;
    int64_t ol = 0;
    if (!d) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s conv_transpose1d: NULL descriptor", be->name);
    LTX2_TRY(check_seq_x(be, ctx, op, x, d->c_in));
    LTX2_TRY(ltx2_convt1d_out_len(ctx, d, x->shape[1], &ol));
    LTX2_TRY(check_seq_y(be, ctx, op, x, y, ol, d->c_out));
    const int64_t ws[2] = {d->c_in, d->k * d->c_out};
    LTX2_TRY(check_input(be, ctx, op, "w", w, x->dtype, 2, ws));
    LTX2_TRY(check_vector(be, ctx, op, "bias", bias, d->c_out, x->dtype));
    return be->conv_transpose1d(be, ctx, d, x, w, bias, y);
}

static ltx2_status backend_fir(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_fir_desc *d,
                               const ltx2_tensor *x, const ltx2_tensor *filt, ltx2_tensor *y) {
    int64_t ol = 0;
    LTX2_TRY(check_seq_x(be, ctx, op, x, -1));
    if (op == LTX2_OP_FIR_UPSAMPLE)
        LTX2_TRY(ltx2_fir_upsample_out_len(ctx, d, x->shape[1], &ol));
    else
        LTX2_TRY(ltx2_fir_downsample_out_len(ctx, d, x->shape[1], &ol));
    LTX2_TRY(check_seq_y(be, ctx, op, x, y, ol, x->shape[2]));
    const int64_t fs[1] = {d->taps};
    LTX2_TRY(check_input(be, ctx, op, "filt", filt, LTX2_F32, 1, fs));
    return be->fir(be, ctx, op, d, x, filt, y);
}

ltx2_status ltx2_backend_fir_upsample(const ltx2_backend *be, ltx2_context *ctx, const ltx2_fir_desc *d,
                                      const ltx2_tensor *x, const ltx2_tensor *filt, ltx2_tensor *y) {
    return backend_fir(be, ctx, LTX2_OP_FIR_UPSAMPLE, d, x, filt, y);
}

ltx2_status ltx2_backend_fir_downsample(const ltx2_backend *be, ltx2_context *ctx, const ltx2_fir_desc *d,
                                        const ltx2_tensor *x, const ltx2_tensor *filt, ltx2_tensor *y) {
    return backend_fir(be, ctx, LTX2_OP_FIR_DOWNSAMPLE, d, x, filt, y);
}

ltx2_status ltx2_backend_snake(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                               const ltx2_tensor *alpha, const ltx2_tensor *inv_beta, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_SNAKE;
    LTX2_TRY(check_rowwise(be, ctx, op, x, y));
    const int64_t c = x->shape[x->ndim - 1];
    if (!alpha || !inv_beta)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s snake: alpha and inv_beta are required", be->name);
    LTX2_TRY(check_vector(be, ctx, op, "alpha", alpha, c, LTX2_F32));
    LTX2_TRY(check_vector(be, ctx, op, "inv_beta", inv_beta, c, LTX2_F32));
    if (ltx2_tensor_numel(x) == 0) return LTX2_OK;
    return be->snake(be, ctx, x, alpha, inv_beta, y);
}

ltx2_status ltx2_backend_complex_abs(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_COMPLEX_ABS;
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    char sx[128];
    if (x->ndim < 1 || x->shape[x->ndim - 1] < 2 || x->shape[x->ndim - 1] % 2 != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s complex_abs: x %s needs an even, non-empty last dim (real parts, "
                          "then imaginary)", be->name, shape_txt(x, sx, sizeof sx));
    int64_t ys[LTX2_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) ys[i] = x->shape[i];
    ys[x->ndim - 1] /= 2;
    LTX2_TRY(check_input(be, ctx, op, "y", y, x->dtype, x->ndim, ys));
    if (ltx2_tensor_numel(y) == 0) return LTX2_OK;
    if (y->data == x->data)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s complex_abs: y must not alias x", be->name);
    return be->complex_abs(be, ctx, x, y);
}
