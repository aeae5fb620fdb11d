/* Video VAE encoder: loading, block plan, output shape and placement (see video_vae.h); the
 * forward is video_vae_encode.c. Reference: ltx-core 1.0.0 model/video_vae/video_vae.py
 * VideoEncoder. Shares the loader with the decoder (video_vae_internal.h). */
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
    ltx2_vae_enc_device_free(enc->placed);
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

ltx2_status ltx2_video_encoder_shape_only(ltx2_context *ctx, const ltx2_vae_config *cfg, ltx2_video_encoder **out) {
    if (!cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE: NULL argument");
    *out = NULL;
    if (cfg->n_encoder_blocks < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "video VAE: the config has no vae.encoder_blocks");
    ltx2_video_encoder *enc = calloc(1, sizeof(*enc));
    if (!enc) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: encoder struct");
    enc->cfg = *cfg;
    enc->n_blocks = cfg->n_encoder_blocks;
    enc->blocks = calloc((size_t)(enc->n_blocks ? enc->n_blocks : 1), sizeof(*enc->blocks));
    ltx2_status st = enc->blocks ? plan_encoder(ctx, enc) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: blocks");
    if (st != LTX2_OK) {
        ltx2_video_encoder_free(enc);
        return st;
    }
    enc->conv_in.desc.c_in = cfg->in_channels * cfg->patch_size * cfg->patch_size;
    enc->conv_in.desc.c_out = cfg->latent_channels;
    enc->conv_out.desc.c_in = enc->n_blocks ? enc->blocks[enc->n_blocks - 1].c_out : cfg->latent_channels;
    enc->conv_out.desc.c_out = encoder_out_channels(cfg);
    *out = enc;
    return LTX2_OK;
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

ltx2_status ltx2_video_encoder_place(ltx2_context *ctx, ltx2_video_encoder *enc, const ltx2_backend *be) {
    if (!enc) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE place: NULL encoder");
    ltx2_vae_enc_device *dv = NULL;
    if (be && be->device != LTX2_DEVICE_CPU) LTX2_TRY(ltx2_vae_enc_device_create(ctx, be, enc, &dv));
    ltx2_vae_enc_device_free(enc->placed);
    enc->placed = dv;
    return LTX2_OK;
}

ltx2_status ltx2_video_encoder_encode(ltx2_context *ctx, const ltx2_video_encoder *enc,
                                      const ltx2_tensor *video, ltx2_tensor *latent,
                                      ltx2_vae_dump_fn dump, void *user) {
    if (!enc) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE encode: NULL encoder");
    if (enc->placed) return ltx2_vae_enc_device_encode(ctx, enc->placed, video, latent, dump, user);
    /* the encoder's one forward on the CPU backend, over the host weights in place */
    ltx2_vae_enc_device *dv = NULL;
    LTX2_TRY(ltx2_vae_enc_device_create(ctx, ltx2_backend_cpu(), enc, &dv));
    const ltx2_status st = ltx2_vae_enc_device_encode(ctx, dv, video, latent, dump, user);
    ltx2_vae_enc_device_free(dv);
    return st;
}
