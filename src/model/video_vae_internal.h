/* Internals shared by the video VAE decoder (video_vae.c, video_vae_decode.c) and encoder
 * (video_vae_encoder.c, video_vae_encode.c): the tensor loader that records which checkpoint
 * tensors were used, and the decoder's noise and timestep-embedding rules. Not a public interface. */
#ifndef LTX2_MODEL_VIDEO_VAE_INTERNAL_H
#define LTX2_MODEL_VIDEO_VAE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "model/video_vae.h"

/* PixelNorm epsilon (ltx-core common/normalization.py PixelNorm default; the video VAE uses it
 * unchanged, the audio VAE passes 1e-6). */
#define VAE_PIXEL_NORM_EPS 1e-8f
/* Every video-VAE conv is 3x3x3 (CausalConv3d kernel_size=3). */
#define VAE_KERNEL 3
/* Timestep sinusoid max period (ltx-core get_timestep_embedding default). */
#define VAE_TIME_MAX_PERIOD 10000.0
/* Longest key we build: prefix + "decoder.up_blocks.NN.res_blocks.NN.convN.conv.weight". */
#define VAE_KEY_CAP 256

typedef struct vae_loader {
    ltx2_context *ctx;
    const ltx2_st_set *set;
    const char *prefix;
    const char *part; /* "decoder" or "encoder" */
    const ltx2_st_tensor **used;
    size_t n_used, cap_used;
} vae_loader;

ltx2_status vae_find_tensor(vae_loader *L, const char *key, int ndim, const int64_t *shape,
                            const ltx2_st_tensor **out);
ltx2_status vae_load_f32(vae_loader *L, const char *key, int ndim, const int64_t *shape, float **out);
void vae_conv_free(ltx2_vae_conv *c);
ltx2_status vae_load_conv(vae_loader *L, const char *path, int64_t c_in, int64_t c_out, ltx2_conv_tpad tpad,
                          ltx2_conv_spad spad, ltx2_vae_conv *c);
ltx2_status vae_check_all_used(vae_loader *L);
bool vae_has_prefix(const char *s, const char *p);

/* The decoder's noise draws and timestep embeddings (host work of video_vae_decode.c). */

/* Where a decode's noise comes from (opts->noise, else Philox stream stream_base + k of seed); k
 * counts the draws made so far, in the decoder's draw order (see ltx2_vae_noise_fn). */
typedef struct vae_noise_src {
    const ltx2_vae_decode_opts *o;
    uint64_t k;
} vae_noise_src;

/* One draw of `name` (shape[ndim] floats into out); advances ns->k. */
ltx2_status vae_draw_noise(ltx2_context *ctx, vae_noise_src *ns, const char *name, int ndim, const int64_t *shape,
                           float *out);
/* out[e->dim] = the timestep embedding of the (already scaled) timestep t, in fp32 as the CPU
 * decoder computes it. */
ltx2_status vae_time_embed(ltx2_context *ctx, const ltx2_vae_time_embed *e, float t, float *out);

#endif
