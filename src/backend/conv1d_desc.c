/* The 1-D ops' descriptor checks, output lengths and weight packing (conv1d_desc.h). */
#include "backend/conv1d_desc.h"

#include <stddef.h>

static ltx2_status check_conv(ltx2_context *ctx, const ltx2_conv1d_desc *d) {
    if (!d) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv1d: NULL descriptor");
    if (d->c_in < 1 || d->c_out < 1 || d->k < 1 || d->stride < 1 || d->dilation < 1 || d->pad_left < 0 ||
        d->pad_right < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "conv1d: bad descriptor (c_in %lld c_out %lld k %lld stride %lld dilation %lld pad %lld/%lld)",
                          (long long)d->c_in, (long long)d->c_out, (long long)d->k, (long long)d->stride,
                          (long long)d->dilation, (long long)d->pad_left, (long long)d->pad_right);
    return LTX2_OK;
}

ltx2_status ltx2_conv1d_out_len(ltx2_context *ctx, const ltx2_conv1d_desc *d, int64_t len, int64_t *out_len) {
    LTX2_TRY(check_conv(ctx, d));
    const int64_t span = d->dilation * (d->k - 1) + 1;
    const int64_t padded = len + d->pad_left + d->pad_right;
    if (len < 1 || padded < span)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "conv1d: input length %lld (padded %lld) shorter than the kernel span %lld",
                          (long long)len, (long long)padded, (long long)span);
    *out_len = (padded - span) / d->stride + 1;
    return LTX2_OK;
}

ltx2_status ltx2_conv1d_pack_weight(ltx2_context *ctx, const ltx2_conv1d_desc *d, const float *w_oik,
                                    float *w_packed) {
    LTX2_TRY(check_conv(ctx, d));
    if (!w_oik || !w_packed) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv1d: NULL weight");
    for (int64_t o = 0; o < d->c_out; o++)
        for (int64_t i = 0; i < d->c_in; i++)
            for (int64_t j = 0; j < d->k; j++)
                w_packed[(j * d->c_in + i) * d->c_out + o] = w_oik[(o * d->c_in + i) * d->k + j];
    return LTX2_OK;
}

static ltx2_status check_convt(ltx2_context *ctx, const ltx2_convt1d_desc *d) {
    if (!d) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv_transpose1d: NULL descriptor");
    if (d->c_in < 1 || d->c_out < 1 || d->k < 1 || d->stride < 1 || d->padding < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "conv_transpose1d: bad descriptor (c_in %lld c_out %lld k %lld stride %lld padding %lld)",
                          (long long)d->c_in, (long long)d->c_out, (long long)d->k, (long long)d->stride,
                          (long long)d->padding);
    return LTX2_OK;
}

ltx2_status ltx2_convt1d_out_len(ltx2_context *ctx, const ltx2_convt1d_desc *d, int64_t len, int64_t *out_len) {
    LTX2_TRY(check_convt(ctx, d));
    const int64_t o = (len - 1) * d->stride - 2 * d->padding + d->k;
    if (len < 1 || o < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "conv_transpose1d: input length %lld gives output length %lld",
                          (long long)len, (long long)o);
    *out_len = o;
    return LTX2_OK;
}

ltx2_status ltx2_convt1d_pack_weight(ltx2_context *ctx, const ltx2_convt1d_desc *d, const float *w_iok,
                                     float *w_packed) {
    LTX2_TRY(check_convt(ctx, d));
    if (!w_iok || !w_packed) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv_transpose1d: NULL weight");
    for (int64_t i = 0; i < d->c_in; i++)
        for (int64_t o = 0; o < d->c_out; o++)
            for (int64_t j = 0; j < d->k; j++)
                w_packed[(i * d->k + j) * d->c_out + o] = w_iok[(i * d->c_out + o) * d->k + j];
    return LTX2_OK;
}

static ltx2_status check_fir(ltx2_context *ctx, const char *what, const ltx2_fir_desc *d, int64_t len) {
    if (!d) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: NULL descriptor", what);
    if (d->taps < 1 || d->ratio < 1 || d->pad_left < 0 || d->pad_right < 0 || d->crop_left < 0 || d->crop_right < 0 ||
        len < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "%s: bad descriptor (len %lld taps %lld ratio %lld pads %lld/%lld crops %lld/%lld)", what,
                          (long long)len, (long long)d->taps, (long long)d->ratio, (long long)d->pad_left,
                          (long long)d->pad_right, (long long)d->crop_left, (long long)d->crop_right);
    return LTX2_OK;
}

ltx2_status ltx2_fir_upsample_out_len(ltx2_context *ctx, const ltx2_fir_desc *d, int64_t len, int64_t *out_len) {
    LTX2_TRY(check_fir(ctx, "fir_upsample", d, len));
    const int64_t full = (len + d->pad_left + d->pad_right - 1) * d->ratio + d->taps;
    const int64_t o = full - d->crop_left - d->crop_right;
    if (o < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "fir_upsample: crops %lld + %lld leave nothing of %lld samples",
                          (long long)d->crop_left, (long long)d->crop_right, (long long)full);
    *out_len = o;
    return LTX2_OK;
}

ltx2_status ltx2_fir_downsample_out_len(ltx2_context *ctx, const ltx2_fir_desc *d, int64_t len, int64_t *out_len) {
    LTX2_TRY(check_fir(ctx, "fir_downsample", d, len));
    if (d->crop_left || d->crop_right)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "fir_downsample: crops %lld/%lld (the downsampler crops nothing)",
                          (long long)d->crop_left, (long long)d->crop_right);
    const int64_t lp = len + d->pad_left + d->pad_right;
    if (lp < d->taps)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "fir_downsample: padded length %lld shorter than %lld taps", (long long)lp,
                          (long long)d->taps);
    *out_len = (lp - d->taps) / d->ratio + 1;
    return LTX2_OK;
}
