/* LTX-2 latent upsampler (ltx-core model/upsampler LatentUpsampler, dims 3, NDHWC; one forward on
 * the backend op table, upsampler_forward.c): initial conv + GroupNorm + SiLU, res blocks, the upsampler (plain conv + pixel shuffle
 * x2, rational resampler conv + pixel shuffle + binomial blur-downsample for x1.5 / x2, or
 * temporal conv + shuffle dropping the first frame), post res blocks, final conv. Every conv is
 * zero padded in all axes (plain nn.Conv3d / Conv2d, not the VAE's causal convs). */
#ifndef LTX2_MODEL_UPSAMPLER_H
#define LTX2_MODEL_UPSAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "io/safetensors.h"
#include "ltx2/tensor.h"
#include "model/video_vae.h"

typedef struct ltx2_upsampler_config {
    int64_t in_channels, mid_channels, num_blocks_per_stage, dims;
    bool spatial_upsample, temporal_upsample, rational_resampler;
    double spatial_scale;
} ltx2_upsampler_config;

typedef struct ltx2_upsampler ltx2_upsampler;

/* Reads the file's metadata "config" (ltx-core defaults for absent keys; the weight shapes are
 * checked against it, so a wrong default fails naming the tensor) and loads the unprefixed
 * weights. Spatial+temporal together and dims 2 are refused as unsupported (not shipped). */
ltx2_status ltx2_upsampler_load(ltx2_context *ctx, const ltx2_st_set *weights, ltx2_upsampler **out);
/* The diffusers model directory's subfolder that holds its latent upsampler. */
#define LTX2_UPSAMPLER_DF_FOLDER "latent_upsampler"
/* An upsampler from path: a Lightricks .safetensors file (ltx2_upsampler_load), a diffusers
 * LTX2LatentUpsamplerModel folder (config.json, whose keys are translated, and its weights, which
 * keep Lightricks' names), or a diffusers model directory holding one in LTX2_UPSAMPLER_DF_FOLDER. */
ltx2_status ltx2_upsampler_open(ltx2_context *ctx, const char *path, ltx2_upsampler **out);
/* The config of what path names, as ltx2_upsampler_open would load it, checked; no weight read. */
ltx2_status ltx2_upsampler_read_config(ltx2_context *ctx, const char *path, ltx2_upsampler_config *cfg);
/* The spatial factor num / den of cfg's shuffle and blur: plain spatial x2 2 / 1 (ltx-core ignores
 * spatial_scale without the rational resampler), rational 0.75 -> 3 / 4, 1.5 -> 3 / 2, 2 -> 2 / 1,
 * 4 -> 4 / 1, temporal 1 / 1. False for a rational scale ltx-core has no resampler for. */
bool ltx2_upsampler_ratio(const ltx2_upsampler_config *cfg, int64_t *num, int64_t *den);
void ltx2_upsampler_free(ltx2_upsampler *u);
const ltx2_upsampler_config *ltx2_upsampler_get_config(const ltx2_upsampler *u);

/* Output NDHWC shape for an input latent [B, F, H, W, C]. */
ltx2_status ltx2_upsampler_out_shape(ltx2_context *ctx, const ltx2_upsampler *u, const int64_t in[5],
                                     int64_t out[5]);

/* Raw forward on an un-normalised latent (contiguous f32 CPU NDHWC). */
ltx2_status ltx2_upsampler_forward(ltx2_context *ctx, const ltx2_upsampler *u, const ltx2_tensor *x,
                                   ltx2_tensor *y);

/* The same forward on backend be (CPU, CUDA, the emulator): x host f32 NDHWC [in], y host f32 of
 * ltx2_upsampler_out_shape; bf16 activations where be's conv3d takes them. */
struct ltx2_backend;
ltx2_status ltx2_upsampler_forward_on(ltx2_context *ctx, const ltx2_upsampler *u, const struct ltx2_backend *be,
                                      const float *x, const int64_t in[5], float *y);

/* ltx-core upsample_video: un-normalise with the VAE's per-channel statistics (mean/std of
 * means, [C]), upsample, normalise again. Inputs and outputs are normalised latents. */
ltx2_status ltx2_upsampler_upsample_latent(ltx2_context *ctx, const ltx2_upsampler *u, const float *mean_of_means,
                                           const float *std_of_means, const ltx2_tensor *x, ltx2_tensor *y);
/* The same with the forward on backend be (x, y host f32 NDHWC). */
ltx2_status ltx2_upsampler_upsample_latent_on(ltx2_context *ctx, const ltx2_upsampler *u, const struct ltx2_backend *be,
                                              const float *mean_of_means, const float *std_of_means,
                                              const ltx2_tensor *x, ltx2_tensor *y);

#endif
