/* Reference semantics for the sampler and guidance: ltx-core (default), diffusers, MaxDiffusion.
 * The three references agree on the model but differ in small sampler/guidance rules; each such
 * rule is one named field of ltx2_sem_rules, resolved from an ltx2_semantics value, so a run can
 * pick a reference and still override a single rule (e.g. ltx-core's HQ pipeline, which shifts
 * by the real token count: rules.shift_fixed_tokens = 0).
 *
 * Sources read (paths relative to site-packages/ for the installed versions ltx-core 1.0.0,
 * ltx-pipelines 1.0.0, diffusers 0.42.1; MaxDiffusion HEAD 7cfb880, src/maxdiffusion/):
 *   LC  ltx_core/components/schedulers.py LTX2Scheduler.execute
 *   LCg ltx_core/components/guiders.py MultiModalGuider.calculate / do_*_generation
 *   LCs ltx_core/components/diffusion_steps.py EulerDiffusionStep.step; ltx_core/utils.py
 *       to_velocity / to_denoised
 *   LP  ltx_pipelines/utils/helpers.py multi_modal_guider_denoising_func;
 *       ltx_pipelines/ti2vid_*.py (LTX2Scheduler().execute(steps=N): no latent)
 *   DF  diffusers/pipelines/ltx2/pipeline_ltx2.py LTX2Pipeline.__call__ (steps 5 and 7),
 *       rescale_noise_cfg, convert_velocity_to_x0 / convert_x0_to_velocity;
 *       diffusers/schedulers/scheduling_flow_match_euler_discrete.py set_timesteps, step
 *   MD  pipelines/ltx2/ltx2_pipeline.py __call__ (5. Prepare Timesteps), _apply_ltx2_guidance,
 *       rescale_noise_cfg, transformer_forward_pass (masks), run_diffusion_loop (scan inputs);
 *       schedulers/scheduling_flow_match_flax.py set_timesteps_ltx2, step */
#ifndef LTX2_PIPELINE_SEMANTICS_H
#define LTX2_PIPELINE_SEMANTICS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/dit.h"

typedef enum ltx2_semantics {
    LTX2_SEM_LTX_CORE = 0, /* default: Lightricks' reference */
    LTX2_SEM_DIFFUSERS,
    LTX2_SEM_MAXDIFFUSION,
    LTX2_SEM_COUNT
} ltx2_semantics;

/* How the unshifted sigma grid 1 -> 1/N is produced (all end up fp32; rounding differs). */
typedef enum ltx2_sigma_grid {
    LTX2_GRID_TORCH = 0, /* LC: torch.linspace(1, 0, N+1) in fp32 (two-sided fill) */
    LTX2_GRID_NUMPY,     /* DF: np.linspace(1, 1/N, N) in float64, cast to fp32 */
    LTX2_GRID_JAX        /* MD: jnp.linspace(1, 1/N, N) as XLA compiles it on the CPU:
                            fma(k, fl(stop * c), fl(1 - k c)), c = fl(1/(N-1)) */
} ltx2_sigma_grid;

/* Which predicate decides that a guidance pass is needed. */
typedef enum ltx2_pass_rule {
    LTX2_PASSES_LTX_CORE = 0, /* LCg: per modality, cfg !isclose 1, stg !isclose 0, mod !isclose 1
                                 (rel 1e-9); a pass runs if either modality needs it */
    LTX2_PASSES_DIFFUSERS,    /* DF: cfg > 1, stg > 0, mod > 1 (either modality) */
    LTX2_PASSES_MAXDIFFUSION  /* MD: video cfg > 1 -> [uncond, cond]; video stg > 0 as well ->
                                 all four; STG without CFG is refused; audio scales never decide */
} ltx2_pass_rule;

/* How the passes are laid out in model calls. */
typedef enum ltx2_batch_order {
    LTX2_BATCH_LTX_CORE = 0, /* LP (1.0.0): one call per pass, in order cond, uncond, ptb, mod
                                (ltx-core HEAD batches the same order into one call) */
    LTX2_BATCH_DIFFUSERS,    /* DF: call 0 = [uncond, cond] (or [cond]); then ptb; then mod */
    LTX2_BATCH_MAXDIFFUSION  /* MD: one call [uncond, cond, ptb, mod] (perturbation_mask
                                [1,1,0,1], modality_mask [1,1,1,0]) or [uncond, cond] */
} ltx2_batch_order;

/* How guidance rescale mixes the rescaled and the plain guided prediction. */
typedef enum ltx2_rescale_form {
    LTX2_RESCALE_FACTOR = 0, /* LCg: pred * (r * std(c)/std(pred) + (1 - r)) */
    LTX2_RESCALE_MIX         /* DF/MD rescale_noise_cfg: r * (pred * (std_c/std_p)) + (1 - r) * pred */
} ltx2_rescale_form;

typedef struct ltx2_sem_rules {
    ltx2_semantics base; /* what the rules were resolved from */

    /* ---- sigma schedule ---- */
    ltx2_sigma_grid sigma_grid;
    /* >0: the shift mu uses this token count whatever the resolution (LP calls execute() without a
     * latent: 4096, so mu = 2.05 always); 0: mu from the video token count F'*H'*W' (DF, MD, and
     * LC's ti2vid_two_stages_hq which passes a latent). */
    int64_t shift_fixed_tokens;
    /* >0: the token count is capped first (MD: min(6144, tokens)); 0: no cap. */
    int64_t shift_token_cap;
    /* MD evaluates exp(mu) with jnp.exp in fp32; LC/DF use math.exp in double, rounded to fp32. */
    bool shift_exp_f32;

    /* ---- which passes, in which order ---- */
    ltx2_pass_rule pass_rule;
    ltx2_batch_order batch_order;
    /* STG pass perturbs the self-attention of: LC only the modalities whose stg != 0 (two
     * Perturbation entries); DF/MD both streams whenever STG runs. */
    bool stg_both_streams;

    /* ---- combining ---- */
    /* LC: a pass that did not run enters the formula as 0.0 (term k*(c - 0)); DF/MD drop the term. */
    bool absent_pass_is_zero;
    /* MD, CFG without STG: velocity-space u + cfg_video*(c - u) for BOTH modalities (audio scales,
     * modality scale and rescale ignored). */
    bool cfg_only_velocity;
    /* MD converts v <-> x0 for guidance with the UNSHIFTED linspace sigma (run_diffusion_loop scans
     * (timesteps, sigmas) where sigmas is the pre-shift list); LC/DF use the shifted sigma. Exact
     * no-op without rescale; changes the result when rescale is on. */
    bool guidance_sigma_unshifted;
    ltx2_rescale_form rescale_form;
    /* LC rescales when r != 0; DF/MD only when r > 0. */
    bool rescale_positive_only;
    /* std over each batch element (DF/MD) or over the whole tensor (LC); same for batch 1. */
    bool rescale_std_per_sample;
    /* MD jnp.std is biased (ddof 0); LC/DF torch .std() unbiased (ddof 1). */
    bool rescale_std_biased;
    /* MD clamps std(pred) >= 1e-5 before dividing; 0 = no clamp. */
    float rescale_std_floor;
    /* DF resolves `audio_x = audio_x or x`: an audio scale of 0.0 means "use the video one". */
    bool audio_zero_is_unset;

    /* ---- state precision ---- */
    /* LC keeps latents, x0 predictions and velocities in bf16 between ops (pipelines run bf16);
     * DF/MD keep fp32. When set, ltx2c rounds those values to bf16 where LC casts. */
    bool latent_bf16;

    /* ---- model (consumed by the DiT through ltx2_dit_forward_params.av_timestep) ---- */
    /* Which timesteps drive the A/V cross-attention AdaLN (spec section 6 #1, PARITY #6), per
     * checkpoint: [0] LTX-2.0, [1] LTX-2.3. LC 1.0.0 (installed, golden-tested): other modality's
     * sigma for scale/shift and gate (LTX2_DIT_AV_TS_CROSS_SIGMA); DF: LTX2Pipeline passes
     * use_cross_timestep=True, the same; MD: use_cross_timestep from the yml, false for 2.0
     * (LTX2_DIT_AV_TS_OWN), true for 2.3. Pick LTX2_DIT_AV_TS_OWN_SCALE_CROSS_GATE for ltx-core HEAD. */
    ltx2_dit_av_timestep dit_av_timestep[2];
    /* STG scope (spec section 6 #9): MD blends v + m * (attn - v) in EVERY block's self-attention
     * once STG is on (MD models/ltx2/attention_ltx2.py LTX2Attention.__call__); LC/DF pass v or attn
     * through exactly, only in the STG blocks. -> ltx2_dit_forward_params.stg_blend_every_block */
    bool dit_stg_blend_every_block;
    /* RoPE and positions as XLA computes MD's code (tests/golden/MAXDIFFUSION_NUMERICS.md (a)-(c)):
     * its jnp.float64 ladder is fp32 without jax_enable_x64 (attention_ltx2.py:275-280,
     * embeddings_connector_ltx2.py:184-199) and jnp.linspace one-sided; `x / const` becomes
     * `x * fl(1/const)` (time / fps, position / max_pos), and mel * hop / sample_rate one multiply by
     * fl(hop * fl(1/rate)). LC/DF honour rope_double_precision and divide. -> rope_xla of the DiT and
     * the connectors' forwards, ltx2_pipe_*_positions' xla */
    bool dit_rope_xla;
    /* MD's timestep sinusoid as XLA:CPU computes it (MAXDIFFUSION_NUMERICS.md (e)): its f32 exp and
     * libm's cosf / sinf; LC/DF: correctly rounded. -> ltx2_dit_forward_params.timestep_xla */
    bool dit_timestep_xla;
} ltx2_sem_rules;

/* rules->dit_av_timestep for a checkpoint (is_v23: LTX-2.3, i.e. cross_attention_adaln). */
ltx2_dit_av_timestep ltx2_sem_dit_av_timestep(const ltx2_sem_rules *rules, bool is_v23);
/* The semantics' model rules into a DiT call's params: av_timestep (for is_v23),
 * stg_blend_every_block, rope_xla, timestep_xla; the rest of fp untouched. */
void ltx2_sem_dit_rules(const ltx2_sem_rules *rules, bool is_v23, ltx2_dit_forward_params *fp);

/* The rules of one reference. */
ltx2_sem_rules ltx2_sem_rules_for(ltx2_semantics s);
/* "ltx-core" | "diffusers" | "maxdiffusion" (also "ltx_core", "ltxcore", "maxdiff"), case-insensitive.
 * Returns false (and leaves *out alone) for anything else. */
bool ltx2_sem_parse(const char *name, ltx2_semantics *out);
const char *ltx2_sem_name(ltx2_semantics s);

#endif
