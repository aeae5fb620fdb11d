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
#include "test_util.h"

/* The DiT golden bound (tests/test_dit_golden.c): fp32 reordering noise only. */
#define DIT_DIFFUSERS_REL_L2_TOL 1e-5

static ltx2_context *g_ctx;

static float *load_f32(const ltx2_st_file *f, const char *name, int64_t *numel) { return ltx2_st_read_f32(g_ctx, f, name, numel); }

static void compare(const ltx2_st_file *g, const char *version, const char *name, const float *ours, int64_t n) {
    int64_t gn = 0;
    float *ref = load_f32(g, name, &gn);
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
    const char *names[11] = {"input.video.latent", "input.video.positions", "input.video.timesteps",
                             "input.video.sigma", "input.video.context", "input.audio.latent",
                             "input.audio.positions", "input.audio.timesteps", "input.audio.sigma",
                             "input.audio.context", "input.context_mask"};
    float *in[11];
    bool have = true;
    for (int i = 0; i < 11; i++) have = (in[i] = load_f32(g, names[i], NULL)) != NULL && have;
    CHECK(have, "%s: golden inputs missing", version);
    const ltx2_st_tensor *vl = ltx2_st_find(g, names[0]), *al = ltx2_st_find(g, names[5]),
                         *vc = ltx2_st_find(g, names[4]);
    if (have) {
        const int64_t B = vl->shape[0], Tv = vl->shape[1], Ta = al->shape[1], S = vc->shape[1];
        uint8_t *mask = malloc((size_t)(B * S));
        for (int64_t i = 0; i < B * S; i++) mask[i] = in[10][i] != 0.0f;
        ltx2_dit_forward_params p;
        ltx2_dit_forward_params_init(&p);
        p.batch = B;
        p.video = (ltx2_dit_modality){in[0], in[1], in[2], in[3], in[4], mask, Tv, S};
        p.audio = (ltx2_dit_modality){in[5], in[6], in[7], in[8], in[9], mask, Ta, S};
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
        free(vo), free(ao), free(mask);
    }
    for (int i = 0; i < 11; i++) free(in[i]);
    ltx2_st_close(g);
    ltx2_dit_weights_free(w);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    check_version("2.0");
    check_version("2.3");
    ltx2_context_free(g_ctx);
    return test_finish();
}
