/* Vocoders on the CPU (see vocoder.h). Reference: ltx-core 1.0.0 model/audio_vae/vocoder.py
 * (Vocoder, AMPBlock1, Activation1d, SnakeBeta, UpSample1d, DownSample1d, MelSTFT, VocoderWithBWE)
 * and resnet.py ResBlock1. Activations are [B, L, C] fp32 buffers owned by the forward. */
#include "model/vocoder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/audio_weights.h"

/* HiFi-GAN LeakyReLU slope inside the network (ltx-core resnet.py LRELU_SLOPE) and the slope of
 * the final nn.LeakyReLU() act_post, which is torch's default, not LRELU_SLOPE. */
#define VOC_LRELU_SLOPE 0.1f
#define VOC_LRELU_POST_SLOPE 0.01f
/* SnakeBeta's epsilon in 1 / (beta + eps). */
#define VOC_SNAKE_EPS 1e-9f
#define VOC_CONV_PRE_K 7
#define VOC_CONV_POST_K 7
/* Log-mel floor of MelSTFT.mel_spectrogram. */
#define VOC_MEL_FLOOR 1e-5f
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
    ltx2_status st = ltx2_cpu_conv1d_pack_weight(L->ctx, &c->desc, w, c->weight);
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
    ltx2_status st = ltx2_cpu_convt1d_pack_weight(L->ctx, &c->desc, w, c->weight);
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
    LTX2_TRY(load_conv(L, p, LTX2_VOCODER_IN_CHANNELS, c0, VOC_CONV_PRE_K, 1, true, &g->conv_pre));
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
    return load_conv(L, p, cf, 2, VOC_CONV_POST_K, 1, bias, &g->conv_post);
}

void ltx2_vocoder_free(ltx2_vocoder *voc) {
    if (!voc) return;
    gen_free(&voc->main);
    gen_free(&voc->bwe);
    free(voc->mel_basis);
    free(voc->stft_basis);
    free(voc->resample_filter);
    free(voc);
}

/* ltx-core UpSample1d(window_type="hann"), in fp32 as torch computes it. */
static ltx2_status make_resampler(ltx2_context *ctx, ltx2_vocoder *v) {
    const int64_t r = v->cfg.bwe_out_rate / v->cfg.bwe_in_rate;
    const int64_t width = (int64_t)ceil((double)VOC_HANN_LOWPASS_WIDTH / (double)VOC_HANN_ROLLOFF);
    v->resample_ratio = r;
    v->resample_width = width;
    v->resample_taps = 2 * width * r + 1;
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
    LTX2_TRY(ltx2_audio_load_f32(L, p, 3, bs, &v->stft_basis));
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

/* ---------------------------------------------------------------------------------------------
 * Forward
 * ------------------------------------------------------------------------------------------- */

typedef struct seq {
    float *d;
    int64_t n, l, c; /* [n, l, c] */
} seq;

static ltx2_status seq_alloc(ltx2_context *ctx, seq *s, int64_t n, int64_t l, int64_t c) {
    s->n = n, s->l = l, s->c = c;
    s->d = malloc((size_t)(n * l * c > 0 ? n * l * c : 1) * sizeof(float));
    if (!s->d)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "vocoder: activation [%lld, %lld, %lld]", (long long)n, (long long)l,
                          (long long)c);
    return LTX2_OK;
}

static void seq_free(seq *s) {
    free(s->d);
    s->d = NULL;
}

static void seq_replace(seq *dst, seq *src) {
    free(dst->d);
    *dst = *src;
    src->d = NULL;
}

/* Dumps [n, l, c] as the reference's [n, c, l]. */
static void dump_seq(ltx2_audio_dump_fn dump, void *user, const char *prefix, const char *name, const seq *s) {
    if (!dump) return;
    float *tmp = malloc((size_t)(s->n * s->l * s->c) * sizeof(float));
    if (!tmp) return; /* diagnostics only */
    for (int64_t b = 0; b < s->n; b++)
        for (int64_t t = 0; t < s->l; t++)
            for (int64_t c = 0; c < s->c; c++) tmp[(b * s->c + c) * s->l + t] = s->d[(b * s->l + t) * s->c + c];
    const int64_t shape[3] = {s->n, s->c, s->l};
    ltx2_tensor v = ltx2_tensor_make(tmp, LTX2_F32, 3, shape);
    char full[160];
    snprintf(full, sizeof(full), "%s.%s", prefix, name);
    dump(full, &v, user);
    free(tmp);
}

static ltx2_status run_conv(ltx2_context *ctx, const ltx2_voc_conv *cv, const seq *x, seq *y) {
    int64_t ol;
    LTX2_TRY(ltx2_cpu_conv1d_out_len(ctx, &cv->desc, x->l, &ol));
    LTX2_TRY(seq_alloc(ctx, y, x->n, ol, cv->desc.c_out));
    ltx2_status st = ltx2_cpu_conv1d(ctx, &cv->desc, x->d, x->n, x->l, cv->weight, cv->bias, y->d);
    if (st != LTX2_OK) seq_free(y);
    return st;
}

static void leaky_relu(const seq *x, seq *y, float slope) {
    const int64_t n = x->n * x->l * x->c;
    for (int64_t i = 0; i < n; i++) y->d[i] = x->d[i] >= 0.0f ? x->d[i] : x->d[i] * slope;
}

/* Activation1d: x2 Kaiser-sinc upsample, SnakeBeta, x2 low-pass downsample (BigVGAN padding:
 * replicate; up: pad taps/2-1, crop 15 + 15 for 12 taps; down: pad taps/2-1 left, taps/2 right). */
static ltx2_status aa_act(ltx2_context *ctx, const ltx2_voc_act *a, const seq *x, seq *y) {
    const int64_t r = LTX2_VOCODER_AA_RATIO, k = LTX2_VOCODER_AA_TAPS;
    const int64_t pad = k / r - 1;
    const int64_t crop_l = pad * r + (k - r) / 2, crop_r = pad * r + (k - r + 1) / 2;
    seq u = {0};
    LTX2_TRY(seq_alloc(ctx, &u, x->n, x->l * r, x->c));
    int64_t ul, dl;
    ltx2_status st = ltx2_cpu_fir_upsample(ctx, x->d, x->n, x->l, x->c, a->up_filter, k, r, pad, crop_l, crop_r, u.d, &ul);
    if (st == LTX2_OK && ul != u.l) st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "vocoder: upsample length %lld", (long long)ul);
    if (st == LTX2_OK) {
        const int64_t rows = u.n * u.l, c = u.c;
#pragma omp parallel for schedule(static) if (rows * c > 65536)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t ch = 0; ch < c; ch++) {
                const float v = u.d[i * c + ch];
                const float s = sinf(v * a->alpha_exp[ch]);
                u.d[i * c + ch] = v + a->inv_beta[ch] * (s * s);
            }
        st = seq_alloc(ctx, y, x->n, x->l, x->c);
    }
    if (st == LTX2_OK) {
        st = ltx2_cpu_fir_downsample(ctx, u.d, u.n, u.l, u.c, a->down_filter, k, r, k / 2 - 1, k / 2, y->d, &dl);
        if (st == LTX2_OK && dl != x->l)
            st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "vocoder: downsample length %lld", (long long)dl);
        if (st != LTX2_OK) seq_free(y);
    }
    seq_free(&u);
    return st;
}

/* ResBlock1 (HiFi-GAN) / AMPBlock1 (BigVGAN): for each dilation, x += conv2(act(conv1_d(act(x)))). */
static ltx2_status resblock(ltx2_context *ctx, const ltx2_voc_gen *g, const ltx2_voc_resblock *rb, const seq *in,
                            seq *out) {
    LTX2_TRY(seq_alloc(ctx, out, in->n, in->l, in->c));
    memcpy(out->d, in->d, (size_t)(in->n * in->l * in->c) * sizeof(float));
    ltx2_status st = LTX2_OK;
    for (int m = 0; m < LTX2_VOCODER_DILATIONS && st == LTX2_OK; m++) {
        seq a = {0}, b = {0};
        st = seq_alloc(ctx, &a, in->n, in->l, in->c);
        if (st != LTX2_OK) break;
        if (g->cfg.amp) {
            seq_free(&a);
            st = aa_act(ctx, &rb->acts1[m], out, &a);
        } else {
            leaky_relu(out, &a, VOC_LRELU_SLOPE);
        }
        if (st == LTX2_OK) st = run_conv(ctx, &rb->convs1[m], &a, &b);
        if (st == LTX2_OK) {
            if (g->cfg.amp) {
                seq_free(&a);
                st = aa_act(ctx, &rb->acts2[m], &b, &a);
            } else {
                leaky_relu(&b, &a, VOC_LRELU_SLOPE);
            }
        }
        seq_free(&b);
        if (st == LTX2_OK) st = run_conv(ctx, &rb->convs2[m], &a, &b);
        if (st == LTX2_OK) {
            const int64_t n = out->n * out->l * out->c;
            for (int64_t i = 0; i < n; i++) out->d[i] = b.d[i] + out->d[i];
        }
        seq_free(&a);
        seq_free(&b);
    }
    if (st != LTX2_OK) seq_free(out);
    return st;
}

/* One generator: x [n, T, 128] -> [n, T * prod(rates), 2]; replaces *x. */
static ltx2_status run_gen(ltx2_context *ctx, const ltx2_voc_gen *g, seq *x, const char *name, ltx2_audio_dump_fn dump,
                           void *user) {
    char nm[64];
    seq y = {0};
    LTX2_TRY(run_conv(ctx, &g->conv_pre, x, &y));
    seq_replace(x, &y);
    dump_seq(dump, user, name, "conv_pre.out", x);
    for (int i = 0; i < g->cfg.n_ups; i++) {
        if (!g->cfg.amp) leaky_relu(x, x, VOC_LRELU_SLOPE);
        const ltx2_voc_convt *u = &g->ups[i];
        int64_t ol;
        LTX2_TRY(ltx2_cpu_convt1d_out_len(ctx, &u->desc, x->l, &ol));
        LTX2_TRY(seq_alloc(ctx, &y, x->n, ol, u->desc.c_out));
        ltx2_status st = ltx2_cpu_convt1d(ctx, &u->desc, x->d, x->n, x->l, u->weight, u->bias, y.d);
        if (st != LTX2_OK) {
            seq_free(&y);
            return st;
        }
        seq_replace(x, &y);
        snprintf(nm, sizeof(nm), "ups.%d.out", i);
        dump_seq(dump, user, name, nm, x);
        /* mean of the stage's resblocks, each fed the same input (torch.stack(...).mean(0)) */
        seq acc = {0};
        LTX2_TRY(seq_alloc(ctx, &acc, x->n, x->l, x->c));
        const int64_t n = x->n * x->l * x->c;
        memset(acc.d, 0, (size_t)n * sizeof(float));
        for (int j = 0; j < g->cfg.n_kernels && st == LTX2_OK; j++) {
            const int r = i * g->cfg.n_kernels + j;
            st = resblock(ctx, g, &g->resblocks[r], x, &y);
            if (st != LTX2_OK) break;
            snprintf(nm, sizeof(nm), "resblocks.%d.out", r);
            dump_seq(dump, user, name, nm, &y);
            for (int64_t k = 0; k < n; k++) acc.d[k] += y.d[k];
            seq_free(&y);
        }
        if (st != LTX2_OK) {
            seq_free(&acc);
            return st;
        }
        const float inv = (float)g->cfg.n_kernels;
        for (int64_t k = 0; k < n; k++) acc.d[k] /= inv;
        seq_replace(x, &acc);
    }
    if (g->cfg.amp) {
        LTX2_TRY(aa_act(ctx, &g->act_post, x, &y));
        seq_replace(x, &y);
    } else {
        leaky_relu(x, x, VOC_LRELU_POST_SLOPE);
    }
    dump_seq(dump, user, name, "act_post.out", x);
    LTX2_TRY(run_conv(ctx, &g->conv_post, x, &y));
    seq_replace(x, &y);
    dump_seq(dump, user, name, "conv_post.out", x);
    if (g->cfg.final_activation) {
        const int64_t n = x->n * x->l * x->c;
        for (int64_t k = 0; k < n; k++)
            x->d[k] = g->cfg.tanh_at_final ? tanhf(x->d[k]) : (x->d[k] < -1.0f ? -1.0f : (x->d[k] > 1.0f ? 1.0f : x->d[k]));
    }
    dump_seq(dump, user, name, "out", x);
    return LTX2_OK;
}

/* Causal log-mel of each channel of wav [n, L, 2] (L a multiple of hop) -> generator input
 * [n, L/hop, 2*mels] (channel s*mels + m), as MelSTFT.mel_spectrogram on the stored bases. */
static ltx2_status bwe_mel(ltx2_context *ctx, const ltx2_vocoder *v, const seq *wav, seq *mel, ltx2_audio_dump_fn dump,
                           void *user) {
    const int64_t hop = v->cfg.bwe_hop, nfft = v->cfg.bwe_n_fft, nf = nfft / 2 + 1, nm = v->cfg.bwe_mels;
    const int64_t tm = wav->l / hop, left = nfft - hop;
    LTX2_TRY(seq_alloc(ctx, mel, wav->n, tm, 2 * nm));
    float *mag = malloc((size_t)(wav->n * 2 * nf * tm) * sizeof(float)); /* [n*2, nf, tm] as the reference */
    if (!mag) {
        seq_free(mel);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "vocoder: STFT magnitude");
    }
#pragma omp parallel for collapse(2) schedule(static) if (wav->n * tm * nf * nfft > 65536)
    for (int64_t bs = 0; bs < wav->n * 2; bs++)
        for (int64_t t = 0; t < tm; t++) {
            const int64_t b = bs / 2, s = bs % 2;
            for (int64_t f = 0; f < nf; f++) {
                float re = 0.0f, im = 0.0f;
                const float *br = v->stft_basis + f * nfft, *bi = v->stft_basis + (nf + f) * nfft;
                for (int64_t k = 0; k < nfft; k++) {
                    const int64_t i = t * hop + k - left;
                    if (i < 0) continue;
                    const float xv = wav->d[(b * wav->l + i) * 2 + s];
                    re += br[k] * xv;
                    im += bi[k] * xv;
                }
                mag[(bs * nf + f) * tm + t] = sqrtf(re * re + im * im);
            }
        }
    if (dump) {
        const int64_t shape[3] = {wav->n * 2, nf, tm};
        ltx2_tensor view = ltx2_tensor_make(mag, LTX2_F32, 3, shape);
        dump("vocoder.mel_stft.magnitude", &view, user);
    }
    for (int64_t bs = 0; bs < wav->n * 2; bs++)
        for (int64_t t = 0; t < tm; t++)
            for (int64_t m = 0; m < nm; m++) {
                float acc = 0.0f;
                for (int64_t f = 0; f < nf; f++) acc += v->mel_basis[m * nf + f] * mag[(bs * nf + f) * tm + t];
                const int64_t b = bs / 2, s = bs % 2;
                mel->d[(b * tm + t) * 2 * nm + s * nm + m] = logf(acc < VOC_MEL_FLOOR ? VOC_MEL_FLOOR : acc);
            }
    free(mag);
    if (dump) { /* [n, tm, 2*nm] -> the reference's [n, 2, tm, nm] */
        float *tmp = malloc((size_t)(mel->n * mel->l * mel->c) * sizeof(float));
        if (tmp) {
            for (int64_t b = 0; b < mel->n; b++)
                for (int64_t t = 0; t < tm; t++)
                    for (int64_t s = 0; s < 2; s++)
                        for (int64_t m = 0; m < nm; m++)
                            tmp[((b * 2 + s) * tm + t) * nm + m] = mel->d[(b * tm + t) * 2 * nm + s * nm + m];
            const int64_t shape[4] = {mel->n, 2, tm, nm};
            ltx2_tensor view = ltx2_tensor_make(tmp, LTX2_F32, 4, shape);
            dump("vocoder.bwe_generator.in", &view, user);
            free(tmp);
        }
    }
    return LTX2_OK;
}

static ltx2_status run_bwe(ltx2_context *ctx, const ltx2_vocoder *v, seq *x, ltx2_audio_dump_fn dump, void *user) {
    const int64_t hop = v->cfg.bwe_hop, len = x->l;
    const int64_t lpad = (len + hop - 1) / hop * hop;
    seq xp = {0}, mel = {0}, skip = {0};
    LTX2_TRY(seq_alloc(ctx, &xp, x->n, lpad, x->c));
    for (int64_t b = 0; b < x->n; b++) {
        memcpy(xp.d + b * lpad * x->c, x->d + b * len * x->c, (size_t)(len * x->c) * sizeof(float));
        memset(xp.d + (b * lpad + len) * x->c, 0, (size_t)((lpad - len) * x->c) * sizeof(float));
    }
    ltx2_status st = bwe_mel(ctx, v, &xp, &mel, dump, user);
    if (st == LTX2_OK) st = run_gen(ctx, &v->bwe, &mel, "vocoder.bwe_generator", dump, user);
    const int64_t r = v->resample_ratio, w = v->resample_width;
    if (st == LTX2_OK) st = seq_alloc(ctx, &skip, x->n, lpad * r, x->c);
    if (st == LTX2_OK) {
        int64_t sl;
        st = ltx2_cpu_fir_upsample(ctx, xp.d, xp.n, xp.l, xp.c, v->resample_filter, v->resample_taps, r, w, 2 * w * r,
                                   v->resample_taps - r, skip.d, &sl);
        if (st == LTX2_OK && (sl != skip.l || mel.l != sl))
            st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "vocoder: BWE residual %lld vs skip %lld samples", (long long)mel.l,
                            (long long)sl);
    }
    if (st == LTX2_OK) {
        dump_seq(dump, user, "vocoder", "resampler.out", &skip);
        const int64_t out_len = len * v->cfg.bwe_out_rate / v->cfg.bwe_in_rate;
        seq o = {0};
        st = seq_alloc(ctx, &o, x->n, out_len, x->c);
        if (st == LTX2_OK) {
            for (int64_t b = 0; b < x->n; b++)
                for (int64_t t = 0; t < out_len; t++)
                    for (int64_t c = 0; c < x->c; c++) {
                        const int64_t i = (b * skip.l + t) * x->c + c;
                        const float s = mel.d[i] + skip.d[i];
                        o.d[(b * out_len + t) * x->c + c] = s < -1.0f ? -1.0f : (s > 1.0f ? 1.0f : s);
                    }
            seq_replace(x, &o);
        }
    }
    seq_free(&xp);
    seq_free(&mel);
    seq_free(&skip);
    return st;
}

ltx2_status ltx2_vocoder_run(ltx2_context *ctx, const ltx2_vocoder *voc, const ltx2_tensor *mel, ltx2_tensor *wav,
                             ltx2_audio_dump_fn dump, void *user) {
    if (!voc || !mel || !wav) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder: NULL argument");
    if (mel->ndim != 4 || mel->dtype != LTX2_F32 || mel->device != LTX2_DEVICE_CPU || !ltx2_tensor_is_contiguous(mel))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder: mel must be a contiguous f32 CPU [B, 2, T, mels] tensor");
    int64_t ws[3];
    LTX2_TRY(ltx2_vocoder_out_shape(ctx, voc, mel->shape, ws));
    bool ok = wav->ndim == 3 && wav->dtype == LTX2_F32 && wav->device == LTX2_DEVICE_CPU && ltx2_tensor_is_contiguous(wav);
    for (int i = 0; ok && i < 3; i++) ok = wav->shape[i] == ws[i];
    char a[96], b[96];
    if (!ok)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "vocoder: waveform output is %s, expected a contiguous f32 CPU %s",
                          ltx2_shape_str(wav->shape, wav->ndim, a, sizeof(a)), ltx2_shape_str(ws, 3, b, sizeof(b)));
    const int64_t B = mel->shape[0], T = mel->shape[2], F = mel->shape[3];
    seq x = {0};
    LTX2_TRY(seq_alloc(ctx, &x, B, T, 2 * F));
    const float *m = mel->data;
    for (int64_t bb = 0; bb < B; bb++)
        for (int64_t s = 0; s < 2; s++)
            for (int64_t t = 0; t < T; t++)
                for (int64_t f = 0; f < F; f++) x.d[(bb * T + t) * 2 * F + s * F + f] = m[((bb * 2 + s) * T + t) * F + f];
    ltx2_status st = run_gen(ctx, &voc->main, &x, voc->cfg.bwe ? "vocoder.vocoder" : "vocoder", dump, user);
    if (st == LTX2_OK && voc->cfg.bwe) st = run_bwe(ctx, voc, &x, dump, user);
    if (st == LTX2_OK && x.l != ws[2])
        st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "vocoder: produced %lld samples, expected %lld", (long long)x.l,
                        (long long)ws[2]);
    if (st == LTX2_OK) {
        float *o = wav->data;
        for (int64_t bb = 0; bb < B; bb++)
            for (int64_t c = 0; c < 2; c++)
                for (int64_t t = 0; t < x.l; t++) o[(bb * 2 + c) * x.l + t] = x.d[(bb * x.l + t) * 2 + c];
        if (dump && voc->cfg.bwe) dump("vocoder.out", wav, user);
    }
    seq_free(&x);
    return st;
}
