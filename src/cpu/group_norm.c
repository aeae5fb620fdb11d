/* torch GroupNorm on channels-last activations, the CPU reference (cpu_ops.h, ltx2_cpu_group_norm).
 * The latent upsampler's norm: statistics over a whole sample's positions, so they are summed in
 * double (a group holds up to ~10^6 values) and the mean is taken before the variance (two passes,
 * as torch's reference does, no E[x^2] - E[x]^2 cancellation). */
#include <math.h>

#include "cpu/cpu_ops.h"

ltx2_status ltx2_cpu_group_norm(ltx2_context *ctx, const float *x, float *y, int64_t n, int64_t inner, int64_t c,
                                int64_t groups, float eps, const float *weight, const float *bias, bool silu) {
    if (n < 0 || inner < 0 || c < 1 || groups < 1 || c % groups != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "cpu group_norm: n %lld, inner %lld, c %lld in %lld groups", (long long)n,
                          (long long)inner, (long long)c, (long long)groups);
    if (n == 0 || inner == 0) return LTX2_OK;
    if (!x || !y) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu group_norm: NULL buffer");
    const int64_t cg = c / groups;
    const double count = (double)inner * (double)cg;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < n; b++)
        for (int64_t g = 0; g < groups; g++) {
            const float *xs = x + b * inner * c + g * cg;
            float *ys = y + b * inner * c + g * cg;
            double s = 0.0, s2 = 0.0;
            for (int64_t v = 0; v < inner; v++)
                for (int64_t k = 0; k < cg; k++) s += xs[v * c + k];
            const double mean = s / count;
            for (int64_t v = 0; v < inner; v++)
                for (int64_t k = 0; k < cg; k++) {
                    const double d = xs[v * c + k] - mean;
                    s2 += d * d;
                }
            const double rstd = 1.0 / sqrt(s2 / count + (double)eps);
            for (int64_t v = 0; v < inner; v++)
                for (int64_t k = 0; k < cg; k++) {
                    const int64_t ch = g * cg + k;
                    float o = (float)((xs[v * c + k] - mean) * rstd);
                    o = o * (weight ? weight[ch] : 1.0f) + (bias ? bias[ch] : 0.0f);
                    if (silu) o = o / (1.0f + expf(-o));
                    ys[v * c + k] = o;
                }
        }
    return LTX2_OK;
}
