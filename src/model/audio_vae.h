/* LTX-2 audio VAE decoder: normalized audio latent [B, z, T', F'] -> log-mel spectrogram
 * [B, out_ch, 4T'-3, mel_bins], as ltx-core's AudioDecoder.forward: patchify -> per-channel
 * un-normalize -> unpatchify, conv_in, mid blocks, up levels (ResnetBlock x (num_res_blocks+1),
 * causal nearest x2 upsample), PixelNorm, SiLU, conv_out, crop / zero-pad. One forward on the
 * backend op table (audio_vae_decode.c): the CPU reference in fp32, CUDA and the emulator in bf16.
 * Activations run channels-last [B, T, 1, F, C] inside; the public tensors use the reference layout.
 * Dump names: decoder.un_normalize.out, decoder.conv_in.out, decoder.mid.block_{1,2}.out,
 * decoder.up.<l>.block.<b>.out, decoder.up.<l>.upsample.out, decoder.conv_out.out, decoder.out. */
#ifndef LTX2_MODEL_AUDIO_VAE_H
#define LTX2_MODEL_AUDIO_VAE_H

#include "backend/backend.h"
#include "backend/conv3d_desc.h"
#include "io/safetensors.h"
#include "ltx2/tensor.h"
#include "model/audio_config.h"

/* The audio VAE's PixelNorm epsilon (ltx-core build_normalization_layer passes 1e-6 for "pixel"). */
#define LTX2_AUDIO_PIXEL_NORM_EPS 1e-6f

typedef struct ltx2_audio_conv {
    ltx2_conv3d_desc desc; /* CausalConv2d as a conv3d over [B, time, 1, mel, C]: kernel (k, 1, k) */
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
    ltx2_audio_conv upsample; /* the upsample block as one (2, 1, 3) conv to 4 phase channels per
                               * output channel (see load_upsample in audio_vae.c) */
} ltx2_audio_level;

typedef struct ltx2_audio_dec_device ltx2_audio_dec_device;

typedef struct ltx2_audio_decoder {
    ltx2_audio_vae_config cfg;
    int64_t n_stats;                      /* = ch (ltx-core PerChannelStatistics(latent_channels=ch)) */
    float *mean_of_means, *std_of_means;
    ltx2_audio_conv conv_in, conv_out;
    ltx2_audio_res mid1, mid2;
    ltx2_audio_level levels[LTX2_AUDIO_MAX_LEVELS]; /* indexed like ltx-core's `up.<level>` */
    ltx2_audio_dec_device *placed; /* ltx2_audio_decoder_place: where decodes run (NULL: the CPU) */
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

/* The mel frames max(4T'-3, 1) a latent of T' frames decodes to. */
int64_t ltx2_audio_decoder_mel_frames(int64_t latent_frames);

/* latent: contiguous f32 CPU [B, z, T', F']; mel: contiguous f32 CPU of out_shape. dump may be
 * NULL. Runs on the backend dec is placed on (the CPU backend when it is not). */
ltx2_status ltx2_audio_decoder_decode(ltx2_context *ctx, const ltx2_audio_decoder *dec, const ltx2_tensor *latent,
                                      ltx2_tensor *mel, ltx2_audio_dump_fn dump, void *user);

/* Runs every later decode of dec on be: its convs are copied there once (bf16 where be has a bf16
 * conv3d). NULL or the CPU backend: back to the host weights. */
ltx2_status ltx2_audio_decoder_place(ltx2_context *ctx, ltx2_audio_decoder *dec, const ltx2_backend *be);

/* ---- the decoder on a backend (audio_vae_decode.c: its one forward, run by every backend) ---- */

/* dec's convs on be (same dtype rule and refusals as ltx2_vae_device_create; conv_in's latent
 * channels and conv_out's spectrogram channels are widened to the device conv's granularity).
 * Keeps a pointer to dec, which must outlive it. */
ltx2_status ltx2_audio_dec_device_create(ltx2_context *ctx, const ltx2_backend *be, const ltx2_audio_decoder *dec,
                                         ltx2_audio_dec_device **out);
void ltx2_audio_dec_device_free(ltx2_audio_dec_device *dv);
/* The decode on dv's backend; arguments and dumps as ltx2_audio_decoder_decode. */
ltx2_status ltx2_audio_dec_device_decode(ltx2_context *ctx, const ltx2_audio_dec_device *dv,
                                         const ltx2_tensor *latent, ltx2_tensor *mel, ltx2_audio_dump_fn dump,
                                         void *user);

#endif
