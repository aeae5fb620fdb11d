/* Vocoders (see vocoder.h): loading, shapes, placement and the run's dispatch; the forward is
 * vocoder_forward.c. Reference: ltx-core 1.0.0 model/audio_vae/vocoder.py (Vocoder, AMPBlock1,
 * Activation1d, SnakeBeta, UpSample1d, DownSample1d, MelSTFT, VocoderWithBWE) and resnet.py
 * ResBlock1. Weights are held packed in f32 (conv1d_desc.h). */
#include "model/vocoder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/audio_weights.h"

/* SnakeBeta's epsilon in 1 / (beta + eps). */
#define VOC_SNAKE_EPS 1e-9f
/* ltx-core UpSample1d(window_type="hann"): torchaudio-style resampler parameters. */
#define VOC_HANN_ROLLOFF 0.99f
#define VOC_HANN_LOWPASS_WIDTH 6
#define VOC_KEY_CAP 256
#define VOC_PI 3.14159265358979323846

/* ---------------------------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------------------------- */

static ltx2_status load_conv(ltx2_audio_loader *L, const char *path, int64_t c_in, int64_t c_out, int64_t k,
                             int64_t dilation, bool bias, ltx2_voc_conv *c) {
    char key[VOC_KEY_CAP + 32];
    memset(c, 0, sizeof(*c));
    const int64_t pad = dilation * (k - 1) / 2;
    c->desc = (ltx2_conv1d_desc){.c_in = c_in, .c_out = c_out, .k = k, .stride = 1, .dilation = dilation,
                                 .pad_left = pad, .pad_right = pad};
    const int64_t ws[3] = {c_out, c_in, k};
    float *w = NULL;
    snprintf(key, sizeof(key), "%s.weight", path);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 3, ws, &w));
    c->weight = malloc((size_t)(k * c_in * c_out) * sizeof(float));
    if (!c->weight) {
        free(w);
        return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "vocoder: packed %s", key);
    }
    ltx2_status st = ltx2_conv1d_pack_weight(L->ctx, &c->desc, w, c->weight);
    free(w);
    if (st != LTX2_OK || !bias) return st;
    snprintf(key, sizeof(key), "%s.bias", path);
    return ltx2_audio_load_f32(L, key, 1, &c_out, &c->bias);
}

static ltx2_status load_convt(ltx2_audio_loader *L, const char *path, int64_t c_in, int64_t c_out, int64_t k,
                              int64_t stride, ltx2_voc_convt *c) {
    char key[VOC_KEY_CAP + 32];
    memset(c, 0, sizeof(*c));
    c->desc = (ltx2_convt1d_desc){.c_in = c_in, .c_out = c_out, .k = k, .stride = stride, .padding = (k - stride) / 2};
    const int64_t ws[3] = {c_in, c_out, k};
    float *w = NULL;
    snprintf(key, sizeof(key), "%s.weight", path);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 3, ws, &w));
    c->weight = malloc((size_t)(k * c_in * c_out) * sizeof(float));
    if (!c->weight) {
        free(w);
        return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "vocoder: packed %s", key);
    }
    ltx2_status st = ltx2_convt1d_pack_weight(L->ctx, &c->desc, w, c->weight);
    free(w);
    if (st != LTX2_OK) return st;
    snprintf(key, sizeof(key), "%s.bias", path);
    return ltx2_audio_load_f32(L, key, 1, &c_out, &c->bias);
}

static ltx2_status load_act(ltx2_audio_loader *L, const char *path, int64_t c, ltx2_voc_act *a) {
    char key[VOC_KEY_CAP + 32];
    memset(a, 0, sizeof(*a));
    a->c = c;
    const int64_t fs[3] = {1, 1, LTX2_VOCODER_AA_TAPS};
    snprintf(key, sizeof(key), "%s.act.alpha", path);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 1, &c, &a->alpha_exp));
    snprintf(key, sizeof(key), "%s.act.beta", path);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 1, &c, &a->inv_beta));
    for (int64_t i = 0; i < c; i++) {
        a->alpha_exp[i] = expf(a->alpha_exp[i]);
        a->inv_beta[i] = 1.0f / (expf(a->inv_beta[i]) + VOC_SNAKE_EPS);
    }
    snprintf(key, sizeof(key), "%s.upsample.filter", path);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 3, fs, &a->up_filter));
    snprintf(key, sizeof(key), "%s.downsample.lowpass.filter", path);
    return ltx2_audio_load_f32(L, key, 3, fs, &a->down_filter);
}

static void act_params_free(ltx2_voc_act *a) {
    free(a->alpha_exp);
    free(a->inv_beta);
    free(a->up_filter);
    free(a->down_filter);
}

static void conv_free(ltx2_voc_conv *c) {
    free(c->weight);
    free(c->bias);
}

static void gen_free(ltx2_voc_gen *g) {
    conv_free(&g->conv_pre);
    conv_free(&g->conv_post);
    for (int i = 0; i < LTX2_VOCODER_MAX_UPS; i++) {
        free(g->ups[i].weight);
        free(g->ups[i].bias);
    }
    if (g->resblocks) {
        for (int r = 0; r < g->cfg.n_ups * g->cfg.n_kernels; r++)
            for (int m = 0; m < LTX2_VOCODER_DILATIONS; m++) {
                conv_free(&g->resblocks[r].convs1[m]);
                conv_free(&g->resblocks[r].convs2[m]);
                act_params_free(&g->resblocks[r].acts1[m]);
                act_params_free(&g->resblocks[r].acts2[m]);
            }
    }
    free(g->resblocks);
    act_params_free(&g->act_post);
}

static ltx2_status load_gen(ltx2_audio_loader *L, const char *prefix, const ltx2_vocoder_gen_config *cfg,
                            ltx2_voc_gen *g) {
    char p[VOC_KEY_CAP];
    g->cfg = *cfg;
    const int64_t c0 = cfg->initial_channel;
    snprintf(p, sizeof(p), "%sconv_pre", prefix);
    LTX2_TRY(load_conv(L, p, LTX2_VOCODER_IN_CHANNELS, c0, LTX2_VOCODER_PRE_POST_TAPS, 1, true, &g->conv_pre));
    g->resblocks = calloc((size_t)(cfg->n_ups * cfg->n_kernels), sizeof(*g->resblocks));
    if (!g->resblocks) return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "vocoder: resblocks");
    for (int i = 0; i < cfg->n_ups; i++) {
        const int64_t ci = c0 >> i, co = c0 >> (i + 1);
        snprintf(p, sizeof(p), "%sups.%d", prefix, i);
        LTX2_TRY(load_convt(L, p, ci, co, cfg->up_kernels[i], cfg->up_rates[i], &g->ups[i]));
        for (int j = 0; j < cfg->n_kernels; j++) {
            const int r = i * cfg->n_kernels + j;
            ltx2_voc_resblock *rb = &g->resblocks[r];
            rb->c = co;
            for (int m = 0; m < LTX2_VOCODER_DILATIONS; m++) {
                snprintf(p, sizeof(p), "%sresblocks.%d.convs1.%d", prefix, r, m);
                LTX2_TRY(load_conv(L, p, co, co, cfg->rb_kernels[j], cfg->rb_dilations[j][m], true, &rb->convs1[m]));
                snprintf(p, sizeof(p), "%sresblocks.%d.convs2.%d", prefix, r, m);
                LTX2_TRY(load_conv(L, p, co, co, cfg->rb_kernels[j], 1, true, &rb->convs2[m]));
                if (cfg->amp) {
                    snprintf(p, sizeof(p), "%sresblocks.%d.acts1.%d", prefix, r, m);
                    LTX2_TRY(load_act(L, p, co, &rb->acts1[m]));
                    snprintf(p, sizeof(p), "%sresblocks.%d.acts2.%d", prefix, r, m);
                    LTX2_TRY(load_act(L, p, co, &rb->acts2[m]));
                }
            }
        }
    }
    const int64_t cf = c0 >> cfg->n_ups;
    if (cfg->amp) {
        snprintf(p, sizeof(p), "%sact_post", prefix);
        LTX2_TRY(load_act(L, p, cf, &g->act_post));
    }
    snprintf(p, sizeof(p), "%sconv_post.bias", prefix);
    bool bias = cfg->bias_at_final == 1 || (cfg->bias_at_final == -1 && ltx2_audio_has(L, p));
    if (cfg->bias_at_final == -1 && !bias)
        return LTX2_ERROR(L->ctx, LTX2_ERR_NOT_FOUND,
                          "vocoder: missing tensor %s (use_bias_at_final is absent, so ltx-core expects a bias)", p);
    snprintf(p, sizeof(p), "%sconv_post", prefix);
    return load_conv(L, p, cf, 2, LTX2_VOCODER_PRE_POST_TAPS, 1, bias, &g->conv_post);
}

void ltx2_vocoder_free(ltx2_vocoder *voc) {
    if (!voc) return;
    ltx2_vocoder_device_free(voc->placed);
    gen_free(&voc->main);
    gen_free(&voc->bwe);
    free(voc->mel_basis);
    conv_free(&voc->stft);
    free(voc->resample_filter);
    free(voc);
}

static int64_t resampler_width(void) {
    return (int64_t)ceil((double)VOC_HANN_LOWPASS_WIDTH / (double)VOC_HANN_ROLLOFF);
}

int64_t ltx2_vocoder_resampler_taps(const ltx2_vocoder_config *cfg) {
    return 2 * resampler_width() * (cfg->bwe_out_rate / cfg->bwe_in_rate) + 1;
}

/* ltx-core UpSample1d(window_type="hann"), in fp32 as torch computes it. */
static ltx2_status make_resampler(ltx2_context *ctx, ltx2_vocoder *v) {
    const int64_t r = v->cfg.bwe_out_rate / v->cfg.bwe_in_rate;
    const int64_t width = resampler_width();
    v->resample_ratio = r;
    v->resample_width = width;
    v->resample_taps = ltx2_vocoder_resampler_taps(&v->cfg);
    v->resample_filter = malloc((size_t)v->resample_taps * sizeof(float));
    if (!v->resample_filter) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "vocoder: resampler filter");
    const float pi = (float)VOC_PI, lw = (float)VOC_HANN_LOWPASS_WIDTH;
    for (int64_t n = 0; n < v->resample_taps; n++) {
        const float t = ((float)n / (float)r - (float)width) * VOC_HANN_ROLLOFF;
        const float tc = t < -lw ? -lw : (t > lw ? lw : t);
        const float cw = cosf(tc * pi / lw / 2.0f);
        const float sinc = t == 0.0f ? 1.0f : sinf(pi * t) / (pi * t);
        v->resample_filter[n] = sinc * (cw * cw) * VOC_HANN_ROLLOFF / (float)r;
    }
    return LTX2_OK;
}

/* forward_basis [2F, 1, n_fft] as the block-diagonal conv1d of both stereo channels (vocoder.h). */
static ltx2_status load_stft(ltx2_audio_loader *L, const char *key, const int64_t bs[3], const ltx2_vocoder_config *cfg,
                             ltx2_voc_conv *c) {
    const int64_t nf2 = bs[0], nfft = bs[2];
    memset(c, 0, sizeof(*c));
    c->desc = (ltx2_conv1d_desc){.c_in = 2, .c_out = 2 * nf2, .k = nfft, .stride = cfg->bwe_hop, .dilation = 1,
                                 .pad_left = nfft - cfg->bwe_hop, .pad_right = 0};
    float *basis = NULL;
    LTX2_TRY(ltx2_audio_load_f32(L, key, 3, bs, &basis));
    float *w = calloc((size_t)(2 * nf2 * 2 * nfft), sizeof(float)); /* torch layout [c_out, c_in, k] */
    c->weight = malloc((size_t)(2 * nf2 * 2 * nfft) * sizeof(float));
    ltx2_status st = LTX2_OK;
    if (!w || !c->weight) st = LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "vocoder: STFT conv weight");
    for (int64_t s = 0; st == LTX2_OK && s < 2; s++)
        for (int64_t f = 0; f < nf2; f++)
            memcpy(w + ((s * nf2 + f) * 2 + s) * nfft, basis + f * nfft, (size_t)nfft * sizeof(float));
    if (st == LTX2_OK) st = ltx2_conv1d_pack_weight(L->ctx, &c->desc, w, c->weight);
    free(w);
    free(basis);
    return st;
}

static ltx2_status load_all(ltx2_audio_loader *L, const char *prefix, ltx2_vocoder *v) {
    char p[VOC_KEY_CAP];
    if (!v->cfg.bwe) {
        LTX2_TRY(load_gen(L, prefix, &v->cfg.main, &v->main));
        return ltx2_audio_check_all_used(L, prefix);
    }
    snprintf(p, sizeof(p), "%svocoder.", prefix);
    LTX2_TRY(load_gen(L, p, &v->cfg.main, &v->main));
    snprintf(p, sizeof(p), "%sbwe_generator.", prefix);
    LTX2_TRY(load_gen(L, p, &v->cfg.bwe_gen, &v->bwe));
    const int64_t nf = v->cfg.bwe_n_fft / 2 + 1;
    const int64_t ms[2] = {v->cfg.bwe_mels, nf}, bs[3] = {2 * nf, 1, v->cfg.bwe_n_fft};
    if (v->cfg.bwe_mels * 2 != LTX2_VOCODER_IN_CHANNELS)
        return LTX2_ERROR(L->ctx, LTX2_ERR_UNSUPPORTED, "vocoder: BWE num_mels %lld, the generator takes 2 x %d",
                          (long long)v->cfg.bwe_mels, LTX2_VOCODER_IN_CHANNELS / 2);
    snprintf(p, sizeof(p), "%smel_stft.mel_basis", prefix);
    LTX2_TRY(ltx2_audio_load_f32(L, p, 2, ms, &v->mel_basis));
    snprintf(p, sizeof(p), "%smel_stft.stft_fn.forward_basis", prefix);
    LTX2_TRY(load_stft(L, p, bs, &v->cfg, &v->stft));
    float *unused = NULL; /* checked and marked used; the reference never applies it */
    snprintf(p, sizeof(p), "%smel_stft.stft_fn.inverse_basis", prefix);
    LTX2_TRY(ltx2_audio_load_f32(L, p, 3, bs, &unused));
    free(unused);
    LTX2_TRY(make_resampler(L->ctx, v));
    return ltx2_audio_check_all_used(L, prefix);
}

ltx2_status ltx2_vocoder_load(ltx2_context *ctx, const ltx2_st_set *weights, const char *prefix,
                              const ltx2_vocoder_config *cfg, ltx2_vocoder **out) {
    if (!weights || !prefix || !cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder: NULL argument");
    if (cfg->main.n_ups < 1 || cfg->main.n_ups > LTX2_VOCODER_MAX_UPS || cfg->main.n_kernels < 1 ||
        cfg->main.n_kernels > LTX2_VOCODER_MAX_KERNELS ||
        (cfg->bwe && (cfg->bwe_gen.n_ups < 1 || cfg->bwe_gen.n_ups > LTX2_VOCODER_MAX_UPS || cfg->bwe_gen.n_kernels < 1 ||
                      cfg->bwe_gen.n_kernels > LTX2_VOCODER_MAX_KERNELS || cfg->bwe_in_rate < 1 || cfg->bwe_hop < 1)))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder: invalid config (use ltx2_vocoder_config_parse)");
    ltx2_vocoder *v = calloc(1, sizeof(*v));
    if (!v) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "vocoder");
    v->cfg = *cfg;
    ltx2_audio_loader L = {.ctx = ctx, .set = weights, .what = "vocoder"};
    ltx2_status st = load_all(&L, prefix, v);
    ltx2_audio_loader_free(&L);
    if (st != LTX2_OK) {
        ltx2_vocoder_free(v);
        return st;
    }
    *out = v;
    return LTX2_OK;
}

int64_t ltx2_vocoder_sample_rate(const ltx2_vocoder *voc) {
    return voc->cfg.bwe ? voc->cfg.bwe_out_rate : voc->cfg.main.sample_rate;
}

static int64_t gen_factor(const ltx2_vocoder_gen_config *g) {
    int64_t f = 1;
    for (int i = 0; i < g->n_ups; i++) f *= g->up_rates[i];
    return f;
}

ltx2_status ltx2_vocoder_out_shape(ltx2_context *ctx, const ltx2_vocoder *voc, const int64_t mel_bctf[4],
                                   int64_t wav_bcl[3]) {
    if (!voc || !mel_bctf || !wav_bcl) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder: NULL argument");
    if (mel_bctf[0] < 1 || mel_bctf[1] != 2 || mel_bctf[2] < 1 || mel_bctf[1] * mel_bctf[3] != LTX2_VOCODER_IN_CHANNELS)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "vocoder: mel [%lld, %lld, %lld, %lld] must be [B, 2, T, %d]",
                          (long long)mel_bctf[0], (long long)mel_bctf[1], (long long)mel_bctf[2], (long long)mel_bctf[3],
                          LTX2_VOCODER_IN_CHANNELS / 2);
    int64_t n = mel_bctf[2] * gen_factor(&voc->cfg.main);
    if (voc->cfg.bwe) n = n * voc->cfg.bwe_out_rate / voc->cfg.bwe_in_rate;
    wav_bcl[0] = mel_bctf[0], wav_bcl[1] = 2, wav_bcl[2] = n;
    return LTX2_OK;
}

ltx2_status ltx2_vocoder_place(ltx2_context *ctx, ltx2_vocoder *voc, const ltx2_backend *be) {
    if (!voc) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder place: NULL vocoder");
    ltx2_vocoder_device *dv = NULL;
    if (be && be->device != LTX2_DEVICE_CPU) LTX2_TRY(ltx2_vocoder_device_create(ctx, be, voc, &dv));
    ltx2_vocoder_device_free(voc->placed);
    voc->placed = dv;
    return LTX2_OK;
}

ltx2_status ltx2_vocoder_run(ltx2_context *ctx, const ltx2_vocoder *voc, const ltx2_tensor *mel, ltx2_tensor *wav,
                             ltx2_audio_dump_fn dump, void *user) {
    if (!voc) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder: NULL vocoder");
    if (voc->placed) return ltx2_vocoder_device_run(ctx, voc->placed, mel, wav, dump, user);
    /* the one forward on the CPU backend, over the host weights in place */
    ltx2_vocoder_device *dv = NULL;
    LTX2_TRY(ltx2_vocoder_device_create(ctx, ltx2_backend_cpu(), voc, &dv));
    const ltx2_status st = ltx2_vocoder_device_run(ctx, dv, mel, wav, dump, user);
    ltx2_vocoder_device_free(dv);
    return st;
}
