/* CPU reference 1-D convolutions over [n, L, C] fp32 (see cpu_conv1d.h; descriptors in
 * backend/conv1d_desc.h). conv1d: im2col of a tile
 * of output rows into a bounded buffer, then one GEMM with the packed [k, c_in][c_out] weight.
 * Transposed conv1d: GEMM of a tile of input rows with the packed [c_in][k, c_out] weight into
 * per-tap columns, then a scatter-add into the output (col2im). FIR resamplers: direct loops. */
#include "cpu/cpu_conv1d.h"

#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_ops.h"

/* Upper bound on the im2col / column buffer (floats, 16 MB): enough rows per GEMM to amortise the
 * weight packing at the vocoders' widest layer (K = 7 x 1536), small enough to stay scratch. */
#define CONV1D_SCRATCH_MAX_FLOATS ((int64_t)1 << 22)

ltx2_status ltx2_cpu_conv1d(ltx2_context *ctx, const ltx2_conv1d_desc *d, const float *x, int64_t n,
                            int64_t len, const float *w_packed, const float *bias, float *y) {
    int64_t out_len = 0;
    LTX2_TRY(ltx2_conv1d_out_len(ctx, d, len, &out_len));
    if (!x || !w_packed || !y || n < 1) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv1d: NULL buffer or n < 1");
    const int64_t K = d->k * d->c_in;
    if (d->k == 1 && d->stride == 1 && d->pad_left == 0 && d->pad_right == 0)
        return ltx2_cpu_gemm(ctx, n * len, d->c_out, K, 1.0f, x, K, w_packed, d->c_out, LTX2_B_KN, 0.0f, y,
                             d->c_out, bias);
    int64_t tile = CONV1D_SCRATCH_MAX_FLOATS / K;
    if (tile < 1) tile = 1;
    if (tile > out_len) tile = out_len;
    float *col = malloc((size_t)(tile * K) * sizeof(float));
    if (!col) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "conv1d: im2col buffer (%lld floats)", (long long)(tile * K));
    ltx2_status st = LTX2_OK;
    for (int64_t b = 0; b < n && st == LTX2_OK; b++) {
        const float *xb = x + b * len * d->c_in;
        float *yb = y + b * out_len * d->c_out;
        for (int64_t o0 = 0; o0 < out_len && st == LTX2_OK; o0 += tile) {
            const int64_t rows = out_len - o0 < tile ? out_len - o0 : tile;
#pragma omp parallel for schedule(static) if (rows * K > 32768)
            for (int64_t r = 0; r < rows; r++) {
                const int64_t base = (o0 + r) * d->stride - d->pad_left;
                float *cr = col + r * K;
                for (int64_t j = 0; j < d->k; j++) {
                    const int64_t t = base + j * d->dilation;
                    if (t < 0 || t >= len)
                        memset(cr + j * d->c_in, 0, (size_t)d->c_in * sizeof(float));
                    else
                        memcpy(cr + j * d->c_in, xb + t * d->c_in, (size_t)d->c_in * sizeof(float));
                }
            }
            st = ltx2_cpu_gemm(ctx, rows, d->c_out, K, 1.0f, col, K, w_packed, d->c_out, LTX2_B_KN, 0.0f,
                               yb + o0 * d->c_out, d->c_out, bias);
        }
    }
    free(col);
    return st;
}

ltx2_status ltx2_cpu_conv_transpose1d(ltx2_context *ctx, const ltx2_convt1d_desc *d, const float *x, int64_t n,
                                      int64_t len, const float *w_packed, const float *bias, float *y) {
    int64_t out_len = 0;
    LTX2_TRY(ltx2_convt1d_out_len(ctx, d, len, &out_len));
    if (!x || !w_packed || !y || n < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv_transpose1d: NULL buffer or n < 1");
    const int64_t N = d->k * d->c_out, co = d->c_out;
    int64_t tile = CONV1D_SCRATCH_MAX_FLOATS / N;
    if (tile < 1) tile = 1;
    if (tile > len) tile = len;
    float *col = malloc((size_t)(tile * N) * sizeof(float));
    if (!col)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "conv_transpose1d: column buffer (%lld floats)", (long long)(tile * N));
    for (int64_t b = 0; b < n; b++) {
        float *yb = y + b * out_len * co;
        for (int64_t t = 0; t < out_len; t++)
            for (int64_t c = 0; c < co; c++) yb[t * co + c] = bias ? bias[c] : 0.0f;
    }
    ltx2_status st = LTX2_OK;
    for (int64_t b = 0; b < n && st == LTX2_OK; b++) {
        const float *xb = x + b * len * d->c_in;
        float *yb = y + b * out_len * co;
        for (int64_t t0 = 0; t0 < len && st == LTX2_OK; t0 += tile) {
            const int64_t rows = len - t0 < tile ? len - t0 : tile;
            st = ltx2_cpu_gemm(ctx, rows, N, d->c_in, 1.0f, xb + t0 * d->c_in, d->c_in, w_packed, N, LTX2_B_KN,
                               0.0f, col, N, NULL);
            if (st != LTX2_OK) break;
            for (int64_t r = 0; r < rows; r++) {
                const int64_t base = (t0 + r) * d->stride - d->padding;
                for (int64_t j = 0; j < d->k; j++) {
                    const int64_t o = base + j;
                    if (o < 0 || o >= out_len) continue;
                    const float *cr = col + r * N + j * co;
                    float *yr = yb + o * co;
                    for (int64_t c = 0; c < co; c++) yr[c] += cr[c];
                }
            }
        }
    }
    free(col);
    return st;
}

static int64_t clamp_index(int64_t i, int64_t len) { return i < 0 ? 0 : (i >= len ? len - 1 : i); }

ltx2_status ltx2_cpu_fir_upsample(ltx2_context *ctx, const ltx2_fir_desc *d, const float *x, int64_t n, int64_t len,
                                  int64_t c, const float *filt, float *y) {
    int64_t o_len = 0;
    LTX2_TRY(ltx2_fir_upsample_out_len(ctx, d, len, &o_len));
    if (!x || !filt || !y || n < 1 || c < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "fir_upsample: NULL buffer, n %lld or c %lld < 1", (long long)n,
                          (long long)c);
    const int64_t lp = len + d->pad_left + d->pad_right, ratio = d->ratio, taps = d->taps;
    const float fr = (float)ratio;
#pragma omp parallel for collapse(2) schedule(static) if (n * o_len * c > 65536)
    for (int64_t b = 0; b < n; b++)
        for (int64_t o = 0; o < o_len; o++) {
            /* full index f = i*ratio + j over padded inputs i; j = f - i*ratio in [0, taps) */
            const int64_t f = o + d->crop_left;
            int64_t i_hi = f / ratio;
            if (i_hi > lp - 1) i_hi = lp - 1;
            float *yo = y + (b * o_len + o) * c;
            for (int64_t ch = 0; ch < c; ch++) yo[ch] = 0.0f;
            for (int64_t i = i_hi; i >= 0; i--) {
                const int64_t j = f - i * ratio;
                if (j >= taps) break;
                const float w = filt[j];
                const float *xi = x + (b * len + clamp_index(i - d->pad_left, len)) * c;
                for (int64_t ch = 0; ch < c; ch++) yo[ch] += xi[ch] * w;
            }
            for (int64_t ch = 0; ch < c; ch++) yo[ch] *= fr;
        }
    return LTX2_OK;
}

ltx2_status ltx2_cpu_fir_downsample(ltx2_context *ctx, const ltx2_fir_desc *d, const float *x, int64_t n,
                                    int64_t len, int64_t c, const float *filt, float *y) {
    int64_t o_len = 0;
    LTX2_TRY(ltx2_fir_downsample_out_len(ctx, d, len, &o_len));
    if (!x || !filt || !y || n < 1 || c < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "fir_downsample: NULL buffer, n %lld or c %lld < 1", (long long)n,
                          (long long)c);
#pragma omp parallel for collapse(2) schedule(static) if (n * o_len * c > 65536)
    for (int64_t b = 0; b < n; b++)
        for (int64_t o = 0; o < o_len; o++) {
            float *yo = y + (b * o_len + o) * c;
            for (int64_t ch = 0; ch < c; ch++) yo[ch] = 0.0f;
            for (int64_t j = 0; j < d->taps; j++) {
                const float w = filt[j];
                const float *xi = x + (b * len + clamp_index(o * d->ratio + j - d->pad_left, len)) * c;
                for (int64_t ch = 0; ch < c; ch++) yo[ch] += xi[ch] * w;
            }
        }
    return LTX2_OK;
}
