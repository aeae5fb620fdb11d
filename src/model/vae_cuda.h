/* The video VAE decoder on a device backend (normally CUDA: bf16 storage, fp32 accumulation):
 * the same forward as ltx2_video_decoder_decode_ex (src/model/video_vae.c) on the same host
 * latent, with the CPU decoder's parsed weights and config. conv_in, every up block (res blocks
 * with their timestep modulation and noise injection, depth-to-space upsamplers with or without
 * residual), the output norm and conv_out run as backend ops; the per-channel un-normalisation,
 * the latent noise mix, the timestep MLPs (a few hundred values) and the unpatchify stay on the
 * host in fp32. */
#ifndef LTX2_MODEL_VAE_CUDA_H
#define LTX2_MODEL_VAE_CUDA_H

#include "backend/backend.h"
#include "model/video_vae.h"

/* A decoder's conv weights on a backend. Keeps a pointer to `dec`, which must outlive it. */
typedef struct ltx2_vae_device ltx2_vae_device;

/* Uploads every conv of dec (the CPU decoder's packed [kt, kh, kw, c_in][c_out] weights, which
 * are already the B operand ltx2_backend_conv3d reads; no re-derivation from the checkpoint) in
 * the backend's storage dtype: bf16 where the backend has a bf16 conv3d (CUDA), else f32 (the CPU
 * backend, which makes this file testable without a GPU). LTX2_ERR_UNSUPPORTED naming the op when
 * the backend lacks one the decoder needs in that dtype. Channel counts the backend's conv cannot
 * run (CUDA: multiples of 8) fail later, in the stage that uses them, with its name. */
ltx2_status ltx2_vae_device_create(ltx2_context *ctx, const ltx2_backend *be, const ltx2_video_decoder *dec,
                                   ltx2_vae_device **out);
void ltx2_vae_device_free(ltx2_vae_device *dv);

/* The dtype activations and weights are stored in on the device (LTX2_BF16 or LTX2_F32). */
ltx2_dtype ltx2_vae_device_dtype(const ltx2_vae_device *dv);

/* ltx2_video_decoder_decode_ex on the device: latent and video are host tensors exactly as there
 * (contiguous f32 CPU NDHWC), opts NULL = ltx2_vae_decode_opts_default(), and the noise draws are
 * the same (callback or Philox streams, same order). dump (may be NULL) gets the stages the CPU
 * decoder names, downloaded to f32, except "decoder.conv_norm_out.out" (the device fuses the
 * norm with the SiLU that follows it). */
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
