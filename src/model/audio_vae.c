/* Audio VAE decoder: loading, output shape, placement and the decode entry (see audio_vae.h); the
 * forward is audio_vae_decode.c. Reference: ltx-core 1.0.0 model/audio_vae/audio_vae.py
 * AudioDecoder, resnet.py ResnetBlock, upsample.py Upsample, causal_conv_2d.py CausalConv2d
 * (causality_axis "height" = time), ops.py PerChannelStatistics. */
#include "model/audio_vae.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "cpu/cpu_ops.h"
#include "model/audio_weights.h"

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

/* CausalConv2d (causality on time) as a conv3d over [B, time, 1, mel, C]: kernel (k, 1, k), k-1
 * zero frames in front, (k-1)/2 zero mel columns each side. The torch weight [c_out, c_in, k, k]
 * is [c_out, c_in, k, 1, k] in memory, so it packs as is. */
static ltx2_conv3d_desc causal_desc(int64_t c_in, int64_t c_out, int64_t kt, int64_t kw) {
    return (ltx2_conv3d_desc){.c_in = c_in, .c_out = c_out, .kt = kt, .kh = 1, .kw = kw, .st = 1, .sh = 1, .sw = 1,
                              .tpad = kt > 1 ? LTX2_CONV_TPAD_CAUSAL_ZEROS : LTX2_CONV_TPAD_NONE,
                              .spad = LTX2_CONV_SPAD_ZEROS};
}

/* c from a torch-layout weight w ([c_out, c_in, kt, 1, kw] floats) and bias. */
static ltx2_status pack_conv(ltx2_context *ctx, const ltx2_conv3d_desc *d, const float *w, const float *bias,
                             const char *what, ltx2_audio_conv *c) {
    c->desc = *d;
    c->weight = malloc((size_t)ltx2_conv3d_packed_numel(d) * sizeof(float));
    c->bias = malloc((size_t)d->c_out * sizeof(float));
    if (!c->weight || !c->bias) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio VAE: packed %s", what);
    memcpy(c->bias, bias, (size_t)d->c_out * sizeof(float));
    return ltx2_conv3d_pack_weight(ctx, d, w, c->weight);
}

/* Loads `<prefix>decoder.<path>.conv.{weight,bias}` ([c_out, c_in, k, k], [c_out]). */
static ltx2_status load_torch_conv(ltx2_audio_loader *L, const char *prefix, const char *path, int64_t c_in,
                                   int64_t c_out, int64_t k, float **w, float **b) {
    char key[2 * AUDIO_KEY_CAP]; /* prefix + path + suffix, each below AUDIO_KEY_CAP */
    const int64_t wshape[4] = {c_out, c_in, k, k};
    snprintf(key, sizeof(key), "%sdecoder.%s.conv.weight", prefix, path);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 4, wshape, w));
    snprintf(key, sizeof(key), "%sdecoder.%s.conv.bias", prefix, path);
    return ltx2_audio_load_f32(L, key, 1, &c_out, b);
}

static ltx2_status load_conv(ltx2_audio_loader *L, const char *prefix, const char *path, int64_t c_in, int64_t c_out,
                             int64_t k, ltx2_audio_conv *c) {
    memset(c, 0, sizeof(*c));
    float *w = NULL, *b = NULL;
    ltx2_status st = load_torch_conv(L, prefix, path, c_in, c_out, k, &w, &b);
    const ltx2_conv3d_desc d = causal_desc(c_in, c_out, k, k);
    if (st == LTX2_OK) st = pack_conv(L->ctx, &d, w, b, path, c);
    free(w);
    free(b);
    return st;
}

/* Upsample = nearest x2 on time and mel, the causal 3x3 conv, then the first time row dropped.
 * Output row 2p + a, column 2q + e of the conv over the upsampled grid reads, through the nearest
 * repeat, input rows p-1..p and columns q-1..q+1 only, with the 3x3 taps that land on the same
 * input element summed (time: a = 0 takes W[0]+W[1] on row p-1 and W[2] on row p, a = 1 W[0] and
 * W[1]+W[2]; mel: e = 0 takes W[0] on q-1 and W[1]+W[2] on q, e = 1 W[0]+W[1] on q and W[2] on
 * q+1), and the upsampled grid's zero padding is the input grid's (one zero row in front, a zero
 * column each side). So the block is one (2, 1, 3) conv to 4 * c_out "phase" channels
 * o*4 + a*2 + e on the input grid, then depth-to-space (2, 1, 2) dropping the first frame: a
 * quarter of the upsampled grid's positions and 2/3 of the taps, with the weight sums rounded
 * once in fp32. */
static const int AUDIO_UP_TIME_TAPS[2][2][2] = {{{0, 1}, {2, -1}}, {{0, -1}, {1, 2}}}; /* [a][row p-1+r] */
static const int AUDIO_UP_MEL_TAPS[2][3][2] = {{{0, -1}, {1, 2}, {-1, -1}}, {{-1, -1}, {0, 1}, {2, -1}}};

static ltx2_status load_upsample(ltx2_audio_loader *L, const char *prefix, const char *path, int64_t c,
                                 ltx2_audio_conv *out) {
    memset(out, 0, sizeof(*out));
    float *w = NULL, *b = NULL;
    LTX2_TRY(load_torch_conv(L, prefix, path, c, c, AUDIO_KERNEL, &w, &b));
    const int64_t co = 4 * c, taps = 2 * 3;
    float *pw = calloc((size_t)(co * c * taps), sizeof(float)), *pb = malloc((size_t)co * sizeof(float));
    ltx2_status st = pw && pb ? LTX2_OK : LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "audio VAE: %s phase weights", path);
    for (int64_t o = 0; st == LTX2_OK && o < c; o++)
        for (int a = 0; a < 2; a++)
            for (int e = 0; e < 2; e++) {
                const int64_t op = o * 4 + a * 2 + e;
                pb[op] = b[o];
                for (int64_t i = 0; i < c; i++)
                    for (int r = 0; r < 2; r++)
                        for (int q = 0; q < 3; q++) {
                            float sum = 0.0f;
                            for (int u = 0; u < 2 && AUDIO_UP_TIME_TAPS[a][r][u] >= 0; u++)
                                for (int v = 0; v < 2 && AUDIO_UP_MEL_TAPS[e][q][v] >= 0; v++)
                                    sum += w[((o * c + i) * 3 + AUDIO_UP_TIME_TAPS[a][r][u]) * 3 +
                                             AUDIO_UP_MEL_TAPS[e][q][v]];
                            pw[((op * c + i) * 2 + r) * 3 + q] = sum;
                        }
            }
    const ltx2_conv3d_desc d = causal_desc(c, co, 2, 3);
    if (st == LTX2_OK) st = pack_conv(L->ctx, &d, pw, pb, path, out);
    free(w);
    free(b);
    free(pw);
    free(pb);
    return st;
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
    ltx2_audio_dec_device_free(dec->placed);
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
            LTX2_TRY(load_upsample(L, prefix, path, block_in, &lv->upsample));
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
    mel_bctf[0] = B, mel_bctf[1] = dec->cfg.out_ch, mel_bctf[2] = ltx2_audio_decoder_mel_frames(T);
    mel_bctf[3] = dec->cfg.mel_bins;
    return LTX2_OK;
}

int64_t ltx2_audio_decoder_mel_frames(int64_t latent_frames) {
    const int64_t frames = latent_frames * AUDIO_LATENT_DOWNSAMPLE - (AUDIO_LATENT_DOWNSAMPLE - 1);
    return frames < 1 ? 1 : frames;
}

ltx2_status ltx2_audio_decoder_place(ltx2_context *ctx, ltx2_audio_decoder *dec, const ltx2_backend *be) {
    if (!dec) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE place: NULL decoder");
    ltx2_audio_dec_device *dv = NULL;
    if (be && be->device != LTX2_DEVICE_CPU) LTX2_TRY(ltx2_audio_dec_device_create(ctx, be, dec, &dv));
    ltx2_audio_dec_device_free(dec->placed);
    dec->placed = dv;
    return LTX2_OK;
}

ltx2_status ltx2_audio_decoder_decode(ltx2_context *ctx, const ltx2_audio_decoder *dec, const ltx2_tensor *latent,
                                      ltx2_tensor *mel, ltx2_audio_dump_fn dump, void *user) {
    if (!dec) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE: NULL decoder");
    if (dec->placed) return ltx2_audio_dec_device_decode(ctx, dec->placed, latent, mel, dump, user);
    /* the decoder's one forward on the CPU backend, over the host weights in place */
    ltx2_audio_dec_device *dv = NULL;
    LTX2_TRY(ltx2_audio_dec_device_create(ctx, ltx2_backend_cpu(), dec, &dv));
    const ltx2_status st = ltx2_audio_dec_device_decode(ctx, dv, latent, mel, dump, user);
    ltx2_audio_dec_device_free(dv);
    return st;
}
