/* The LTX-2 / LTX-2.3 audio-video transformer (DiT) forward on the CPU in fp32, matching ltx-core
 * 1.0.0's LTXModel.forward: inputs are patchified tokens, per-token timesteps, positions and text
 * contexts for both modalities; outputs are the velocities. An optional dump callback sees every
 * intermediate under the reference module path (see tests/golden/gen_dit_goldens.py for the names). */
#ifndef LTX2_MODEL_DIT_H
#define LTX2_MODEL_DIT_H

#include <stdint.h>

#include "ltx2/tensor.h"
#include "model/dit_weights.h"

/* Called with each intermediate (a contiguous f32 CPU view valid only during the call). */
typedef void (*ltx2_dit_dump_fn)(const char *name, const ltx2_tensor *t, void *user);

/* Which timesteps drive the audio<->video cross-attention AdaLN (spec section 6 item 1). */
typedef enum ltx2_dit_av_timestep {
    /* ltx-core 1.0.0 (and diffusers use_cross_timestep=True): scale/shift and gate both from the
     * other modality's sigma. The default: our goldens come from ltx-core 1.0.0. */
    LTX2_DIT_AV_TS_CROSS_SIGMA = 0,
    /* ltx-core HEAD since 203d484: scale/shift from the modality's own per-token timesteps, gate
     * from the other modality's sigma. */
    LTX2_DIT_AV_TS_OWN_SCALE_CROSS_GATE = 1,
    /* diffusers use_cross_timestep=False (its transformer's default; MaxDiffusion's LTX-2.0 yml;
     * ltx-core 9ce438b): scale/shift AND gate from the modality's own per-token timesteps (gate
     * x av_ca_timestep_scale_multiplier / timestep_scale_multiplier). */
    LTX2_DIT_AV_TS_OWN = 2
} ltx2_dit_av_timestep;

typedef struct ltx2_dit_modality {
    const float *latent;          /* [B, T, in_channels] tokens */
    const float *positions;       /* [B, n_axes, T, 2] [start, end) per axis (video: s, px, px; audio: s) */
    const float *timesteps;       /* [B, T] sigma * denoise mask (NOT yet x1000) */
    const float *sigma;           /* [B] */
    const float *context;         /* [B, S, width] text context (caption_channels wide for LTX-2.0) */
    const uint8_t *context_mask;  /* [B, S] 1 = attend, 0 = padding; NULL = all */
    int64_t T, S;
} ltx2_dit_modality;

/* Per-sample, per-block attention perturbations (STG and modality isolation), as ltx-core's
 * BatchedPerturbationConfig: a skipped self-attention outputs its value projection instead of
 * attention (gate, to_out and the AdaLN gate still apply); a skipped A/V cross-attention adds
 * nothing to its stream. */
typedef enum ltx2_dit_perturb_flag {
    LTX2_DIT_SKIP_VIDEO_SELF_ATTN = 1u << 0, /* "skip_video_self_attn" (video STG) */
    LTX2_DIT_SKIP_AUDIO_SELF_ATTN = 1u << 1, /* "skip_audio_self_attn" (audio STG) */
    LTX2_DIT_SKIP_A2V_CROSS_ATTN = 1u << 2,  /* "skip_a2v_cross_attn" (modality isolation) */
    LTX2_DIT_SKIP_V2A_CROSS_ATTN = 1u << 3   /* "skip_v2a_cross_attn" (modality isolation) */
} ltx2_dit_perturb_flag;

typedef struct ltx2_dit_forward_params {
    int64_t batch;
    ltx2_dit_modality video, audio;
    ltx2_dit_av_timestep av_timestep;
    /* [batch * num_layers] OR of ltx2_dit_perturb_flag for (sample b, block i) at b * num_layers + i;
     * NULL = no perturbation. Fill with ltx2_dit_perturb_set. */
    const uint32_t *perturb;
    ltx2_dit_dump_fn dump;  /* may be NULL */
    void *dump_user;
} ltx2_dit_forward_params;

void ltx2_dit_forward_params_init(ltx2_dit_forward_params *p);

/* ORs flags into perturb[b * num_layers + i] for each i in blocks[0..n_blocks) (blocks NULL = every
 * block, like ltx-core's Perturbation(blocks=None)). Out-of-range blocks are an error. */
ltx2_status ltx2_dit_perturb_set(ltx2_context *ctx, uint32_t *perturb, int64_t num_layers, int64_t b, uint32_t flags,
                                 const int64_t *blocks, int64_t n_blocks);

/* video_out [B, Tv, out_channels], audio_out [B, Ta, audio_out_channels]. */
ltx2_status ltx2_dit_forward(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_dit_forward_params *p,
                             float *video_out, float *audio_out);

#endif
