/* Sigma schedules and Euler updates. Every float operation below mirrors one fp32 tensor op of the
 * reference (see semantics.h for the files); doubles appear only where the reference computes in
 * Python floats (mu, exp(mu), 1 - terminal, numpy's float64 linspace). */
#include "pipeline/scheduler.h"

#include <math.h>

#include "core/dtype.h"

/* MD set_timesteps_ltx2: 1 / jnp.clip(sigmas, 1e-7, 1.0). */
#define SCHED_MD_CLIP_MIN 1e-7f

static const float k_distilled_stage1[] = {1.0f,  0.99375f,  0.9875f, 0.98125f, 0.975f,
                                           0.909375f, 0.725f, 0.421875f, 0.0f};
static const float k_distilled_stage2[] = {0.909375f, 0.725f, 0.421875f, 0.0f};

ltx2_sched_params ltx2_sched_params_default(int steps, int64_t video_tokens) {
    ltx2_sched_params p;
    p.steps = steps;
    p.video_tokens = video_tokens;
    p.base_shift = LTX2_SCHED_BASE_SHIFT;
    p.max_shift = LTX2_SCHED_MAX_SHIFT;
    p.base_tokens = LTX2_SCHED_BASE_TOKENS;
    p.max_tokens = LTX2_SCHED_MAX_TOKENS;
    p.stretch = true;
    p.terminal = LTX2_SCHED_TERMINAL;
    return p;
}

double ltx2_sched_mu(const ltx2_sem_rules *rules, const ltx2_sched_params *p) {
    int64_t tokens = rules->shift_fixed_tokens > 0 ? rules->shift_fixed_tokens : p->video_tokens;
    if (rules->shift_token_cap > 0 && tokens > rules->shift_token_cap) tokens = rules->shift_token_cap;
    double m = (p->max_shift - p->base_shift) / (double)(p->max_tokens - p->base_tokens);
    double b = p->base_shift - m * (double)p->base_tokens;
    return (double)tokens * m + b;
}

/* torch.linspace(1, 0, N+1) on CPU, fp32: step = (end-start)/(steps-1); the first half counts up
 * from start, the second half down from end (aten RangeFactoriesKernel). */
static float grid_torch(int steps, int i) {
    const int64_t count = (int64_t)steps + 1;
    const float start = 1.0f, end = 0.0f;
    const float step = (end - start) / (float)(count - 1);
    const int64_t halfway = count / 2;
    if (i < halfway) return start + step * (float)i;
    return end - step * (float)(count - i - 1);
}

/* np.linspace(1.0, 1/N, N) in float64 (y = i*step + start, last = stop), then cast to fp32. */
static float grid_numpy(int steps, int i) {
    const double start = 1.0, stop = 1.0 / (double)steps;
    if (steps == 1) return (float)start;
    if (i == steps - 1) return (float)stop;
    const double step = (stop - start) / (double)(steps - 1);
    return (float)((double)i * step + start);
}

/* jnp.linspace(1.0, 1/N, N) as XLA compiles it on the CPU (MAXDIFFUSION_NUMERICS.md (d) 1, checked
 * bitwise against MaxDiffusion's grid): with c = fl(1/(N-1)), out_k = fma(k, fl(stop * c),
 * fl(1 - fl(k * c))), the last entry stop = f32(1/N). The volatile keeps the compiler from fusing
 * 1 - k*c into an FMA, which XLA does not. */
static float grid_jax(int steps, int i) {
    const float start = 1.0f, stop = (float)(1.0 / (double)steps);
    if (steps == 1) return start;
    if (i == steps - 1) return stop;
    const float c = 1.0f / (float)(steps - 1);
    volatile float kc = (float)i * c;
    const float one_minus = start - kc;
    return fmaf((float)i, stop * c, one_minus);
}

float ltx2_sched_grid_sigma(const ltx2_sem_rules *rules, int steps, int i) {
    switch (rules->sigma_grid) {
    case LTX2_GRID_NUMPY: return grid_numpy(steps, i);
    case LTX2_GRID_JAX: return grid_jax(steps, i);
    case LTX2_GRID_TORCH:
    default: return grid_torch(steps, i);
    }
}

ltx2_status ltx2_sched_sigmas(ltx2_context *ctx, const ltx2_sem_rules *rules,
                              const ltx2_sched_params *p, float *out) {
    if (!rules || !p || !out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "ltx2_sched_sigmas: NULL argument");
    if (p->steps < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "sigma schedule: steps must be >= 1, got %d",
                          p->steps);
    if (p->stretch && p->steps < 2)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "sigma schedule: stretching to terminal %g needs steps >= 2, got %d (the "
                          "references compute 0/0 = NaN here)", p->terminal, p->steps);
    if (p->max_tokens == p->base_tokens)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "sigma schedule: base_tokens == max_tokens (%lld)",
                          (long long)p->base_tokens);
    if (rules->shift_fixed_tokens <= 0 && p->video_tokens <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "sigma schedule: the %s rules shift by the video token count, got %lld",
                          ltx2_sem_name(rules->base), (long long)p->video_tokens);
    if (p->stretch && !(p->terminal < 1.0))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "sigma schedule: terminal %g must be < 1",
                          p->terminal);

    const int n = p->steps;
    const double mu = ltx2_sched_mu(rules, p);
    /* MD: jnp.exp(f32(mu)), which equals the correctly rounded exp of f32(mu) here */
    const float e = rules->shift_exp_f32 ? (float)exp((double)(float)mu) : (float)exp(mu);
    /* The N non-zero grid values; out[n] = 0 in every reference (LC's grid already ends in 0 and
     * torch.where keeps it; DF appends a zero; MD's step uses 0 after the last entry). */
    for (int i = 0; i < n; i++) {
        float s = ltx2_sched_grid_sigma(rules, n, i);
        if (rules->sigma_grid == LTX2_GRID_JAX) {
            if (s < SCHED_MD_CLIP_MIN) s = SCHED_MD_CLIP_MIN;
            if (s > 1.0f) s = 1.0f;
        }
        const float inv = 1.0f / s;
        if (rules->sigma_grid == LTX2_GRID_TORCH) /* torch: python_scalar / tensor = reciprocal * scalar */
            out[i] = (1.0f / (e + (inv - 1.0f))) * e;
        else
            out[i] = e / (e + (inv - 1.0f));
    }
    out[n] = 0.0f;
    if (p->stretch) {
        const float scale = (1.0f - out[n - 1]) / (float)(1.0 - p->terminal);
        /* MD: XLA turns omz / scale (a broadcast scalar) into omz * fl(1 / scale) */
        const float inv_scale = 1.0f / scale;
        for (int i = 0; i < n; i++) {
            const float omz = 1.0f - out[i];
            if (rules->sigma_grid == LTX2_GRID_JAX) {
                volatile float q = omz * inv_scale; /* no FMA: XLA rounds the product */
                out[i] = 1.0f - q;
            } else {
                out[i] = 1.0f - omz / scale;
            }
        }
    }
    return LTX2_OK;
}

const float *ltx2_sched_distilled(ltx2_distilled_stage stage, int *n_values) {
    switch (stage) {
    case LTX2_DISTILLED_STAGE1:
        if (n_values) *n_values = (int)(sizeof k_distilled_stage1 / sizeof k_distilled_stage1[0]);
        return k_distilled_stage1;
    case LTX2_DISTILLED_STAGE2:
        if (n_values) *n_values = (int)(sizeof k_distilled_stage2 / sizeof k_distilled_stage2[0]);
        return k_distilled_stage2;
    }
    if (n_values) *n_values = 0;
    return NULL;
}

void ltx2_sched_round_latent(const ltx2_sem_rules *rules, float *x, int64_t n) {
    if (!rules->latent_bf16) return;
    for (int64_t i = 0; i < n; i++) x[i] = ltx2_round_bf16(x[i]);
}

void ltx2_sched_velocity_to_x0(const ltx2_sem_rules *rules, const float *x, const float *v,
                               float sigma, int64_t n, float *x0) {
    for (int64_t i = 0; i < n; i++) {
        /* LC's model runs in bf16 and hands to_denoised a bf16 velocity; ours is fp32, so under the
         * bf16 rules it is rounded first (without this the 3-step bf16 loop drifted 1-3e-2 from
         * ltx-pipelines: test_generate's e2e_bf16 goldens) */
        const float vi = rules->latent_bf16 ? ltx2_round_bf16(v[i]) : v[i];
        const float vs = vi * sigma;
        x0[i] = x[i] - vs;
    }
    ltx2_sched_round_latent(rules, x0, n);
}

ltx2_status ltx2_sched_x0_to_velocity(ltx2_context *ctx, const ltx2_sem_rules *rules, const float *x,
                                      const float *x0, float sigma, int64_t n, float *v) {
    if (sigma == 0.0f)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "x0 -> velocity at sigma 0 is undefined (ltx-core to_velocity raises too)");
    for (int64_t i = 0; i < n; i++) {
        const float d = x[i] - x0[i];
        v[i] = d / sigma;
    }
    ltx2_sched_round_latent(rules, v, n);
    return LTX2_OK;
}

void ltx2_sched_euler_step(const ltx2_sem_rules *rules, float *x, const float *v, float sigma,
                           float sigma_next, int64_t n) {
    const float dt = sigma_next - sigma;
    for (int64_t i = 0; i < n; i++) {
        const float step = v[i] * dt;
        x[i] = x[i] + step;
    }
    ltx2_sched_round_latent(rules, x, n);
}
