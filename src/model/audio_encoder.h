/* LTX-2 audio VAE encoder on the CPU (fp32), for audio conditioning: log-mel [B, in_ch, T, mels]
 * -> normalised mean latent [B, z, T', mels/4], as ltx-core 1.0.0's AudioEncoder.forward:
 * conv_in, down levels (ResnetBlock x num_res_blocks, then a causal stride-2 Downsample except
 * on the last level), mid blocks, PixelNorm, SiLU, conv_out (2z channels with double_z), keep the
 * first z (the posterior mean: ltx-core's deterministic path, no sampling), patchify -> per-feature
 * normalise with the per-channel statistics -> unpatchify. T' = ((T-1)/2 + 1) per Downsample.
 * ltx2_audio_encode_waveform adds the front end (audio_mel.h): resample to the model rate, log-mel.
 * Dump names (reference layouts): wave.resampled [B, C, N'], mel.out [B, C, T, mels],
 * encoder.conv_in.out, encoder.down.<l>.block.<b>.out, encoder.down.<l>.downsample.out,
 * encoder.mid.block_{1,2}.out, encoder.conv_out.out, encoder.out. */
#ifndef LTX2_MODEL_AUDIO_ENCODER_H
#define LTX2_MODEL_AUDIO_ENCODER_H

#include <stdbool.h>

#include "model/audio_conv2d.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "ltx2/tensor.h"
#include "model/audio_config.h"
#include "model/audio_mel.h"

typedef struct ltx2_audio_encoder_config {
    ltx2_audio_vae_config vae;  /* shared ddconfig fields (ch, ch_mult, num_res_blocks, z, mel_bins) */
    int64_t in_channels;        /* ddconfig.in_channels (2 = stereo; ltx-core default 2) */
    bool double_z;              /* ddconfig.double_z (ltx-core default true) */
    ltx2_audio_mel_config mel;  /* model.params.sampling_rate, stft.filter_length / hop_length, mel_bins */
} ltx2_audio_encoder_config;

/* `root` is the whole metadata config object. Keys ltx-core defaults are defaulted the same way
 * (in_channels 2, double_z true, sampling_rate 16000, filter_length 1024, hop_length 160);
 * attention (mid_block_add_attention, or a level whose resolution is in attn_resolutions) and
 * resamp_with_conv = false are refused. */
ltx2_status ltx2_audio_encoder_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                            ltx2_audio_encoder_config *out);
ltx2_status ltx2_audio_encoder_config_from_file(ltx2_context *ctx, const ltx2_st_file *f,
                                                ltx2_audio_encoder_config *out);

typedef struct ltx2_audio_enc_conv {
    ltx2_conv2d_desc desc;
    float *weight; /* packed for ltx2_cpu_conv2d */
    float *bias;
} ltx2_audio_enc_conv;

typedef struct ltx2_audio_enc_res {
    int64_t c_in, c_out;
    ltx2_audio_enc_conv conv1, conv2, nin; /* nin only when c_in != c_out */
} ltx2_audio_enc_res;

typedef struct ltx2_audio_enc_level {
    int n_blocks;
    ltx2_audio_enc_res *blocks;
    bool has_downsample;
    ltx2_audio_enc_conv downsample;
} ltx2_audio_enc_level;

typedef struct ltx2_audio_encoder {
    ltx2_audio_encoder_config cfg;
    int64_t n_stats;
    float *mean_of_means, *std_of_means;
    ltx2_audio_enc_conv conv_in, conv_out;
    ltx2_audio_enc_res mid1, mid2;
    ltx2_audio_enc_level levels[LTX2_AUDIO_MAX_LEVELS];
} ltx2_audio_encoder;

/* Loads `<prefix>encoder.*` and `<prefix>per_channel_statistics.*` (prefix "audio_vae." in
 * single-file checkpoints); shapes are checked and unused `<prefix>encoder.*` tensors refused. */
ltx2_status ltx2_audio_encoder_load(ltx2_context *ctx, const ltx2_st_set *weights, const char *prefix,
                                    const ltx2_audio_encoder_config *cfg, ltx2_audio_encoder **out);
void ltx2_audio_encoder_free(ltx2_audio_encoder *enc);

/* Latent shape [B, z, T', F'] for a mel [B, in_ch, T, mels]; F' * z must equal the statistics. */
ltx2_status ltx2_audio_encoder_out_shape(ltx2_context *ctx, const ltx2_audio_encoder *enc, const int64_t mel_bctf[4],
                                         int64_t latent_bctf[4]);

/* The encoder's weights placed on a backend (views of the host weights on the CPU backend) and
 * its one forward there (audio_vae_encode.c): what ltx2_audio_encoder_encode runs on the CPU. */
typedef struct ltx2_audio_enc_device ltx2_audio_enc_device;
struct ltx2_backend;
ltx2_status ltx2_audio_enc_device_create(ltx2_context *ctx, const struct ltx2_backend *be,
                                         const ltx2_audio_encoder *enc, ltx2_audio_enc_device **out);
ltx2_status ltx2_audio_enc_device_encode(ltx2_context *ctx, const ltx2_audio_enc_device *dv, const ltx2_tensor *mel,
                                         ltx2_tensor *latent, ltx2_audio_dump_fn dump, void *user);
void ltx2_audio_enc_device_free(ltx2_audio_enc_device *dv);

/* mel: contiguous f32 CPU [B, in_ch, T, mels]; latent: contiguous f32 CPU of out_shape. */
ltx2_status ltx2_audio_encoder_encode(ltx2_context *ctx, const ltx2_audio_encoder *enc, const ltx2_tensor *mel,
                                      ltx2_tensor *latent, ltx2_audio_dump_fn dump, void *user);

/* Latent shape for a waveform of `samples` per channel at `sample_rate` (B and channels given). */
ltx2_status ltx2_audio_encoder_wave_latent_shape(ltx2_context *ctx, const ltx2_audio_encoder *enc, int64_t batch,
                                                 int64_t channels, int64_t samples, int64_t sample_rate,
                                                 int64_t latent_bctf[4]);

/* wave: contiguous f32 CPU [B, in_ch, N] at `sample_rate` (any rate the resampler accepts; the
 * reference resamples every input to the model rate). Channels must equal in_channels (stereo:
 * ltx-core has no mono path; duplicate a mono channel first, as ltx-trainer does). */
ltx2_status ltx2_audio_encode_waveform(ltx2_context *ctx, const ltx2_audio_encoder *enc, const ltx2_tensor *wave,
                                       int64_t sample_rate, ltx2_tensor *latent, ltx2_audio_dump_fn dump,
                                       void *user);
/* The same with the encoder's forward on the backend dv was placed on (the front end stays on the
 * CPU): what the pipeline's audio conditioning runs. */
ltx2_status ltx2_audio_enc_device_encode_waveform(ltx2_context *ctx, const ltx2_audio_enc_device *dv,
                                                  const ltx2_tensor *wave, int64_t sample_rate, ltx2_tensor *latent);
/* The weights dv was placed from. */
const ltx2_audio_encoder *ltx2_audio_enc_device_encoder(const ltx2_audio_enc_device *dv);

#endif
