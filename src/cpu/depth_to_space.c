/* DepthToSpaceUpsample rearrangement on the CPU (see cpu_depth_to_space.h). */
#include "cpu/cpu_depth_to_space.h"

/* Below this many outputs the loop runs on one thread (fork/join costs more). */
#define D2S_PARALLEL_MIN 65536

ltx2_status ltx2_cpu_depth_to_space(ltx2_context *ctx, const float *x, int64_t n, int64_t t, int64_t h,
                                    int64_t w, int64_t c, const int64_t s[3], bool drop_first,
                                    const float *residual, int64_t rc, float *y) {
    if (!s || s[0] < 1 || s[1] < 1 || s[2] < 1 || n < 1 || t < 1 || h < 1 || w < 1 || c < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "depth_to_space: bad sizes n=%lld t=%lld h=%lld w=%lld c=%lld",
                          (long long)n, (long long)t, (long long)h, (long long)w, (long long)c);
    const int64_t drop = drop_first ? 1 : 0;
    if (t * s[0] - drop < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "depth_to_space: dropping the first frame of %lld leaves none",
                          (long long)(t * s[0]));
    if (residual && (rc < 1 || c % rc != 0))
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "depth_to_space: residual channels %lld must divide %lld",
                          (long long)rc, (long long)c);
    if (!x || !y) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "depth_to_space: NULL buffer");
    const int64_t s0 = s[0], s1 = s[1], s2 = s[2], prod = s0 * s1 * s2;
    const int64_t T = t * s0 - drop, H = h * s1, W = w * s2;
    const int64_t xc = c * prod, resc = rc * prod;
#pragma omp parallel for collapse(2) schedule(static) if (n * T * H * W * c > D2S_PARALLEL_MIN)
    for (int64_t bn = 0; bn < n; bn++)
        for (int64_t t2 = 0; t2 < T; t2++) {
            const int64_t tt = t2 + drop, ti = tt / s0, a = tt % s0;
            for (int64_t h2 = 0; h2 < H; h2++) {
                const int64_t hi = h2 / s1, bb = h2 % s1;
                for (int64_t w2 = 0; w2 < W; w2++) {
                    const int64_t wi = w2 / s2, e = w2 % s2;
                    const int64_t vox = ((bn * t + ti) * h + hi) * w + wi;
                    const float *xs = x + vox * xc;
                    const float *rs = residual ? residual + vox * resc : NULL;
                    float *dst = y + (((bn * T + t2) * H + h2) * W + w2) * c;
                    for (int64_t cc = 0; cc < c; cc++) {
                        float v = xs[((cc * s0 + a) * s1 + bb) * s2 + e];
                        if (rs) v += rs[(((cc % rc) * s0 + a) * s1 + bb) * s2 + e];
                        dst[cc] = v;
                    }
                }
            }
        }
    return LTX2_OK;
}
