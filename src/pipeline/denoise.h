/* One denoising stage of a pipeline: the Euler loop over a sigma list, each step's guidance passes
 * laid out in model calls as the plan says, the passes combined per modality, NaN checks and
 * per-step dumps. ltx-pipelines 1.0.0 utils/samplers.py euler_denoising_loop with
 * multi_modal_guider_factory_denoising_func (guided) or simple_denoising_func (a plan of one pass).
 * The one-stage pipeline runs one stage; the distilled and two-stage pipelines run two (generate.c). */
#ifndef LTX2_PIPELINE_DENOISE_H
#define LTX2_PIPELINE_DENOISE_H

#include <stdbool.h>
#include <stdint.h>

#include "ltx2/ltx2.h"
#include "model/dit_parallel.h"
#include "pipeline/guidance.h"
#include "pipeline/pipeline.h"
#include "pipeline/semantics.h"

/* One encoded prompt: the DiT contexts for both streams, [S, video width] and [S, audio width]. */
typedef struct ltx2_pipe_context {
    float *video, *audio;
    int64_t S;
} ltx2_pipe_context;

typedef struct ltx2_denoise_stage {
    const ltx2_pipe_models *m;
    const ltx2_pipe_geometry *g;
    const ltx2_sem_rules *rules;
    const ltx2_guidance_params *gp;
    const ltx2_guidance_plan *plan;
    const ltx2_pipe_context *pos, *neg; /* neg NULL when the plan has no unconditional pass */
    const float *vpos, *apos;           /* positions of one sample: [1, 3, Tv, 2], [1, 1, Ta, 2] */
    const float *sigmas;                /* steps + 1 values, the last 0 */
    int steps;
    int64_t stg_block;
    /* video tokens a conditioning gives (an image): ltx-core's denoise mask [Tv] (1 free, 1 - strength
     * given) and clean latent [Tv, C]; NULL: every token free. The DiT then sees per-token timesteps
     * mask * sigma, and each step's x0 is blended with the clean latent by the mask
     * (post_process_latent) before the Euler update. */
    const float *video_mask, *video_clean;
    /* audio-to-video (a2vid_two_stage's denoise_video_only): the audio latent is given and held with
     * denoise mask 0, so its tokens see timestep 0 and it never moves; the audio guider is a default
     * MultiModalGuider (no guidance, no negative context), so the unconditional pass sees the
     * positive audio context. The audio scales of gp must be off. */
    bool audio_held;
    ltx2_dit_parallel *dp;              /* multi-rank runs: the sharded DiT (NULL: one rank) */
    /* dumps (dump_dir NULL: none), per step under the stage's prefix: each pass's velocity
     * step_NNN_pass_<cond|uncond|ptb|mod>_{video,audio}, the guided velocity step_NNN_guided_*, the
     * guided x0 step_NNN_x0_*, and the latent after the step step_NNN_{video,audio} (token-major
     * [tokens, channels]); the DiT's intermediates of model call dump_call (0-based, counted over
     * the whole run in *model_calls) under dump_dir/dit */
    const char *dump_dir, *dump_prefix;
    int dump_call;
    int *model_calls;
    /* progress: steps before this stage and in the whole run (the callback sees one count) */
    int steps_before, steps_total;
    double t_start;                     /* the run's denoising start, for the progress callback */
} ltx2_denoise_stage;

/* Runs the stage on the token-order latents xv [Tv, C] and xa [Ta, z*F'] in place. p gives the
 * cancel and progress callbacks; report_progress false on ranks other than 0. */
ltx2_status ltx2_denoise_run(ltx2_context *ctx, const ltx2_denoise_stage *s, const ltx2_generate_params *p,
                             bool report_progress, float *xv, float *xa);

/* The caller's cancel callback: LTX2_ERR_CANCELLED naming step (> 0) or where. */
ltx2_status ltx2_denoise_check_cancel(ltx2_context *ctx, const ltx2_generate_params *p, const char *where, int step);

#endif
