/* The A/V cross-attention timestep rule (spec section 6 #1, PARITY #6) as a semantics field:
 * ltx-core 1.0.0 / diffusers use_cross_timestep=True (other modality's sigma for scale/shift and
 * gate), ltx-core HEAD (own per-token timesteps for scale/shift, other sigma for the gate) and
 * diffusers use_cross_timestep=False (own per-token timesteps for all; diffusers
 * transformer_ltx2.py LTX2VideoTransformer3DModel.forward, "video_ca_timestep = audio_sigma if
 * use_cross_timestep else timestep", the gate fed `video_ca_timestep * gate scale factor`).
 * Hand-derived check: when every video token's timestep equals the audio sigma and every audio
 * token's equals the video sigma, the three rules feed identical AdaLN inputs, so the outputs must
 * be bitwise equal; on the golden inputs (masked tokens, sigma_v != sigma_a) all three differ. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "pipeline/semantics.h"
#include "dit_inputs.h"
#include "test_util.h"

static ltx2_context *g_ctx;

static void run(const ltx2_dit_weights *w, ltx2_dit_forward_params *p, ltx2_dit_av_timestep mode, float *vo,
                float *ao) {
    p->av_timestep = mode;
    ltx2_status st = ltx2_dit_forward(g_ctx, w, p, vo, ao);
    CHECK(st == LTX2_OK, "forward mode %d: %s", (int)mode, ltx2_last_error(g_ctx));
}

static void check_version(const char *version) {
    ltx2_dit_weights *w;
    ltx2_st_file *g;
    dit_inputs in;
    if (!dit_golden_open(g_ctx, version, DIT_INPUTS_UNMASKED, &w, &g, &in)) return;
    ltx2_dit_forward_params p = in.p;
    const int64_t B = in.B, Tv = in.video.T, Ta = in.audio.T;
    const size_t nv = (size_t)(B * Tv * w->cfg.out_channels), na = (size_t)(B * Ta * w->cfg.audio_out_channels);
    float *o[3][2];
    for (int m = 0; m < 3; m++) o[m][0] = malloc(nv * sizeof(float)), o[m][1] = malloc(na * sizeof(float));
    const ltx2_dit_av_timestep modes[3] = {LTX2_DIT_AV_TS_CROSS_SIGMA, LTX2_DIT_AV_TS_OWN_SCALE_CROSS_GATE,
                                           LTX2_DIT_AV_TS_OWN};
    /* golden inputs: the rules disagree */
    for (int m = 0; m < 3; m++) run(w, &p, modes[m], o[m][0], o[m][1]);
    CHECK(memcmp(o[0][0], o[2][0], nv * sizeof(float)) != 0 && memcmp(o[1][0], o[2][0], nv * sizeof(float)) != 0 &&
              memcmp(o[0][1], o[2][1], na * sizeof(float)) != 0,
          "%s: the timestep rules should change the output on these inputs", version);
    /* crossed timesteps: all three rules see the same AdaLN inputs */
    float *vts = malloc((size_t)(B * Tv) * sizeof(float)), *ats = malloc((size_t)(B * Ta) * sizeof(float));
    for (int64_t b = 0; b < B; b++) {
        for (int64_t t = 0; t < Tv; t++) vts[b * Tv + t] = in.audio.sigma[b];
        for (int64_t t = 0; t < Ta; t++) ats[b * Ta + t] = in.video.sigma[b];
    }
    p.video.timesteps = vts;
    p.audio.timesteps = ats;
    for (int m = 0; m < 3; m++) run(w, &p, modes[m], o[m][0], o[m][1]);
    for (int m = 1; m < 3; m++)
        CHECK(memcmp(o[0][0], o[m][0], nv * sizeof(float)) == 0 && memcmp(o[0][1], o[m][1], na * sizeof(float)) == 0,
              "%s: mode %d differs from cross-sigma with crossed timesteps", version, (int)modes[m]);
    p.av_timestep = (ltx2_dit_av_timestep)7;
    CHECK(ltx2_dit_forward(g_ctx, w, &p, o[0][0], o[0][1]) == LTX2_ERR_INVALID_ARG &&
              strstr(ltx2_last_error(g_ctx), "av_timestep"),
          "bad mode: %s", ltx2_last_error(g_ctx));
    free(vts), free(ats);
    for (int m = 0; m < 3; m++) free(o[m][0]), free(o[m][1]);
    dit_golden_close(w, g, &in);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    /* the rule per reference and checkpoint version */
    ltx2_sem_rules lc = ltx2_sem_rules_for(LTX2_SEM_LTX_CORE), df = ltx2_sem_rules_for(LTX2_SEM_DIFFUSERS),
                   md = ltx2_sem_rules_for(LTX2_SEM_MAXDIFFUSION);
    CHECK(ltx2_sem_dit_av_timestep(&lc, false) == LTX2_DIT_AV_TS_CROSS_SIGMA &&
              ltx2_sem_dit_av_timestep(&lc, true) == LTX2_DIT_AV_TS_CROSS_SIGMA,
          "ltx-core 1.0.0: cross sigma");
    CHECK(ltx2_sem_dit_av_timestep(&df, false) == LTX2_DIT_AV_TS_CROSS_SIGMA &&
              ltx2_sem_dit_av_timestep(&df, true) == LTX2_DIT_AV_TS_CROSS_SIGMA,
          "diffusers pipeline: use_cross_timestep=True");
    CHECK(ltx2_sem_dit_av_timestep(&md, false) == LTX2_DIT_AV_TS_OWN &&
              ltx2_sem_dit_av_timestep(&md, true) == LTX2_DIT_AV_TS_CROSS_SIGMA,
          "maxdiffusion: own for 2.0, cross for 2.3");
    check_version("2.0");
    check_version("2.3");
    ltx2_context_free(g_ctx);
    return test_finish();
}
