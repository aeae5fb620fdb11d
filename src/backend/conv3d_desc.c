/* The conv3d op's descriptor checks, output shape and weight packing (conv3d_desc.h). */
#include "backend/conv3d_desc.h"

/* Below this many floats the weight repack runs on one thread (fork/join costs more). */
#define CONV3D_PARALLEL_MIN_FLOATS ((int64_t)1 << 15)

void ltx2_conv3d_tpad_amounts(const ltx2_conv3d_desc *d, int64_t *front, int64_t *back) {
    switch (d->tpad) {
    case LTX2_CONV_TPAD_CAUSAL:
    case LTX2_CONV_TPAD_CAUSAL_ZEROS: *front = d->kt - 1; *back = 0; break;
    case LTX2_CONV_TPAD_SYMMETRIC:
    case LTX2_CONV_TPAD_SYMMETRIC_ZEROS: *front = (d->kt - 1) / 2; *back = (d->kt - 1) / 2; break;
    default: *front = 0; *back = 0; break;
    }
}

ltx2_status ltx2_conv3d_check(ltx2_context *ctx, const ltx2_conv3d_desc *d) {
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
        d->tpad != LTX2_CONV_TPAD_NONE && d->tpad != LTX2_CONV_TPAD_CAUSAL_ZEROS &&
        d->tpad != LTX2_CONV_TPAD_SYMMETRIC_ZEROS)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: unknown temporal padding %d", (int)d->tpad);
    if (d->spad != LTX2_CONV_SPAD_ZEROS && d->spad != LTX2_CONV_SPAD_REFLECT)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: unknown spatial padding %d", (int)d->spad);
    return LTX2_OK;
}

ltx2_status ltx2_conv3d_out_shape(ltx2_context *ctx, const ltx2_conv3d_desc *d, int64_t t,
                                      int64_t h, int64_t w, int64_t out_thw[3]) {
    LTX2_TRY(ltx2_conv3d_check(ctx, d));
    if (t < 1 || h < 1 || w < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "conv3d: empty input %lldx%lldx%lld (T x H x W)",
                          (long long)t, (long long)h, (long long)w);
    int64_t front, back;
    ltx2_conv3d_tpad_amounts(d, &front, &back);
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

int64_t ltx2_conv3d_packed_numel(const ltx2_conv3d_desc *d) {
    return d->kt * d->kh * d->kw * d->c_in * d->c_out;
}

ltx2_status ltx2_conv3d_pack_weight(ltx2_context *ctx, const ltx2_conv3d_desc *d,
                                        const float *w_oikkk, float *w_packed) {
    LTX2_TRY(ltx2_conv3d_check(ctx, d));
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
