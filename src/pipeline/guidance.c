/* Guidance pass planning and combination; see guidance.h. Each float statement mirrors one tensor
 * op of the reference so fp32 results match to the last bit where the reference is torch fp32. */
#include "pipeline/guidance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "pipeline/scheduler.h"

/* LC guiders.py do_*_generation: math.isclose default relative tolerance. */
#define GUIDANCE_ISCLOSE_REL 1e-9

ltx2_guidance_scales ltx2_guidance_scales_off(void) {
    ltx2_guidance_scales s = {1.0, 0.0, 0.0, 1.0, 0};
    return s;
}

ltx2_guidance_params ltx2_guidance_params_ltx2_default(void) {
    ltx2_guidance_params p;
    p.video = (ltx2_guidance_scales){3.0, 1.0, 0.7, 3.0, 0};
    p.audio = (ltx2_guidance_scales){7.0, 1.0, 0.7, 3.0, 0};
    return p;
}

static double fallback(double a, double v, bool zero_is_unset) {
    if (isnan(a)) return v;
    if (zero_is_unset && a == 0.0) return v;
    return a;
}

ltx2_status ltx2_guidance_resolve_audio(ltx2_context *ctx, const ltx2_sem_rules *rules,
                                        const ltx2_guidance_scales *video,
                                        const ltx2_guidance_scales *audio_in,
                                        ltx2_guidance_scales *audio_out) {
    ltx2_guidance_scales a = *audio_in;
    if (rules->base == LTX2_SEM_LTX_CORE) {
        if (isnan(a.cfg) || isnan(a.stg) || isnan(a.rescale) || isnan(a.modality))
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                              "ltx-core semantics: every audio guidance scale must be given "
                              "(the audio guider has no fallback to the video scales)");
        *audio_out = a;
        return LTX2_OK;
    }
    const bool z = rules->audio_zero_is_unset;
    a.cfg = fallback(a.cfg, video->cfg, z);
    a.stg = fallback(a.stg, video->stg, z);
    a.modality = fallback(a.modality, video->modality, z);
    if (rules->base == LTX2_SEM_MAXDIFFUSION)
        a.rescale = isnan(a.rescale) ? 0.0 : a.rescale; /* __call__ default 0.0, no fallback */
    else
        a.rescale = fallback(a.rescale, video->rescale, z);
    *audio_out = a;
    return LTX2_OK;
}

bool ltx2_guidance_skip_step(const ltx2_guidance_scales *s, int step) {
    if (s->skip_step <= 0) return false;
    return step % (s->skip_step + 1) != 0;
}

static bool isclose(double a, double b) {
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return a == b || fabs(a - b) <= GUIDANCE_ISCLOSE_REL * m;
}

static void plan_add(ltx2_guidance_plan *p, ltx2_guidance_pass pass, int call) {
    p->order[p->n_passes] = pass;
    p->call_of[p->n_passes] = call;
    p->n_passes++;
    if (call + 1 > p->n_calls) p->n_calls = call + 1;
}

ltx2_status ltx2_guidance_plan_make(ltx2_context *ctx, const ltx2_sem_rules *rules,
                                    const ltx2_guidance_params *params, ltx2_guidance_plan *plan) {
    if (!rules || !params || !plan)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "ltx2_guidance_plan_make: NULL argument");
    memset(plan, 0, sizeof *plan);
    const ltx2_guidance_scales *v = &params->video, *a = &params->audio;
    bool unc = false, ptb = false, mod = false;
    bool stg_v = false, stg_a = false;
    switch (rules->pass_rule) {
    case LTX2_PASSES_LTX_CORE:
        unc = !isclose(v->cfg, 1.0) || !isclose(a->cfg, 1.0);
        stg_v = !isclose(v->stg, 0.0);
        stg_a = !isclose(a->stg, 0.0);
        ptb = stg_v || stg_a;
        mod = !isclose(v->modality, 1.0) || !isclose(a->modality, 1.0);
        break;
    case LTX2_PASSES_DIFFUSERS:
        unc = v->cfg > 1.0 || a->cfg > 1.0;
        ptb = v->stg > 0.0 || a->stg > 0.0;
        mod = v->modality > 1.0 || a->modality > 1.0;
        break;
    case LTX2_PASSES_MAXDIFFUSION:
        unc = v->cfg > 1.0;
        ptb = v->stg > 0.0;
        if (ptb && !unc)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "maxdiffusion semantics: STG (video stg %g) requires guidance_scale > 1 "
                              "(got %g); MaxDiffusion raises here too", v->stg, v->cfg);
        mod = ptb; /* the 4-way batch always carries the isolated pass */
        plan->velocity_cfg = rules->cfg_only_velocity && unc && !ptb;
        break;
    }
    if (ptb && rules->stg_both_streams) stg_v = stg_a = true;
    plan->stg_video = ptb && stg_v;
    plan->stg_audio = ptb && stg_a;

    switch (rules->batch_order) {
    case LTX2_BATCH_LTX_CORE: {
        int call = 0;
        plan_add(plan, LTX2_PASS_COND, call++);
        if (unc) plan_add(plan, LTX2_PASS_UNCOND, call++);
        if (ptb) plan_add(plan, LTX2_PASS_PTB, call++);
        if (mod) plan_add(plan, LTX2_PASS_MOD, call++);
        break;
    }
    case LTX2_BATCH_DIFFUSERS: {
        if (unc) plan_add(plan, LTX2_PASS_UNCOND, 0);
        plan_add(plan, LTX2_PASS_COND, 0);
        int call = 1;
        if (ptb) plan_add(plan, LTX2_PASS_PTB, call++);
        if (mod) plan_add(plan, LTX2_PASS_MOD, call++);
        break;
    }
    case LTX2_BATCH_MAXDIFFUSION:
        if (unc) plan_add(plan, LTX2_PASS_UNCOND, 0);
        plan_add(plan, LTX2_PASS_COND, 0);
        if (ptb) plan_add(plan, LTX2_PASS_PTB, 0);
        if (mod) plan_add(plan, LTX2_PASS_MOD, 0);
        break;
    }
    return LTX2_OK;
}

int ltx2_guidance_plan_slot(const ltx2_guidance_plan *plan, ltx2_guidance_pass pass) {
    for (int i = 0; i < plan->n_passes; i++)
        if (plan->order[i] == pass) return i;
    return -1;
}

/* Rounds like a bf16 tensor op result when the values are bf16 tensors (LC's rules, MD's bf16 DiT). */
static inline float rnd(bool bf16, float x) {
    return bf16 ? ltx2_round_bf16(x) : x;
}

/* std of n values: double accumulation (torch CPU and numpy both accumulate wider than fp32 for
 * a reduction of this size), result rounded to fp32. */
static float std_of(const float *x, int64_t n, bool biased) {
    double mean = 0.0;
    for (int64_t i = 0; i < n; i++) mean += x[i];
    mean /= (double)n;
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)x[i] - mean;
        ss += d * d;
    }
    int64_t dof = biased ? n : n - 1;
    return (float)sqrt(ss / (double)(dof > 0 ? dof : 1));
}

ltx2_status ltx2_guidance_combine_x0(ltx2_context *ctx, const ltx2_sem_rules *rules,
                                     const ltx2_guidance_scales *s,
                                     const float *const x0[LTX2_PASS_COUNT], int64_t batch,
                                     int64_t per_sample, float *out) {
    if (!rules || !s || !x0 || !out || !x0[LTX2_PASS_COND])
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "guidance combine: NULL argument (the cond prediction is required)");
    if (batch < 1 || per_sample < 2)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "guidance combine: need batch >= 1 and >= 2 values per sample, got %lld x %lld",
                          (long long)batch, (long long)per_sample);
    const bool bf = rules->latent_bf16;
    const int64_t n = batch * per_sample;
    const float *c = x0[LTX2_PASS_COND];
    const float *other[3] = {x0[LTX2_PASS_UNCOND], x0[LTX2_PASS_PTB], x0[LTX2_PASS_MOD]};
    const float k[3] = {(float)(s->cfg - 1.0), (float)s->stg, (float)(s->modality - 1.0)};
    for (int64_t i = 0; i < n; i++) out[i] = c[i];
    for (int t = 0; t < 3; t++) {
        if (!other[t] && !rules->absent_pass_is_zero) continue; /* DF/MD: delta = 0, not added */
        for (int64_t i = 0; i < n; i++) {
            const float o = other[t] ? other[t][i] : 0.0f;
            const float d = rnd(bf, c[i] - o);
            const float term = rnd(bf, k[t] * d);
            out[i] = rnd(bf, out[i] + term);
        }
    }

    const bool do_rescale = rules->rescale_positive_only ? s->rescale > 0.0 : s->rescale != 0.0;
    if (!do_rescale) return LTX2_OK;
    const float r = (float)s->rescale, one_minus_r = (float)(1.0 - s->rescale);
    const int64_t groups = rules->rescale_std_per_sample ? batch : 1;
    const int64_t len = n / groups;
    for (int64_t g = 0; g < groups; g++) {
        const float *cg = c + g * len;
        float *pg = out + g * len;
        const float sc = rnd(bf, std_of(cg, len, rules->rescale_std_biased));
        float sp = rnd(bf, std_of(pg, len, rules->rescale_std_biased));
        if (rules->rescale_std_floor > 0.0f && sp < rules->rescale_std_floor) sp = rules->rescale_std_floor;
        const float ratio = rnd(bf, sc / sp);
        if (rules->rescale_form == LTX2_RESCALE_FACTOR) {
            /* `rescale * factor + (1 - rescale)` on a bf16 0-dim tensor: torch's mul takes the Python
             * float as an fp32 operand, but its add first casts it to the tensor's dtype (bf16): with
             * the fp32 addend the factor lands one bf16 ulp away for ~20% of factors */
            const float f = rnd(bf, rnd(bf, r * ratio) + rnd(bf, one_minus_r));
            for (int64_t i = 0; i < len; i++) pg[i] = rnd(bf, pg[i] * f);
        } else {
            for (int64_t i = 0; i < len; i++) {
                const float resc = rnd(bf, pg[i] * ratio);
                const float a = rnd(bf, r * resc);
                const float b = rnd(bf, one_minus_r * pg[i]);
                pg[i] = rnd(bf, a + b);
            }
        }
    }
    return LTX2_OK;
}

ltx2_status ltx2_guidance_apply(ltx2_context *ctx, const ltx2_sem_rules *rules,
                                const ltx2_guidance_plan *plan, const ltx2_guidance_scales *s,
                                const ltx2_guidance_scales *video, const float *x,
                                const float *const v[LTX2_PASS_COUNT], int64_t batch,
                                int64_t per_sample, float sigma, float sigma_grid, float *v_out,
                                float *x0_out) {
    if (!rules || !plan || !s || !video || !x || !v || !v_out || !v[LTX2_PASS_COND])
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "guidance apply: NULL argument");
    const int64_t n = batch * per_sample;
    const float sc = rules->guidance_sigma_unshifted ? sigma_grid : sigma;
    for (int p = 0; p < LTX2_PASS_COUNT; p++) {
        const bool in_plan = ltx2_guidance_plan_slot(plan, (ltx2_guidance_pass)p) >= 0;
        if (in_plan != (v[p] != NULL))
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                              "guidance apply: pass %d is %s the plan but its prediction is %s", p,
                              in_plan ? "in" : "not in", v[p] ? "given" : "missing");
    }
    if (plan->velocity_cfg) { /* MD CFG-only: velocity space, video scale, no rescale */
        const bool bf = plan->velocity_bf16;
        const float g = rnd(bf, (float)video->cfg);
        const float *c = v[LTX2_PASS_COND], *u = v[LTX2_PASS_UNCOND];
        for (int64_t i = 0; i < n; i++) {
            const float d = rnd(bf, c[i] - u[i]);
            const float t = rnd(bf, g * d);
            v_out[i] = rnd(bf, u[i] + t);
        }
        if (x0_out) ltx2_sched_velocity_to_x0(rules, x, v_out, sc, n, x0_out);
        return LTX2_OK;
    }
    if (sc == 0.0f)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "guidance apply: sigma 0 (no velocity defined)");
    int n_buf = 0;
    for (int p = 0; p < LTX2_PASS_COUNT; p++) n_buf += v[p] != NULL;
    float *buf = malloc((size_t)(n_buf + 1) * (size_t)n * sizeof(float));
    if (!buf)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "guidance apply: %d x %lld floats", n_buf + 1, (long long)n);
    const float *x0[LTX2_PASS_COUNT] = {NULL, NULL, NULL, NULL};
    float *next = buf;
    for (int p = 0; p < LTX2_PASS_COUNT; p++) {
        if (!v[p]) continue;
        ltx2_sched_velocity_to_x0(rules, x, v[p], sc, n, next);
        x0[p] = next;
        next += n;
    }
    float *g = next;
    ltx2_status st = ltx2_guidance_combine_x0(ctx, rules, s, x0, batch, per_sample, g);
    if (st == LTX2_OK) st = ltx2_sched_x0_to_velocity(ctx, rules, x, g, sc, n, v_out);
    if (st == LTX2_OK && x0_out) memcpy(x0_out, g, (size_t)n * sizeof(float));
    free(buf);
    return st;
}

ltx2_status ltx2_guidance_apply_masked(ltx2_context *ctx, const ltx2_sem_rules *rules, const ltx2_guidance_scales *s,
                                       const float *x, const float *const v[LTX2_PASS_COUNT], int64_t n,
                                       int64_t channels, float sigma, const float *mask, const float *clean,
                                       float *v_out, float *x0_out) {
    if (!rules || !s || !x || !v || !v[LTX2_PASS_COND] || !mask || !clean || !v_out || channels < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "guidance apply (masked): NULL argument");
    float *buf = malloc((size_t)(LTX2_PASS_COUNT + 1) * (size_t)n * sizeof(float));
    if (!buf) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "guidance apply (masked): %lld floats", (long long)n);
    const float *x0[LTX2_PASS_COUNT] = {NULL, NULL, NULL, NULL};
    for (int p = 0; p < LTX2_PASS_COUNT; p++) {
        if (!v[p]) continue;
        float *o = buf + (size_t)p * (size_t)n;
        for (int64_t i = 0; i < n; i++) { /* X0Model: to_denoised(sample, velocity, mask * sigma) */
            const float t = mask[i / channels] * sigma;
            const float vt = v[p][i] * t;
            o[i] = x[i] - vt;
        }
        ltx2_sched_round_latent(rules, o, n);
        x0[p] = o;
    }
    float *g = buf + (size_t)LTX2_PASS_COUNT * (size_t)n;
    ltx2_status st = ltx2_guidance_combine_x0(ctx, rules, s, x0, 1, n, g);
    if (st == LTX2_OK) {
        for (int64_t i = 0; i < n; i++) { /* post_process_latent: denoised * mask + clean * (1 - mask) */
            const float m = mask[i / channels];
            const float a = g[i] * m, b = clean[i] * (1.0f - m);
            g[i] = a + b;
        }
        ltx2_sched_round_latent(rules, g, n);
        if (x0_out) memcpy(x0_out, g, (size_t)n * sizeof(float));
        st = ltx2_sched_x0_to_velocity(ctx, rules, x, g, sigma, n, v_out);
    }
    free(buf);
    return st;
}
