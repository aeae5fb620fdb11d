/* The audio VAE encoder's torch Conv2d descriptions (see audio_conv2d.h). */
#include "model/audio_conv2d.h"

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

ltx2_status ltx2_audio_conv2d_out_shape(ltx2_context *ctx, const ltx2_conv2d_desc *d, int64_t h, int64_t w,
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

ltx2_status ltx2_audio_conv2d_pack_weight(ltx2_context *ctx, const ltx2_conv2d_desc *d, const float *w_oikk,
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
