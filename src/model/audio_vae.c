/* Audio VAE decoder on the CPU (see audio_vae.h). Reference: ltx-core 1.0.0
 * model/audio_vae/audio_vae.py AudioDecoder, resnet.py ResnetBlock, upsample.py Upsample,
 * causal_conv_2d.py CausalConv2d (causality_axis "height" = time), ops.py PerChannelStatistics,
 * components/patchifiers.py AudioPatchifier. Activations are [B, T, F, C] fp32 buffers. */
#include "model/audio_vae.h"
#include "model/audio_act.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "cpu/cpu_ops.h"
#include "model/audio_weights.h"

/* The audio VAE's PixelNorm epsilon (ltx-core build_normalization_layer passes 1e-6 for "pixel"). */
#define AUDIO_PIXEL_NORM_EPS 1e-6f
/* ltx-core audio_vae.py LATENT_DOWNSAMPLE_FACTOR: a hard-coded constant there (not derived from
 * ch_mult), which sets the decoded length 4T' - 3 before the crop. */
#define AUDIO_LATENT_DOWNSAMPLE 4
#define AUDIO_KERNEL 3
#define AUDIO_KEY_CAP 256

/* ---------------------------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------------------------- */

static void conv_free(ltx2_audio_conv *c) {
    free(c->weight);
    free(c->bias);
    c->weight = c->bias = NULL;
}

/* `<prefix>decoder.<path>.conv.{weight,bias}` ([c_out, c_in, k, k]). */
static ltx2_status load_conv(ltx2_audio_loader *L, const char *prefix, const char *path, int64_t c_in, int64_t c_out,
                             int64_t k, ltx2_audio_conv *c) {
    char key[AUDIO_KEY_CAP];
    memset(c, 0, sizeof(*c));
    c->desc = (ltx2_conv3d_desc){.c_in = c_in, .c_out = c_out, .kt = 1, .kh = k, .kw = k, .st = 1, .sh = 1, .sw = 1,
                                 .tpad = LTX2_CONV_TPAD_NONE, .spad = LTX2_CONV_SPAD_ZEROS};
    const int64_t wshape[4] = {c_out, c_in, k, k};
    float *w = NULL;
    snprintf(key, sizeof(key), "%sdecoder.%s.conv.weight", prefix, path);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 4, wshape, &w));
    c->weight = malloc((size_t)ltx2_cpu_conv3d_packed_numel(&c->desc) * sizeof(float));
    if (!c->weight) {
        free(w);
        return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "audio VAE: packed %s", key);
    }
    ltx2_status st = ltx2_cpu_conv3d_pack_weight(L->ctx, &c->desc, w, c->weight); /* [o, i, 1, k, k] */
    free(w);
    if (st != LTX2_OK) return st;
    snprintf(key, sizeof(key), "%sdecoder.%s.conv.bias", prefix, path);
    return ltx2_audio_load_f32(L, key, 1, &c_out, &c->bias);
}

static ltx2_status load_res(ltx2_audio_loader *L, const char *prefix, const char *path, int64_t c_in, int64_t c_out,
                            ltx2_audio_res *r) {
    char p[AUDIO_KEY_CAP];
    memset(r, 0, sizeof(*r));
    r->c_in = c_in, r->c_out = c_out;
    snprintf(p, sizeof(p), "%s.conv1", path);
    LTX2_TRY(load_conv(L, prefix, p, c_in, c_out, AUDIO_KERNEL, &r->conv1));
    snprintf(p, sizeof(p), "%s.conv2", path);
    LTX2_TRY(load_conv(L, prefix, p, c_out, c_out, AUDIO_KERNEL, &r->conv2));
    if (c_in != c_out) {
        snprintf(p, sizeof(p), "%s.nin_shortcut", path);
        LTX2_TRY(load_conv(L, prefix, p, c_in, c_out, 1, &r->nin));
    }
    return LTX2_OK;
}

static void res_free(ltx2_audio_res *r) {
    conv_free(&r->conv1);
    conv_free(&r->conv2);
    conv_free(&r->nin);
}

void ltx2_audio_decoder_free(ltx2_audio_decoder *dec) {
    if (!dec) return;
    free(dec->mean_of_means);
    free(dec->std_of_means);
    conv_free(&dec->conv_in);
    conv_free(&dec->conv_out);
    res_free(&dec->mid1);
    res_free(&dec->mid2);
    for (int l = 0; l < LTX2_AUDIO_MAX_LEVELS; l++) {
        for (int b = 0; b < dec->levels[l].n_blocks; b++) res_free(&dec->levels[l].blocks[b]);
        free(dec->levels[l].blocks);
        conv_free(&dec->levels[l].upsample);
    }
    free(dec);
}

static ltx2_status load_all(ltx2_audio_loader *L, const char *prefix, ltx2_audio_decoder *dec) {
    const ltx2_audio_vae_config *c = &dec->cfg;
    char key[AUDIO_KEY_CAP], path[AUDIO_KEY_CAP];
    dec->n_stats = c->ch;
    snprintf(key, sizeof(key), "%sper_channel_statistics.mean-of-means", prefix);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 1, &dec->n_stats, &dec->mean_of_means));
    snprintf(key, sizeof(key), "%sper_channel_statistics.std-of-means", prefix);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 1, &dec->n_stats, &dec->std_of_means));
    const int64_t base = c->ch * c->ch_mult[c->n_levels - 1];
    LTX2_TRY(load_conv(L, prefix, "conv_in", c->z_channels, base, AUDIO_KERNEL, &dec->conv_in));
    LTX2_TRY(load_res(L, prefix, "mid.block_1", base, base, &dec->mid1));
    LTX2_TRY(load_res(L, prefix, "mid.block_2", base, base, &dec->mid2));
    int64_t block_in = base;
    for (int l = c->n_levels - 1; l >= 0; l--) {
        ltx2_audio_level *lv = &dec->levels[l];
        const int64_t block_out = c->ch * c->ch_mult[l];
        lv->blocks = calloc((size_t)(c->num_res_blocks + 1), sizeof(*lv->blocks));
        if (!lv->blocks) return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "audio VAE: level %d blocks", l);
        for (int64_t b = 0; b <= c->num_res_blocks; b++) {
            snprintf(path, sizeof(path), "up.%d.block.%lld", l, (long long)b);
            lv->n_blocks = (int)b + 1;
            LTX2_TRY(load_res(L, prefix, path, block_in, block_out, &lv->blocks[b]));
            block_in = block_out;
        }
        if (l != 0) {
            snprintf(path, sizeof(path), "up.%d.upsample.conv", l);
            lv->has_upsample = true;
            LTX2_TRY(load_conv(L, prefix, path, block_in, block_in, AUDIO_KERNEL, &lv->upsample));
        }
    }
    LTX2_TRY(load_conv(L, prefix, "conv_out", block_in, c->out_ch, AUDIO_KERNEL, &dec->conv_out));
    snprintf(key, sizeof(key), "%sdecoder.", prefix);
    return ltx2_audio_check_all_used(L, key);
}

ltx2_status ltx2_audio_decoder_load(ltx2_context *ctx, const ltx2_st_set *weights, const char *prefix,
                                    const ltx2_audio_vae_config *cfg, ltx2_audio_decoder **out) {
    if (!weights || !prefix || !cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE: NULL argument");
    if (cfg->n_levels < 1 || cfg->n_levels > LTX2_AUDIO_MAX_LEVELS || cfg->ch < 1 || cfg->z_channels < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE: invalid config (levels %d, ch %lld, z %lld)",
                          cfg->n_levels, (long long)cfg->ch, (long long)cfg->z_channels);
    ltx2_audio_decoder *dec = calloc(1, sizeof(*dec));
    if (!dec) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio VAE: decoder");
    dec->cfg = *cfg;
    ltx2_audio_loader L = {.ctx = ctx, .set = weights, .what = "audio VAE"};
    ltx2_status st = load_all(&L, prefix, dec);
    ltx2_audio_loader_free(&L);
    if (st != LTX2_OK) {
        ltx2_audio_decoder_free(dec);
        return st;
    }
    *out = dec;
    return LTX2_OK;
}

ltx2_status ltx2_audio_decoder_out_shape(ltx2_context *ctx, const ltx2_audio_decoder *dec,
                                         const int64_t latent_bctf[4], int64_t mel_bctf[4]) {
    if (!dec || !latent_bctf || !mel_bctf) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE: NULL argument");
    const int64_t B = latent_bctf[0], C = latent_bctf[1], T = latent_bctf[2], F = latent_bctf[3];
    if (B < 1 || T < 1 || F < 1 || C != dec->cfg.z_channels)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "audio VAE: latent [%lld, %lld, %lld, %lld] must be [B, %lld, T', F'] (non-empty)",
                          (long long)B, (long long)C, (long long)T, (long long)F, (long long)dec->cfg.z_channels);
    if (C * F != dec->n_stats)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "audio VAE: latent channels x mel bins = %lld x %lld = %lld, but the per-channel statistics hold %lld",
                          (long long)C, (long long)F, (long long)(C * F), (long long)dec->n_stats);
    int64_t frames = T * AUDIO_LATENT_DOWNSAMPLE - (AUDIO_LATENT_DOWNSAMPLE - 1);
    if (frames < 1) frames = 1;
    mel_bctf[0] = B, mel_bctf[1] = dec->cfg.out_ch, mel_bctf[2] = frames, mel_bctf[3] = dec->cfg.mel_bins;
    return LTX2_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Forward
 * ------------------------------------------------------------------------------------------- */

/* CausalConv2d (causality on time): zero-pad k-1 rows before time 0, (k-1)/2 mel columns each side.
 * The conv3d primitive pads H symmetrically, so one extra zero row goes in front and the last
 * output row (which saw the symmetric pad's trailing zeros) is dropped. 1x1 convs need neither. */
static ltx2_status causal_conv(ltx2_context *ctx, const ltx2_audio_conv *cv, const ltx2_audio_act *x, ltx2_audio_act *y) {
    const ltx2_conv3d_desc *d = &cv->desc;
    if (d->kh == 1) {
        LTX2_TRY(ltx2_audio_act_alloc(ctx, y, x->n, x->t, x->f, d->c_out));
        ltx2_status st = ltx2_cpu_conv3d(ctx, d, x->d, x->n, 1, x->t, x->f, cv->weight, cv->bias, y->d);
        if (st != LTX2_OK) ltx2_audio_act_free(y);
        return st;
    }
    ltx2_audio_act xp = {0}, yp = {0};
    LTX2_TRY(ltx2_audio_act_alloc(ctx, &xp, x->n, x->t + 1, x->f, x->c));
    const int64_t row = x->f * x->c;
    for (int64_t b = 0; b < x->n; b++) {
        memset(xp.d + b * (x->t + 1) * row, 0, (size_t)row * sizeof(float));
        memcpy(xp.d + (b * (x->t + 1) + 1) * row, x->d + b * x->t * row, (size_t)(x->t * row) * sizeof(float));
    }
    ltx2_status st = ltx2_audio_act_alloc(ctx, &yp, x->n, x->t + 1, x->f, d->c_out);
    if (st == LTX2_OK) st = ltx2_cpu_conv3d(ctx, d, xp.d, x->n, 1, x->t + 1, x->f, cv->weight, cv->bias, yp.d);
    ltx2_audio_act_free(&xp);
    if (st == LTX2_OK) st = ltx2_audio_act_alloc(ctx, y, x->n, x->t, x->f, d->c_out);
    if (st == LTX2_OK) {
        const int64_t orow = x->f * d->c_out;
        for (int64_t b = 0; b < x->n; b++)
            memcpy(y->d + b * x->t * orow, yp.d + b * (x->t + 1) * orow, (size_t)(x->t * orow) * sizeof(float));
    }
    ltx2_audio_act_free(&yp);
    return st;
}

/* In place: PixelNorm over channels then SiLU. */
static ltx2_status norm_silu(ltx2_context *ctx, ltx2_audio_act *a) {
    const int64_t rows = a->n * a->t * a->f;
    LTX2_TRY(ltx2_cpu_rms_norm(ctx, a->d, a->d, rows, a->c, NULL, AUDIO_PIXEL_NORM_EPS));
    return ltx2_cpu_silu(ctx, a->d, a->d, rows * a->c);
}

/* ResnetBlock: out = shortcut(x) + conv2(SiLU(PN(conv1(SiLU(PN(x)))))); replaces *x. */
static ltx2_status res_block(ltx2_context *ctx, const ltx2_audio_res *r, ltx2_audio_act *x) {
    ltx2_audio_act h = {0}, h1 = {0}, h2 = {0}, sc = {0};
    LTX2_TRY(ltx2_audio_act_alloc(ctx, &h, x->n, x->t, x->f, x->c));
    memcpy(h.d, x->d, (size_t)ltx2_audio_act_numel(x) * sizeof(float));
    ltx2_status st = norm_silu(ctx, &h);
    if (st == LTX2_OK) st = causal_conv(ctx, &r->conv1, &h, &h1);
    ltx2_audio_act_free(&h);
    if (st == LTX2_OK) st = norm_silu(ctx, &h1);
    if (st == LTX2_OK) st = causal_conv(ctx, &r->conv2, &h1, &h2);
    ltx2_audio_act_free(&h1);
    if (st == LTX2_OK && r->c_in != r->c_out) {
        st = causal_conv(ctx, &r->nin, x, &sc);
        if (st == LTX2_OK) {
            ltx2_audio_act_free(x);
            *x = sc;
        }
    }
    if (st != LTX2_OK) {
        ltx2_audio_act_free(&h2);
        return st;
    }
    const int64_t n = ltx2_audio_act_numel(x);
    for (int64_t i = 0; i < n; i++) x->d[i] += h2.d[i];
    ltx2_audio_act_free(&h2);
    return LTX2_OK;
}

/* Upsample: nearest x2 on time and mel, causal conv, drop the first time row (2T -> 2T - 1). */
static ltx2_status upsample(ltx2_context *ctx, const ltx2_audio_conv *cv, ltx2_audio_act *x) {
    ltx2_audio_act u = {0}, y = {0};
    LTX2_TRY(ltx2_audio_act_alloc(ctx, &u, x->n, 2 * x->t, 2 * x->f, x->c));
    for (int64_t b = 0; b < x->n; b++)
        for (int64_t t = 0; t < u.t; t++)
            for (int64_t f = 0; f < u.f; f++)
                memcpy(u.d + ((b * u.t + t) * u.f + f) * u.c, x->d + ((b * x->t + t / 2) * x->f + f / 2) * x->c,
                       (size_t)x->c * sizeof(float));
    ltx2_status st = causal_conv(ctx, cv, &u, &y);
    ltx2_audio_act_free(&u);
    if (st != LTX2_OK) return st;
    ltx2_audio_act_free(x);
    LTX2_TRY(ltx2_audio_act_alloc(ctx, x, y.n, y.t - 1, y.f, y.c));
    const int64_t row = y.f * y.c;
    for (int64_t b = 0; b < y.n; b++)
        memcpy(x->d + b * x->t * row, y.d + (b * y.t + 1) * row, (size_t)(x->t * row) * sizeof(float));
    ltx2_audio_act_free(&y);
    return LTX2_OK;
}

static ltx2_status decode_body(ltx2_context *ctx, const ltx2_audio_decoder *dec, ltx2_audio_act *h, ltx2_audio_dump_fn dump,
                               void *user) {
    char name[96];
    ltx2_audio_act y = {0};
    LTX2_TRY(causal_conv(ctx, &dec->conv_in, h, &y));
    ltx2_audio_act_free(h);
    *h = y;
    ltx2_audio_act_dump(dump, user, "decoder.conv_in.out", h);
    LTX2_TRY(res_block(ctx, &dec->mid1, h));
    ltx2_audio_act_dump(dump, user, "decoder.mid.block_1.out", h);
    LTX2_TRY(res_block(ctx, &dec->mid2, h));
    ltx2_audio_act_dump(dump, user, "decoder.mid.block_2.out", h);
    for (int l = dec->cfg.n_levels - 1; l >= 0; l--) {
        const ltx2_audio_level *lv = &dec->levels[l];
        for (int b = 0; b < lv->n_blocks; b++) {
            LTX2_TRY(res_block(ctx, &lv->blocks[b], h));
            snprintf(name, sizeof(name), "decoder.up.%d.block.%d.out", l, b);
            ltx2_audio_act_dump(dump, user, name, h);
        }
        if (lv->has_upsample) {
            LTX2_TRY(upsample(ctx, &lv->upsample, h));
            snprintf(name, sizeof(name), "decoder.up.%d.upsample.out", l);
            ltx2_audio_act_dump(dump, user, name, h);
        }
    }
    LTX2_TRY(norm_silu(ctx, h));
    LTX2_TRY(causal_conv(ctx, &dec->conv_out, h, &y));
    ltx2_audio_act_free(h);
    *h = y;
    ltx2_audio_act_dump(dump, user, "decoder.conv_out.out", h);
    return LTX2_OK;
}

ltx2_status ltx2_audio_decoder_decode(ltx2_context *ctx, const ltx2_audio_decoder *dec, const ltx2_tensor *latent,
                                      ltx2_tensor *mel, ltx2_audio_dump_fn dump, void *user) {
    if (!dec || !latent || !mel) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE: NULL argument");
    if (latent->ndim != 4 || latent->dtype != LTX2_F32 || latent->device != LTX2_DEVICE_CPU ||
        !ltx2_tensor_is_contiguous(latent))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE: latent must be a contiguous f32 CPU [B, C, T', F'] tensor");
    int64_t ms[4];
    LTX2_TRY(ltx2_audio_decoder_out_shape(ctx, dec, latent->shape, ms));
    bool ok = mel->ndim == 4 && mel->dtype == LTX2_F32 && mel->device == LTX2_DEVICE_CPU && ltx2_tensor_is_contiguous(mel);
    for (int i = 0; ok && i < 4; i++) ok = mel->shape[i] == ms[i];
    char a[96], b[96];
    if (!ok)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "audio VAE: mel output is %s, expected a contiguous f32 CPU %s",
                          ltx2_shape_str(mel->shape, mel->ndim, a, sizeof(a)), ltx2_shape_str(ms, 4, b, sizeof(b)));
    const int64_t B = latent->shape[0], C = latent->shape[1], T = latent->shape[2], F = latent->shape[3];
    ltx2_audio_act h = {0};
    LTX2_TRY(ltx2_audio_act_alloc(ctx, &h, B, T, F, C));
    /* patchify "b c t f -> b t (c f)", un-normalize feature c*F + f, unpatchify (torch: x*std + mean). */
    const float *z = latent->data;
    for (int64_t bb = 0; bb < B; bb++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t t = 0; t < T; t++)
                for (int64_t f = 0; f < F; f++) {
                    const float v = z[((bb * C + c) * T + t) * F + f] * dec->std_of_means[c * F + f];
                    h.d[((bb * T + t) * F + f) * C + c] = v + dec->mean_of_means[c * F + f];
                }
    ltx2_audio_act_dump(dump, user, "decoder.un_normalize.out", &h);
    ltx2_status st = decode_body(ctx, dec, &h, dump, user);
    if (st == LTX2_OK) {
        /* Crop to the target then zero-pad what is missing (ltx-core _adjust_output_shape). */
        float *o = mel->data;
        for (int64_t bb = 0; bb < ms[0]; bb++)
            for (int64_t c = 0; c < ms[1]; c++)
                for (int64_t t = 0; t < ms[2]; t++)
                    for (int64_t f = 0; f < ms[3]; f++)
                        o[((bb * ms[1] + c) * ms[2] + t) * ms[3] + f] =
                            (c < h.c && t < h.t && f < h.f) ? h.d[((bb * h.t + t) * h.f + f) * h.c + c] : 0.0f;
        if (dump) dump("decoder.out", mel, user);
    }
    ltx2_audio_act_free(&h);
    return st;
}
