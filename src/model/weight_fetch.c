/* fp32 conversion of checkpoint weights, including scaled fp8 (see weight_fetch.h). */
#include "model/weight_fetch.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/finite.h"
#include "ltx2/tensor.h"

/* Longest key we look a sibling up for (real keys are < 120 characters). */
#define SIBLING_CAP 512

bool ltx2_weight_dtype_ok(ltx2_dtype dt) {
    return dt == LTX2_F32 || dt == LTX2_BF16 || dt == LTX2_F16 || dt == LTX2_F8_E4M3;
}

static int64_t numel(const ltx2_st_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

/* name with its trailing `from` replaced by `to`; false when it does not end in `from`. */
static bool swap_suffix(const char *name, const char *from, const char *to, char *out, size_t cap) {
    size_t n = strlen(name), f = strlen(from);
    if (n < f || strcmp(name + n - f, from) != 0) return false;
    int w = snprintf(out, cap, "%.*s%s", (int)(n - f), name, to);
    return w > 0 && (size_t)w < cap;
}

/* The one-value scale tensor at key: *v, or an error naming it. */
static ltx2_status one_scale(ltx2_context *ctx, const char *label, const ltx2_st_tensor *s, const char *key, float *v) {
    if (numel(s) != 1 || (s->dtype != LTX2_F32 && s->dtype != LTX2_BF16 && s->dtype != LTX2_F16))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: %s must be one f32/bf16/f16 value (a per-tensor fp8 scale), got %s with %lld elements",
                          label, key, ltx2_dtype_name(s->dtype), (long long)numel(s));
    LTX2_TRY(ltx2_convert(ctx, v, LTX2_F32, s->data, s->dtype, 1));
    if (!(*v > 0.0f) || !isfinite(*v))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s is %g; an fp8 scale must be finite and > 0", label, key,
                          (double)*v);
    return LTX2_OK;
}

/* Checks t's dtype and, for fp8, finds its per-tensor scale (1 when the file has none). */
static ltx2_status weight_scale(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_st_tensor *t, const char *label,
                                float *scale) {
    *scale = 1.0f;
    if (!ltx2_weight_dtype_ok(t->dtype))
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "%s: tensor %s has unsupported dtype %s (need f32/bf16/f16/f8_e4m3)",
                          label, t->name, ltx2_dtype_name(t->dtype));
    if (t->dtype != LTX2_F8_E4M3) return LTX2_OK;
    char key[SIBLING_CAP];
    const ltx2_st_tensor *s = NULL;
    if (swap_suffix(t->name, ".weight", LTX2_FP8_WEIGHT_SCALE_SUFFIX, key, sizeof key)) s = ltx2_st_find(f, key);
    return s ? one_scale(ctx, label, s, key, scale) : LTX2_OK;
}

/* dst[n] = the n elements at src (t's dtype) in fp32, fp8 times scale. */
static ltx2_status run_to_f32(ltx2_context *ctx, const ltx2_st_tensor *t, const char *label, const void *src,
                              float scale, float *dst, size_t n) {
    if (t->dtype != LTX2_F8_E4M3) {
        ltx2_status st = ltx2_convert(ctx, dst, LTX2_F32, src, t->dtype, n);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "%s: tensor %s", label, t->name);
        return st;
    }
    const uint8_t *q = src;
    /* fp32 product of the decoded fp8 value and the fp32 scale, as torch computes it */
    for (size_t i = 0; i < n; i++) dst[i] = ltx2_fp8e4m3_to_f32(q[i]) * scale;
    return LTX2_OK;
}

/* Weights are checked as they are read: a NaN in a checkpoint is refused at load, naming the
 * tensor and the element (flat within what was read), not found as black frames after a run. */
static ltx2_status finite_weights(ltx2_context *ctx, const ltx2_st_tensor *t, const char *label, const float *v,
                                  size_t n) {
    const int64_t shape[1] = {(int64_t)n};
    return ltx2_check_finite(ctx, LTX2_ERR_FORMAT, v, 1, shape, "%s: tensor %s (element [flat index])", label, t->name);
}

ltx2_status ltx2_weight_to_f32(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_st_tensor *t, float *dst,
                               size_t n) {
    const char *label = f && f->path ? f->path : "checkpoint";
    float scale;
    LTX2_TRY(weight_scale(ctx, f, t, label, &scale));
    LTX2_TRY(run_to_f32(ctx, t, label, t->data, scale, dst, n));
    return finite_weights(ctx, t, label, dst, n);
}

/* t is 1-D / 2-D and the block [row0, +nrows) x [col0, +ncols) lies inside it; *cols: its row length. */
static ltx2_status slice_check(ltx2_context *ctx, const char *label, const ltx2_st_tensor *t, int64_t row0,
                               int64_t nrows, int64_t col0, int64_t ncols, int64_t *cols) {
    if (t->ndim != 1 && t->ndim != 2)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s: tensor %s is %d-D; slices are read from 1-D / 2-D tensors only",
                          label, t->name, t->ndim);
    const int64_t rows = t->shape[0];
    *cols = t->ndim == 2 ? t->shape[1] : 1;
    if (row0 < 0 || nrows < 0 || col0 < 0 || ncols < 0 || row0 > rows - nrows || col0 > *cols - ncols)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "%s: slice rows [%lld, +%lld) x cols [%lld, +%lld) is outside tensor %s of %lld x %lld",
                          label, (long long)row0, (long long)nrows, (long long)col0, (long long)ncols, t->name,
                          (long long)rows, (long long)*cols);
    return LTX2_OK;
}

ltx2_status ltx2_weight_slice_to_f32(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_st_tensor *t, int64_t row0,
                                     int64_t nrows, int64_t col0, int64_t ncols, float *dst) {
    const char *label = f && f->path ? f->path : "checkpoint";
    int64_t cols = 0;
    LTX2_TRY(slice_check(ctx, label, t, row0, nrows, col0, ncols, &cols));
    float scale;
    LTX2_TRY(weight_scale(ctx, f, t, label, &scale));
    const size_t isz = ltx2_dtype_size(t->dtype);
    const uint8_t *base = (const uint8_t *)t->data + (size_t)(row0 * cols + col0) * isz;
    if (ncols == cols) { /* whole rows: one contiguous run */
        LTX2_TRY(run_to_f32(ctx, t, label, base, scale, dst, (size_t)(nrows * ncols)));
    } else {
        for (int64_t i = 0; i < nrows; i++)
            LTX2_TRY(run_to_f32(ctx, t, label, base + (size_t)(i * cols) * isz, scale, dst + i * ncols, (size_t)ncols));
    }
    return finite_weights(ctx, t, label, dst, (size_t)(nrows * ncols));
}

ltx2_status ltx2_weight_slice_fp8_codes(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_st_tensor *t,
                                        int64_t row0, int64_t nrows, int64_t col0, int64_t ncols, uint8_t *dst) {
    const char *label = f && f->path ? f->path : "checkpoint";
    if (t->dtype != LTX2_F8_E4M3)
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "%s: tensor %s is %s, not fp8 e4m3 codes", label, t->name,
                          ltx2_dtype_name(t->dtype));
    int64_t cols = 0;
    LTX2_TRY(slice_check(ctx, label, t, row0, nrows, col0, ncols, &cols));
    for (int64_t i = 0; i < nrows; i++) {
        const uint8_t *src = (const uint8_t *)t->data + (size_t)((row0 + i) * cols + col0);
        uint8_t *d = dst + i * ncols;
        for (int64_t j = 0; j < ncols; j++) {
            if (ltx2_fp8e4m3_is_nan(src[j]))
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: tensor %s holds an fp8 NaN at row %lld, column %lld", label,
                                  t->name, (long long)(row0 + i), (long long)(col0 + j));
            d[j] = src[j];
        }
    }
    return LTX2_OK;
}

ltx2_status ltx2_weight_fp8_scales(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_st_tensor *t, bool *scaled,
                                   float *w_scale, float *x_scale) {
    *scaled = false;
    *w_scale = *x_scale = 0.0f;
    char wkey[SIBLING_CAP], xkey[SIBLING_CAP];
    if (t->dtype != LTX2_F8_E4M3 || !swap_suffix(t->name, ".weight", LTX2_FP8_WEIGHT_SCALE_SUFFIX, wkey, sizeof wkey) ||
        !swap_suffix(t->name, ".weight", LTX2_FP8_INPUT_SCALE_SUFFIX, xkey, sizeof xkey))
        return LTX2_OK;
    const ltx2_st_tensor *ws = ltx2_st_find(f, wkey), *xs = ltx2_st_find(f, xkey);
    if (!ws) return LTX2_OK;
    const char *label = f->path ? f->path : "checkpoint";
    if (!xs)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: fp8 weight %s has %s but no %s (an fp8 GEMM needs the static "
                          "input scale)", label, t->name, wkey, xkey);
    LTX2_TRY(one_scale(ctx, label, ws, wkey, w_scale));
    LTX2_TRY(one_scale(ctx, label, xs, xkey, x_scale));
    *scaled = true;
    return LTX2_OK;
}

/* torch.finfo(torch.float8_e4m3fn).max */
#define FP8_E4M3_MAX 448.0f

float ltx2_fp8_amax(const float *w, size_t n) {
    float amax = 0.0f;
    for (size_t i = 0; i < n; i++) amax = fabsf(w[i]) > amax ? fabsf(w[i]) : amax;
    return amax;
}

ltx2_status ltx2_fp8_quantize_amax(ltx2_context *ctx, const char *name, const float *w, size_t n, float amax,
                                   uint8_t *q, float *w_scale) {
    if (!(amax > 0.0f) || !isfinite(amax))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: fp8 re-quantisation of a weight whose largest magnitude is %g",
                          name, (double)amax);
    const float scale = FP8_E4M3_MAX / amax;
    for (size_t i = 0; i < n; i++) {
        float v = w[i] * scale;
        v = v > FP8_E4M3_MAX ? FP8_E4M3_MAX : v < -FP8_E4M3_MAX ? -FP8_E4M3_MAX : v;
        q[i] = ltx2_f32_to_fp8e4m3(v);
    }
    *w_scale = 1.0f / scale;
    return LTX2_OK;
}

ltx2_status ltx2_fp8_quantize_per_tensor(ltx2_context *ctx, const char *name, const float *w, size_t n, uint8_t *q,
                                         float *w_scale) {
    return ltx2_fp8_quantize_amax(ctx, name, w, n, ltx2_fp8_amax(w, n), q, w_scale);
}

bool ltx2_weight_is_fp8_aux(const ltx2_st_file *f, const char *name) {
    char key[SIBLING_CAP];
    if (!swap_suffix(name, LTX2_FP8_WEIGHT_SCALE_SUFFIX, ".weight", key, sizeof key) &&
        !swap_suffix(name, LTX2_FP8_INPUT_SCALE_SUFFIX, ".weight", key, sizeof key))
        return false;
    const ltx2_st_tensor *w = ltx2_st_find(f, key);
    return w && w->dtype == LTX2_F8_E4M3;
}
