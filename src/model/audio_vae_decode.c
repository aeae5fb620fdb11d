/* The audio VAE decoder's one forward (ltx-core audio_vae.py AudioDecoder.forward) on the backend
 * op table: the CPU reference (ltx2_audio_decoder_decode runs it on the CPU backend), CUDA and the
 * kernel emulator. Activations are [B, time, 1, mel, C] so that every CausalConv2d is the conv3d op
 * with zero frames in front; PixelNorm + SiLU is one fused op; a res block's residual is a plain
 * gated add (onto the nin shortcut where the width changes); an upsample block is one phase conv
 * then depth-to-space (audio_vae.c, load_upsample). The un-normalisation of the host latent and
 * the crop / zero-pad of the host spectrogram are host work. The device buffers of a decode live in
 * one vae_run table (vae_run.h). */
#include "model/audio_vae.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/audio_vae_run.h"

struct ltx2_audio_dec_device {
    audio_dev_net n;
    const ltx2_audio_decoder *dec;
};

void ltx2_audio_dec_device_free(ltx2_audio_dec_device *dv) {
    if (!dv) return;
    audio_dev_net_release(&dv->n);
    free(dv);
}

static ltx2_status conv_up(ltx2_context *ctx, const ltx2_audio_dec_device *dv, const ltx2_audio_conv *c,
                           vae_dev_conv *o) {
    return vae_dev_conv_upload(ctx, dv->n.be, dv->n.dt, &c->desc, c->weight, c->bias, 1, 1, o);
}

static ltx2_status res_up(ltx2_context *ctx, const ltx2_audio_dec_device *dv, const ltx2_audio_res *r, audio_dev_res *o) {
    LTX2_TRY(conv_up(ctx, dv, &r->conv1, &o->conv1));
    LTX2_TRY(conv_up(ctx, dv, &r->conv2, &o->conv2));
    o->has_nin = r->c_in != r->c_out;
    return o->has_nin ? conv_up(ctx, dv, &r->nin, &o->nin) : LTX2_OK;
}

ltx2_status ltx2_audio_dec_device_create(ltx2_context *ctx, const ltx2_backend *be, const ltx2_audio_decoder *dec,
                                         ltx2_audio_dec_device **out) {
    if (!be || !dec || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE: NULL argument");
    *out = NULL;
    const ltx2_op need[] = {LTX2_OP_CONV3D, LTX2_OP_PIXEL_NORM, LTX2_OP_DEPTH_TO_SPACE, LTX2_OP_GATED_ADD};
    ltx2_dtype dt;
    LTX2_TRY(vae_run_pick_dtype(ctx, be, "audio VAE decoder", need, sizeof(need) / sizeof(need[0]), &dt));
    ltx2_audio_dec_device *dv = calloc(1, sizeof(*dv));
    if (!dv) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio VAE: device state");
    dv->n.be = be;
    dv->dec = dec;
    dv->n.dt = dt;
    /* conv_in reads the host latent (uploaded with zero channels appended) and conv_out feeds the
     * host spectrogram (its first out_ch channels read): both may be widened */
    ltx2_status st = vae_dev_conv_upload(ctx, be, dt, &dec->conv_in.desc, dec->conv_in.weight, dec->conv_in.bias,
                                         VAE_CONV_CHANNEL_ALIGN, 1, &dv->n.conv_in);
    if (st == LTX2_OK)
        st = vae_dev_conv_upload(ctx, be, dt, &dec->conv_out.desc, dec->conv_out.weight, dec->conv_out.bias, 1,
                                 VAE_CONV_CHANNEL_ALIGN, &dv->n.conv_out);
    if (st == LTX2_OK) st = res_up(ctx, dv, &dec->mid1, &dv->n.mid1);
    if (st == LTX2_OK) st = res_up(ctx, dv, &dec->mid2, &dv->n.mid2);
    for (int l = 0; l < dec->cfg.n_levels && st == LTX2_OK; l++) {
        const ltx2_audio_level *lv = &dec->levels[l];
        audio_dev_level *dl = &dv->n.levels[l];
        dl->blocks = calloc((size_t)(lv->n_blocks ? lv->n_blocks : 1), sizeof(*dl->blocks));
        dl->n_blocks = lv->n_blocks;
        if (!dl->blocks) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio VAE: level %d blocks", l);
        for (int b = 0; b < lv->n_blocks && st == LTX2_OK; b++) st = res_up(ctx, dv, &lv->blocks[b], &dl->blocks[b]);
        if (st == LTX2_OK && lv->has_upsample) st = conv_up(ctx, dv, &lv->upsample, &dl->resample);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "audio VAE: uploading decoder.up.%d", l);
    }
    if (st != LTX2_OK) {
        ltx2_audio_dec_device_free(dv);
        return st;
    }
    *out = dv;
    return LTX2_OK;
}

/* ---- stages ---- */

/* Upsample (nearest x2, causal conv, first row dropped): the phase conv, then depth-to-space. */
static ltx2_status upsample(vae_run *r, const vae_dev_conv *phase, ltx2_tensor *x) {
    ltx2_tensor y, out;
    ltx2_status st = vae_run_conv3d(r, phase, x, &y);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "conv");
    const int64_t os[5] = {x->shape[0], 2 * x->shape[1] - 1, 1, 2 * x->shape[3], x->shape[4]};
    LTX2_TRY(vae_run_new(r, 5, os, &out));
    const ltx2_d2s_args a = {.stride = {2, 1, 2}, .drop_first = true};
    st = ltx2_backend_depth_to_space(r->be, r->ctx, &y, &a, NULL, &out);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "depth-to-space");
    vae_run_retire(r, &y);
    vae_run_retire(r, x);
    *x = out;
    return vae_run_flush(r);
}

static ltx2_status decode_body(vae_run *r, const ltx2_audio_dec_device *dv, ltx2_tensor *x, ltx2_audio_dump_fn dump,
                               void *user) {
    const ltx2_audio_decoder *dec = dv->dec;
    char name[96];
    ltx2_tensor y;
    ltx2_status st = vae_run_conv3d(r, &dv->n.conv_in, x, &y);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "decoder.conv_in");
    vae_run_retire(r, x);
    *x = y;
    LTX2_TRY(vae_run_flush(r));
    LTX2_TRY(audio_dump_act(r, dump, user, "decoder.conv_in.out", x, x->shape[4]));
    if ((st = audio_res_block(r, &dv->n.mid1, x)) != LTX2_OK) return ltx2_error_prefix(r->ctx, "decoder.mid.block_1");
    LTX2_TRY(audio_dump_act(r, dump, user, "decoder.mid.block_1.out", x, x->shape[4]));
    if ((st = audio_res_block(r, &dv->n.mid2, x)) != LTX2_OK) return ltx2_error_prefix(r->ctx, "decoder.mid.block_2");
    LTX2_TRY(audio_dump_act(r, dump, user, "decoder.mid.block_2.out", x, x->shape[4]));
    for (int l = dec->cfg.n_levels - 1; l >= 0; l--) {
        const ltx2_audio_level *lv = &dec->levels[l];
        for (int b = 0; b < lv->n_blocks; b++) {
            if ((st = audio_res_block(r, &dv->n.levels[l].blocks[b], x)) != LTX2_OK)
                return ltx2_error_prefix(r->ctx, "decoder.up.%d.block.%d", l, b);
            snprintf(name, sizeof(name), "decoder.up.%d.block.%d.out", l, b);
            LTX2_TRY(audio_dump_act(r, dump, user, name, x, x->shape[4]));
        }
        if (lv->has_upsample) {
            if ((st = upsample(r, &dv->n.levels[l].resample, x)) != LTX2_OK)
                return ltx2_error_prefix(r->ctx, "decoder.up.%d.upsample", l);
            snprintf(name, sizeof(name), "decoder.up.%d.upsample.out", l);
            LTX2_TRY(audio_dump_act(r, dump, user, name, x, x->shape[4]));
        }
    }
    st = ltx2_backend_pixel_norm(r->be, r->ctx, x, LTX2_AUDIO_PIXEL_NORM_EPS, true, x);
    if (st == LTX2_OK) st = vae_run_conv3d(r, &dv->n.conv_out, x, &y);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "decoder.conv_out");
    vae_run_retire(r, x);
    *x = y;
    return audio_dump_act(r, dump, user, "decoder.conv_out.out", x, dec->cfg.out_ch);
}

/* ---- entry point ---- */

ltx2_status ltx2_audio_dec_device_decode(ltx2_context *ctx, const ltx2_audio_dec_device *dv,
                                         const ltx2_tensor *latent, ltx2_tensor *mel, ltx2_audio_dump_fn dump,
                                         void *user) {
    if (!dv || !latent || !mel) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE: NULL argument");
    const ltx2_audio_decoder *dec = dv->dec;
    if (!vae_host_f32(latent, 4))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE: latent must be a contiguous f32 CPU [B, C, T', F'] tensor");
    int64_t ms[4];
    LTX2_TRY(ltx2_audio_decoder_out_shape(ctx, dec, latent->shape, ms));
    bool ok = vae_host_f32(mel, 4);
    for (int i = 0; ok && i < 4; i++) ok = mel->shape[i] == ms[i];
    char a[96], b[96];
    if (!ok)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "audio VAE: mel output is %s, expected a contiguous f32 CPU %s",
                          ltx2_shape_str(mel->shape, mel->ndim, a, sizeof(a)), ltx2_shape_str(ms, 4, b, sizeof(b)));
    const int64_t B = latent->shape[0], C = latent->shape[1], T = latent->shape[2], F = latent->shape[3];
    const int64_t Cp = dv->n.conv_in.desc.c_in; /* C, or C widened with zero channels */
    float *h = calloc((size_t)(B * T * F * Cp), sizeof(float));
    if (!h) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio VAE: latent [%lld, %lld, %lld, %lld]", (long long)B,
                              (long long)T, (long long)F, (long long)Cp);
    /* patchify "b c t f -> b t (c f)", un-normalize feature c*F + f, unpatchify (torch: x*std + mean) */
    const float *z = latent->data;
    for (int64_t bb = 0; bb < B; bb++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t t = 0; t < T; t++)
                for (int64_t f = 0; f < F; f++) {
                    const float v = z[((bb * C + c) * T + t) * F + f] * dec->std_of_means[c * F + f];
                    h[((bb * T + t) * F + f) * Cp + c] = v + dec->mean_of_means[c * F + f];
                }
    vae_run r;
    vae_run_init(&r, ctx, dv->n.be, dv->n.dt);
    const int64_t xs[5] = {B, T, 1, F, Cp};
    ltx2_tensor x;
    ltx2_status st = vae_run_upload(&r, h, dv->n.dt, 5, xs, &x);
    if (st == LTX2_OK && dump) {
        for (int64_t k = 0; Cp != C && k < B * T * F; k++) memmove(h + k * C, h + k * Cp, (size_t)C * sizeof(float));
        const ltx2_audio_act ha = {.d = h, .n = B, .t = T, .f = F, .c = C};
        ltx2_audio_act_dump(dump, user, "decoder.un_normalize.out", &ha);
    }
    free(h);
    if (st == LTX2_OK) st = decode_body(&r, dv, &x, dump, user);
    float *hy = NULL;
    const int64_t yc = st == LTX2_OK ? x.shape[4] : 0, yt = st == LTX2_OK ? x.shape[1] : 0,
                  yf = st == LTX2_OK ? x.shape[3] : 0, oc = dec->cfg.out_ch;
    if (st == LTX2_OK) {
        hy = malloc((size_t)ltx2_tensor_numel(&x) * sizeof(float));
        st = hy ? vae_dev_to_host(ctx, r.be, &x, hy) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio VAE: output");
    }
    if (st == LTX2_OK) st = r.be->sync(r.be, ctx);
    if (st == LTX2_OK) {
        /* Crop to the target then zero-pad what is missing (ltx-core _adjust_output_shape). */
        float *o = mel->data;
        for (int64_t bb = 0; bb < ms[0]; bb++)
            for (int64_t c = 0; c < ms[1]; c++)
                for (int64_t t = 0; t < ms[2]; t++)
                    for (int64_t f = 0; f < ms[3]; f++)
                        o[((bb * ms[1] + c) * ms[2] + t) * ms[3] + f] =
                            (c < oc && t < yt && f < yf) ? hy[((bb * yt + t) * yf + f) * yc + c] : 0.0f;
        if (dump) dump("decoder.out", mel, user);
    }
    free(hy);
    if (st != LTX2_OK) ltx2_error_prefix(ctx, "audio VAE decode (on %s)", r.be->name);
    vae_run_end(&r, st);
    return st;
}
