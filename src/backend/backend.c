/* Backend-independent part of the op table: op names and the validating wrappers, so every
 * backend sees the same shape/dtype/device rules and error messages. */
#include "backend/backend.h"

#include <string.h>

static const char *const op_names[LTX2_OP_COUNT] = {
    "gemm", "rms_norm", "layer_norm", "softmax", "gelu_tanh", "silu", "add", "mul", "convert",
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

static const char *shape_txt(const ltx2_tensor *t, char *buf, size_t cap) {
    return ltx2_shape_str(t->shape, t->ndim, buf, cap);
}

/* Checks what every tensor argument needs: present, sane rank, on this backend's device, data
 * present when non-empty, and (when asked) contiguous. */
static ltx2_status check_tensor(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                                const char *arg, const ltx2_tensor *t, bool contiguous) {
    const char *opn = ltx2_op_name(op);
    if (!t) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: tensor '%s' is NULL", be->name, opn, arg);
    if (t->ndim < 0 || t->ndim > LTX2_MAX_DIMS)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: tensor '%s' has ndim %d (max %d)", be->name, opn,
                          arg, t->ndim, LTX2_MAX_DIMS);
    if (t->device != be->device)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: tensor '%s' lives on %s, expected %s",
                          be->name, opn, arg, t->device == LTX2_DEVICE_CUDA ? "cuda" : "cpu",
                          be->device == LTX2_DEVICE_CUDA ? "cuda" : "cpu");
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] < 0)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: tensor '%s' has a negative dim", be->name, opn, arg);
    if (ltx2_tensor_numel(t) > 0 && !t->data)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: tensor '%s' has no data", be->name, opn, arg);
    if (contiguous && !ltx2_tensor_is_contiguous(t)) {
        char s[128];
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: tensor '%s' %s must be contiguous", be->name,
                          opn, arg, shape_txt(t, s, sizeof(s)));
    }
    return LTX2_OK;
}

static ltx2_status check_dtype(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                               const char *arg, const ltx2_tensor *t, ltx2_dtype want) {
    if (t->dtype != want)
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "%s %s: tensor '%s' has dtype %s, expected %s", be->name,
                          ltx2_op_name(op), arg, ltx2_dtype_name(t->dtype), ltx2_dtype_name(want));
    return LTX2_OK;
}

static ltx2_status check_supported(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                                   ltx2_dtype dt) {
    if (!ltx2_backend_supports(be, op, dt))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "backend %s does not support %s for dtype %s",
                          be->name, ltx2_op_name(op), ltx2_dtype_name(dt));
    return LTX2_OK;
}

static ltx2_status check_same_shape(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                                    const char *an, const ltx2_tensor *a, const char *bn,
                                    const ltx2_tensor *b) {
    if (!ltx2_tensor_same_shape(a, b)) {
        char sa[128], sb[128];
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: '%s' %s and '%s' %s must have the same shape",
                          be->name, ltx2_op_name(op), an, shape_txt(a, sa, sizeof(sa)), bn,
                          shape_txt(b, sb, sizeof(sb)));
    }
    return LTX2_OK;
}

/* A per-channel vector (norm weight/bias, gemm bias): rank 1 with n elements. */
static ltx2_status check_vector(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                                const char *arg, const ltx2_tensor *v, int64_t n, ltx2_dtype dt) {
    if (!v) return LTX2_OK;
    LTX2_TRY(check_tensor(be, ctx, op, arg, v, true));
    LTX2_TRY(check_dtype(be, ctx, op, arg, v, dt));
    if (v->ndim != 1 || v->shape[0] != n) {
        char s[128];
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: '%s' has shape %s, expected [%lld]", be->name,
                          ltx2_op_name(op), arg, shape_txt(v, s, sizeof(s)), (long long)n);
    }
    return LTX2_OK;
}

static ltx2_status check_rowwise(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                                 const ltx2_tensor *x, const ltx2_tensor *y) {
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    LTX2_TRY(check_dtype(be, ctx, op, "y", y, x->dtype));
    LTX2_TRY(check_same_shape(be, ctx, op, "x", x, "y", y));
    if (x->ndim < 1 || x->shape[x->ndim - 1] < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s %s: x needs a non-empty last dim", be->name, ltx2_op_name(op));
    return LTX2_OK;
}

ltx2_status ltx2_backend_gemm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                              const ltx2_tensor *w, ltx2_b_layout w_layout,
                              const ltx2_tensor *bias, ltx2_tensor *y) {
    const ltx2_op op = LTX2_OP_GEMM;
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_tensor(be, ctx, op, "w", w, true));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    LTX2_TRY(check_dtype(be, ctx, op, "w", w, x->dtype));
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
    LTX2_TRY(check_tensor(be, ctx, op, "x", x, true));
    LTX2_TRY(check_tensor(be, ctx, op, "y", y, true));
    LTX2_TRY(check_supported(be, ctx, op, x->dtype));
    LTX2_TRY(check_dtype(be, ctx, op, "y", y, x->dtype));
    LTX2_TRY(check_same_shape(be, ctx, op, "x", x, "y", y));
    return be->unary(be, ctx, op, x, y);
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
