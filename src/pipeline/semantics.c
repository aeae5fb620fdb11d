/* Resolves ltx2_semantics into its rule set, and names/parses the semantics values. */
#include "pipeline/semantics.h"

#include <ctype.h>
#include <string.h>

/* LP ti2vid_* pipelines call LTX2Scheduler().execute(steps=N): default_number_of_tokens. */
#define SEM_LTX_CORE_SHIFT_TOKENS 4096
/* MD __call__: shift_sequence_length = min(6144, video_sequence_length). */
#define SEM_MAXDIFF_SHIFT_TOKEN_CAP 6144
/* MD rescale_noise_cfg: std_cfg = jnp.maximum(std_cfg, 1e-5). */
#define SEM_MAXDIFF_STD_FLOOR 1e-5f

ltx2_sem_rules ltx2_sem_rules_for(ltx2_semantics s) {
    ltx2_sem_rules r;
    memset(&r, 0, sizeof r);
    switch (s) {
    case LTX2_SEM_DIFFUSERS:
        r.base = LTX2_SEM_DIFFUSERS;
        r.sigma_grid = LTX2_GRID_NUMPY;
        r.pass_rule = LTX2_PASSES_DIFFUSERS;
        r.batch_order = LTX2_BATCH_DIFFUSERS;
        r.stg_both_streams = true;
        r.rescale_form = LTX2_RESCALE_MIX;
        r.rescale_positive_only = true;
        r.rescale_std_per_sample = true;
        r.audio_zero_is_unset = true;
        break;
    case LTX2_SEM_MAXDIFFUSION:
        r.base = LTX2_SEM_MAXDIFFUSION;
        r.sigma_grid = LTX2_GRID_JAX;
        r.shift_token_cap = SEM_MAXDIFF_SHIFT_TOKEN_CAP;
        r.shift_exp_f32 = true;
        r.pass_rule = LTX2_PASSES_MAXDIFFUSION;
        r.batch_order = LTX2_BATCH_MAXDIFFUSION;
        r.stg_both_streams = true;
        r.cfg_only_velocity = true;
        r.guidance_sigma_unshifted = true;
        r.rescale_form = LTX2_RESCALE_MIX;
        r.rescale_positive_only = true;
        r.rescale_std_per_sample = true;
        r.rescale_std_biased = true;
        r.rescale_std_floor = SEM_MAXDIFF_STD_FLOOR;
        r.dit_av_timestep[0] = LTX2_DIT_AV_TS_OWN; /* ltx2_video.yml use_cross_timestep: false */
        r.dit_av_timestep[1] = LTX2_DIT_AV_TS_CROSS_SIGMA;
        r.dit_stg_blend_every_block = true;
        r.dit_rope_xla = true;
        r.dit_timestep_xla = true;
        break;
    case LTX2_SEM_LTX_CORE:
    case LTX2_SEM_COUNT:
    default:
        r.base = LTX2_SEM_LTX_CORE;
        r.sigma_grid = LTX2_GRID_TORCH;
        r.shift_fixed_tokens = SEM_LTX_CORE_SHIFT_TOKENS;
        r.pass_rule = LTX2_PASSES_LTX_CORE;
        r.batch_order = LTX2_BATCH_LTX_CORE;
        r.absent_pass_is_zero = true;
        r.rescale_form = LTX2_RESCALE_FACTOR;
        r.latent_bf16 = true;
        break;
    }
    return r;
}

ltx2_dit_av_timestep ltx2_sem_dit_av_timestep(const ltx2_sem_rules *rules, bool is_v23) {
    return rules ? rules->dit_av_timestep[is_v23 ? 1 : 0] : LTX2_DIT_AV_TS_CROSS_SIGMA;
}

void ltx2_sem_dit_rules(const ltx2_sem_rules *rules, bool is_v23, ltx2_dit_forward_params *fp) {
    fp->av_timestep = ltx2_sem_dit_av_timestep(rules, is_v23);
    fp->stg_blend_every_block = rules->dit_stg_blend_every_block;
    fp->rope_xla = rules->dit_rope_xla;
    fp->timestep_xla = rules->dit_timestep_xla;
}

static bool eq_nocase(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

bool ltx2_sem_parse(const char *name, ltx2_semantics *out) {
    static const struct {
        const char *name;
        ltx2_semantics s;
    } k_names[] = {
        {"ltx-core", LTX2_SEM_LTX_CORE},      {"ltx_core", LTX2_SEM_LTX_CORE},
        {"ltxcore", LTX2_SEM_LTX_CORE},       {"diffusers", LTX2_SEM_DIFFUSERS},
        {"maxdiffusion", LTX2_SEM_MAXDIFFUSION}, {"maxdiff", LTX2_SEM_MAXDIFFUSION},
    };
    if (!name) return false;
    for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; i++) {
        if (eq_nocase(name, k_names[i].name)) {
            *out = k_names[i].s;
            return true;
        }
    }
    return false;
}

const char *ltx2_sem_name(ltx2_semantics s) {
    switch (s) {
    case LTX2_SEM_LTX_CORE: return "ltx-core";
    case LTX2_SEM_DIFFUSERS: return "diffusers";
    case LTX2_SEM_MAXDIFFUSION: return "maxdiffusion";
    case LTX2_SEM_COUNT: break;
    }
    return "unknown";
}
