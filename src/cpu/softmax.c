/* Softmax over the last dim, fp32: subtract the row max before exp so large logits cannot
 * overflow; a row of all -inf yields NaN, as torch does. */
#include "cpu/cpu_ops.h"

#include <math.h>

ltx2_status ltx2_cpu_softmax(ltx2_context *ctx, const float *x, float *y, int64_t rows,
                             int64_t dim) {
    if (rows < 0 || dim <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "cpu softmax: need rows >= 0 and dim > 0, got rows=%lld dim=%lld",
                          (long long)rows, (long long)dim);
    if (rows > 0 && (!x || !y))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu softmax: NULL input or output");
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        float *yr = y + r * dim;
        float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
        for (int64_t i = 0; i < dim; i++) mx = xr[i] > mx ? xr[i] : mx;
        float sum = 0.0f;
        for (int64_t i = 0; i < dim; i++) {
            float e = expf(xr[i] - mx);
            yr[i] = e;
            sum += e;
        }
        float inv = 1.0f / sum;
#pragma omp simd
        for (int64_t i = 0; i < dim; i++) yr[i] *= inv;
    }
    return LTX2_OK;
}
