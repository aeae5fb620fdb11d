/* 2-D convolution with explicit padding (see cpu_conv2d.h). */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_conv2d.h"
#include "cpu/cpu_ops.h"

/* Output pixels per im2col tile: bounds the scratch to TILE x (kh*kw*c_in) floats (18 MB for the
 * real audio VAE's 512-channel 3x3 convs) while keeping each GEMM large enough to be efficient. */
#define CONV2D_TILE_ROWS 1024

static ltx2_status check_desc(ltx2_context *ctx, const ltx2_conv2d_desc *d) {
    if (!d) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv2d: NULL descriptor");
    if (d->c_in < 1 || d->c_out < 1 || d->kh < 1 || d->kw < 1 || d->sh < 1 || d->sw < 1 || d->pad_top < 0 ||
        d->pad_bottom < 0 || d->pad_left < 0 || d->pad_right < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "conv2d: bad descriptor (c %lld->%lld, k %lldx%lld, stride %lldx%lld, pads %lld/%lld/%lld/%lld)",
                          (long long)d->c_in, (long long)d->c_out, (long long)d->kh, (long long)d->kw,
                          (long long)d->sh, (long long)d->sw, (long long)d->pad_top, (long long)d->pad_bottom,
                          (long long)d->pad_left, (long long)d->pad_right);
    return LTX2_OK;
}

ltx2_status ltx2_cpu_conv2d_out_shape(ltx2_context *ctx, const ltx2_conv2d_desc *d, int64_t h, int64_t w,
                                      int64_t out_hw[2]) {
    LTX2_TRY(check_desc(ctx, d));
    const int64_t hp = h + d->pad_top + d->pad_bottom, wp = w + d->pad_left + d->pad_right;
    if (h < 1 || w < 1 || hp < d->kh || wp < d->kw)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "conv2d: input %lldx%lld (padded %lldx%lld) smaller than the %lldx%lld kernel",
                          (long long)h, (long long)w, (long long)hp, (long long)wp, (long long)d->kh, (long long)d->kw);
    out_hw[0] = (hp - d->kh) / d->sh + 1;
    out_hw[1] = (wp - d->kw) / d->sw + 1;
    return LTX2_OK;
}

ltx2_status ltx2_cpu_conv2d_pack_weight(ltx2_context *ctx, const ltx2_conv2d_desc *d, const float *w_oikk,
                                        float *w_packed) {
    LTX2_TRY(check_desc(ctx, d));
    if (!w_oikk || !w_packed) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv2d: NULL weight");
    for (int64_t o = 0; o < d->c_out; o++)
        for (int64_t i = 0; i < d->c_in; i++)
            for (int64_t a = 0; a < d->kh; a++)
                for (int64_t b = 0; b < d->kw; b++)
                    w_packed[((a * d->kw + b) * d->c_in + i) * d->c_out + o] =
                        w_oikk[((o * d->c_in + i) * d->kh + a) * d->kw + b];
    return LTX2_OK;
}

ltx2_status ltx2_cpu_conv2d(ltx2_context *ctx, const ltx2_conv2d_desc *d, const float *x, int64_t n, int64_t h,
                            int64_t w, const float *w_packed, const float *bias, float *y) {
    int64_t ohw[2];
    LTX2_TRY(ltx2_cpu_conv2d_out_shape(ctx, d, h, w, ohw));
    if (!x || !w_packed || !y || n < 1) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv2d: NULL buffer or n < 1");
    const int64_t oh = ohw[0], ow = ohw[1], K = d->kh * d->kw * d->c_in, rows = n * oh * ow;
    if (d->kh == 1 && d->kw == 1 && d->sh == 1 && d->sw == 1 && !d->pad_top && !d->pad_bottom && !d->pad_left &&
        !d->pad_right) /* a 1x1 conv is already a GEMM over the pixels */
        return ltx2_cpu_gemm(ctx, rows, d->c_out, d->c_in, 1.0f, x, d->c_in, w_packed, d->c_out, LTX2_B_KN, 0.0f, y,
                             d->c_out, bias);
    const int64_t tile = rows < CONV2D_TILE_ROWS ? rows : CONV2D_TILE_ROWS;
    float *col = malloc((size_t)(tile * K) * sizeof(float));
    if (!col) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "conv2d: im2col tile %lld x %lld", (long long)tile, (long long)K);
    ltx2_status st = LTX2_OK;
    for (int64_t r0 = 0; r0 < rows && st == LTX2_OK; r0 += tile) {
        const int64_t nr = rows - r0 < tile ? rows - r0 : tile;
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < nr; r++) {
            const int64_t p = r0 + r, b = p / (oh * ow), yo = (p / ow) % oh, xo = p % ow;
            float *dst = col + r * K;
            for (int64_t a = 0; a < d->kh; a++) {
                const int64_t yi = yo * d->sh + a - d->pad_top;
                for (int64_t c = 0; c < d->kw; c++, dst += d->c_in) {
                    const int64_t xi = xo * d->sw + c - d->pad_left;
                    if (yi < 0 || yi >= h || xi < 0 || xi >= w)
                        memset(dst, 0, (size_t)d->c_in * sizeof(float));
                    else
                        memcpy(dst, x + ((b * h + yi) * w + xi) * d->c_in, (size_t)d->c_in * sizeof(float));
                }
            }
        }
        st = ltx2_cpu_gemm(ctx, nr, d->c_out, K, 1.0f, col, K, w_packed, d->c_out, LTX2_B_KN, 0.0f, y + r0 * d->c_out,
                           d->c_out, bias);
    }
    free(col);
    return st;
}
