/* CPU reference conv3d over NDHWC fp32 (see cpu_conv3d.h): padding is an index remap (temporal
 * clamp, spatial zero/reflect), im2col of a tile of output voxels into a bounded buffer, then one
 * OpenMP GEMM per tile with the packed [kt,kh,kw,c_in][c_out] weight. 1x1x1 stride-1 convs skip
 * im2col and run the GEMM on the input directly. */
#include "cpu/cpu_conv3d.h"

#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_ops.h"

/* Upper bound on the im2col buffer (floats, 32 MB): large enough that a tile holds hundreds of
 * output voxels even at c_in = 1024 (K = 27648), so the GEMM's per-call weight packing is
 * amortised over many rows, small enough to stay a scratch allocation. */
#define CONV3D_IM2COL_MAX_FLOATS ((int64_t)1 << 23)
/* Below this many floats per tile the im2col copy runs on one thread (fork/join costs more). */
#define CONV3D_PARALLEL_MIN_FLOATS ((int64_t)1 << 15)

static void pad_amounts(const ltx2_conv3d_desc *d, int64_t *front, int64_t *back) {
    switch (d->tpad) {
    case LTX2_CONV_TPAD_CAUSAL: *front = d->kt - 1; *back = 0; break;
    case LTX2_CONV_TPAD_SYMMETRIC: *front = (d->kt - 1) / 2; *back = (d->kt - 1) / 2; break;
    default: *front = 0; *back = 0; break;
    }
}

ltx2_status ltx2_cpu_conv3d_check(ltx2_context *ctx, const ltx2_conv3d_desc *d) {
    if (!d) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: NULL descriptor");
    if (d->c_in < 1 || d->c_out < 1 || d->kt < 1 || d->kh < 1 || d->kw < 1 || d->st < 1 ||
        d->sh < 1 || d->sw < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "conv3d: sizes must be >= 1 (c_in %lld c_out %lld kernel %lldx%lldx%lld "
                          "stride %lldx%lldx%lld)",
                          (long long)d->c_in, (long long)d->c_out, (long long)d->kt, (long long)d->kh,
                          (long long)d->kw, (long long)d->st, (long long)d->sh, (long long)d->sw);
    if (d->kh % 2 == 0 || d->kw % 2 == 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "conv3d: spatial kernel %lldx%lld must be odd (padding is k/2 per side)",
                          (long long)d->kh, (long long)d->kw);
    if (d->tpad != LTX2_CONV_TPAD_CAUSAL && d->tpad != LTX2_CONV_TPAD_SYMMETRIC &&
        d->tpad != LTX2_CONV_TPAD_NONE)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: unknown temporal padding %d", (int)d->tpad);
    if (d->spad != LTX2_CONV_SPAD_ZEROS && d->spad != LTX2_CONV_SPAD_REFLECT)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: unknown spatial padding %d", (int)d->spad);
    return LTX2_OK;
}

ltx2_status ltx2_cpu_conv3d_out_shape(ltx2_context *ctx, const ltx2_conv3d_desc *d, int64_t t,
                                      int64_t h, int64_t w, int64_t out_thw[3]) {
    LTX2_TRY(ltx2_cpu_conv3d_check(ctx, d));
    if (t < 1 || h < 1 || w < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "conv3d: empty input %lldx%lldx%lld (T x H x W)",
                          (long long)t, (long long)h, (long long)w);
    int64_t front, back;
    pad_amounts(d, &front, &back);
    int64_t ph = d->kh / 2, pw = d->kw / 2;
    if (d->spad == LTX2_CONV_SPAD_REFLECT && (ph >= h || pw >= w))
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "conv3d: reflect padding %lld/%lld needs H and W larger than it, got H %lld W %lld",
                          (long long)ph, (long long)pw, (long long)h, (long long)w);
    int64_t tp = t + front + back, hp = h + 2 * ph, wp = w + 2 * pw;
    if (tp < d->kt || hp < d->kh || wp < d->kw)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "conv3d: padded input %lldx%lldx%lld smaller than kernel %lldx%lldx%lld",
                          (long long)tp, (long long)hp, (long long)wp, (long long)d->kt,
                          (long long)d->kh, (long long)d->kw);
    out_thw[0] = (tp - d->kt) / d->st + 1;
    out_thw[1] = (hp - d->kh) / d->sh + 1;
    out_thw[2] = (wp - d->kw) / d->sw + 1;
    return LTX2_OK;
}

int64_t ltx2_cpu_conv3d_packed_numel(const ltx2_conv3d_desc *d) {
    return d->kt * d->kh * d->kw * d->c_in * d->c_out;
}

ltx2_status ltx2_cpu_conv3d_pack_weight(ltx2_context *ctx, const ltx2_conv3d_desc *d,
                                        const float *w_oikkk, float *w_packed) {
    LTX2_TRY(ltx2_cpu_conv3d_check(ctx, d));
    if (!w_oikkk || !w_packed)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d pack: NULL weight pointer");
    const int64_t taps = d->kt * d->kh * d->kw, ci = d->c_in, co = d->c_out;
#pragma omp parallel for schedule(static) if (taps * ci * co > CONV3D_PARALLEL_MIN_FLOATS)
    for (int64_t o = 0; o < co; o++)
        for (int64_t i = 0; i < ci; i++)
            for (int64_t k = 0; k < taps; k++)
                w_packed[(k * ci + i) * co + o] = w_oikkk[(o * ci + i) * taps + k];
    return LTX2_OK;
}

/* Source index of padded spatial position p (already minus the pad) or -1 for a zero. */
static inline int64_t spatial_src(int64_t i, int64_t size, ltx2_conv_spad mode) {
    if (i >= 0 && i < size) return i;
    if (mode == LTX2_CONV_SPAD_ZEROS) return -1;
    return i < 0 ? -i : 2 * (size - 1) - i;
}

ltx2_status ltx2_cpu_conv3d(ltx2_context *ctx, const ltx2_conv3d_desc *d, const float *x,
                            int64_t n, int64_t t, int64_t h, int64_t w, const float *w_packed,
                            const float *bias, float *y) {
    int64_t o[3];
    LTX2_TRY(ltx2_cpu_conv3d_out_shape(ctx, d, t, h, w, o));
    if (!x || !w_packed || !y)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: NULL input, weight or output");
    if (n < 1) return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "conv3d: batch %lld < 1", (long long)n);
    const int64_t ci = d->c_in, co = d->c_out;
    const int64_t to = o[0], ho = o[1], wo = o[2];
    const int64_t m_total = n * to * ho * wo;

    if (d->kt == 1 && d->kh == 1 && d->kw == 1 && d->st == 1 && d->sh == 1 && d->sw == 1)
        return ltx2_cpu_gemm(ctx, m_total, co, ci, 1.0f, x, ci, w_packed, co, LTX2_B_KN, 0.0f, y, co,
                             bias);

    int64_t front, back;
    pad_amounts(d, &front, &back);
    (void)back;
    const int64_t ph = d->kh / 2, pw = d->kw / 2;
    const int64_t k_total = d->kt * d->kh * d->kw * ci;
    int64_t m_tile = CONV3D_IM2COL_MAX_FLOATS / k_total;
    if (m_tile < 1) m_tile = 1;
    if (m_tile > m_total) m_tile = m_total;
    float *col = malloc((size_t)(m_tile * k_total) * sizeof(float));
    if (!col)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "conv3d: im2col buffer of %lld floats",
                          (long long)(m_tile * k_total));

    ltx2_status st = LTX2_OK;
    for (int64_t m0 = 0; m0 < m_total && st == LTX2_OK; m0 += m_tile) {
        const int64_t rows = m0 + m_tile <= m_total ? m_tile : m_total - m0;
#pragma omp parallel for schedule(static) if (rows * k_total > CONV3D_PARALLEL_MIN_FLOATS)
        for (int64_t r = 0; r < rows; r++) {
            int64_t m = m0 + r;
            const int64_t xo = m % wo;
            m /= wo;
            const int64_t yo = m % ho;
            m /= ho;
            const int64_t tt = m % to;
            const int64_t b = m / to;
            float *dst = col + r * k_total;
            for (int64_t a = 0; a < d->kt; a++) {
                int64_t ts = tt * d->st + a - front; /* edge frames are replicated */
                ts = ts < 0 ? 0 : (ts >= t ? t - 1 : ts);
                for (int64_t bb = 0; bb < d->kh; bb++) {
                    const int64_t hs = spatial_src(yo * d->sh + bb - ph, h, d->spad);
                    for (int64_t c = 0; c < d->kw; c++, dst += ci) {
                        const int64_t ws = spatial_src(xo * d->sw + c - pw, w, d->spad);
                        if (hs < 0 || ws < 0) {
                            memset(dst, 0, (size_t)ci * sizeof(float));
                        } else {
                            memcpy(dst, x + (((b * t + ts) * h + hs) * w + ws) * ci,
                                   (size_t)ci * sizeof(float));
                        }
                    }
                }
            }
        }
        st = ltx2_cpu_gemm(ctx, rows, co, k_total, 1.0f, col, k_total, w_packed, co, LTX2_B_KN, 0.0f,
                           y + m0 * co, co, bias);
    }
    free(col);
    return st;
}
