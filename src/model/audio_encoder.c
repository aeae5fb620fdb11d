/* Audio VAE encoder on the CPU (see audio_encoder.h). Reference: ltx-core 1.0.0
 * model/audio_vae/audio_vae.py AudioEncoder + encode_audio, downsample.py Downsample (causality
 * "height": pad time 2 before, mel 1 after, then a stride-2 valid conv), resnet.py ResnetBlock,
 * causal_conv_2d.py CausalConv2d, model_configurator.py AudioEncoderConfigurator. Activations are
 * [B, T, F, C] fp32 buffers; the public tensors use the reference layouts. */
#include "model/audio_encoder.h"
#include "model/audio_act.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/audio_weights.h"
#include "model/vae_run.h"

/* PixelNorm epsilon of the audio VAE (ltx-core build_normalization_layer, "pixel"). */
#define ENC_PIXEL_NORM_EPS 1e-6f
#define ENC_KERNEL 3
#define ENC_KEY_CAP 256
/* AudioEncoderConfigurator defaults for keys a file may omit. */
#define ENC_DEFAULT_IN_CHANNELS 2
#define ENC_DEFAULT_RATE 16000
#define ENC_DEFAULT_N_FFT 1024
#define ENC_DEFAULT_HOP 160
#define ENC_DEFAULT_RESOLUTION 256
static const int64_t enc_default_attn_res[] = {8, 16, 32};

/* ---------------------------------------------------------------------------------------------
 * Config
 * ------------------------------------------------------------------------------------------- */

static ltx2_status opt_int(ltx2_context *ctx, const ltx2_json *obj, const char *key, int64_t def, int64_t min,
                           const char *label, int64_t *out) {
    const ltx2_json *v = obj ? ltx2_json_get(obj, key) : NULL;
    if (!v) {
        *out = def;
        return LTX2_OK;
    }
    if (v->type != LTX2_JSON_NUMBER || !v->is_int || v->integer < min)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: audio_vae %s must be an integer >= %lld", label, key, (long long)min);
    *out = v->integer;
    return LTX2_OK;
}

static ltx2_status opt_bool(ltx2_context *ctx, const ltx2_json *obj, const char *key, bool def, const char *label,
                            bool *out) {
    const ltx2_json *v = obj ? ltx2_json_get(obj, key) : NULL;
    if (!v) {
        *out = def;
        return LTX2_OK;
    }
    if (v->type != LTX2_JSON_BOOL) return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: audio_vae %s is not a boolean", label, key);
    *out = v->boolean;
    return LTX2_OK;
}

ltx2_status ltx2_audio_encoder_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                            ltx2_audio_encoder_config *out) {
    if (!root || !label || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder config: NULL argument");
    memset(out, 0, sizeof(*out));
    LTX2_TRY(ltx2_audio_vae_config_parse(ctx, root, label, &out->vae));
    const ltx2_json *av = ltx2_json_get(root, "audio_vae");
    const ltx2_json *params = ltx2_json_get(ltx2_json_get(av, "model"), "params");
    const ltx2_json *dd = ltx2_json_get(params, "ddconfig");
    const ltx2_json *stft = ltx2_json_get(ltx2_json_get(av, "preprocessing"), "stft");
    LTX2_TRY(opt_int(ctx, dd, "in_channels", ENC_DEFAULT_IN_CHANNELS, 1, label, &out->in_channels));
    LTX2_TRY(opt_bool(ctx, dd, "double_z", true, label, &out->double_z));
    bool with_conv = true;
    LTX2_TRY(opt_bool(ctx, dd, "resamp_with_conv", true, label, &with_conv));
    if (!with_conv)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: audio_vae resamp_with_conv = false (average pooling) is not supported",
                          label);
    /* Attention sits after each block of a level whose running resolution (resolution >> level)
     * is listed in attn_resolutions; the real and tiny files never reach one. */
    int64_t res = ENC_DEFAULT_RESOLUTION;
    LTX2_TRY(opt_int(ctx, dd, "resolution", ENC_DEFAULT_RESOLUTION, 1, label, &res));
    const ltx2_json *ar = dd ? ltx2_json_get(dd, "attn_resolutions") : NULL;
    if (ar && ar->type != LTX2_JSON_ARRAY)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: audio_vae attn_resolutions is not a list", label);
    const size_t n_ar = ar ? ar->count : sizeof(enc_default_attn_res) / sizeof(enc_default_attn_res[0]);
    for (int l = 0; l < out->vae.n_levels && out->vae.num_res_blocks > 0; l++) {
        const int64_t cur = l < 63 ? res >> l : 0;
        for (size_t i = 0; i < n_ar; i++) {
            const ltx2_json *v = ar ? ltx2_json_at(ar, i) : NULL;
            if (ar && (v->type != LTX2_JSON_NUMBER || !v->is_int))
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: audio_vae attn_resolutions[%zu] is not an integer", label, i);
            if ((ar ? v->integer : enc_default_attn_res[i]) == cur)
                return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                                  "%s: audio VAE encoder level %d (resolution %lld) has attention, which is not supported",
                                  label, l, (long long)cur);
        }
    }
    int64_t rate = ENC_DEFAULT_RATE;
    LTX2_TRY(opt_int(ctx, params, "sampling_rate", ENC_DEFAULT_RATE, 2, label, &rate));
    out->mel.sample_rate = rate;
    LTX2_TRY(opt_int(ctx, stft, "filter_length", ENC_DEFAULT_N_FFT, 2, label, &out->mel.n_fft));
    LTX2_TRY(opt_int(ctx, stft, "hop_length", ENC_DEFAULT_HOP, 1, label, &out->mel.hop));
    out->mel.n_mels = out->vae.mel_bins;
    return LTX2_OK;
}

ltx2_status ltx2_audio_encoder_config_from_file(ltx2_context *ctx, const ltx2_st_file *f,
                                                ltx2_audio_encoder_config *out) {
    ltx2_json_doc *doc = NULL;
    LTX2_TRY(ltx2_st_meta_json(ctx, f, "config", "the audio architecture cannot be known", &doc));
    ltx2_status st = ltx2_audio_encoder_config_parse(ctx, ltx2_json_root(doc), f->path, out);
    ltx2_json_free(doc);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------------------------- */

/* CausalConv2d padding (time k-1 before, mel (k-1)/2 each side) unless `down`: Downsample's
 * time 2 before, mel 1 after, stride 2. `key` is the weight name without ".weight". */
static ltx2_status load_conv(ltx2_audio_loader *L, const char *key, int64_t c_in, int64_t c_out, int64_t k, bool down,
                             ltx2_audio_enc_conv *c) {
    char name[ENC_KEY_CAP + 16]; /* key + ".weight" */
    memset(c, 0, sizeof(*c));
    c->desc = (ltx2_conv2d_desc){.c_in = c_in, .c_out = c_out, .kh = k, .kw = k, .sh = down ? 2 : 1, .sw = down ? 2 : 1,
                                 .pad_top = k - 1, .pad_bottom = 0, .pad_left = down ? 0 : (k - 1) / 2,
                                 .pad_right = down ? 1 : (k - 1) / 2};
    const int64_t shape[4] = {c_out, c_in, k, k};
    float *w = NULL;
    snprintf(name, sizeof(name), "%s.weight", key);
    LTX2_TRY(ltx2_audio_load_f32(L, name, 4, shape, &w));
    c->weight = malloc((size_t)(k * k * c_in * c_out) * sizeof(float));
    if (!c->weight) {
        free(w);
        return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "audio encoder: packed %s", name);
    }
    ltx2_status st = ltx2_audio_conv2d_pack_weight(L->ctx, &c->desc, w, c->weight);
    free(w);
    if (st != LTX2_OK) return st;
    snprintf(name, sizeof(name), "%s.bias", key);
    return ltx2_audio_load_f32(L, name, 1, &c_out, &c->bias);
}

static void conv_free(ltx2_audio_enc_conv *c) {
    free(c->weight);
    free(c->bias);
    c->weight = c->bias = NULL;
}

static ltx2_status load_res(ltx2_audio_loader *L, const char *base, int64_t c_in, int64_t c_out,
                            ltx2_audio_enc_res *r) {
    char key[ENC_KEY_CAP];
    memset(r, 0, sizeof(*r));
    r->c_in = c_in, r->c_out = c_out;
    snprintf(key, sizeof(key), "%s.conv1.conv", base);
    LTX2_TRY(load_conv(L, key, c_in, c_out, ENC_KERNEL, false, &r->conv1));
    snprintf(key, sizeof(key), "%s.conv2.conv", base);
    LTX2_TRY(load_conv(L, key, c_out, c_out, ENC_KERNEL, false, &r->conv2));
    if (c_in != c_out) {
        snprintf(key, sizeof(key), "%s.nin_shortcut.conv", base);
        LTX2_TRY(load_conv(L, key, c_in, c_out, 1, false, &r->nin));
    }
    return LTX2_OK;
}

static void res_free(ltx2_audio_enc_res *r) {
    conv_free(&r->conv1);
    conv_free(&r->conv2);
    conv_free(&r->nin);
}

void ltx2_audio_encoder_free(ltx2_audio_encoder *enc) {
    if (!enc) return;
    free(enc->mean_of_means);
    free(enc->std_of_means);
    conv_free(&enc->conv_in);
    conv_free(&enc->conv_out);
    res_free(&enc->mid1);
    res_free(&enc->mid2);
    for (int l = 0; l < LTX2_AUDIO_MAX_LEVELS; l++) {
        for (int b = 0; b < enc->levels[l].n_blocks; b++) res_free(&enc->levels[l].blocks[b]);
        free(enc->levels[l].blocks);
        conv_free(&enc->levels[l].downsample);
    }
    free(enc);
}

static ltx2_status load_all(ltx2_audio_loader *L, const char *prefix, ltx2_audio_encoder *enc) {
    const ltx2_audio_vae_config *c = &enc->cfg.vae;
    char key[ENC_KEY_CAP], base[ENC_KEY_CAP];
    enc->n_stats = c->ch;
    snprintf(key, sizeof(key), "%sper_channel_statistics.mean-of-means", prefix);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 1, &enc->n_stats, &enc->mean_of_means));
    snprintf(key, sizeof(key), "%sper_channel_statistics.std-of-means", prefix);
    LTX2_TRY(ltx2_audio_load_f32(L, key, 1, &enc->n_stats, &enc->std_of_means));
    snprintf(key, sizeof(key), "%sencoder.conv_in.conv", prefix);
    LTX2_TRY(load_conv(L, key, enc->cfg.in_channels, c->ch, ENC_KERNEL, false, &enc->conv_in));
    int64_t block_in = c->ch;
    for (int l = 0; l < c->n_levels; l++) {
        ltx2_audio_enc_level *lv = &enc->levels[l];
        const int64_t block_out = c->ch * c->ch_mult[l];
        block_in = c->ch * (l == 0 ? 1 : c->ch_mult[l - 1]); /* ltx-core in_ch_mult = (1, *ch_mult) */
        if (c->num_res_blocks > 0) {
            lv->blocks = calloc((size_t)c->num_res_blocks, sizeof(*lv->blocks));
            if (!lv->blocks) return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "audio encoder: level %d blocks", l);
        }
        for (int64_t b = 0; b < c->num_res_blocks; b++) {
            snprintf(base, sizeof(base), "%sencoder.down.%d.block.%lld", prefix, l, (long long)b);
            lv->n_blocks = (int)b + 1;
            LTX2_TRY(load_res(L, base, block_in, block_out, &lv->blocks[b]));
            block_in = block_out;
        }
        if (l != c->n_levels - 1) {
            snprintf(key, sizeof(key), "%sencoder.down.%d.downsample.conv", prefix, l);
            lv->has_downsample = true;
            LTX2_TRY(load_conv(L, key, block_in, block_in, ENC_KERNEL, true, &lv->downsample));
        }
    }
    snprintf(base, sizeof(base), "%sencoder.mid.block_1", prefix);
    LTX2_TRY(load_res(L, base, block_in, block_in, &enc->mid1));
    snprintf(base, sizeof(base), "%sencoder.mid.block_2", prefix);
    LTX2_TRY(load_res(L, base, block_in, block_in, &enc->mid2));
    snprintf(key, sizeof(key), "%sencoder.conv_out.conv", prefix);
    const int64_t z_out = enc->cfg.double_z ? 2 * c->z_channels : c->z_channels;
    LTX2_TRY(load_conv(L, key, block_in, z_out, ENC_KERNEL, false, &enc->conv_out));
    snprintf(key, sizeof(key), "%sencoder.", prefix);
    return ltx2_audio_check_all_used(L, key);
}

ltx2_status ltx2_audio_encoder_load(ltx2_context *ctx, const ltx2_st_set *weights, const char *prefix,
                                    const ltx2_audio_encoder_config *cfg, ltx2_audio_encoder **out) {
    if (!weights || !prefix || !cfg || !out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: NULL argument");
    const ltx2_audio_vae_config *v = &cfg->vae;
    if (v->n_levels < 1 || v->n_levels > LTX2_AUDIO_MAX_LEVELS || v->ch < 1 || v->z_channels < 1 ||
        cfg->in_channels < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: invalid config (levels %d, ch %lld, z %lld, in %lld)",
                          v->n_levels, (long long)v->ch, (long long)v->z_channels, (long long)cfg->in_channels);
    ltx2_audio_encoder *enc = calloc(1, sizeof(*enc));
    if (!enc) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio encoder");
    enc->cfg = *cfg;
    ltx2_audio_loader L = {.ctx = ctx, .set = weights, .what = "audio VAE encoder"};
    ltx2_status st = load_all(&L, prefix, enc);
    ltx2_audio_loader_free(&L);
    if (st != LTX2_OK) {
        ltx2_audio_encoder_free(enc);
        return st;
    }
    *out = enc;
    return LTX2_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Shapes
 * ------------------------------------------------------------------------------------------- */

ltx2_status ltx2_audio_encoder_out_shape(ltx2_context *ctx, const ltx2_audio_encoder *enc, const int64_t mel_bctf[4],
                                         int64_t latent_bctf[4]) {
    if (!enc || !mel_bctf || !latent_bctf) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: NULL argument");
    const int64_t B = mel_bctf[0], C = mel_bctf[1], T = mel_bctf[2], F = mel_bctf[3];
    if (B < 1 || T < 1 || C != enc->cfg.in_channels || F != enc->cfg.vae.mel_bins)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "audio encoder: mel [%lld, %lld, %lld, %lld] must be [B, %lld, T, %lld]",
                          (long long)B, (long long)C, (long long)T, (long long)F, (long long)enc->cfg.in_channels,
                          (long long)enc->cfg.vae.mel_bins);
    int64_t t = T, f = F;
    for (int l = 0; l < enc->cfg.vae.n_levels; l++) {
        if (!enc->levels[l].has_downsample) continue;
        int64_t ohw[2];
        LTX2_TRY(ltx2_audio_conv2d_out_shape(ctx, &enc->levels[l].downsample.desc, t, f, ohw));
        t = ohw[0], f = ohw[1];
    }
    if (enc->cfg.vae.z_channels * f != enc->n_stats)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "audio encoder: latent channels x mel bins = %lld x %lld, but the per-channel statistics hold %lld",
                          (long long)enc->cfg.vae.z_channels, (long long)f, (long long)enc->n_stats);
    latent_bctf[0] = B, latent_bctf[1] = enc->cfg.vae.z_channels, latent_bctf[2] = t, latent_bctf[3] = f;
    return LTX2_OK;
}

static ltx2_status check_wave(ltx2_context *ctx, const ltx2_audio_encoder *enc, int64_t batch, int64_t channels,
                              int64_t samples, int64_t sample_rate, int64_t *model_len, int64_t *frames) {
    if (batch < 1 || channels != enc->cfg.in_channels)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "audio encoder: waveform has batch %lld with %lld channel(s); the audio VAE takes %lld "
                          "(stereo: duplicate a mono track, down-mix surround first)",
                          (long long)batch, (long long)channels, (long long)enc->cfg.in_channels);
    if (sample_rate < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: sample rate %lld Hz", (long long)sample_rate);
    *model_len = ltx2_audio_resample_len(samples, sample_rate, enc->cfg.mel.sample_rate);
    ltx2_status st = ltx2_audio_mel_frames(ctx, &enc->cfg.mel, *model_len, frames);
    if (st != LTX2_OK)
        ltx2_error_prefix(ctx, "audio encoder: %lld samples at %lld Hz -> %lld at %lld Hz", (long long)samples,
                          (long long)sample_rate, (long long)*model_len, (long long)enc->cfg.mel.sample_rate);
    return st;
}

ltx2_status ltx2_audio_encoder_wave_latent_shape(ltx2_context *ctx, const ltx2_audio_encoder *enc, int64_t batch,
                                                 int64_t channels, int64_t samples, int64_t sample_rate,
                                                 int64_t latent_bctf[4]) {
    if (!enc || !latent_bctf) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: NULL argument");
    int64_t n = 0, frames = 0;
    LTX2_TRY(check_wave(ctx, enc, batch, channels, samples, sample_rate, &n, &frames));
    const int64_t ms[4] = {batch, channels, frames, enc->cfg.vae.mel_bins};
    return ltx2_audio_encoder_out_shape(ctx, enc, ms, latent_bctf);
}

/* The front end on the CPU, then the encoder's forward on dv's backend (NULL: the CPU). */
static ltx2_status encode_waveform(ltx2_context *ctx, const ltx2_audio_encoder *enc, const ltx2_audio_enc_device *dv,
                                   const ltx2_tensor *wave, int64_t sample_rate, ltx2_tensor *latent,
                                   ltx2_audio_dump_fn dump, void *user) {
    if (!enc || !wave || !latent) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: NULL argument");
    if (!vae_host_f32(wave, 3))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: waveform must be a contiguous f32 CPU [B, C, N] tensor");
    const int64_t B = wave->shape[0], C = wave->shape[1], N = wave->shape[2];
    int64_t n = 0, frames = 0;
    LTX2_TRY(check_wave(ctx, enc, B, C, N, sample_rate, &n, &frames));
    float *rs = malloc((size_t)(B * C * n) * sizeof(float));
    float *mel = malloc((size_t)(B * C * frames * enc->cfg.mel.n_mels) * sizeof(float));
    ltx2_status st = rs && mel ? LTX2_OK
                               : LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio encoder: %lld resampled samples / %lld mel frames",
                                            (long long)(B * C * n), (long long)(B * C * frames));
    if (st == LTX2_OK) st = ltx2_audio_resample(ctx, wave->data, B * C, N, sample_rate, enc->cfg.mel.sample_rate, rs);
    if (st == LTX2_OK && dump) {
        const int64_t s[3] = {B, C, n};
        ltx2_tensor v = ltx2_tensor_make(rs, LTX2_F32, 3, s);
        dump("wave.resampled", &v, user);
    }
    if (st == LTX2_OK) st = ltx2_audio_log_mel(ctx, &enc->cfg.mel, rs, B * C, n, mel);
    free(rs);
    if (st == LTX2_OK) {
        const int64_t s[4] = {B, C, frames, enc->cfg.mel.n_mels};
        ltx2_tensor v = ltx2_tensor_make(mel, LTX2_F32, 4, s);
        if (dump) dump("mel.out", &v, user);
        st = dv ? ltx2_audio_enc_device_encode(ctx, dv, &v, latent, dump, user)
                : ltx2_audio_encoder_encode(ctx, enc, &v, latent, dump, user);
    }
    free(mel);
    return st;
}

ltx2_status ltx2_audio_encode_waveform(ltx2_context *ctx, const ltx2_audio_encoder *enc, const ltx2_tensor *wave,
                                       int64_t sample_rate, ltx2_tensor *latent, ltx2_audio_dump_fn dump,
                                       void *user) {
    return encode_waveform(ctx, enc, NULL, wave, sample_rate, latent, dump, user);
}

ltx2_status ltx2_audio_enc_device_encode_waveform(ltx2_context *ctx, const ltx2_audio_enc_device *dv,
                                                  const ltx2_tensor *wave, int64_t sample_rate, ltx2_tensor *latent) {
    if (!dv) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio encoder: no placed encoder");
    return encode_waveform(ctx, ltx2_audio_enc_device_encoder(dv), dv, wave, sample_rate, latent, NULL, NULL);
}
