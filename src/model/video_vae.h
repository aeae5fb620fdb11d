/* LTX-2 video VAE on the CPU (fp32, channels-last NDHWC): weights loaded by checkpoint name and
 * validated against the config, and the decoder forward of ltx-core's VideoDecoder
 * (un-normalise, conv_in, up blocks, PixelNorm, SiLU, conv_out, unpatchify). A dump callback sees
 * every block output under the reference module path, for golden comparisons. */
#ifndef LTX2_MODEL_VIDEO_VAE_H
#define LTX2_MODEL_VIDEO_VAE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/conv3d_desc.h"
#include "io/safetensors.h"
#include "backend/backend.h"
#include "ltx2/tensor.h"
#include "model/vae_config.h"

/* Called with the tensor after each named stage, e.g. "decoder.conv_in.out",
 * "decoder.up_blocks.3.out", "decoder.up_blocks.0.res_blocks.1.out", "decoder.out". The view is a
 * contiguous f32 NDHWC tensor [B, T, H, W, C], valid only during the call. */
typedef void (*ltx2_vae_dump_fn)(const char *name, const ltx2_tensor *t, void *user);

typedef struct ltx2_vae_conv {
    ltx2_conv3d_desc desc;
    float *weight; /* packed [kt, kh, kw, c_in][c_out] (cpu_conv3d.h) */
    float *bias;   /* [c_out] */
} ltx2_vae_conv;

/* PixArtAlphaCombinedTimestepSizeEmbeddings (size_emb_dim 0): 256-wide sinusoidal embedding of the
 * scaled timestep (cos half first), linear_1 -> SiLU -> linear_2, giving `dim` values. */
typedef struct ltx2_vae_time_embed {
    int64_t dim;
    float *w1, *b1; /* [dim, 256], [dim] (PyTorch Linear layout) */
    float *w2, *b2; /* [dim, dim], [dim] */
} ltx2_vae_time_embed;

/* Width of the sinusoidal timestep projection (ltx-core Timesteps(num_channels=256)). */
#define LTX2_VAE_TIME_PROJ_DIM 256

typedef struct ltx2_vae_dec_block {
    ltx2_vae_block_kind kind;
    int64_t c_in, c_out;
    int n_layers;          /* res_x: resnet layers; res[2j] = conv1, res[2j+1] = conv2 */
    ltx2_vae_conv *res;
    bool inject_noise;     /* res_x: per layer, add noise[h, w] * per_channel_scale{1,2}[c] after each conv */
    float **noise_scale;   /* res_x with inject_noise: [2 * n_layers] arrays of c_in (scale1, scale2 per layer) */
    ltx2_vae_time_embed temb;   /* res_x of a timestep-conditioned decoder: dim = 4 * c_in */
    float **scale_shift;   /* same: [n_layers] tables [4][c_in] (shift1, scale1, shift2, scale2) */
    ltx2_vae_conv up;      /* compress_*: conv to prod(stride) * c_out channels, then depth-to-space */
    int64_t stride[3];     /* (t, h, w) */
    bool residual;         /* compress_all with residual: add the tiled depth-to-space of the input */
} ltx2_vae_dec_block;

typedef struct ltx2_vae_device ltx2_vae_device;

typedef struct ltx2_video_decoder {
    ltx2_vae_config cfg;
    float *mean_of_means, *std_of_means; /* [latent_channels] */
    ltx2_vae_conv conv_in, conv_out;
    int n_blocks;
    ltx2_vae_dec_block *blocks; /* up_blocks in execution order (= reversed decoder_blocks) */
    int64_t time_factor;        /* latent frame step: F = time_factor * (F' - 1) + 1 */
    int64_t space_factor;       /* pixels per latent along H and W (patch x spatial strides) */
    bool timestep_conditioning; /* decided at load (config, or the tensors when the key is absent) */
    float timestep_scale_multiplier; /* decoder.timestep_scale_multiplier (1000 in ltx-core) */
    ltx2_vae_time_embed last_temb;   /* dim = 2 * (last block width) */
    float *last_scale_shift;         /* [2][last width]: shift, scale after conv_norm_out */
    bool needs_noise;                /* timestep conditioning or any inject_noise block */
    ltx2_vae_device *placed;         /* ltx2_video_decoder_place: where decodes run (NULL: the CPU) */
} ltx2_video_decoder;

/* A decoder with its block plan (kinds, channels, strides, factors) and no tensors, for the memory
 * planner; timestep conditioning as the config says (absent: off, as in every 2.0 / 2.3 file). */
ltx2_status ltx2_video_decoder_shape_only(ltx2_context *ctx, const ltx2_vae_config *cfg, ltx2_video_decoder **out);

/* Runs every later decode of dec (ltx2_video_decoder_decode_ex, the tiled and parallel decodes) on
 * be: its convs are copied there once (bf16 where be has a bf16 conv3d). NULL or the CPU backend
 * itself: back to the host weights; any other backend gets its copy, one over host memory too (a
 * bench's profiling wrapper of the CPU backend). */
ltx2_status ltx2_video_decoder_place(ltx2_context *ctx, ltx2_video_decoder *dec, const ltx2_backend *be);

/* ltx-core VideoDecoder defaults (`decode_timestep`, `decode_noise_scale`). */
#define LTX2_VAE_DECODE_TIMESTEP_DEFAULT 0.05
#define LTX2_VAE_DECODE_NOISE_SCALE_DEFAULT 0.025

/* Fills `out` with standard-normal noise for one draw of the decoder, in ltx-core's draw order:
 * "decoder.noise" (timestep conditioning: the latent noise, NDHWC [B, F', H', W', C], i.e. the
 * torch draw [B, C, F', H', W'] transposed), then per inject_noise res block, conv1 then conv2,
 * "decoder.up_blocks.<i>.res_blocks.<j>.noise<1|2>" of shape [H, W] (shared by batch, frames and
 * channels, as in ltx-core). `ndim`/`shape` describe `out`. */
typedef ltx2_status (*ltx2_vae_noise_fn)(ltx2_context *ctx, const char *name, int ndim, const int64_t *shape,
                                         float *out, void *user);

/* Options of a (timestep-conditioned / noise-injecting) decode; ignored by plain decoders. */
typedef struct ltx2_vae_decode_opts {
    double timestep;        /* decode_timestep */
    double noise_scale;     /* decode_noise_scale: latent = noise * s + (1 - s) * latent */
    ltx2_vae_noise_fn noise; /* NULL: Philox normals, draw k = stream (stream_base + k) of `seed` */
    void *noise_user;
    uint64_t seed;
    uint64_t stream_base;
} ltx2_vae_decode_opts;

/* ltx-core defaults, Philox seed 0. */
ltx2_vae_decode_opts ltx2_vae_decode_opts_default(void);

/* Loads `<prefix>decoder.*` and `<prefix>per_channel_statistics.{mean-of-means,std-of-means}`
 * (prefix "vae." for single-file checkpoints, "" for split VAE files). Every expected tensor must
 * exist with the shape the config implies, and every `<prefix>decoder.*` tensor must be used.
 * Timestep conditioning (decoder.timestep_scale_multiplier, last_time_embedder,
 * last_scale_shift_table, per-res_x time_embedder and scale_shift_table) is loaded when the config
 * says so, or, when the key is absent, when decoder.last_scale_shift_table exists. */
ltx2_status ltx2_video_decoder_load(ltx2_context *ctx, const ltx2_st_set *weights, const char *prefix,
                                    const ltx2_vae_config *cfg, ltx2_video_decoder **out);
void ltx2_video_decoder_free(ltx2_video_decoder *dec);

/* Video shape [B, F, H, W, out_channels] for a latent of NDHWC shape [B, F', H', W', C]. */
ltx2_status ltx2_video_decoder_out_shape(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                         const int64_t latent_ndhwc[5], int64_t video_ndhwc[5]);

/* Latent grid (F', H', W') for a pixel video of frames x height x width: frames must be
 * time_factor*k + 1 and height/width multiples of space_factor, else LTX2_ERR_SHAPE. */
ltx2_status ltx2_video_decoder_latent_grid(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                           int64_t frames, int64_t height, int64_t width,
                                           int64_t latent_fhw[3]);

/* Decodes a normalized latent (contiguous f32 CPU NDHWC [B, F', H', W', latent_channels]) into
 * `video` (contiguous f32 CPU NDHWC of ltx2_video_decoder_out_shape; RGB, nominally [-1, 1]).
 * dump may be NULL. Uses ltx2_vae_decode_opts_default() for conditioned decoders. */
ltx2_status ltx2_video_decoder_decode(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                      const ltx2_tensor *latent, ltx2_tensor *video,
                                      ltx2_vae_dump_fn dump, void *user);

/* Same with explicit timestep / noise options (opts NULL = defaults). */
ltx2_status ltx2_video_decoder_decode_ex(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                         const ltx2_tensor *latent, ltx2_tensor *video,
                                         const ltx2_vae_decode_opts *opts, ltx2_vae_dump_fn dump, void *user);

/* ------------------------------------------------------------------------------------------- */
/* Encoder (ltx-core VideoEncoder): patchify, conv_in, down blocks (res_x, SpaceToDepthDownsample
 * `compress_*_res`), PixelNorm, SiLU, conv_out, mean channels, normalize with per-channel stats.
 * Always causal (frame 0 replicated in front). Names: "encoder.in", "encoder.conv_in.out",
 * "encoder.down_blocks.<i>.out", "encoder.conv_out.out", "encoder.out". */

typedef struct ltx2_vae_enc_block {
    ltx2_vae_block_kind kind;
    int64_t c_in, c_out;
    int n_layers;          /* res_x */
    ltx2_vae_conv *res;
    ltx2_vae_conv down;    /* compress_*_res: conv to c_out / prod(stride) channels, then space-to-depth */
    int64_t stride[3];
    int64_t group;         /* skip path: space-to-depth channels averaged in consecutive groups of this size */
} ltx2_vae_enc_block;

typedef struct ltx2_vae_enc_device ltx2_vae_enc_device;

typedef struct ltx2_video_encoder {
    ltx2_vae_config cfg;
    float *mean_of_means, *std_of_means;
    ltx2_vae_conv conv_in, conv_out;
    int n_blocks;
    ltx2_vae_enc_block *blocks;
    int64_t time_factor, space_factor;
    ltx2_vae_enc_device *placed; /* ltx2_video_encoder_place: where encodes run (NULL: the CPU) */
} ltx2_video_encoder;

/* An encoder with its block plan (kinds, channels, strides, factors) and the channel counts of
 * conv_in / conv_out, no tensors: for the memory planner. */
ltx2_status ltx2_video_encoder_shape_only(ltx2_context *ctx, const ltx2_vae_config *cfg, ltx2_video_encoder **out);
/* Loads `<prefix>encoder.*` and the shared per-channel statistics (same rules as the decoder). */
ltx2_status ltx2_video_encoder_load(ltx2_context *ctx, const ltx2_st_set *weights, const char *prefix,
                                    const ltx2_vae_config *cfg, ltx2_video_encoder **out);
void ltx2_video_encoder_free(ltx2_video_encoder *enc);

/* Latent shape [B, F', H', W', latent_channels] for a video [B, F, H, W, in_channels]. Unlike
 * ltx-core (which crops extra frames with a warning) frames must be time_factor*k + 1 and H, W
 * multiples of space_factor, else LTX2_ERR_SHAPE. */
ltx2_status ltx2_video_encoder_out_shape(ltx2_context *ctx, const ltx2_video_encoder *enc,
                                         const int64_t video_ndhwc[5], int64_t latent_ndhwc[5]);

/* Encodes a video (contiguous f32 CPU NDHWC, RGB in [-1, 1]) into the normalized mean latent, on
 * the backend enc is placed on (the CPU backend when it is not). */
ltx2_status ltx2_video_encoder_encode(ltx2_context *ctx, const ltx2_video_encoder *enc,
                                      const ltx2_tensor *video, ltx2_tensor *latent,
                                      ltx2_vae_dump_fn dump, void *user);

/* Runs every later encode of enc (ltx2_video_encoder_encode, the tiled encode) on be: its convs are
 * copied there once (bf16 where be has a bf16 conv3d). NULL or the CPU backend: back to the host
 * weights. */
ltx2_status ltx2_video_encoder_place(ltx2_context *ctx, ltx2_video_encoder *enc, const ltx2_backend *be);

/* ---- the encoder on a backend (video_vae_encode.c: its one forward, run by every backend) ---- */

/* enc's convs on be, as ltx2_vae_device_create places a decoder's (same dtype rule and refusals).
 * Keeps a pointer to enc, which must outlive it. */
ltx2_status ltx2_vae_enc_device_create(ltx2_context *ctx, const ltx2_backend *be, const ltx2_video_encoder *enc,
                                       ltx2_vae_enc_device **out);
void ltx2_vae_enc_device_free(ltx2_vae_enc_device *dv);
/* The encode on dv's backend; arguments and dumps as ltx2_video_encoder_encode. */
ltx2_status ltx2_vae_enc_device_encode(ltx2_context *ctx, const ltx2_vae_enc_device *dv, const ltx2_tensor *video,
                                       ltx2_tensor *latent, ltx2_vae_dump_fn dump, void *user);

/* ---- the decoder on a backend (video_vae_decode.c: its one forward, run by every backend) ---- */

/* A decoder's conv weights on a backend (ltx2_vae_device). Keeps a pointer to `dec`, which must
 * outlive it. */

/* Places every conv of dec (the packed [kt, kh, kw, c_in][c_out] weights, which are already the
 * B operand ltx2_backend_conv3d reads) on be in its storage dtype: bf16 where the backend has a
 * bf16 conv3d (CUDA, the emulator), else f32 (the CPU backend, where the weights are used in place,
 * not copied). LTX2_ERR_UNSUPPORTED naming the op when
 * the backend lacks one the decoder needs in that dtype. Channel counts the backend's conv cannot
 * run (CUDA: multiples of 8) fail later, in the stage that uses them, with its name. */
ltx2_status ltx2_vae_device_create(ltx2_context *ctx, const ltx2_backend *be, const ltx2_video_decoder *dec,
                                   ltx2_vae_device **out);
void ltx2_vae_device_free(ltx2_vae_device *dv);

/* The dtype activations and weights are stored in on the device (LTX2_BF16 or LTX2_F32). */
ltx2_dtype ltx2_vae_device_dtype(const ltx2_vae_device *dv);

/* The decode on dv's backend: latent and video are host tensors as for
 * ltx2_video_decoder_decode_ex (contiguous f32 CPU NDHWC), opts NULL = ltx2_vae_decode_opts_default(),
 * the noise draws are the same (callback or Philox streams, same order), and dump (may be NULL) gets
 * every named stage downloaded to f32. */
ltx2_status ltx2_vae_device_decode(ltx2_context *ctx, const ltx2_vae_device *dv, const ltx2_tensor *latent,
                                   ltx2_tensor *video, const ltx2_vae_decode_opts *opts, ltx2_vae_dump_fn dump,
                                   void *user);

/* Up block i alone ("decoder.up_blocks.<i>"), for stage-by-stage comparisons: x is its input as a
 * host f32 NDHWC tensor [B, T, H, W, c_in], y receives its output (host f32, the shape the block
 * produces). Noise draws start where a full decode would be when it reaches block i (after the
 * latent draw and the draws of earlier noise-injecting blocks), so with the same opts the block
 * sees the same noise as in ltx2_video_decoder_decode_ex. */
ltx2_status ltx2_vae_device_run_block(ltx2_context *ctx, const ltx2_vae_device *dv, int i,
                                      const ltx2_vae_decode_opts *opts, const ltx2_tensor *x, ltx2_tensor *y);

#endif
