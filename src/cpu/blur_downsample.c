/* ltx-core BlurDownsample (dims 2, kernel 5) on channels-last frames, the CPU reference (cpu_ops.h,
 * ltx2_cpu_blur_downsample): a depthwise binomial blur with a stride, the rational latent
 * upsampler's anti-alias after its pixel shuffle. Taps are summed in the kernel's row-major order
 * in fp32, as a depthwise conv2d would. */
#include "cpu/cpu_ops.h"

/* Below this many outputs the loop runs on one thread (fork/join costs more). */
#define BLUR_PARALLEL_MIN 65536

ltx2_status ltx2_cpu_blur_downsample(ltx2_context *ctx, const float *x, int64_t frames, int64_t h, int64_t w,
                                     int64_t c, int64_t s, float *y) {
    if (frames < 0 || h < 1 || w < 1 || c < 1 || s < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "cpu blur_downsample: %lld frames of %lld x %lld x %lld, stride %lld",
                          (long long)frames, (long long)h, (long long)w, (long long)c, (long long)s);
    if (frames == 0) return LTX2_OK;
    if (!x || !y) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu blur_downsample: NULL buffer");
    static const float k1[LTX2_BLUR_TAPS] = {1, 4, 6, 4, 1};
    const int64_t pad = LTX2_BLUR_TAPS / 2, ho = (h - 1) / s + 1, wo = (w - 1) / s + 1;
#pragma omp parallel for collapse(2) schedule(static) if (frames * ho * wo * c > BLUR_PARALLEL_MIN)
    for (int64_t f = 0; f < frames; f++)
        for (int64_t i = 0; i < ho; i++)
            for (int64_t j = 0; j < wo; j++) {
                float *dst = y + ((f * ho + i) * wo + j) * c;
                for (int64_t ch = 0; ch < c; ch++) dst[ch] = 0.0f;
                for (int64_t a = 0; a < LTX2_BLUR_TAPS; a++) {
                    const int64_t hs = i * s + a - pad;
                    if (hs < 0 || hs >= h) continue;
                    for (int64_t b = 0; b < LTX2_BLUR_TAPS; b++) {
                        const int64_t ws = j * s + b - pad;
                        if (ws < 0 || ws >= w) continue;
                        const float kv = k1[a] * k1[b] / 256.0f;
                        const float *src = x + ((f * h + hs) * w + ws) * c;
                        for (int64_t ch = 0; ch < c; ch++) dst[ch] += kv * src[ch];
                    }
                }
            }
    return LTX2_OK;
}
