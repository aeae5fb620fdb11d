/* CPU conv3d over NDHWC fp32 (see cpu_conv3d.h) as an implicit GEMM: M = output voxels, N = c_out,
 * K = taps x c_in. Padding is an index remap (temporal clamp, spatial zero/reflect) applied while
 * packing the GEMM's A micro-panels straight from the input (no im2col buffer); the weight
 * [kt,kh,kw,c_in][c_out] is the B operand. It runs on the blocked GEMM driver (gemm_driver.h),
 * so blocking, microkernel and summation order are ltx2_cpu_gemm's and results equal an im2col +
 * GEMM bit for bit. 1x1x1 stride-1 convs call ltx2_cpu_gemm on the input directly. */
#include "cpu/cpu_conv3d.h"

#include <omp.h>
#include <stdlib.h>

#include "cpu/cpu_ops.h"
#include "cpu/gemm_driver.h"



/* Source index of padded spatial position p (already minus the pad) or -1 for a zero. */
static inline int64_t spatial_src(int64_t i, int64_t size, ltx2_conv_spad mode) {
    if (i >= 0 && i < size) return i;
    if (mode == LTX2_CONV_SPAD_ZEROS) return -1;
    return i < 0 ? -i : 2 * (size - 1) - i;
}


/* Geometry shared by the packers. */
typedef struct conv_geom {
    const ltx2_conv3d_desc *d;
    const float *x;
    int64_t t, h, w;        /* input extent */
    int64_t to, ho, wo;     /* output extent */
    int64_t front, ph, pw;  /* temporal front pad, spatial pads */
    int64_t m_total;        /* rows of the implicit A (output voxels) */
} conv_geom;

/* Input voxel offset (in floats, channel 0) read by output row m at tap (a, bb, c), or -1 for a
 * zero (spatial zero padding, or a zero frame). Time is otherwise clamped (replicated edge frames). */
static inline int64_t tap_src(const conv_geom *g, int64_t m, int64_t tap) {
    const ltx2_conv3d_desc *d = g->d;
    const int64_t c = tap % d->kw, bb = (tap / d->kw) % d->kh, a = tap / (d->kw * d->kh);
    const int64_t xo = m % g->wo, yo = (m / g->wo) % g->ho, tt = (m / (g->wo * g->ho)) % g->to;
    const int64_t b = m / (g->wo * g->ho * g->to);
    int64_t ts = tt * d->st + a - g->front;
    if (ts < 0 || ts >= g->t) {
        if (ltx2_conv3d_tpad_zeros(d)) return -1;
        ts = ts < 0 ? 0 : g->t - 1;
    }
    const int64_t hs = spatial_src(yo * d->sh + bb - g->ph, g->h, d->spad);
    const int64_t ws = spatial_src(xo * d->sw + c - g->pw, g->w, d->spad);
    if (hs < 0 || ws < 0) return -1;
    return (((b * g->t + ts) * g->h + hs) * g->w + ws) * d->c_in;
}

/* Packs the implicit A rows [i0, i0+mc) x K columns [p0, p0+kc) into MR-row micro-panels,
 * k-major (dst[k*MR + i]), zero-padded rows, reading input patches directly. */
static void pack_a_implicit(float *restrict dst, const void *geom, int64_t i0, int64_t mc, int64_t p0, int64_t kc) {
    const conv_geom *g = geom;
    const int64_t ci = g->d->c_in, m_total = g->m_total;
    for (int64_t ir = 0; ir < mc; ir += LTX2_GEMM_MR) {
        for (int64_t i = 0; i < LTX2_GEMM_MR; i++) {
            const int64_t m = i0 + ir + i;
            float *col = dst + i;
            if (ir + i >= mc || m >= m_total) {
                for (int64_t k = 0; k < kc; k++) col[k * LTX2_GEMM_MR] = 0.0f;
                continue;
            }
            int64_t k = 0;
            while (k < kc) {
                const int64_t kk = p0 + k, tap = kk / ci, c0 = kk % ci;
                const int64_t seg = ci - c0 < kc - k ? ci - c0 : kc - k;
                const int64_t src = tap_src(g, m, tap);
                if (src < 0) {
                    for (int64_t q = 0; q < seg; q++) col[(k + q) * LTX2_GEMM_MR] = 0.0f;
                } else {
                    const float *s = g->x + src + c0;
                    for (int64_t q = 0; q < seg; q++) col[(k + q) * LTX2_GEMM_MR] = s[q];
                }
                k += seg;
            }
        }
        dst += kc * LTX2_GEMM_MR;
    }
}

ltx2_status ltx2_cpu_conv3d(ltx2_context *ctx, const ltx2_conv3d_desc *d, const float *x,
                            int64_t n, int64_t t, int64_t h, int64_t w, const float *w_packed,
                            const float *bias, float *y) {
    int64_t o[3] = {0, 0, 0};
    LTX2_TRY(ltx2_conv3d_out_shape(ctx, d, t, h, w, o));
    if (!x || !w_packed || !y)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: NULL input, weight or output");
    if (n < 1) return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "conv3d: batch %lld < 1", (long long)n);
    const int64_t co = d->c_out;
    const int64_t M = n * o[0] * o[1] * o[2], N = co, K = d->kt * d->kh * d->kw * d->c_in;

    if (d->kt == 1 && d->kh == 1 && d->kw == 1 && d->st == 1 && d->sh == 1 && d->sw == 1)
        return ltx2_cpu_gemm(ctx, M, co, d->c_in, 1.0f, x, d->c_in, w_packed, co, LTX2_B_KN, 0.0f, y, co, bias);

    int64_t front, back;
    ltx2_conv3d_tpad_amounts(d, &front, &back);
    (void)back;
    const conv_geom g = {.d = d, .x = x, .t = t, .h = h, .w = w, .to = o[0], .ho = o[1], .wo = o[2],
                         .front = front, .ph = d->kh / 2, .pw = d->kw / 2, .m_total = M};
    const ltx2_gemm_matrix wm = {w_packed, co};
    const ltx2_gemm_packers pk = {.pack_a = pack_a_implicit, .pack_b = ltx2_gemm_pack_b_kn, .a = &g, .b = &wm};
    return ltx2_cpu_gemm_packed(ctx, M, N, K, 1.0f, &pk, 0.0f, y, co, bias);
}
