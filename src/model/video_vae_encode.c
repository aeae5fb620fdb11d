/* The video VAE encoder's one forward (ltx-core video_vae.py VideoEncoder.forward, sampling.py
 * SpaceToDepthDownsample, ops.py patchify / PerChannelStatistics) on the backend op table: the CPU
 * reference (ltx2_video_encoder_encode runs it on the CPU backend), CUDA and the kernel emulator.
 * PixelNorm + SiLU is one fused op; a res block's residual is a plain gated add; a compress_*
 * block duplicates frame 0 in front (time stride 2) with device copies, convolves, then one
 * space_to_depth op rearranges the conv output and adds the group mean of the rearranged input.
 * The patchify of the host video and the per-channel normalisation of the host latent are host
 * work. The device buffers of an encode live in one vae_run table (vae_run.h). */
#include "model/video_vae.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "model/vae_run.h"
#include "model/video_vae_internal.h"

typedef struct enc_dev_block {
    vae_dev_conv *res; /* res_x: 2 * n_layers (conv1, conv2 per layer) */
    vae_dev_conv down; /* compress_*: the conv before space-to-depth */
} enc_dev_block;

struct ltx2_vae_enc_device {
    const ltx2_backend *be;
    const ltx2_video_encoder *enc;
    ltx2_dtype dt;
    vae_dev_conv conv_in, conv_out;
    enc_dev_block *blocks;
};

void ltx2_vae_enc_device_free(ltx2_vae_enc_device *dv) {
    if (!dv) return;
    const ltx2_backend *be = dv->be;
    vae_dev_conv_release(be, &dv->conv_in);
    vae_dev_conv_release(be, &dv->conv_out);
    for (int i = 0; dv->blocks && i < dv->enc->n_blocks; i++) {
        enc_dev_block *db = &dv->blocks[i];
        for (int j = 0; db->res && j < 2 * dv->enc->blocks[i].n_layers; j++) vae_dev_conv_release(be, &db->res[j]);
        free(db->res);
        vae_dev_conv_release(be, &db->down);
    }
    free(dv->blocks);
    free(dv);
}

ltx2_status ltx2_vae_enc_device_create(ltx2_context *ctx, const ltx2_backend *be, const ltx2_video_encoder *enc,
                                       ltx2_vae_enc_device **out) {
    if (!be || !enc || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE encoder: NULL argument");
    *out = NULL;
    const ltx2_op need[] = {LTX2_OP_CONV3D, LTX2_OP_PIXEL_NORM, LTX2_OP_SPACE_TO_DEPTH, LTX2_OP_GATED_ADD};
    ltx2_dtype dt;
    LTX2_TRY(vae_run_pick_dtype(ctx, be, "video VAE encoder", need, sizeof(need) / sizeof(need[0]), &dt));
    ltx2_vae_enc_device *dv = calloc(1, sizeof(*dv));
    if (!dv) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE encoder: state");
    dv->be = be;
    dv->enc = enc;
    dv->dt = dt;
    dv->blocks = calloc((size_t)(enc->n_blocks ? enc->n_blocks : 1), sizeof(*dv->blocks));
    ltx2_status st = dv->blocks ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE encoder: blocks");
    if (st == LTX2_OK) st = vae_dev_conv_upload_exact(ctx, be, dt, &enc->conv_in, &dv->conv_in);
    /* only the first latent_channels outputs of conv_out are read (the mean) */
    if (st == LTX2_OK) st = vae_dev_conv_upload(ctx, be, dt, &enc->conv_out.desc, enc->conv_out.weight, enc->conv_out.bias, 1,
                                                 VAE_CONV_CHANNEL_ALIGN, &dv->conv_out);
    for (int i = 0; i < enc->n_blocks && st == LTX2_OK; i++) {
        const ltx2_vae_enc_block *b = &enc->blocks[i];
        enc_dev_block *db = &dv->blocks[i];
        if (b->kind == LTX2_VAE_RES_X) {
            db->res = calloc((size_t)(2 * b->n_layers), sizeof(*db->res));
            if (!db->res) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE encoder: res convs");
            for (int j = 0; j < 2 * b->n_layers && st == LTX2_OK; j++)
                st = vae_dev_conv_upload_exact(ctx, be, dt, &b->res[j], &db->res[j]);
        } else {
            st = vae_dev_conv_upload_exact(ctx, be, dt, &b->down, &db->down);
        }
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "video VAE: uploading encoder.down_blocks.%d", i);
    }
    if (st != LTX2_OK) {
        ltx2_vae_enc_device_free(dv);
        return st;
    }
    *out = dv;
    return LTX2_OK;
}

/* ---- stages ---- */

/* Layer j of res_x block bi (ResnetBlock3D, in == out, no conditioning):
 * x += conv2(silu(norm(conv1(silu(norm(x)))))), x updated in place. */
static ltx2_status res_layer(vae_run *r, const enc_dev_block *db, int j, ltx2_tensor *x) {
    ltx2_tensor h, h1, h2;
    LTX2_TRY(vae_run_new(r, 5, x->shape, &h));
    LTX2_TRY(ltx2_backend_pixel_norm(r->be, r->ctx, x, VAE_PIXEL_NORM_EPS, true, &h));
    ltx2_status st = vae_run_conv3d(r, &db->res[2 * j], &h, &h1);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "res_blocks.%d.conv1", j);
    vae_run_retire(r, &h);
    LTX2_TRY(ltx2_backend_pixel_norm(r->be, r->ctx, &h1, VAE_PIXEL_NORM_EPS, true, &h1));
    st = vae_run_conv3d(r, &db->res[2 * j + 1], &h1, &h2);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "res_blocks.%d.conv2", j);
    vae_run_retire(r, &h1);
    const ltx2_mod_rows plain = {.rows_per_group = 1}; /* unused without a gate */
    LTX2_TRY(ltx2_backend_gated_add(r->be, r->ctx, x, &h2, NULL, &plain));
    vae_run_retire(r, &h2);
    return vae_run_flush(r);
}

/* x with frame 0 duplicated in front of every sample: [n, t + 1, h, w, c]. */
static ltx2_status dup_first_frame(vae_run *r, const ltx2_tensor *x, ltx2_tensor *xd) {
    const int64_t n = x->shape[0], t = x->shape[1];
    const int64_t ds[5] = {n, t + 1, x->shape[2], x->shape[3], x->shape[4]};
    LTX2_TRY(vae_run_new(r, 5, ds, xd));
    const size_t frame = (size_t)(x->shape[2] * x->shape[3] * x->shape[4]) * ltx2_dtype_size(x->dtype);
    for (int64_t bn = 0; bn < n; bn++) {
        const char *src = (const char *)x->data + (size_t)(bn * t) * frame;
        char *dst = (char *)xd->data + (size_t)(bn * (t + 1)) * frame;
        LTX2_TRY(r->be->copy(r->be, r->ctx, dst, src, frame));
        LTX2_TRY(r->be->copy(r->be, r->ctx, dst + frame, src, (size_t)t * frame));
    }
    return LTX2_OK;
}

/* compress_* block (SpaceToDepthDownsample): with time stride 2 frame 0 is duplicated in front;
 * out = s2d(conv(x)) + the group mean of s2d(x). */
static ltx2_status downsample(vae_run *r, const ltx2_vae_enc_block *b, const enc_dev_block *db, ltx2_tensor *x) {
    ltx2_tensor xd = *x, y, out;
    const bool dup = b->stride[0] == 2;
    if (dup) LTX2_TRY(dup_first_frame(r, x, &xd));
    const int64_t T = xd.shape[1], H = xd.shape[2], W = xd.shape[3];
    if (T % b->stride[0] != 0 || H % b->stride[1] != 0 || W % b->stride[2] != 0)
        return LTX2_ERROR(r->ctx, LTX2_ERR_SHAPE,
                          "space-to-depth: %lldx%lldx%lld not divisible by stride %lldx%lldx%lld", (long long)T,
                          (long long)H, (long long)W, (long long)b->stride[0], (long long)b->stride[1],
                          (long long)b->stride[2]);
    ltx2_status st = vae_run_conv3d(r, &db->down, &xd, &y);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "conv");
    const int64_t os[5] = {x->shape[0], T / b->stride[0], H / b->stride[1], W / b->stride[2], b->c_out};
    LTX2_TRY(vae_run_new(r, 5, os, &out));
    const ltx2_s2d_args a = {.stride = {b->stride[0], b->stride[1], b->stride[2]}};
    st = ltx2_backend_space_to_depth(r->be, r->ctx, &y, &a, &xd, &out);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "space-to-depth");
    vae_run_retire(r, &y);
    if (dup) vae_run_retire(r, &xd);
    vae_run_retire(r, x);
    *x = out;
    return vae_run_flush(r);
}

static ltx2_status run_block(vae_run *r, const ltx2_vae_enc_device *dv, int i, ltx2_tensor *x,
                             ltx2_vae_dump_fn dump, void *user) {
    const ltx2_vae_enc_block *b = &dv->enc->blocks[i];
    const enc_dev_block *db = &dv->blocks[i];
    ltx2_status st = LTX2_OK;
    if (b->kind == LTX2_VAE_RES_X) {
        char name[VAE_KEY_CAP];
        for (int j = 0; j < b->n_layers && st == LTX2_OK; j++) {
            st = res_layer(r, db, j, x);
            if (st == LTX2_OK && b->n_layers > 1) {
                snprintf(name, sizeof(name), "encoder.down_blocks.%d.res_blocks.%d.out", i, j);
                st = vae_run_dump(r, dump, user, name, x);
            }
        }
    } else {
        st = downsample(r, b, db, x);
    }
    if (st != LTX2_OK) ltx2_error_prefix(r->ctx, "encoder.down_blocks.%d (%s)", i, ltx2_vae_block_name(b->kind));
    return st;
}

/* ---- entry point ---- */

/* patchify "b c (f p) (h q) (w r) -> b (c p r q) f h w" (p = 1): pixel (h, w) channel c goes to
 * patch channel c*P*P + (w % P)*P + h % P. */
static void patchify(const ltx2_tensor *video, int64_t P, float *x) {
    const int64_t B = video->shape[0], T = video->shape[1], H = video->shape[2], W = video->shape[3];
    const int64_t IC = video->shape[4], xh = H / P, xw = W / P, xc = IC * P * P;
    const float *vd = video->data;
    for (int64_t bn = 0; bn < B; bn++)
        for (int64_t t = 0; t < T; t++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++) {
                    const float *src = vd + (((bn * T + t) * H + h) * W + w) * IC;
                    float *dst = x + (((bn * T + t) * xh + h / P) * xw + w / P) * xc;
                    for (int64_t c = 0; c < IC; c++) dst[(c * P + w % P) * P + h % P] = src[c];
                }
}

ltx2_status ltx2_vae_enc_device_encode(ltx2_context *ctx, const ltx2_vae_enc_device *dv, const ltx2_tensor *video,
                                       ltx2_tensor *latent, ltx2_vae_dump_fn dump, void *user) {
    if (!dv) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE encode: NULL encoder");
    const ltx2_video_encoder *enc = dv->enc;
    if (!vae_host_f32(video, 5))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "video VAE encode: video must be a contiguous f32 CPU tensor [B, F, H, W, 3]");
    if (!vae_host_f32(latent, 5))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "video VAE encode: latent must be a contiguous f32 CPU tensor [B, F', H', W', C]");
    int64_t want[5];
    LTX2_TRY(ltx2_video_encoder_out_shape(ctx, enc, video->shape, want));
    for (int i = 0; i < 5; i++)
        if (latent->shape[i] != want[i]) {
            char got[96], exp[96];
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "video VAE encode: latent buffer is %s, expected %s",
                              ltx2_shape_str(latent->shape, 5, got, sizeof(got)),
                              ltx2_shape_str(want, 5, exp, sizeof(exp)));
        }
    if (dump) dump("encoder.in", video, user);

    const int64_t P = enc->cfg.patch_size;
    const int64_t xs[5] = {video->shape[0], video->shape[1], video->shape[2] / P, video->shape[3] / P,
                           enc->cfg.in_channels * P * P};
    float *hx = malloc((size_t)ltx2_tensor_numel(video) * sizeof(float));
    if (!hx) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE encode: patchified video");
    patchify(video, P, hx);
    vae_run r;
    vae_run_init(&r, ctx, dv->be, dv->dt);
    ltx2_tensor x, y;
    ltx2_status st = vae_run_upload(&r, hx, dv->dt, 5, xs, &x);
    free(hx);
    if (st == LTX2_OK) {
        st = vae_run_conv3d(&r, &dv->conv_in, &x, &y);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "encoder.conv_in");
    }
    if (st == LTX2_OK) {
        vae_run_retire(&r, &x);
        x = y;
        st = vae_run_flush(&r);
    }
    if (st == LTX2_OK) st = vae_run_dump(&r, dump, user, "encoder.conv_in.out", &x);
    char name[VAE_KEY_CAP];
    for (int i = 0; i < enc->n_blocks && st == LTX2_OK; i++) {
        st = run_block(&r, dv, i, &x, dump, user);
        snprintf(name, sizeof(name), "encoder.down_blocks.%d.out", i);
        if (st == LTX2_OK) st = vae_run_dump(&r, dump, user, name, &x);
    }
    if (st == LTX2_OK) {
        st = ltx2_backend_pixel_norm(r.be, ctx, &x, VAE_PIXEL_NORM_EPS, true, &x);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "encoder.conv_norm_out");
    }
    if (st == LTX2_OK) {
        st = vae_run_conv3d(&r, &dv->conv_out, &x, &y);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "encoder.conv_out");
    }
    float *hy = NULL;
    if (st == LTX2_OK) {
        hy = malloc((size_t)ltx2_tensor_numel(&y) * sizeof(float));
        st = hy ? vae_dev_to_host(ctx, r.be, &y, hy) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE encode: output");
    }
    if (st == LTX2_OK) st = r.be->sync(r.be, ctx);
    /* conv_out's real channels (a device run may have widened it, see VAE_CONV_CHANNEL_ALIGN) */
    const int64_t yc = enc->conv_out.desc.c_out, rows = st == LTX2_OK ? ltx2_tensor_numel(&y) / y.shape[4] : 0;
    if (st == LTX2_OK && y.shape[4] != yc)
        for (int64_t k = 0; k < rows; k++) memmove(hy + k * yc, hy + k * y.shape[4], (size_t)yc * sizeof(float));
    if (st == LTX2_OK && dump) {
        const int64_t ys[5] = {y.shape[0], y.shape[1], y.shape[2], y.shape[3], yc};
        ltx2_tensor v = ltx2_tensor_make(hy, LTX2_F32, 5, ys);
        dump("encoder.conv_out.out", &v, user);
    }
    if (st == LTX2_OK) {
        /* The mean is the first latent_channels channels (uniform/constant: then one logvar
         * channel; per_channel: then latent_channels logvars); normalize with the per-channel
         * statistics. */
        const int64_t L = enc->cfg.latent_channels;
        float *ld = latent->data;
        for (int64_t k = 0; k < rows; k++)
            for (int64_t c = 0; c < L; c++)
                ld[k * L + c] = (hy[k * yc + c] - enc->mean_of_means[c]) / enc->std_of_means[c];
        if (dump) dump("encoder.out", latent, user);
    }
    free(hy);
    if (st != LTX2_OK) ltx2_error_prefix(ctx, "video VAE encode (on %s)", r.be->name);
    vae_run_end(&r, st);
    return st;
}
