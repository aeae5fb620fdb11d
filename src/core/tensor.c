/* Tensor views (include/ltx2/tensor.h): dtype names and sizes, shape helpers, and the view
 * transforms of core/tensor_ops.h (reshape, slice, permute), which never copy data. */
#include "ltx2/tensor.h"

#include <stdio.h>
#include <string.h>

#include "core/context.h"
#include "core/tensor_ops.h"

typedef struct dtype_info {
    const char *name;    /* ours */
    const char *st_name; /* safetensors */
    size_t size;
    bool is_float;
} dtype_info;

/* Indexed by ltx2_dtype; keep in enum order. */
static const dtype_info k_dtypes[LTX2_DTYPE_COUNT] = {
    [LTX2_F32] = {"f32", "F32", 4, true},
    [LTX2_F16] = {"f16", "F16", 2, true},
    [LTX2_BF16] = {"bf16", "BF16", 2, true},
    [LTX2_F8_E4M3] = {"f8_e4m3", "F8_E4M3", 1, true},
    [LTX2_F8_E5M2] = {"f8_e5m2", "F8_E5M2", 1, true},
    [LTX2_F64] = {"f64", "F64", 8, true},
    [LTX2_I64] = {"i64", "I64", 8, false},
    [LTX2_I32] = {"i32", "I32", 4, false},
    [LTX2_I16] = {"i16", "I16", 2, false},
    [LTX2_I8] = {"i8", "I8", 1, false},
    [LTX2_U8] = {"u8", "U8", 1, false},
    [LTX2_BOOL] = {"bool", "BOOL", 1, false},
};

static bool dtype_valid(ltx2_dtype dt) { return (int)dt >= 0 && dt < LTX2_DTYPE_COUNT; }

size_t ltx2_dtype_size(ltx2_dtype dt) { return dtype_valid(dt) ? k_dtypes[dt].size : 0; }
const char *ltx2_dtype_name(ltx2_dtype dt) { return dtype_valid(dt) ? k_dtypes[dt].name : "?"; }
const char *ltx2_dtype_st_name(ltx2_dtype dt) { return dtype_valid(dt) ? k_dtypes[dt].st_name : "?"; }
bool ltx2_dtype_is_float(ltx2_dtype dt) { return dtype_valid(dt) && k_dtypes[dt].is_float; }

bool ltx2_dtype_from_st_name(const char *name, size_t len, ltx2_dtype *out) {
    if (!name) return false;
    for (int i = 0; i < LTX2_DTYPE_COUNT; i++) {
        const char *s = k_dtypes[i].st_name;
        if (strlen(s) == len && memcmp(s, name, len) == 0) {
            if (out) *out = (ltx2_dtype)i;
            return true;
        }
    }
    return false;
}

/* Writes row-major strides for shape into strides. */
static void contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i];
    }
}

ltx2_tensor ltx2_tensor_make(void *data, ltx2_dtype dt, int ndim, const int64_t *shape) {
    ltx2_tensor t;
    memset(&t, 0, sizeof(t));
    t.dtype = dt;
    t.device = LTX2_DEVICE_CPU;
    /* An out-of-range ndim (a caller bug) gives an empty view with no data rather than reading
     * past shape[]; the ops below then reject it. */
    if (ndim < 0 || ndim > LTX2_MAX_DIMS || (ndim > 0 && !shape)) {
        t.ndim = 0;
        return t;
    }
    t.data = data;
    t.ndim = ndim;
    for (int i = 0; i < ndim; i++) t.shape[i] = shape[i];
    contiguous_strides(ndim, t.shape, t.strides);
    return t;
}

int64_t ltx2_tensor_numel(const ltx2_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

size_t ltx2_tensor_nbytes(const ltx2_tensor *t) {
    return (size_t)ltx2_tensor_numel(t) * ltx2_dtype_size(t->dtype);
}

bool ltx2_tensor_is_contiguous(const ltx2_tensor *t) {
    int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] == 0) return true; /* no elements: any strides describe it */
        if (t->shape[i] != 1 && t->strides[i] != expect) return false;
        expect *= t->shape[i];
    }
    return true;
}

bool ltx2_tensor_same_shape(const ltx2_tensor *a, const ltx2_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

const char *ltx2_shape_str(const int64_t *shape, int ndim, char *buf, size_t cap) {
    if (!buf || cap == 0) return buf;
    size_t used = 0;
    buf[0] = '\0';
    /* snprintf truncates safely; once the buffer is full the remaining dims are dropped. */
#define SHAPE_APPEND(...)                                                   \
    do {                                                                    \
        if (used < cap) {                                                   \
            int w_ = snprintf(buf + used, cap - used, __VA_ARGS__);         \
            used += w_ > 0 ? (size_t)w_ : 0;                                \
        }                                                                   \
    } while (0)
    SHAPE_APPEND("[");
    for (int i = 0; i < ndim && shape; i++) SHAPE_APPEND("%s%lld", i ? ", " : "", (long long)shape[i]);
    SHAPE_APPEND("]");
#undef SHAPE_APPEND
    return buf;
}

/* ---- view transforms (core/tensor_ops.h) ---- */

static ltx2_status check_view(ltx2_context *ctx, const ltx2_tensor *t, const char *op) {
    if (!t) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: NULL tensor", op);
    if (t->ndim < 0 || t->ndim > LTX2_MAX_DIMS)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s: ndim %d outside [0, %d]", op, t->ndim, LTX2_MAX_DIMS);
    if (!dtype_valid(t->dtype))
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "%s: unknown dtype %d", op, (int)t->dtype);
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] < 0)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s: negative size %lld in dim %d", op,
                              (long long)t->shape[i], i);
    return LTX2_OK;
}

/* Python-style dim: -1 is the last. Returns the normalised dim or -1 when out of range. */
static int norm_dim(int dim, int ndim) {
    if (dim < 0) dim += ndim;
    return dim >= 0 && dim < ndim ? dim : -1;
}

ltx2_status ltx2_tensor_reshape(ltx2_context *ctx, const ltx2_tensor *t, int ndim, const int64_t *shape,
                                ltx2_tensor *out) {
    LTX2_TRY(check_view(ctx, t, "reshape"));
    char a[128], b[128];
    if (ndim < 0 || ndim > LTX2_MAX_DIMS || (ndim > 0 && !shape))
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "reshape: new ndim %d outside [0, %d]", ndim, LTX2_MAX_DIMS);
    if (!ltx2_tensor_is_contiguous(t))
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "reshape: view of shape %s is not contiguous",
                          ltx2_shape_str(t->shape, t->ndim, a, sizeof(a)));
    int64_t numel = ltx2_tensor_numel(t);
    int64_t newshape[LTX2_MAX_DIMS];
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < ndim; i++) {
        newshape[i] = shape[i];
        if (shape[i] == -1) {
            if (infer >= 0)
                return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "reshape: more than one -1 in %s",
                                  ltx2_shape_str(shape, ndim, b, sizeof(b)));
            infer = i;
        } else if (shape[i] < 0) {
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "reshape: negative size in %s",
                              ltx2_shape_str(shape, ndim, b, sizeof(b)));
        } else {
            known *= shape[i];
        }
    }
    if (infer >= 0) {
        if (known == 0 || numel % known != 0)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "reshape: cannot infer -1 in %s from %lld elements of %s",
                              ltx2_shape_str(shape, ndim, b, sizeof(b)), (long long)numel,
                              ltx2_shape_str(t->shape, t->ndim, a, sizeof(a)));
        newshape[infer] = numel / known;
        known = numel;
    }
    if (known != numel)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "reshape: %s has %lld elements, new shape %s has %lld",
                          ltx2_shape_str(t->shape, t->ndim, a, sizeof(a)), (long long)numel,
                          ltx2_shape_str(shape, ndim, b, sizeof(b)), (long long)known);
    ltx2_tensor r = *t;
    r.ndim = ndim;
    memset(r.shape, 0, sizeof(r.shape));
    memset(r.strides, 0, sizeof(r.strides));
    for (int i = 0; i < ndim; i++) r.shape[i] = newshape[i];
    contiguous_strides(ndim, r.shape, r.strides);
    *out = r;
    return LTX2_OK;
}

ltx2_status ltx2_tensor_slice(ltx2_context *ctx, const ltx2_tensor *t, int dim, int64_t start, int64_t end,
                              ltx2_tensor *out) {
    LTX2_TRY(check_view(ctx, t, "slice"));
    int d = norm_dim(dim, t->ndim);
    if (d < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "slice: dim %d out of range for a %d-d tensor", dim, t->ndim);
    if (start < 0 || end < start || end > t->shape[d])
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "slice: range [%lld, %lld) invalid for dim %d of size %lld",
                          (long long)start, (long long)end, d, (long long)t->shape[d]);
    ltx2_tensor r = *t;
    r.shape[d] = end - start;
    if (r.data && start > 0)
        r.data = (char *)r.data + start * r.strides[d] * (int64_t)ltx2_dtype_size(t->dtype);
    *out = r;
    return LTX2_OK;
}

ltx2_status ltx2_tensor_permute(ltx2_context *ctx, const ltx2_tensor *t, const int *perm, ltx2_tensor *out) {
    LTX2_TRY(check_view(ctx, t, "permute"));
    if (t->ndim > 0 && !perm) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "permute: NULL perm");
    bool seen[LTX2_MAX_DIMS] = {false};
    ltx2_tensor r = *t;
    for (int i = 0; i < t->ndim; i++) {
        int p = norm_dim(perm[i], t->ndim);
        if (p < 0 || seen[p])
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                              "permute: entry %d (= %d) is out of range or repeated for a %d-d tensor", i,
                              perm[i], t->ndim);
        seen[p] = true;
        r.shape[i] = t->shape[p];
        r.strides[i] = t->strides[p];
    }
    *out = r;
    return LTX2_OK;
}
