/* SpaceToDepthDownsample rearrangement and group-mean skip on the CPU (see cpu_space_to_depth.h). */
#include "cpu/cpu_space_to_depth.h"

/* Below this many outputs the loop runs on one thread (fork/join costs more). */
#define S2D_PARALLEL_MIN 65536

/* Offset of s2d channel k of output voxel (t2, h2, w2) in an [n, t, h, w, c] tensor. */
static inline int64_t s2d_src(int64_t k, int64_t bn, int64_t t2, int64_t h2, int64_t w2, int64_t t, int64_t h,
                              int64_t w, int64_t c, const int64_t s[3]) {
    int64_t r = k;
    const int64_t e = r % s[2];
    r /= s[2];
    const int64_t b = r % s[1];
    r /= s[1];
    const int64_t a = r % s[0];
    const int64_t cc = r / s[0];
    return (((bn * t + t2 * s[0] + a) * h + h2 * s[1] + b) * w + w2 * s[2] + e) * c + cc;
}

ltx2_status ltx2_cpu_space_to_depth(ltx2_context *ctx, const float *x, int64_t n, int64_t t, int64_t h,
                                    int64_t w, int64_t c, const int64_t s[3], const float *residual, int64_t rc,
                                    float *y) {
    if (!s || s[0] < 1 || s[1] < 1 || s[2] < 1 || n < 1 || t < 1 || h < 1 || w < 1 || c < 1 || t % s[0] != 0 ||
        h % s[1] != 0 || w % s[2] != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "space_to_depth: bad sizes n=%lld t=%lld h=%lld w=%lld c=%lld for strides %lldx%lldx%lld",
                          (long long)n, (long long)t, (long long)h, (long long)w, (long long)c,
                          (long long)(s ? s[0] : 0), (long long)(s ? s[1] : 0), (long long)(s ? s[2] : 0));
    const int64_t prod = s[0] * s[1] * s[2], C = c * prod;
    if (residual && (rc < 1 || (rc * prod) % C != 0))
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "space_to_depth: residual channels %lld x %lld must be a multiple of %lld output channels",
                          (long long)rc, (long long)prod, (long long)C);
    if (!x || !y) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "space_to_depth: NULL buffer");
    const int64_t T = t / s[0], H = h / s[1], W = w / s[2], g = residual ? rc * prod / C : 0;
#pragma omp parallel for collapse(2) schedule(static) if (n * T * H * W * C > S2D_PARALLEL_MIN)
    for (int64_t bn = 0; bn < n; bn++)
        for (int64_t t2 = 0; t2 < T; t2++)
            for (int64_t h2 = 0; h2 < H; h2++)
                for (int64_t w2 = 0; w2 < W; w2++) {
                    float *dst = y + (((bn * T + t2) * H + h2) * W + w2) * C;
                    for (int64_t k = 0; k < C; k++) {
                        const float v = x[s2d_src(k, bn, t2, h2, w2, t, h, w, c, s)];
                        if (!residual) {
                            dst[k] = v;
                            continue;
                        }
                        float sum = 0.0f;
                        for (int64_t q = k * g; q < (k + 1) * g; q++)
                            sum += residual[s2d_src(q, bn, t2, h2, w2, t, h, w, rc, s)];
                        dst[k] = v + sum / (float)g;
                    }
                }
    return LTX2_OK;
}
