/* Guidance combination against ltx-core MultiModalGuider.calculate (fp32 and bf16 tensors) and the
 * diffusers LTX2Pipeline guidance lines (tests/golden/gen_sampler_goldens.py), plus pass planning
 * per semantics (which passes, which order). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/context.h"
#include "pipeline/guidance.h"
#include "sampler_golden_util.h"
#include "test_util.h"

/* fp32: same op order; std is accumulated in double here and by torch, rescale cases may differ in
 * the last bit of std -> a few ulp. bf16 (ltx-core pipelines): every rounding is torch's, including
 * the rescale factor's (its add casts the Python float to bf16 first, its mul does not), so the
 * result is bitwise the reference's. */
#define GUID_TOL_F32 1e-6
#define GUID_TOL_BF16 0.0

static ltx2_context *g_ctx;

static void test_plans(void) {
    ltx2_guidance_params gp = ltx2_guidance_params_ltx2_default();
    ltx2_guidance_plan p;
    ltx2_sem_rules lc = ltx2_sem_rules_for(LTX2_SEM_LTX_CORE), df = ltx2_sem_rules_for(LTX2_SEM_DIFFUSERS),
                   md = ltx2_sem_rules_for(LTX2_SEM_MAXDIFFUSION);
    CHECK(ltx2_guidance_plan_make(g_ctx, &lc, &gp, &p) == LTX2_OK && p.n_passes == 4 && p.n_calls == 4 &&
          p.order[0] == LTX2_PASS_COND && p.order[1] == LTX2_PASS_UNCOND && p.order[3] == LTX2_PASS_MOD, "lc plan");
    CHECK(ltx2_guidance_plan_make(g_ctx, &df, &gp, &p) == LTX2_OK && p.n_calls == 3 &&
          p.order[0] == LTX2_PASS_UNCOND && p.order[1] == LTX2_PASS_COND && p.call_of[1] == 0 &&
          p.call_of[2] == 1, "df plan");
    CHECK(ltx2_guidance_plan_make(g_ctx, &md, &gp, &p) == LTX2_OK && p.n_calls == 1 && p.n_passes == 4 &&
          p.order[2] == LTX2_PASS_PTB, "md plan");
    gp.video.stg = 0.0; /* ltx-core: STG only on audio */
    CHECK(ltx2_guidance_plan_make(g_ctx, &lc, &gp, &p) == LTX2_OK && !p.stg_video && p.stg_audio, "lc stg audio only");
    CHECK(ltx2_guidance_plan_make(g_ctx, &md, &gp, &p) == LTX2_OK && p.velocity_cfg && p.n_passes == 2, "md cfg only");
    gp.video = gp.audio = ltx2_guidance_scales_off();
    gp.video.cfg = 0.5; /* below 1: ltx-core runs the pass, diffusers does not */
    CHECK(ltx2_guidance_plan_make(g_ctx, &lc, &gp, &p) == LTX2_OK && p.n_passes == 2, "lc cfg 0.5");
    CHECK(ltx2_guidance_plan_make(g_ctx, &df, &gp, &p) == LTX2_OK && p.n_passes == 1, "df cfg 0.5");
    gp.video.cfg = 1.0;
    gp.video.stg = 1.0;
    CHECK(ltx2_guidance_plan_make(g_ctx, &md, &gp, &p) == LTX2_ERR_UNSUPPORTED, "md stg without cfg");
    ltx2_guidance_scales v = {3, 1, 0.7, 3, 0}, a = {NAN, 0.0, NAN, 2.0, 0}, out;
    CHECK(ltx2_guidance_resolve_audio(g_ctx, &df, &v, &a, &out) == LTX2_OK && out.cfg == 3 && out.stg == 1 &&
          out.rescale == 0.7 && out.modality == 2, "df audio fallback (0 = unset)");
    CHECK(ltx2_guidance_resolve_audio(g_ctx, &md, &v, &a, &out) == LTX2_OK && out.stg == 0 && out.rescale == 0,
          "md audio fallback");
    CHECK(ltx2_guidance_resolve_audio(g_ctx, &lc, &v, &a, &out) == LTX2_ERR_INVALID_ARG, "lc needs all");
}

static void test_goldens(const ltx2_st_file *f) {
    int cases = 0;
    for (int i = 0;; i++) {
        int64_t n = 0;
        double *p = sg_load(g_ctx, f, "lc_guid", i, "params", LTX2_F64, NULL);
        if (!p) break;
        ltx2_sem_rules r = ltx2_sem_rules_for(LTX2_SEM_LTX_CORE);
        r.latent_bf16 = p[0] != 0.0;
        ltx2_guidance_scales s = {p[1], p[2], p[3], p[4], 0};
        static const char *names[4] = {"c", "u", "p", "m"};
        float *t[4];
        for (int k = 0; k < 4; k++) t[k] = sg_load(g_ctx, f, "lc_guid", i, names[k], LTX2_F32, &n);
        float *ref = sg_load(g_ctx, f, "lc_guid", i, "out", LTX2_F32, NULL);
        const float *x0[4] = {t[0], p[5] != 0 ? t[1] : NULL, p[6] != 0 ? t[2] : NULL, p[7] != 0 ? t[3] : NULL};
        float *out = malloc((size_t)n * sizeof(float));
        CHECK(ltx2_guidance_combine_x0(g_ctx, &r, &s, x0, 1, n, out) == LTX2_OK, "lc_guid.%d", i);
        double w = sg_max_rel(out, ref, n);
        CHECK(w <= (!r.latent_bf16 ? GUID_TOL_F32 : GUID_TOL_BF16), "lc_guid.%d (bf16 %d cfg %g stg %g r %g mod %g): %.3g",
              i, r.latent_bf16, s.cfg, s.stg, s.rescale, s.modality, w);
        for (int k = 0; k < 4; k++) free(t[k]);
        free(ref), free(out), free(p);
        cases++;
    }
    for (int i = 0;; i++) {
        int64_t n = 0;
        double *p = sg_load(g_ctx, f, "df_guid", i, "params", LTX2_F64, NULL);
        if (!p) break;
        ltx2_sem_rules r = ltx2_sem_rules_for(LTX2_SEM_DIFFUSERS);
        ltx2_guidance_params gp;
        gp.video = (ltx2_guidance_scales){p[0], p[1], p[2], p[3], 0};
        gp.audio = gp.video;
        static const char *names[4] = {"vc", "vu", "vp", "vm"};
        float *t[4];
        for (int k = 0; k < 4; k++) t[k] = sg_load(g_ctx, f, "df_guid", i, names[k], LTX2_F32, &n);
        float *x = sg_load(g_ctx, f, "df_guid", i, "x", LTX2_F32, NULL);
        float *ref = sg_load(g_ctx, f, "df_guid", i, "out", LTX2_F32, NULL);
        ltx2_guidance_plan plan;
        CHECK(ltx2_guidance_plan_make(g_ctx, &r, &gp, &plan) == LTX2_OK, "df plan %d", i);
        const float *v[4];
        for (int k = 0; k < 4; k++) v[k] = ltx2_guidance_plan_slot(&plan, (ltx2_guidance_pass)k) >= 0 ? t[k] : NULL;
        float *out = malloc((size_t)n * sizeof(float));
        ltx2_status st = ltx2_guidance_apply(g_ctx, &r, &plan, &gp.video, &gp.video, x, v, 2, n / 2,
                                             (float)p[7], (float)p[7], out, NULL);
        CHECK(st == LTX2_OK, "df_guid.%d: %s", i, ltx2_last_error(g_ctx));
        double w = sg_max_rel(out, ref, n);
        CHECK(w <= GUID_TOL_F32, "df_guid.%d: %.3g", i, w);
        for (int k = 0; k < 4; k++) free(t[k]);
        free(x), free(ref), free(out), free(p);
        cases++;
    }
    CHECK(cases >= 20, "found %d guidance cases", cases);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    if (!g_ctx) return 1;
    test_plans();
    ltx2_st_file *f = NULL;
    const char *path = LTX2_SOURCE_DIR "/tests/golden/data/sampler.safetensors";
    if (ltx2_st_open(g_ctx, path, &f) != LTX2_OK) {
        CHECK(0, "cannot open %s: %s", path, ltx2_last_error(g_ctx));
    } else {
        test_goldens(f);
        ltx2_st_close(f);
    }
    ltx2_context_free(g_ctx);
    return test_finish();
}
