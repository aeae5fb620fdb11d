/* Sigma schedules, distilled lists, Euler steps and x0/velocity conversions against the references:
 * ltx-core / ltx-pipelines / diffusers values from tests/golden/data/sampler.safetensors
 * (tests/golden/gen_sampler_goldens.py), MaxDiffusion hand-computed from its source (JAX is not
 * installed), plus semantics parsing and bad-argument errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "pipeline/scheduler.h"
#include "pipeline/semantics.h"
#include "sampler_golden_util.h"
#include "test_util.h"

/* torch/numpy fp32 schedules are reproduced op for op; diffusers and most ltx-core cases are bit
 * exact, two ltx-core N=30 cases still differ by 1-2 ulp (not yet traced: torch.linspace's fill or
 * the reciprocal path). 2.4e-7 = 2 ulp at 1.0. */
#define SCHED_TOL 2.4e-7
/* Euler / conversions: one fp32 mul + add per element in the same order: bit equality. */
#define STEP_TOL 0.0
/* MaxDiffusion: XLA's fp32 exp and fused ops are not reproducible here; 1e-6 is ~8 fp32 ulps at
 * sigma ~1 and well below the 6-decimal values we compare against. */
#define MD_TOL 1e-6

static ltx2_context *g_ctx;

static void test_semantics(void) {
    ltx2_semantics s = LTX2_SEM_COUNT;
    CHECK(ltx2_sem_parse("ltx-core", &s) && s == LTX2_SEM_LTX_CORE, "parse ltx-core");
    CHECK(ltx2_sem_parse("Diffusers", &s) && s == LTX2_SEM_DIFFUSERS, "parse Diffusers");
    CHECK(ltx2_sem_parse("maxdiffusion", &s) && s == LTX2_SEM_MAXDIFFUSION, "parse maxdiffusion");
    s = LTX2_SEM_DIFFUSERS;
    CHECK(!ltx2_sem_parse("comfy", &s) && s == LTX2_SEM_DIFFUSERS, "unknown name refused, out untouched");
    CHECK(!ltx2_sem_parse(NULL, &s), "NULL refused");
    for (int i = 0; i < LTX2_SEM_COUNT; i++) {
        ltx2_semantics back;
        CHECK(ltx2_sem_parse(ltx2_sem_name((ltx2_semantics)i), &back) && back == (ltx2_semantics)i,
              "name/parse round trip %d", i);
        CHECK(ltx2_sem_rules_for((ltx2_semantics)i).base == (ltx2_semantics)i, "rules base %d", i);
    }
    ltx2_sem_rules lc = ltx2_sem_rules_for(LTX2_SEM_LTX_CORE);
    CHECK(lc.shift_fixed_tokens == 4096 && lc.latent_bf16 && lc.absent_pass_is_zero, "ltx-core rules");
    ltx2_sem_rules md = ltx2_sem_rules_for(LTX2_SEM_MAXDIFFUSION);
    CHECK(md.shift_token_cap == 6144 && md.guidance_sigma_unshifted && md.rescale_std_biased, "md rules");
}

static void test_schedules(const ltx2_st_file *f) {
    ltx2_sem_rules lc = ltx2_sem_rules_for(LTX2_SEM_LTX_CORE);
    int n_lc = 0;
    for (int i = 0;; i++) {
        int64_t np = 0, n = 0;
        double *p = sg_load(g_ctx, f, "lc_sched", i, "params", LTX2_F64, &np);
        if (!p) break;
        float *ref = sg_load(g_ctx, f, "lc_sched", i, "out", LTX2_F32, &n);
        ltx2_sem_rules r = lc;
        ltx2_sched_params sp = ltx2_sched_params_default((int)p[0], (int64_t)p[1]);
        if (p[1] > 0) r.shift_fixed_tokens = 0; /* a latent was passed: shift by its tokens */
        sp.stretch = p[2] != 0.0;
        sp.terminal = p[3];
        float out[64];
        CHECK(n == sp.steps + 1, "lc_sched.%d: %lld values", i, (long long)n);
        ltx2_status st = ltx2_sched_sigmas(g_ctx, &r, &sp, out);
        CHECK(st == LTX2_OK, "lc_sched.%d: %s", i, ltx2_last_error(g_ctx));
        if (st == LTX2_OK && n == sp.steps + 1) {
            double w = sg_max_rel(out, ref, n);
            CHECK(w <= SCHED_TOL, "lc_sched.%d (N=%d tokens=%lld stretch=%d): max rel %.3g", i, sp.steps,
                  (long long)sp.video_tokens, sp.stretch, w);
        }
        n_lc++;
        free(p);
        free(ref);
    }
    CHECK(n_lc >= 8, "found %d lc_sched cases", n_lc);

    ltx2_sem_rules df = ltx2_sem_rules_for(LTX2_SEM_DIFFUSERS);
    int n_df = 0;
    for (int i = 0;; i++) {
        int64_t n = 0;
        double *p = sg_load(g_ctx, f, "df_sched", i, "params", LTX2_F64, NULL);
        if (!p) break;
        float *ref = sg_load(g_ctx, f, "df_sched", i, "out", LTX2_F32, &n);
        ltx2_sched_params sp = ltx2_sched_params_default((int)p[0], (int64_t)p[1]);
        float out[64];
        ltx2_status st = ltx2_sched_sigmas(g_ctx, &df, &sp, out);
        CHECK(st == LTX2_OK && n == sp.steps + 1, "df_sched.%d", i);
        if (st == LTX2_OK && n == sp.steps + 1) {
            double w = sg_max_rel(out, ref, n);
            CHECK(w <= SCHED_TOL, "df_sched.%d (N=%d tokens=%lld): max rel %.3g", i, sp.steps,
                  (long long)sp.video_tokens, w);
        }
        n_df++;
        free(p);
        free(ref);
    }
    CHECK(n_df >= 5, "found %d df_sched cases", n_df);

    for (int i = 0; i < 2; i++) {
        int64_t n = 0;
        float *ref = sg_load(g_ctx, f, "distilled", i, "out", LTX2_F32, &n);
        int nv = 0;
        const float *ours = ltx2_sched_distilled(i == 0 ? LTX2_DISTILLED_STAGE1 : LTX2_DISTILLED_STAGE2, &nv);
        CHECK(ref && ours && nv == n && memcmp(ours, ref, (size_t)n * sizeof(float)) == 0, "distilled %d", i);
        free(ref);
    }
    int nv = 1;
    CHECK(ltx2_sched_distilled((ltx2_distilled_stage)7, &nv) == NULL && nv == 0, "unknown distilled stage");

    /* Same settings, different references: at 6144 tokens diffusers shifts harder than ltx-core. */
    ltx2_sched_params sp = ltx2_sched_params_default(40, 6144);
    float a[41], b[41];
    CHECK(ltx2_sched_sigmas(g_ctx, &lc, &sp, a) == LTX2_OK && ltx2_sched_sigmas(g_ctx, &df, &sp, b) == LTX2_OK,
          "40-step schedules");
    CHECK(fabsf(a[1] - 0.996449f) < 1e-6f && fabsf(b[1] - 0.997985f) < 1e-6f,
          "spec 5.1 values: ltx-core %.6f, diffusers %.6f", a[1], b[1]);
    CHECK(a[39] == b[39] && fabsf(a[39] - 0.1f) < 1e-6f && a[40] == 0.0f, "terminal 0.1 then 0");
}

/* MaxDiffusion (src/maxdiffusion/, HEAD 7cfb880), read not run:
 *   pipelines/ltx2/ltx2_pipeline.py:1907  sigmas = jnp.linspace(1.0, 1/N, N)
 *   pipelines/ltx2/ltx2_pipeline.py:1912  shift_sequence_length = min(6144, video_sequence_length)
 *   schedulers/scheduling_flow_match_flax.py:205  exp(mu)/(exp(mu) + (1/clip(s) - 1)**1.0)
 *   schedulers/scheduling_flow_match_flax.py:217  stretch to shift_terminal (0.1, hub config)
 *   schedulers/scheduling_flow_match_flax.py:349  prev = sample + v*(sigma_next - sigma), last next = 0
 * The expected values below are that formula evaluated in float64 by hand (independent of the
 * fp32 code path), and spec 5.1's printed N=40, 6144-token list. */
static double md_sigma_f64(int n, int64_t tokens, int i) {
    if (i == n) return 0.0;
    if (tokens > 6144) tokens = 6144;
    double m = (2.05 - 0.95) / 3072.0, mu = (double)tokens * m + (0.95 - 1024.0 * m);
    double e = exp(mu);
    double s_i = 1.0 - (double)i * (1.0 - 1.0 / n) / (n - 1);
    double s_last = 1.0 / n;
    double sh_i = e / (e + (1.0 / s_i - 1.0)), sh_last = e / (e + (1.0 / s_last - 1.0));
    double scale = (1.0 - sh_last) / 0.9;
    return 1.0 - (1.0 - sh_i) / scale;
}

static void test_maxdiffusion_schedule(void) {
    ltx2_sem_rules md = ltx2_sem_rules_for(LTX2_SEM_MAXDIFFUSION);
    static const struct { int n; int64_t tokens; } k_cases[] = {{40, 6144}, {30, 1536}, {8, 24576}, {2, 4096}};
    for (size_t c = 0; c < sizeof k_cases / sizeof k_cases[0]; c++) {
        ltx2_sched_params sp = ltx2_sched_params_default(k_cases[c].n, k_cases[c].tokens);
        float out[64];
        CHECK(ltx2_sched_sigmas(g_ctx, &md, &sp, out) == LTX2_OK, "md schedule %zu", c);
        double w = 0.0;
        for (int i = 0; i <= sp.steps; i++) {
            double d = fabs(out[i] - md_sigma_f64(sp.steps, sp.video_tokens, i));
            if (d > w) w = d;
        }
        CHECK(w <= MD_TOL, "md schedule N=%d tokens=%lld: max abs %.3g vs float64 hand formula", sp.steps,
              (long long)sp.video_tokens, w);
    }
    /* spec 5.1: N = 40 at 6144 tokens: 1.000000 0.997985 0.995870 ... 0.544788 0.449136 0.312220 0.1 0 */
    static const float k_head[] = {1.000000f, 0.997985f, 0.995870f};
    static const float k_tail[] = {0.544788f, 0.449136f, 0.312220f, 0.100000f, 0.0f};
    ltx2_sched_params sp = ltx2_sched_params_default(40, 24576); /* capped to 6144 */
    float out[41];
    CHECK(ltx2_sched_sigmas(g_ctx, &md, &sp, out) == LTX2_OK, "md 40");
    for (int i = 0; i < 3; i++) CHECK(fabsf(out[i] - k_head[i]) < 1e-6f, "md[%d] %.6f", i, out[i]);
    for (int i = 0; i < 5; i++) CHECK(fabsf(out[36 + i] - k_tail[i]) < 1e-6f, "md[%d] %.6f", 36 + i, out[36 + i]);
    /* The MD guidance sigma is the unshifted grid value. */
    CHECK(fabsf(ltx2_sched_grid_sigma(&md, 40, 0) - 1.0f) == 0.0f &&
          fabsf(ltx2_sched_grid_sigma(&md, 40, 39) - 0.025f) == 0.0f &&
          fabsf(ltx2_sched_grid_sigma(&md, 40, 20) - (float)(1.0 - 20.0 * 0.975 / 39.0)) < 1e-7f,
          "md grid");
    /* MD Euler (line 349): x + v*(sigma_next - sigma), last step to 0. */
    float x[3] = {0.5f, -1.25f, 2.0f};
    const float v[3] = {1.0f, 0.5f, -2.0f};
    ltx2_sched_euler_step(&md, x, v, out[39], out[40], 3);
    CHECK(fabsf(x[0] - 0.4f) < MD_TOL && fabsf(x[1] + 1.3f) < MD_TOL && fabsf(x[2] - 2.2f) < MD_TOL, "md euler to 0");
}

static void test_steps(const ltx2_st_file *f) {
    ltx2_sem_rules lc = ltx2_sem_rules_for(LTX2_SEM_LTX_CORE);
    ltx2_sem_rules lc32 = lc;
    lc32.latent_bf16 = false;
    int n_cases = 0;
    for (int i = 0;; i++) {
        int64_t n = 0, ns = 0;
        double *p = sg_load(g_ctx, f, "lc_euler", i, "params", LTX2_F64, NULL);
        if (!p) break;
        float *x = sg_load(g_ctx, f, "lc_euler", i, "x", LTX2_F32, &n);
        float *x0 = sg_load(g_ctx, f, "lc_euler", i, "x0", LTX2_F32, NULL);
        float *sig = sg_load(g_ctx, f, "lc_euler", i, "sigmas", LTX2_F32, &ns);
        float *ref = sg_load(g_ctx, f, "lc_euler", i, "out", LTX2_F32, NULL);
        const ltx2_sem_rules *r = p[0] != 0.0 ? &lc : &lc32;
        int k = (int)p[1];
        float *v = malloc((size_t)n * sizeof(float));
        CHECK(ltx2_sched_x0_to_velocity(g_ctx, r, x, x0, sig[k], n, v) == LTX2_OK, "lc_euler.%d", i);
        ltx2_sched_euler_step(r, x, v, sig[k], sig[k + 1], n);
        double w = sg_max_rel(x, ref, n);
        CHECK(w <= STEP_TOL, "lc_euler.%d (bf16 %d, i %d): max rel %.3g", i, (int)p[0], k, w);
        free(p), free(x), free(x0), free(sig), free(ref), free(v);
        n_cases++;
    }
    for (int i = 0;; i++) {
        int64_t n = 0;
        double *p = sg_load(g_ctx, f, "lc_x0", i, "params", LTX2_F64, NULL);
        if (!p) break;
        float *x = sg_load(g_ctx, f, "lc_x0", i, "x", LTX2_F32, &n);
        float *v = sg_load(g_ctx, f, "lc_x0", i, "v", LTX2_F32, NULL);
        float *ref = sg_load(g_ctx, f, "lc_x0", i, "out", LTX2_F32, NULL);
        ltx2_sched_velocity_to_x0(p[0] != 0.0 ? &lc : &lc32, x, v, (float)p[1], n, v);
        double w = sg_max_rel(v, ref, n);
        CHECK(w <= STEP_TOL, "lc_x0.%d: max rel %.3g", i, w);
        free(p), free(x), free(v), free(ref);
        n_cases++;
    }
    ltx2_sem_rules df = ltx2_sem_rules_for(LTX2_SEM_DIFFUSERS);
    for (int i = 0;; i++) {
        int64_t n = 0;
        double *p = sg_load(g_ctx, f, "df_euler", i, "params", LTX2_F64, NULL);
        if (!p) break;
        float *x = sg_load(g_ctx, f, "df_euler", i, "x", LTX2_F32, &n);
        float *v = sg_load(g_ctx, f, "df_euler", i, "v", LTX2_F32, NULL);
        float *ref = sg_load(g_ctx, f, "df_euler", i, "out", LTX2_F32, NULL);
        ltx2_sched_params sp = ltx2_sched_params_default((int)p[0], (int64_t)p[1]);
        float sig[64];
        CHECK(ltx2_sched_sigmas(g_ctx, &df, &sp, sig) == LTX2_OK, "df sigmas");
        int k = (int)p[2];
        ltx2_sched_euler_step(&df, x, v, sig[k], sig[k + 1], n);
        double w = sg_max_rel(x, ref, n);
        CHECK(w <= STEP_TOL, "df_euler.%d (step %d): max rel %.3g", i, k, w);
        free(p), free(x), free(v), free(ref);
        n_cases++;
    }
    CHECK(n_cases >= 14, "found %d step cases", n_cases);
}

static void test_errors(void) {
    ltx2_sem_rules lc = ltx2_sem_rules_for(LTX2_SEM_LTX_CORE);
    ltx2_sem_rules df = ltx2_sem_rules_for(LTX2_SEM_DIFFUSERS);
    float out[8];
    ltx2_sched_params sp = ltx2_sched_params_default(1, 4096);
    CHECK(ltx2_sched_sigmas(g_ctx, &lc, &sp, out) == LTX2_ERR_INVALID_ARG &&
          strstr(ltx2_last_error(g_ctx), "steps >= 2"), "stretch with 1 step refused: %s", ltx2_last_error(g_ctx));
    sp.stretch = false;
    CHECK(ltx2_sched_sigmas(g_ctx, &lc, &sp, out) == LTX2_OK && fabsf(out[0] - 1.0f) < 1e-6f && out[1] == 0.0f, "1 step, no stretch");
    sp = ltx2_sched_params_default(0, 4096);
    CHECK(ltx2_sched_sigmas(g_ctx, &lc, &sp, out) == LTX2_ERR_INVALID_ARG, "0 steps refused");
    sp = ltx2_sched_params_default(4, 0);
    CHECK(ltx2_sched_sigmas(g_ctx, &df, &sp, out) == LTX2_ERR_INVALID_ARG &&
          strstr(ltx2_last_error(g_ctx), "token count"), "diffusers needs a token count: %s", ltx2_last_error(g_ctx));
    CHECK(ltx2_sched_sigmas(g_ctx, &lc, &sp, out) == LTX2_OK, "ltx-core does not");
    float x[2] = {1, 2}, x0[2] = {0, 0}, v[2];
    CHECK(ltx2_sched_x0_to_velocity(g_ctx, &lc, x, x0, 0.0f, 2, v) == LTX2_ERR_INVALID_ARG, "sigma 0 refused");
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    if (!g_ctx) return 1;
    test_semantics();
    test_maxdiffusion_schedule();
    test_errors();
    ltx2_st_file *f = NULL;
    const char *path = LTX2_SOURCE_DIR "/tests/golden/data/sampler.safetensors";
    if (ltx2_st_open(g_ctx, path, &f) != LTX2_OK) {
        CHECK(0, "cannot open %s: %s", path, ltx2_last_error(g_ctx));
    } else {
        test_schedules(f);
        test_steps(f);
        ltx2_st_close(f);
    }
    ltx2_context_free(g_ctx);
    return test_finish();
}
