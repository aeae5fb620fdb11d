/* The vocoders' channel-wise ops, fp32: BigVGAN's SnakeBeta and the STFT magnitude of
 * LTX-2.3's bandwidth extension (see cpu_ops.h). */
#include "cpu/cpu_ops.h"

#include <math.h>

ltx2_status ltx2_cpu_snake(ltx2_context *ctx, const float *x, float *y, const float *alpha, const float *inv_beta,
                           int64_t rows, int64_t c) {
    if (rows < 0 || c < 1 || (rows > 0 && (!x || !y || !alpha || !inv_beta)))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu snake: rows %lld c %lld or a NULL buffer", (long long)rows,
                          (long long)c);
#pragma omp parallel for schedule(static) if (rows * c > 65536)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t ch = 0; ch < c; ch++) {
            const float v = x[r * c + ch];
            const float s = sinf(v * alpha[ch]);
            y[r * c + ch] = v + inv_beta[ch] * (s * s);
        }
    return LTX2_OK;
}

ltx2_status ltx2_cpu_complex_abs(ltx2_context *ctx, const float *x, float *y, int64_t rows, int64_t nf) {
    if (rows < 0 || nf < 1 || (rows > 0 && (!x || !y)))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu complex_abs: rows %lld nf %lld or a NULL buffer",
                          (long long)rows, (long long)nf);
#pragma omp parallel for schedule(static) if (rows * nf > 65536)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t f = 0; f < nf; f++) {
            const float re = x[r * 2 * nf + f], im = x[r * 2 * nf + nf + f];
            y[r * nf + f] = sqrtf(re * re + im * im);
        }
    return LTX2_OK;
}
