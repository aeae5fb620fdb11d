/* The argument checks every op entry of backend.c shares (tensors on the backend's device, dtypes,
 * shapes, support), each naming the backend, the op and the argument in its message. Private to
 * src/backend/backend.c. */
#ifndef LTX2_BACKEND_BACKEND_CHECKS_H
#define LTX2_BACKEND_BACKEND_CHECKS_H

#include <stdio.h>

#include "backend/backend.h"

static inline const char *shape_txt(const ltx2_tensor *t, char *buf, size_t cap) {
    return ltx2_shape_str(t->shape, t->ndim, buf, cap);
}

/* Checks what every tensor argument needs: present, sane rank, on this backend's device, data
 * present when non-empty, and (when asked) contiguous. */
static inline ltx2_status check_tensor(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
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

static inline ltx2_status check_dtype(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                               const char *arg, const ltx2_tensor *t, ltx2_dtype want) {
    if (t->dtype != want)
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "%s %s: tensor '%s' has dtype %s, expected %s", be->name,
                          ltx2_op_name(op), arg, ltx2_dtype_name(t->dtype), ltx2_dtype_name(want));
    return LTX2_OK;
}

/* A GEMM weight: x's dtype, or bf16 under f32 where the backend widens bf16 weights itself. */
static inline ltx2_status check_weight_dtype(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_tensor *w,
                                      ltx2_dtype x_dtype) {
    if (be->gemm_bf16_weights && x_dtype == LTX2_F32 && w->dtype == LTX2_BF16) return LTX2_OK;
    return check_dtype(be, ctx, op, "w", w, x_dtype);
}

static inline ltx2_status check_supported(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                                   ltx2_dtype dt) {
    if (!ltx2_backend_supports(be, op, dt))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "backend %s does not support %s for dtype %s",
                          be->name, ltx2_op_name(op), ltx2_dtype_name(dt));
    return LTX2_OK;
}

static inline ltx2_status check_same_shape(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
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
static inline ltx2_status check_vector(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
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

static inline ltx2_status check_rowwise(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
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

#endif
