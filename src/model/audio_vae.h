/* LTX-2 audio VAE decoder on the CPU (fp32): normalized audio latent [B, z, T', F'] -> log-mel
 * spectrogram [B, out_ch, 4T'-3, mel_bins], as ltx-core's AudioDecoder.forward: patchify ->
 * per-channel un-normalize -> unpatchify, conv_in, mid blocks, up levels (ResnetBlock x
 * (num_res_blocks+1), causal nearest x2 upsample), PixelNorm, SiLU, conv_out, crop / zero-pad.
 * Activations run channels-last internally; the public tensors use the reference layout.
 * Dump names: decoder.un_normalize.out, decoder.conv_in.out, decoder.mid.block_{1,2}.out,
 * decoder.up.<l>.block.<b>.out, decoder.up.<l>.upsample.out, decoder.conv_out.out, decoder.out. */
#ifndef LTX2_MODEL_AUDIO_VAE_H
#define LTX2_MODEL_AUDIO_VAE_H

#include "cpu/cpu_conv3d.h"
#include "io/safetensors.h"
#include "ltx2/tensor.h"
#include "model/audio_config.h"

typedef struct ltx2_audio_conv {
    ltx2_conv3d_desc desc; /* 2-D conv as kt = 1 over [B, 1, T, F, C] */
    float *weight;         /* packed for ltx2_cpu_conv3d */
    float *bias;
} ltx2_audio_conv;

typedef struct ltx2_audio_res {
    int64_t c_in, c_out;
    ltx2_audio_conv conv1, conv2, nin; /* nin only when c_in != c_out */
} ltx2_audio_res;

typedef struct ltx2_audio_level {
    int n_blocks;
    ltx2_audio_res *blocks;
    bool has_upsample;
    ltx2_audio_conv upsample;
} ltx2_audio_level;

typedef struct ltx2_audio_decoder {
    ltx2_audio_vae_config cfg;
    int64_t n_stats;                      /* = ch (ltx-core PerChannelStatistics(latent_channels=ch)) */
    float *mean_of_means, *std_of_means;
    ltx2_audio_conv conv_in, conv_out;
    ltx2_audio_res mid1, mid2;
    ltx2_audio_level levels[LTX2_AUDIO_MAX_LEVELS]; /* indexed like ltx-core's `up.<level>` */
} ltx2_audio_decoder;

/* Loads `<prefix>decoder.*` and `<prefix>per_channel_statistics.*` (prefix "audio_vae." in
 * single-file checkpoints). Every expected tensor must exist with its config-implied shape and
 * every `<prefix>decoder.*` tensor must be used (so attention weights are refused, not ignored). */
ltx2_status ltx2_audio_decoder_load(ltx2_context *ctx, const ltx2_st_set *weights, const char *prefix,
                                    const ltx2_audio_vae_config *cfg, ltx2_audio_decoder **out);
void ltx2_audio_decoder_free(ltx2_audio_decoder *dec);

/* Mel shape [B, out_ch, max(4T'-3, 1), mel_bins] for a latent [B, z, T', F'] (z*F' must equal the
 * statistics length). */
ltx2_status ltx2_audio_decoder_out_shape(ltx2_context *ctx, const ltx2_audio_decoder *dec,
                                         const int64_t latent_bctf[4], int64_t mel_bctf[4]);

/* latent: contiguous f32 CPU [B, z, T', F']; mel: contiguous f32 CPU of out_shape. dump may be NULL. */
ltx2_status ltx2_audio_decoder_decode(ltx2_context *ctx, const ltx2_audio_decoder *dec, const ltx2_tensor *latent,
                                      ltx2_tensor *mel, ltx2_audio_dump_fn dump, void *user);

#endif
