/* Our DiT, loaded from the diffusers-format tiny dirs, against diffusers 0.42.1's own
 * LTX2VideoTransformer3DModel (tests/golden/data/dit_diffusers_<v>.safetensors from
 * tests/golden/gen_dit_diffusers_golden.py, same inputs as the ltx-core goldens): the
 * use_cross_timestep=True outputs with the --semantics diffusers A/V timestep rule (what
 * LTX2Pipeline passes), and the use_cross_timestep=False outputs (the transformer's own default)
 * with LTX2_DIT_AV_TS_OWN, the first golden for that mode. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "pipeline/semantics.h"
#include "dit_inputs.h"
#include "test_util.h"

/* The DiT golden bound (tests/test_dit_golden.c): fp32 reordering noise only. */
#define DIT_DIFFUSERS_REL_L2_TOL 1e-5

static ltx2_context *g_ctx;

static void compare(const ltx2_st_file *g, const char *version, const char *name, const float *ours, int64_t n) {
    int64_t gn = 0;
    float *ref = ltx2_st_read_f32(g_ctx, g, name, &gn);
    CHECK(ref && gn == n, "%s %s: golden missing or %lld elements, ours %lld", version, name, (long long)gn,
          (long long)n);
    if (ref && gn == n) {
        ltx2_tensor a = ltx2_tensor_make(ref, LTX2_F32, 1, &gn), b = ltx2_tensor_make((void *)ours, LTX2_F32, 1, &n);
        ltx2_diff_stats st;
        ltx2_diff(&a, &b, 0.0, 0.0, &st);
        CHECK(st.rel_l2 <= DIT_DIFFUSERS_REL_L2_TOL, "%s %s: rel-L2 %.3g > %.1g (max abs %.3g)", version, name,
              st.rel_l2, DIT_DIFFUSERS_REL_L2_TOL, st.max_abs);
        printf("%s %s: rel-L2 %.3g\n", version, name, st.rel_l2);
    }
    free(ref);
}

static void check_version(const char *version) {
    char dir[1024], gp[1024];
    snprintf(dir, sizeof dir, "%s/weights/tiny/ltx2-tiny-diffusers-%s", LTX2_SOURCE_DIR, version);
    snprintf(gp, sizeof gp, "%s/tests/golden/data/dit_diffusers_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_dit_weights *w = NULL;
    ltx2_st_file *g = NULL;
    if (ltx2_dit_weights_load_file(g_ctx, dir, &w) != LTX2_OK || ltx2_st_open(g_ctx, gp, &g) != LTX2_OK) {
        CHECK(false, "%s: %s", version, ltx2_last_error(g_ctx));
        ltx2_dit_weights_free(w);
        return;
    }
    dit_inputs in;
    const bool have = dit_inputs_load(g_ctx, g, DIT_INPUTS_MASKED, &in);
    CHECK(have, "%s: golden inputs missing", version);
    if (have) {
        const int64_t B = in.B, Tv = in.video.T, Ta = in.audio.T;
        ltx2_dit_forward_params p = in.p;
        const int64_t nv = B * Tv * w->cfg.out_channels, na = B * Ta * w->cfg.audio_out_channels;
        float *vo = malloc((size_t)nv * sizeof(float)), *ao = malloc((size_t)na * sizeof(float));
        const ltx2_sem_rules df = ltx2_sem_rules_for(LTX2_SEM_DIFFUSERS);
        p.av_timestep = ltx2_sem_dit_av_timestep(&df, w->cfg.cross_attention_adaln);
        CHECK(ltx2_dit_forward(g_ctx, w, &p, vo, ao) == LTX2_OK, "%s: %s", version, ltx2_last_error(g_ctx));
        compare(g, version, "output.cross.video", vo, nv);
        compare(g, version, "output.cross.audio", ao, na);
        p.av_timestep = LTX2_DIT_AV_TS_OWN;
        CHECK(ltx2_dit_forward(g_ctx, w, &p, vo, ao) == LTX2_OK, "%s: %s", version, ltx2_last_error(g_ctx));
        compare(g, version, "output.own.video", vo, nv);
        compare(g, version, "output.own.audio", ao, na);
        free(vo), free(ao);
    }
    dit_inputs_free(&in);
    ltx2_st_close(g);
    ltx2_dit_weights_free(w);
}

int main(void) { return dit_test_both_versions(&g_ctx, check_version); }
