/* The audio VAE encoder's one forward (ltx-core audio_vae.py AudioEncoder.forward) on the backend
 * op table: the CPU reference (ltx2_audio_encoder_encode runs it on the CPU backend), CUDA and the
 * kernel emulator. Activations are [B, time, 1, mel, C] (audio_vae_run.h): a CausalConv2d is the
 * conv3d op with zero frames in front and a symmetric zero mel pad, its packed [kh, kw, c_in][c_out]
 * weight is the conv3d's [kt, 1, kw, c_in][c_out] as is. The Downsample (time padded 2 in front,
 * mel 1 behind, then a stride-2 3x3 conv) is a stride-2 conv3d whose mel kernel is widened to 5 taps
 * with the first two zero: symmetric padding 2 then reads mel 2f + b exactly, and the widths agree
 * for an even mel width (every real and tiny level; an odd one is refused by name). The mel
 * transpose in, the posterior-mean channels and the per-feature normalisation out are host work. */
#include "model/audio_encoder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/audio_vae.h"
#include "model/audio_vae_run.h"

/* The Downsample's mel kernel, widened: 3 taps behind 2 zero ones. */
#define DOWN_KW 5
#define DOWN_KW_SHIFT 2

struct ltx2_audio_enc_device {
    audio_dev_net n;
    const ltx2_audio_encoder *enc;
};

const ltx2_audio_encoder *ltx2_audio_enc_device_encoder(const ltx2_audio_enc_device *dv) { return dv->enc; }

void ltx2_audio_enc_device_free(ltx2_audio_enc_device *dv) {
    if (!dv) return;
    audio_dev_net_release(&dv->n);
    free(dv);
}

/* A CausalConv2d (time k-1 zeros in front, mel (k-1)/2 each side, stride 1) as conv3d. */
static ltx2_status causal_desc(ltx2_context *ctx, const ltx2_conv2d_desc *c, ltx2_conv3d_desc *d) {
    if (c->sh != 1 || c->sw != 1 || c->pad_top != c->kh - 1 || c->pad_bottom != 0 || c->pad_left != (c->kw - 1) / 2 ||
        c->pad_right != (c->kw - 1) / 2 || c->kw % 2 == 0)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "audio encoder: a conv with padding %lld/%lld/%lld/%lld, stride "
                          "%lldx%lld is neither a CausalConv2d nor the Downsample", (long long)c->pad_top,
                          (long long)c->pad_bottom, (long long)c->pad_left, (long long)c->pad_right, (long long)c->sh,
                          (long long)c->sw);
    *d = (ltx2_conv3d_desc){.c_in = c->c_in, .c_out = c->c_out, .kt = c->kh, .kh = 1, .kw = c->kw, .st = 1, .sh = 1,
                            .sw = 1, .tpad = LTX2_CONV_TPAD_CAUSAL_ZEROS, .spad = LTX2_CONV_SPAD_ZEROS};
    return LTX2_OK;
}

static ltx2_status conv_up(ltx2_context *ctx, const ltx2_audio_enc_device *dv, const ltx2_audio_enc_conv *c,
                           int64_t c_in_align, int64_t c_out_align, vae_dev_conv *o) {
    ltx2_conv3d_desc d;
    LTX2_TRY(causal_desc(ctx, &c->desc, &d));
    return vae_dev_conv_upload(ctx, dv->n.be, dv->n.dt, &d, c->weight, c->bias, c_in_align, c_out_align, o);
}

/* Downsample: time 2 zeros in front, mel 1 behind, stride 2, 3x3 -> conv3d 3x1x5, stride (2, 1, 2). */
static ltx2_status down_up(ltx2_context *ctx, const ltx2_audio_enc_device *dv, const ltx2_audio_enc_conv *c,
                           audio_dev_level *el) {
    const ltx2_conv2d_desc *s = &c->desc;
    if (s->kh != 3 || s->kw != 3 || s->sh != 2 || s->sw != 2 || s->pad_top != 2 || s->pad_bottom != 0 ||
        s->pad_left != 0 || s->pad_right != 1)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "audio encoder: Downsample conv %lldx%lld stride %lldx%lld with "
                          "padding %lld/%lld/%lld/%lld (expected ltx-core's 3x3, stride 2, pad time 2 / mel 1 behind)",
                          (long long)s->kh, (long long)s->kw, (long long)s->sh, (long long)s->sw, (long long)s->pad_top,
                          (long long)s->pad_bottom, (long long)s->pad_left, (long long)s->pad_right);
    const int64_t ci = s->c_in, co = s->c_out;
    el->resample_w = calloc((size_t)(3 * DOWN_KW * ci * co), sizeof(float));
    if (!el->resample_w) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio encoder: widened Downsample weight");
    for (int64_t a = 0; a < 3; a++)
        for (int64_t b = 0; b < 3; b++)
            memcpy(el->resample_w + ((a * DOWN_KW + b + DOWN_KW_SHIFT) * ci) * co, c->weight + ((a * 3 + b) * ci) * co,
                   (size_t)(ci * co) * sizeof(float));
    const ltx2_conv3d_desc d = {.c_in = ci, .c_out = co, .kt = 3, .kh = 1, .kw = DOWN_KW, .st = 2, .sh = 1, .sw = 2,
                                .tpad = LTX2_CONV_TPAD_CAUSAL_ZEROS, .spad = LTX2_CONV_SPAD_ZEROS};
    return vae_dev_conv_upload(ctx, dv->n.be, dv->n.dt, &d, el->resample_w, c->bias, 1, 1, &el->resample);
}

static ltx2_status res_up(ltx2_context *ctx, const ltx2_audio_enc_device *dv, const ltx2_audio_enc_res *r,
                          audio_dev_res *o) {
    LTX2_TRY(conv_up(ctx, dv, &r->conv1, 1, 1, &o->conv1));
    LTX2_TRY(conv_up(ctx, dv, &r->conv2, 1, 1, &o->conv2));
    o->has_nin = r->c_in != r->c_out;
    return o->has_nin ? conv_up(ctx, dv, &r->nin, 1, 1, &o->nin) : LTX2_OK;
}

ltx2_status ltx2_audio_enc_device_create(ltx2_context *ctx, const ltx2_backend *be, const ltx2_audio_encoder *enc,
                                         ltx2_audio_enc_device **out) {
    if (!be || !enc || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: NULL argument");
    *out = NULL;
    const ltx2_op need[] = {LTX2_OP_CONV3D, LTX2_OP_PIXEL_NORM, LTX2_OP_GATED_ADD};
    ltx2_dtype dt;
    LTX2_TRY(vae_run_pick_dtype(ctx, be, "audio VAE encoder", need, sizeof(need) / sizeof(need[0]), &dt));
    ltx2_audio_enc_device *dv = calloc(1, sizeof(*dv));
    if (!dv) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio encoder: device state");
    dv->n.be = be;
    dv->enc = enc;
    dv->n.dt = dt;
    /* conv_in reads the host mel (uploaded with zero channels appended) and conv_out feeds the host
     * latent (its first z channels read): both may be widened */
    ltx2_status st = conv_up(ctx, dv, &enc->conv_in, VAE_CONV_CHANNEL_ALIGN, 1, &dv->n.conv_in);
    if (st == LTX2_OK) st = conv_up(ctx, dv, &enc->conv_out, 1, VAE_CONV_CHANNEL_ALIGN, &dv->n.conv_out);
    if (st == LTX2_OK) st = res_up(ctx, dv, &enc->mid1, &dv->n.mid1);
    if (st == LTX2_OK) st = res_up(ctx, dv, &enc->mid2, &dv->n.mid2);
    for (int l = 0; l < enc->cfg.vae.n_levels && st == LTX2_OK; l++) {
        const ltx2_audio_enc_level *lv = &enc->levels[l];
        audio_dev_level *el = &dv->n.levels[l];
        el->blocks = calloc((size_t)(lv->n_blocks ? lv->n_blocks : 1), sizeof(*el->blocks));
        el->n_blocks = lv->n_blocks;
        if (!el->blocks) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio encoder: level %d blocks", l);
        for (int b = 0; b < lv->n_blocks && st == LTX2_OK; b++) st = res_up(ctx, dv, &lv->blocks[b], &el->blocks[b]);
        if (st == LTX2_OK && lv->has_downsample) st = down_up(ctx, dv, &lv->downsample, el);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "audio encoder: placing encoder.down.%d", l);
    }
    if (st != LTX2_OK) {
        ltx2_audio_enc_device_free(dv);
        return st;
    }
    *out = dv;
    return LTX2_OK;
}

/* y = conv(*x) replaces *x. */
static ltx2_status conv_step(vae_run *r, const vae_dev_conv *c, ltx2_tensor *x) {
    ltx2_tensor y;
    LTX2_TRY(vae_run_conv3d(r, c, x, &y));
    vae_run_retire(r, x);
    *x = y;
    return vae_run_flush(r);
}

static ltx2_status encode_body(vae_run *r, const ltx2_audio_enc_device *dv, ltx2_tensor *x, ltx2_audio_dump_fn dump,
                               void *user) {
    const ltx2_audio_encoder *enc = dv->enc;
    char name[96];
    ltx2_status st = conv_step(r, &dv->n.conv_in, x);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "encoder.conv_in");
    LTX2_TRY(audio_dump_act(r, dump, user, "encoder.conv_in.out", x, x->shape[4]));
    for (int l = 0; l < enc->cfg.vae.n_levels; l++) {
        const ltx2_audio_enc_level *lv = &enc->levels[l];
        for (int b = 0; b < lv->n_blocks; b++) {
            if ((st = audio_res_block(r, &dv->n.levels[l].blocks[b], x)) != LTX2_OK)
                return ltx2_error_prefix(r->ctx, "encoder.down.%d.block.%d", l, b);
            snprintf(name, sizeof(name), "encoder.down.%d.block.%d.out", l, b);
            LTX2_TRY(audio_dump_act(r, dump, user, name, x, x->shape[4]));
        }
        if (!lv->has_downsample) continue;
        if (x->shape[3] % 2 != 0)
            return LTX2_ERROR(r->ctx, LTX2_ERR_UNSUPPORTED, "encoder.down.%d.downsample: mel width %lld is odd (the "
                              "op-table Downsample takes even widths, as every LTX-2 audio VAE has)", l,
                              (long long)x->shape[3]);
        if ((st = conv_step(r, &dv->n.levels[l].resample, x)) != LTX2_OK)
            return ltx2_error_prefix(r->ctx, "encoder.down.%d.downsample", l);
        snprintf(name, sizeof(name), "encoder.down.%d.downsample.out", l);
        LTX2_TRY(audio_dump_act(r, dump, user, name, x, x->shape[4]));
    }
    if ((st = audio_res_block(r, &dv->n.mid1, x)) != LTX2_OK) return ltx2_error_prefix(r->ctx, "encoder.mid.block_1");
    LTX2_TRY(audio_dump_act(r, dump, user, "encoder.mid.block_1.out", x, x->shape[4]));
    if ((st = audio_res_block(r, &dv->n.mid2, x)) != LTX2_OK) return ltx2_error_prefix(r->ctx, "encoder.mid.block_2");
    LTX2_TRY(audio_dump_act(r, dump, user, "encoder.mid.block_2.out", x, x->shape[4]));
    st = ltx2_backend_pixel_norm(r->be, r->ctx, x, LTX2_AUDIO_PIXEL_NORM_EPS, true, x);
    if (st == LTX2_OK) st = conv_step(r, &dv->n.conv_out, x);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "encoder.conv_out");
    return audio_dump_act(r, dump, user, "encoder.conv_out.out", x, enc->conv_out.desc.c_out);
}

ltx2_status ltx2_audio_enc_device_encode(ltx2_context *ctx, const ltx2_audio_enc_device *dv, const ltx2_tensor *mel,
                                         ltx2_tensor *latent, ltx2_audio_dump_fn dump, void *user) {
    if (!dv || !mel || !latent) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: NULL argument");
    const ltx2_audio_encoder *enc = dv->enc;
    if (!vae_host_f32(mel, 4))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: mel must be a contiguous f32 CPU [B, C, T, F] tensor");
    int64_t ls[4];
    LTX2_TRY(ltx2_audio_encoder_out_shape(ctx, enc, mel->shape, ls));
    bool ok = vae_host_f32(latent, 4);
    for (int i = 0; ok && i < 4; i++) ok = latent->shape[i] == ls[i];
    char a[96], b[96];
    if (!ok)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "audio encoder: latent output is %s, expected a contiguous f32 CPU %s",
                          ltx2_shape_str(latent->shape, latent->ndim, a, sizeof(a)), ltx2_shape_str(ls, 4, b, sizeof(b)));
    const int64_t B = mel->shape[0], C = mel->shape[1], T = mel->shape[2], F = mel->shape[3];
    const int64_t Cp = dv->n.conv_in.desc.c_in; /* C, or C widened with zero channels */
    float *h = calloc((size_t)(B * T * F * Cp), sizeof(float));
    if (!h) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio encoder: mel [%lld, %lld, %lld, %lld]", (long long)B,
                              (long long)C, (long long)T, (long long)F);
    const float *m = mel->data;
    for (int64_t bb = 0; bb < B; bb++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t t = 0; t < T; t++)
                for (int64_t f = 0; f < F; f++) h[((bb * T + t) * F + f) * Cp + c] = m[((bb * C + c) * T + t) * F + f];
    vae_run r;
    vae_run_init(&r, ctx, dv->n.be, dv->n.dt);
    const int64_t xs[5] = {B, T, 1, F, Cp};
    ltx2_tensor x;
    ltx2_status st = vae_run_upload(&r, h, dv->n.dt, 5, xs, &x);
    free(h);
    if (st == LTX2_OK) st = encode_body(&r, dv, &x, dump, user);
    float *hy = NULL;
    if (st == LTX2_OK) {
        hy = malloc((size_t)ltx2_tensor_numel(&x) * sizeof(float));
        st = hy ? vae_dev_to_host(ctx, r.be, &x, hy) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio encoder: output");
    }
    if (st == LTX2_OK) st = r.be->sync(r.be, ctx);
    if (st == LTX2_OK) {
        /* Mean = first z channels; patchify "b c t f -> b t (c f)", (x - mean) / std per feature. */
        const int64_t Z = ls[1], yt = x.shape[1], yf = x.shape[3], yc = x.shape[4];
        float *o = latent->data;
        for (int64_t bb = 0; bb < B; bb++)
            for (int64_t c = 0; c < Z; c++)
                for (int64_t t = 0; t < yt; t++)
                    for (int64_t f = 0; f < yf; f++)
                        o[((bb * Z + c) * yt + t) * yf + f] =
                            (hy[((bb * yt + t) * yf + f) * yc + c] - enc->mean_of_means[c * yf + f]) /
                            enc->std_of_means[c * yf + f];
        if (dump) dump("encoder.out", latent, user);
    }
    free(hy);
    if (st != LTX2_OK) ltx2_error_prefix(ctx, "audio encode (on %s)", r.be->name);
    vae_run_end(&r, st);
    return st;
}

ltx2_status ltx2_audio_encoder_encode(ltx2_context *ctx, const ltx2_audio_encoder *enc, const ltx2_tensor *mel,
                                      ltx2_tensor *latent, ltx2_audio_dump_fn dump, void *user) {
    if (!enc) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: NULL encoder");
    /* the encoder's one forward on the CPU backend, over the host weights in place */
    ltx2_audio_enc_device *dv = NULL;
    LTX2_TRY(ltx2_audio_enc_device_create(ctx, ltx2_backend_cpu(), enc, &dv));
    const ltx2_status st = ltx2_audio_enc_device_encode(ctx, dv, mel, latent, dump, user);
    ltx2_audio_enc_device_free(dv);
    return st;
}
