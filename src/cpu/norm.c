/* RMSNorm and LayerNorm over the last dim, fp32 in and out, one row per OpenMP iteration. Row
 * statistics accumulate in double (this is the reference: a float sum of values near a large
 * mean loses ~1e-5 of the spread) with `omp simd` reductions so they still vectorise. */
#include "cpu/cpu_ops.h"

#include <math.h>

static ltx2_status check_rows(ltx2_context *ctx, const char *op, const float *x, const float *y,
                              int64_t rows, int64_t dim) {
    if (rows < 0 || dim <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "cpu %s: need rows >= 0 and dim > 0, got rows=%lld dim=%lld",
                          op, (long long)rows, (long long)dim);
    if (rows > 0 && (!x || !y))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu %s: NULL input or output", op);
    return LTX2_OK;
}

ltx2_status ltx2_cpu_rms_norm(ltx2_context *ctx, const float *x, float *y, int64_t rows,
                              int64_t dim, const float *weight, float eps) {
    LTX2_TRY(check_rows(ctx, "rms_norm", x, y, rows, dim));
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        float *yr = y + r * dim;
        double ss = 0.0;
#pragma omp simd reduction(+ : ss)
        for (int64_t i = 0; i < dim; i++) ss += (double)xr[i] * xr[i];
        float inv = (float)(1.0 / sqrt(ss / (double)dim + eps));
        if (weight) {
#pragma omp simd
            for (int64_t i = 0; i < dim; i++) yr[i] = xr[i] * inv * weight[i];
        } else {
#pragma omp simd
            for (int64_t i = 0; i < dim; i++) yr[i] = xr[i] * inv;
        }
    }
    return LTX2_OK;
}

ltx2_status ltx2_cpu_row_stats(ltx2_context *ctx, const float *x, float *st, int64_t rows, int64_t dim) {
    LTX2_TRY(check_rows(ctx, "row_stats", x, st, rows, dim));
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        double s = 0.0;
        float lo = INFINITY, hi = -INFINITY;
#pragma omp simd reduction(+ : s) reduction(min : lo) reduction(max : hi)
        for (int64_t i = 0; i < dim; i++) {
            s += xr[i];
            lo = xr[i] < lo ? xr[i] : lo;
            hi = xr[i] > hi ? xr[i] : hi;
        }
        st[3 * r] = (float)s, st[3 * r + 1] = lo, st[3 * r + 2] = hi;
    }
    return LTX2_OK;
}

ltx2_status ltx2_cpu_row_sumsq(ltx2_context *ctx, const float *x, float *ss, int64_t rows, int64_t dim) {
    LTX2_TRY(check_rows(ctx, "row_sumsq", x, ss, rows, dim));
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        double s = 0.0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = 0; i < dim; i++) s += (double)xr[i] * xr[i];
        ss[r] = (float)s;
    }
    return LTX2_OK;
}

ltx2_status ltx2_cpu_rms_apply(ltx2_context *ctx, const float *x, const float *ss, int64_t n, float *y, int64_t rows,
                               int64_t dim, const float *weight, float eps) {
    LTX2_TRY(check_rows(ctx, "rms_apply", x, y, rows, dim));
    if (n < dim || (rows > 0 && !ss))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu rms_apply: need ss and n >= dim (n %lld, dim %lld)",
                          (long long)n, (long long)dim);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        float *yr = y + r * dim;
        const float inv = (float)(1.0 / sqrt((double)ss[r] / (double)n + eps));
#pragma omp simd
        for (int64_t i = 0; i < dim; i++) yr[i] = weight ? xr[i] * inv * weight[i] : xr[i] * inv;
    }
    return LTX2_OK;
}

ltx2_status ltx2_cpu_layer_norm(ltx2_context *ctx, const float *x, float *y, int64_t rows,
                                int64_t dim, const float *weight, const float *bias, float eps) {
    LTX2_TRY(check_rows(ctx, "layer_norm", x, y, rows, dim));
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        float *yr = y + r * dim;
        /* Two passes (mean, then squared deviations) rather than E[x^2]-E[x]^2, which cancels
         * badly when |mean| >> std. */
        double sum = 0.0;
#pragma omp simd reduction(+ : sum)
        for (int64_t i = 0; i < dim; i++) sum += xr[i];
        double mean = sum / (double)dim;
        double sq = 0.0;
#pragma omp simd reduction(+ : sq)
        for (int64_t i = 0; i < dim; i++) sq += (xr[i] - mean) * (xr[i] - mean);
        double inv = 1.0 / sqrt(sq / (double)dim + eps);
#pragma omp simd
        for (int64_t i = 0; i < dim; i++) {
            float v = (float)((xr[i] - mean) * inv);
            if (weight) v *= weight[i];
            if (bias) v += bias[i];
            yr[i] = v;
        }
    }
    return LTX2_OK;
}
