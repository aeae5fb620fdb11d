/* Video VAE encoder on the CPU (see video_vae.h). Reference: ltx-core 1.0.0
 * model/video_vae/video_vae.py VideoEncoder.forward, sampling.py SpaceToDepthDownsample, ops.py
 * patchify / PerChannelStatistics. Shares the loader and building blocks with the decoder
 * (video_vae_internal.h). */
#include "model/video_vae.h"
#include "model/video_vae_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "cpu/cpu_ops.h"

/* ---------------------------------------------------------------------------------------------
 * Encoder
 * ------------------------------------------------------------------------------------------- */

void ltx2_video_encoder_free(ltx2_video_encoder *enc) {
    if (!enc) return;
    free(enc->mean_of_means);
    free(enc->std_of_means);
    vae_conv_free(&enc->conv_in);
    vae_conv_free(&enc->conv_out);
    for (int i = 0; i < enc->n_blocks; i++) {
        ltx2_vae_enc_block *b = &enc->blocks[i];
        if (b->res)
            for (int j = 0; j < 2 * b->n_layers; j++) vae_conv_free(&b->res[j]);
        free(b->res);
        vae_conv_free(&b->down);
    }
    free(enc->blocks);
    free(enc);
}

static ltx2_status plan_encoder(ltx2_context *ctx, ltx2_video_encoder *enc) {
    const ltx2_vae_config *cfg = &enc->cfg;
    int64_t c = cfg->latent_channels; /* ltx-core: conv_in width = latent channels */
    enc->time_factor = 1;
    enc->space_factor = cfg->patch_size;
    for (int i = 0; i < enc->n_blocks; i++) {
        const ltx2_vae_block *src = &cfg->encoder_blocks[i];
        ltx2_vae_enc_block *b = &enc->blocks[i];
        b->kind = src->kind;
        b->c_in = c;
        b->stride[0] = b->stride[1] = b->stride[2] = 1;
        switch (src->kind) {
        case LTX2_VAE_RES_X:
            b->n_layers = (int)src->num_layers;
            b->c_out = c;
            break;
        case LTX2_VAE_COMPRESS_TIME_RES:
        case LTX2_VAE_COMPRESS_SPACE_RES:
        case LTX2_VAE_COMPRESS_ALL_RES: {
            if (src->kind != LTX2_VAE_COMPRESS_SPACE_RES) b->stride[0] = 2;
            if (src->kind != LTX2_VAE_COMPRESS_TIME_RES) b->stride[1] = b->stride[2] = 2;
            const int64_t prod = b->stride[0] * b->stride[1] * b->stride[2];
            b->c_out = c * src->multiplier;
            if (b->c_out % prod != 0 || (c * prod) % b->c_out != 0)
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                                  "video VAE: encoder.down_blocks.%d (%s): %lld -> %lld channels do not divide "
                                  "by the stride product %lld",
                                  i, ltx2_vae_block_name(src->kind), (long long)c, (long long)b->c_out,
                                  (long long)prod);
            b->group = c * prod / b->c_out;
            enc->time_factor *= b->stride[0];
            enc->space_factor *= b->stride[1];
            break;
        }
        default:
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "video VAE: encoder block \"%s\" (down_blocks.%d) is not supported (not used by LTX-2)",
                              ltx2_vae_block_name(src->kind), i);
        }
        c = b->c_out;
    }
    return LTX2_OK;
}

static int64_t encoder_out_channels(const ltx2_vae_config *cfg) {
    switch (cfg->latent_log_var) {
    case LTX2_VAE_LOGVAR_PER_CHANNEL: return 2 * cfg->latent_channels;
    case LTX2_VAE_LOGVAR_NONE: return cfg->latent_channels;
    default: return cfg->latent_channels + 1; /* uniform / constant: one shared logvar channel */
    }
}

ltx2_status ltx2_video_encoder_load(ltx2_context *ctx, const ltx2_st_set *weights, const char *prefix,
                                    const ltx2_vae_config *cfg, ltx2_video_encoder **out) {
    if (!weights || !cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE: NULL argument");
    *out = NULL;
    if (!prefix) prefix = "";
    if (cfg->n_encoder_blocks < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                          "video VAE: the config has no vae.encoder_blocks (ltx-core would build an empty encoder)");
    if (cfg->in_channels < 1 || cfg->patch_size < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "video VAE: in_channels %lld / patch_size %lld unsupported",
                          (long long)cfg->in_channels, (long long)cfg->patch_size);
    ltx2_video_encoder *enc = calloc(1, sizeof(*enc));
    if (!enc) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: encoder struct");
    enc->cfg = *cfg;
    enc->n_blocks = cfg->n_encoder_blocks;
    enc->blocks = calloc((size_t)(enc->n_blocks ? enc->n_blocks : 1), sizeof(*enc->blocks));
    vae_loader L = {.ctx = ctx, .set = weights, .prefix = prefix, .part = "encoder"};
    ltx2_status st = enc->blocks ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: blocks");
    if (st == LTX2_OK) st = plan_encoder(ctx, enc);
    const ltx2_conv_tpad tpad = LTX2_CONV_TPAD_CAUSAL;
    const ltx2_conv_spad spad = cfg->encoder_padding == LTX2_VAE_PAD_REFLECT ? LTX2_CONV_SPAD_REFLECT
                                                                             : LTX2_CONV_SPAD_ZEROS;
    const int64_t lc = cfg->latent_channels;
    char key[VAE_KEY_CAP];
    if (st == LTX2_OK) {
        snprintf(key, sizeof(key), "%sper_channel_statistics.mean-of-means", prefix);
        st = vae_load_f32(&L, key, 1, &lc, &enc->mean_of_means);
    }
    if (st == LTX2_OK) {
        snprintf(key, sizeof(key), "%sper_channel_statistics.std-of-means", prefix);
        st = vae_load_f32(&L, key, 1, &lc, &enc->std_of_means);
    }
    if (st == LTX2_OK)
        st = vae_load_conv(&L, "conv_in", cfg->in_channels * cfg->patch_size * cfg->patch_size, lc, tpad, spad,
                       &enc->conv_in);
    for (int i = 0; i < enc->n_blocks && st == LTX2_OK; i++) {
        ltx2_vae_enc_block *b = &enc->blocks[i];
        char path[VAE_KEY_CAP];
        if (b->kind == LTX2_VAE_RES_X) {
            b->res = calloc((size_t)(2 * b->n_layers), sizeof(*b->res));
            if (!b->res) {
                st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: res blocks");
                break;
            }
            for (int j = 0; j < 2 * b->n_layers && st == LTX2_OK; j++) {
                snprintf(path, sizeof(path), "down_blocks.%d.res_blocks.%d.conv%d", i, j / 2, j % 2 + 1);
                st = vae_load_conv(&L, path, b->c_in, b->c_in, tpad, spad, &b->res[j]);
            }
        } else {
            const int64_t prod = b->stride[0] * b->stride[1] * b->stride[2];
            snprintf(path, sizeof(path), "down_blocks.%d.conv", i);
            st = vae_load_conv(&L, path, b->c_in, b->c_out / prod, tpad, spad, &b->down);
        }
    }
    const int64_t c_last = enc->n_blocks ? enc->blocks[enc->n_blocks - 1].c_out : lc;
    if (st == LTX2_OK) st = vae_load_conv(&L, "conv_out", c_last, encoder_out_channels(cfg), tpad, spad, &enc->conv_out);
    if (st == LTX2_OK) st = vae_check_all_used(&L);
    free(L.used);
    if (st != LTX2_OK) {
        ltx2_video_encoder_free(enc);
        return st;
    }
    *out = enc;
    return LTX2_OK;
}

ltx2_status ltx2_video_encoder_out_shape(ltx2_context *ctx, const ltx2_video_encoder *enc,
                                         const int64_t video_ndhwc[5], int64_t latent_ndhwc[5]) {
    if (!enc || !video_ndhwc || !latent_ndhwc)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE: NULL argument");
    const int64_t tf = enc->time_factor, sf = enc->space_factor;
    const int64_t B = video_ndhwc[0], F = video_ndhwc[1], H = video_ndhwc[2], W = video_ndhwc[3];
    if (video_ndhwc[4] != enc->cfg.in_channels)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "video VAE encode: video has %lld channels, expected %lld",
                          (long long)video_ndhwc[4], (long long)enc->cfg.in_channels);
    if (B < 1 || F < 1 || (F - 1) % tf != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "video VAE encode: %lld frames is not %lld*k+1", (long long)F,
                          (long long)tf);
    if (H < sf || W < sf || H % sf != 0 || W % sf != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "video VAE encode: %lldx%lld (HxW) is not a multiple of %lld",
                          (long long)H, (long long)W, (long long)sf);
    latent_ndhwc[0] = B;
    latent_ndhwc[1] = (F - 1) / tf + 1;
    latent_ndhwc[2] = H / sf;
    latent_ndhwc[3] = W / sf;
    latent_ndhwc[4] = enc->cfg.latent_channels;
    return LTX2_OK;
}

/* SpaceToDepthDownsample: with s_t == 2 frame 0 is duplicated in front; out = s2d(conv(x)) +
 * mean over consecutive groups of s2d(x), s2d channel ((c*s_t + a)*s_h + b)*s_w + e. */
static ltx2_status downsample_block(ltx2_context *ctx, const ltx2_vae_enc_block *b, vae_act *x) {
    const int64_t s0 = b->stride[0], s1 = b->stride[1], s2 = b->stride[2];
    vae_act xd = {0}, y = {0}, out = {0};
    const int64_t dup = s0 == 2 ? 1 : 0;
    LTX2_TRY(vae_act_alloc(ctx, &xd, x->n, x->t + dup, x->h, x->w, x->c));
    const int64_t frame = x->h * x->w * x->c;
    for (int64_t bn = 0; bn < x->n; bn++) {
        float *dst = xd.d + bn * xd.t * frame;
        const float *src = x->d + bn * x->t * frame;
        if (dup) memcpy(dst, src, (size_t)frame * sizeof(float));
        memcpy(dst + dup * frame, src, (size_t)(x->t * frame) * sizeof(float));
    }
    ltx2_status st = LTX2_OK;
    if (xd.t % s0 != 0 || xd.h % s1 != 0 || xd.w % s2 != 0)
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "space-to-depth: %lldx%lldx%lld not divisible by stride %lldx%lldx%lld",
                        (long long)xd.t, (long long)xd.h, (long long)xd.w, (long long)s0, (long long)s1, (long long)s2);
    if (st == LTX2_OK) st = vae_run_conv(ctx, &b->down, &xd, &y);
    if (st == LTX2_OK) st = vae_act_alloc(ctx, &out, x->n, xd.t / s0, xd.h / s1, xd.w / s2, b->c_out);
    if (st == LTX2_OK) {
        const int64_t T = out.t, H = out.h, W = out.w, C = out.c, g = b->group, cx = xd.c, cy = y.c;
        const int64_t ti = xd.t, hi = xd.h, wi = xd.w, n = x->n;
        const float *yd = y.d, *xdd = xd.d;
        float *od = out.d;
#pragma omp parallel for collapse(2) schedule(static) if (vae_act_numel(&out) > 65536)
        for (int64_t bn = 0; bn < n; bn++)
            for (int64_t t = 0; t < T; t++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++) {
                        float *dst = od + (((bn * T + t) * H + h) * W + w) * C;
                        for (int64_t k = 0; k < C; k++) {
                            /* conv branch: channel k = ((cc*s0 + a)*s1 + bb)*s2 + e */
                            int64_t r = k;
                            const int64_t e = r % s2; r /= s2;
                            const int64_t bb = r % s1; r /= s1;
                            const int64_t a = r % s0;
                            const int64_t cc = r / s0;
                            float v = yd[(((bn * ti + t * s0 + a) * hi + h * s1 + bb) * wi + w * s2 + e) * cy + cc];
                            float sum = 0.0f;
                            for (int64_t q = k * g; q < (k + 1) * g; q++) {
                                int64_t rq = q;
                                const int64_t eq = rq % s2; rq /= s2;
                                const int64_t bq = rq % s1; rq /= s1;
                                const int64_t aq = rq % s0;
                                const int64_t cq = rq / s0;
                                sum += xdd[(((bn * ti + t * s0 + aq) * hi + h * s1 + bq) * wi + w * s2 + eq) * cx + cq];
                            }
                            dst[k] = v + sum / (float)g;
                        }
                    }
    }
    vae_act_free(&xd);
    vae_act_free(&y);
    if (st != LTX2_OK) {
        vae_act_free(&out);
        return st;
    }
    vae_act_free(x);
    *x = out;
    return LTX2_OK;
}

ltx2_status ltx2_video_encoder_encode(ltx2_context *ctx, const ltx2_video_encoder *enc,
                                      const ltx2_tensor *video, ltx2_tensor *latent,
                                      ltx2_vae_dump_fn dump, void *user) {
    if (!enc) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE encode: NULL encoder");
    if (!vae_is_f32_ndhwc(video))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "video VAE encode: video must be a contiguous f32 CPU tensor [B, F, H, W, 3]");
    if (!vae_is_f32_ndhwc(latent))
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

    /* patchify "b c (f p) (h q) (w r) -> b (c p r q) f h w" (p = 1): channel c*P*P + w_off*P + h_off. */
    const int64_t P = enc->cfg.patch_size, IC = enc->cfg.in_channels;
    const int64_t B = video->shape[0], T = video->shape[1], H = video->shape[2], W = video->shape[3];
    vae_act x = {0}, y = {0};
    LTX2_TRY(vae_act_alloc(ctx, &x, B, T, H / P, W / P, IC * P * P));
    {
        const float *vd = video->data;
        const int64_t xh = x.h, xw = x.w, xc = x.c;
        float *xdat = x.d;
#pragma omp parallel for collapse(2) schedule(static) if (B * T * H * W > 65536)
        for (int64_t bn = 0; bn < B; bn++)
            for (int64_t t = 0; t < T; t++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++) {
                        const float *src = vd + (((bn * T + t) * H + h) * W + w) * IC;
                        float *dst = xdat + (((bn * T + t) * xh + h / P) * xw + w / P) * xc;
                        for (int64_t c = 0; c < IC; c++) dst[(c * P + w % P) * P + h % P] = src[c];
                    }
    }
    ltx2_status st = vae_run_conv(ctx, &enc->conv_in, &x, &y);
    vae_act_free(&x);
    if (st != LTX2_OK) {
        ltx2_error_prefix(ctx, "video VAE encode: encoder.conv_in");
        return st;
    }
    x = y;
    vae_dump_act(dump, user, "encoder.conv_in.out", &x);

    char name[VAE_KEY_CAP];
    for (int i = 0; i < enc->n_blocks && st == LTX2_OK; i++) {
        const ltx2_vae_enc_block *b = &enc->blocks[i];
        if (b->kind == LTX2_VAE_RES_X) {
            for (int j = 0; j < b->n_layers && st == LTX2_OK; j++) {
                st = vae_res_block(ctx, &b->res[2 * j], &b->res[2 * j + 1], &x);
                if (st == LTX2_OK && b->n_layers > 1) {
                    snprintf(name, sizeof(name), "encoder.down_blocks.%d.res_blocks.%d.out", i, j);
                    vae_dump_act(dump, user, name, &x);
                }
            }
        } else {
            st = downsample_block(ctx, b, &x);
        }
        if (st != LTX2_OK) {
            ltx2_error_prefix(ctx, "video VAE encode: encoder.down_blocks.%d", i);
            break;
        }
        snprintf(name, sizeof(name), "encoder.down_blocks.%d.out", i);
        vae_dump_act(dump, user, name, &x);
    }
    if (st == LTX2_OK) st = vae_norm_silu(ctx, &x);
    if (st == LTX2_OK) {
        st = vae_run_conv(ctx, &enc->conv_out, &x, &y);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "video VAE encode: encoder.conv_out");
    }
    vae_act_free(&x);
    if (st != LTX2_OK) return st;
    vae_dump_act(dump, user, "encoder.conv_out.out", &y);

    /* The mean is the first latent_channels channels (uniform/constant: then one logvar channel;
     * per_channel: then latent_channels logvars); normalize with the per-channel statistics. */
    const int64_t L = enc->cfg.latent_channels, rows = y.n * y.t * y.h * y.w, yc = y.c;
    float *ld = latent->data;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < L; c++)
            ld[r * L + c] = (y.d[r * yc + c] - enc->mean_of_means[c]) / enc->std_of_means[c];
    vae_act_free(&y);
    if (dump) dump("encoder.out", latent, user);
    return LTX2_OK;
}
