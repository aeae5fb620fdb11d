/* Guidance: which extra model passes a step needs (CFG "uncond", STG "ptb", modality isolation
 * "mod"), how the references lay them out in model calls, and how the per-pass predictions are
 * combined per modality (video and audio each have their own scales). Rules: pipeline/semantics.h.
 *
 * Formula (x0 space, all three references): pred = c + (cfg-1)(c-u) + stg(c-p) + (mod-1)(c-m),
 * then optional guidance rescale toward std(c). MaxDiffusion's CFG-only path is velocity-space
 * u + cfg*(c-u) with the video scale for audio too (rule cfg_only_velocity). */
#ifndef LTX2_PIPELINE_GUIDANCE_H
#define LTX2_PIPELINE_GUIDANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/context.h"
#include "pipeline/semantics.h"

typedef enum ltx2_guidance_pass {
    LTX2_PASS_COND = 0, /* positive prompt */
    LTX2_PASS_UNCOND,   /* negative prompt (CFG) */
    LTX2_PASS_PTB,      /* STG: self-attention -> value passthrough in the STG blocks */
    LTX2_PASS_MOD,      /* modality isolation: a2v and v2a removed in every block */
    LTX2_PASS_COUNT
} ltx2_guidance_pass;

/* Per-modality scales. Doubles because the references hold them as Python floats: (cfg - 1) and
 * (1 - rescale) are formed in double and only then rounded to fp32 for the tensor op. */
typedef struct ltx2_guidance_scales {
    double cfg;      /* 1 = off */
    double stg;      /* 0 = off */
    double rescale;  /* 0 = off */
    double modality; /* 1 = off */
    int skip_step;   /* LC only: k > 0 reuses the previous x0 on steps with step % (k+1) != 0 */
} ltx2_guidance_scales;

typedef struct ltx2_guidance_params {
    ltx2_guidance_scales video, audio;
} ltx2_guidance_params;

/* No guidance at all (one conditional pass). */
ltx2_guidance_scales ltx2_guidance_scales_off(void);
/* ltx-pipelines LTX_2_PARAMS / LTX_2_3_PARAMS: video cfg 3, stg 1, rescale 0.7, modality 3;
 * audio cfg 7, stg 1, rescale 0.7, modality 3 (STG blocks [29] for 2.0, [28] for 2.3 live in the
 * DiT perturbation config, not here). */
ltx2_guidance_params ltx2_guidance_params_ltx2_default(void);

/* Audio scales the way each reference resolves unset ones: NAN = unset. DF: `audio_x or x`, so
 * NAN and 0.0 take the video value; MD: None (NAN) takes the video value, except rescale whose
 * default is 0.0; LC: no fallback (NAN is an error). */
ltx2_status ltx2_guidance_resolve_audio(ltx2_context *ctx, const ltx2_sem_rules *rules,
                                        const ltx2_guidance_scales *video,
                                        const ltx2_guidance_scales *audio_in,
                                        ltx2_guidance_scales *audio_out);

/* LC MultiModalGuider.should_skip_step: true when this step reuses the previous prediction. */
bool ltx2_guidance_skip_step(const ltx2_guidance_scales *s, int step);

#define LTX2_GUIDANCE_MAX_CALLS 4

typedef struct ltx2_guidance_plan {
    int n_passes;
    ltx2_guidance_pass order[LTX2_PASS_COUNT]; /* slot i of the model outputs holds pass order[i] */
    int call_of[LTX2_PASS_COUNT];              /* model call that computes slot i (0-based) */
    int n_calls;
    bool stg_video, stg_audio; /* self-attentions the ptb pass perturbs */
    bool velocity_cfg;         /* MD CFG-only velocity path (rule cfg_only_velocity) */
    /* --precision tpu: the DiT's velocities are bf16 arrays in MaxDiffusion, so its CFG-only
     * u + scale * (c - u) is bf16 arithmetic (each op rounded, the weak-typed scale cast to bf16);
     * the x0 path promotes to f32 through the f32 latents and needs nothing. */
    bool velocity_bf16;
} ltx2_guidance_plan;

/* Which passes run and in what layout, for these (already resolved) scales. Passes whose scale
 * makes them a no-op are skipped per the rules' predicate. MD refuses STG without CFG. */
ltx2_status ltx2_guidance_plan_make(ltx2_context *ctx, const ltx2_sem_rules *rules,
                                    const ltx2_guidance_params *params, ltx2_guidance_plan *plan);
/* Slot of a pass in the plan, -1 when it does not run. */
int ltx2_guidance_plan_slot(const ltx2_guidance_plan *plan, ltx2_guidance_pass pass);

/* x0-space combination for one modality. x0[p] is pass p's prediction (indexed by
 * ltx2_guidance_pass, NULL when the pass did not run), each [batch, per_sample]. out may alias
 * none of the inputs. With rules.latent_bf16 every intermediate is rounded to bf16, as LC's bf16
 * tensors do. */
ltx2_status ltx2_guidance_combine_x0(ltx2_context *ctx, const ltx2_sem_rules *rules,
                                     const ltx2_guidance_scales *s,
                                     const float *const x0[LTX2_PASS_COUNT], int64_t batch,
                                     int64_t per_sample, float *out);

/* One modality, one step, from raw model velocities: convert each pass to x0 with the rules' sigma
 * (sigma = shifted schedule value, sigma_grid = unshifted grid value; MD uses the latter), combine,
 * convert back. v_out gets the guided velocity for ltx2_sched_euler_step; x0_out (may be NULL) the
 * guided x0. `video` holds the video scales (MD's CFG-only path applies them to audio too). */
ltx2_status ltx2_guidance_apply(ltx2_context *ctx, const ltx2_sem_rules *rules,
                                const ltx2_guidance_plan *plan, const ltx2_guidance_scales *s,
                                const ltx2_guidance_scales *video, const float *x,
                                const float *const v[LTX2_PASS_COUNT], int64_t batch,
                                int64_t per_sample, float sigma, float sigma_grid, float *v_out,
                                float *x0_out);

/* ltx2_guidance_apply's ltx-core path when some tokens are given by a conditioning (x [n / channels
 * tokens, channels], mask [tokens] the denoise mask, clean [n] the clean latent): ltx-pipelines'
 * X0Model turns each pass's velocity into x0 with the token's timestep mask * sigma, the guider
 * combines them, post_process_latent blends x0 * mask + clean * (1 - mask), and the Euler step's
 * velocity is taken at sigma. With every mask 1 it equals ltx2_guidance_apply's LC path. x0_out (may
 * be NULL) gets the blended x0. */
ltx2_status ltx2_guidance_apply_masked(ltx2_context *ctx, const ltx2_sem_rules *rules, const ltx2_guidance_scales *s,
                                       const float *x, const float *const v[LTX2_PASS_COUNT], int64_t n,
                                       int64_t channels, float sigma, const float *mask, const float *clean,
                                       float *v_out, float *x0_out);

#endif
