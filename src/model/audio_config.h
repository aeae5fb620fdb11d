/* Configuration of LTX-2's audio VAE decoder and vocoders, parsed from a checkpoint's metadata
 * `config` JSON (`audio_vae` and `vocoder` sections, ltx-core AudioDecoderConfigurator /
 * VocoderConfigurator). ltx-core fills missing keys with defaults that silently change the model;
 * here the architecture-defining keys (widths, multipliers, rates, kernel lists) are required,
 * and the few behavioural flags real files omit are resolved as documented per field. */
#ifndef LTX2_MODEL_AUDIO_CONFIG_H
#define LTX2_MODEL_AUDIO_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "io/json.h"
#include "io/safetensors.h"
#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

#define LTX2_AUDIO_MAX_LEVELS 8   /* ch_mult entries (real: 3) */
#define LTX2_VOCODER_MAX_UPS 8    /* upsampling stages (real: 5 or 6) */
#define LTX2_VOCODER_MAX_KERNELS 4 /* resblocks per stage (real: 3) */
#define LTX2_VOCODER_DILATIONS 3  /* ResBlock1 / AMPBlock1 always have three dilated convs */

/* Called by the audio decoder / vocoder with the tensor after each named stage (names in
 * audio_vae.h / vocoder.h). The view is contiguous f32 in the reference's PyTorch layout
 * ([B, C, T, F] for the decoder, [B, C, L] for the vocoders), valid only during the call. */
typedef void (*ltx2_audio_dump_fn)(const char *name, const ltx2_tensor *t, void *user);

typedef struct ltx2_audio_vae_config {
    int64_t ch;             /* base width (128 real) */
    int64_t out_ch;         /* spectrogram channels (2 = stereo) */
    int n_levels;
    int64_t ch_mult[LTX2_AUDIO_MAX_LEVELS];
    int64_t num_res_blocks; /* the decoder runs num_res_blocks + 1 per level */
    int64_t z_channels;     /* latent channels (8 real) */
    int64_t mel_bins;       /* output mel bins (64): ddconfig.mel_bins, else preprocessing.mel.n_mel_channels */
    int mid_attention;      /* 1 / 0 as mid_block_add_attention says, -1 absent (decided by the keys) */
} ltx2_audio_vae_config;

/* One HiFi-GAN / BigVGAN generator (ltx-core Vocoder). */
typedef struct ltx2_vocoder_gen_config {
    int64_t initial_channel; /* upsample_initial_channel */
    bool amp;                /* resblock "AMP1" (BigVGAN-v2, SnakeBeta) vs "1" (HiFi-GAN, LeakyReLU) */
    int n_ups;
    int64_t up_rates[LTX2_VOCODER_MAX_UPS], up_kernels[LTX2_VOCODER_MAX_UPS];
    int n_kernels;
    int64_t rb_kernels[LTX2_VOCODER_MAX_KERNELS];
    int64_t rb_dilations[LTX2_VOCODER_MAX_KERNELS][LTX2_VOCODER_DILATIONS];
    bool tanh_at_final;      /* use_tanh_at_final (ltx-core default true; real 2.0 files omit it) */
    bool final_activation;   /* tanh or clamp(-1, 1) at the end (false for the BWE generator) */
    int bias_at_final;       /* use_bias_at_final: 1 / 0, -1 absent (decided by conv_post.bias presence) */
    int64_t sample_rate;     /* output sampling rate of this generator */
} ltx2_vocoder_gen_config;

typedef struct ltx2_vocoder_config {
    ltx2_vocoder_gen_config main;
    bool bwe;                  /* LTX-2.3: VocoderWithBWE */
    ltx2_vocoder_gen_config bwe_gen;
    int64_t bwe_in_rate, bwe_out_rate; /* 16000 -> 48000 */
    int64_t bwe_hop, bwe_n_fft, bwe_mels;
} ltx2_vocoder_config;

/* `root` is the whole metadata config object; `label` names the source in errors. */
ltx2_status ltx2_audio_vae_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                        ltx2_audio_vae_config *out);
ltx2_status ltx2_vocoder_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                      ltx2_vocoder_config *out);

/* Read __metadata__["config"] of a safetensors file and parse the section. */
ltx2_status ltx2_audio_vae_config_from_file(ltx2_context *ctx, const ltx2_st_file *f, ltx2_audio_vae_config *out);
ltx2_status ltx2_vocoder_config_from_file(ltx2_context *ctx, const ltx2_st_file *f, ltx2_vocoder_config *out);

#endif
