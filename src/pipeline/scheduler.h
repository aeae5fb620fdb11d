/* Flow-matching sigma schedules (shifted + stretched, and the fixed distilled lists) and the Euler
 * step with the x0 <-> velocity conversions, following the rules in pipeline/semantics.h.
 * Arithmetic order and precision follow each reference so results match bit for bit where the
 * reference is fp32 torch/numpy (goldens: tests/golden/gen_sampler_goldens.py). */
#ifndef LTX2_PIPELINE_SCHEDULER_H
#define LTX2_PIPELINE_SCHEDULER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/context.h"
#include "pipeline/semantics.h"

/* Shift line mu(tokens) = tokens*m + b through (1024, 0.95) and (4096, 2.05): identical in LC
 * (LTX2Scheduler.execute defaults), DF (scheduler config written by the LTX-2 converter) and MD. */
#define LTX2_SCHED_BASE_SHIFT 0.95
#define LTX2_SCHED_MAX_SHIFT 2.05
#define LTX2_SCHED_BASE_TOKENS 1024
#define LTX2_SCHED_MAX_TOKENS 4096
/* Stretch so that the last non-zero sigma equals this (LC `terminal`, DF/MD `shift_terminal`). */
#define LTX2_SCHED_TERMINAL 0.1
/* Model timesteps are sigma * 1000 in every reference (num_train_timesteps). */
#define LTX2_SCHED_NUM_TRAIN_TIMESTEPS 1000.0f

typedef struct ltx2_sched_params {
    int steps;             /* N >= 1; the schedule has N+1 values ending in 0 */
    int64_t video_tokens;  /* F'*H'*W' of the video latent; used when the rules shift by tokens */
    double base_shift, max_shift;
    int64_t base_tokens, max_tokens;
    bool stretch;          /* LC `stretch`; DF/MD: shift_terminal set */
    double terminal;
} ltx2_sched_params;

/* steps and video_tokens given, everything else the LTX-2 defaults above. */
ltx2_sched_params ltx2_sched_params_default(int steps, int64_t video_tokens);

/* The shift mu the rules use for these params (token count after fixed/cap rules). */
double ltx2_sched_mu(const ltx2_sem_rules *rules, const ltx2_sched_params *p);

/* out[0..steps]: the N+1 sigmas, out[steps] = 0. Refuses stretch with steps < 2 (every reference
 * divides 0 by 0 there and returns NaN). */
ltx2_status ltx2_sched_sigmas(ltx2_context *ctx, const ltx2_sem_rules *rules,
                              const ltx2_sched_params *p, float *out);

/* The unshifted grid value for step i < steps as the rules' linspace produces it (MD's guidance
 * sigma, see ltx2_sem_rules.guidance_sigma_unshifted). */
float ltx2_sched_grid_sigma(const ltx2_sem_rules *rules, int steps, int i);

typedef enum ltx2_distilled_stage {
    LTX2_DISTILLED_STAGE1 = 0, /* ltx_pipelines/utils/constants.py DISTILLED_SIGMA_VALUES (8 steps) */
    LTX2_DISTILLED_STAGE2      /* STAGE_2_DISTILLED_SIGMA_VALUES (3 steps) */
} ltx2_distilled_stage;

/* The fixed distilled list (including the final 0); *n_values = steps + 1. Used verbatim by all
 * three references (DF's converter turns shifting and stretching off for distilled checkpoints;
 * MD set_timesteps_ltx2 special cases). Returns NULL for an unknown stage. */
const float *ltx2_sched_distilled(ltx2_distilled_stage stage, int *n_values);

/* x0 = x - v*sigma (LC to_denoised: fp32, cast to the latent dtype; under the bf16 rules v is rounded
 * to bf16 first, as LC's bf16 model returns it). In place allowed (out == x0). */
void ltx2_sched_velocity_to_x0(const ltx2_sem_rules *rules, const float *x, const float *v,
                               float sigma, int64_t n, float *x0);
/* v = (x - x0)/sigma (LC to_velocity). sigma must be non-zero (LC raises; we return an error). */
ltx2_status ltx2_sched_x0_to_velocity(ltx2_context *ctx, const ltx2_sem_rules *rules, const float *x,
                                      const float *x0, float sigma, int64_t n, float *v);
/* x <- x + v*(sigma_next - sigma), fp32, cast to the latent dtype (LC EulerDiffusionStep, DF/MD
 * scheduler step; dt is computed in fp32 first in all three). */
void ltx2_sched_euler_step(const ltx2_sem_rules *rules, float *x, const float *v, float sigma,
                           float sigma_next, int64_t n);

/* Round to bf16 and back when the rules keep latents in bf16 (LC); no-op otherwise. */
void ltx2_sched_round_latent(const ltx2_sem_rules *rules, float *x, int64_t n);

#endif
