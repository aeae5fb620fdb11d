/* The DiT model rules of spec section 6 that are semantics fields besides the A/V timestep rule:
 * MaxDiffusion's STG scope (#9, dit_stg_blend_every_block) and its fp32 RoPE ladder (#6,
 * dit_rope_xla). Hand-computed cases: the blend v + m * (attn - v) loses attn = 1e-8 next to
 * v = 3 (gives 0) and m = 0 returns v exactly; the fp32-ladder forward equals the forward of the
 * same weights with rope_double_precision false, bit for bit; the blend changes nothing without
 * STG and only rounding (rel-L2 < 1e-5) with it. Inputs: the golden inputs of gen_dit_goldens.py. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_internal.h"
#include "model/dit_weights.h"
#include "pipeline/semantics.h"
#include "dit_inputs.h"
#include "test_util.h"

/* The blend adds one rounding per element per block: far below the DiT golden bound. */
#define BLEND_REL_L2_MAX 1e-5

static ltx2_context *g_ctx;

static double rel_l2(const float *ref, const float *out, int64_t n) {
    ltx2_tensor a = ltx2_tensor_make((void *)ref, LTX2_F32, 1, &n), b = ltx2_tensor_make((void *)out, LTX2_F32, 1, &n);
    ltx2_diff_stats st;
    ltx2_diff(&a, &b, 0.0, 0.0, &st);
    return st.rel_l2;
}

static void check_version(const char *version) {
    ltx2_dit_weights *w;
    ltx2_st_file *g;
    dit_inputs in;
    if (!dit_golden_open(g_ctx, version, DIT_INPUTS_UNMASKED, &w, &g, &in)) return;
    const int64_t B = in.B, Tv = in.video.T, Ta = in.audio.T, L = w->cfg.num_layers;
    ltx2_dit_forward_params p = in.p;
    const int64_t nv = B * Tv * w->cfg.out_channels, na = B * Ta * w->cfg.audio_out_channels;
    float *v0 = malloc((size_t)nv * sizeof(float)), *a0 = malloc((size_t)na * sizeof(float));
    float *v1 = malloc((size_t)nv * sizeof(float)), *a1 = malloc((size_t)na * sizeof(float));
#define FWD(vo, ao) CHECK(ltx2_dit_forward(g_ctx, w, &p, vo, ao) == LTX2_OK, "%s: %s", version, ltx2_last_error(g_ctx))

    /* RoPE as XLA computes MaxDiffusion's: it acts (its exact tables: test_md_golden) */
    CHECK(w->cfg.rope_double_precision, "%s: tiny config should ask for the float64 ladder", version);
    p.rope_xla = true;
    FWD(v0, a0);
    p.rope_xla = false;
    FWD(v1, a1);
    CHECK(memcmp(v0, v1, (size_t)nv * sizeof(float)) != 0, "%s: rope_xla changes nothing", version);

    /* STG blend: no perturbation -> no blend, bitwise */
    FWD(v0, a0);
    p.stg_blend_every_block = true;
    FWD(v1, a1);
    CHECK(memcmp(v0, v1, (size_t)nv * sizeof(float)) == 0 && memcmp(a0, a1, (size_t)na * sizeof(float)) == 0,
          "%s: the STG blend must not act without STG", version);
    /* sample 1 skips both self-attentions in the last block: blend everywhere vs exact select */
    uint32_t *pert = calloc((size_t)(B * L), sizeof(uint32_t));
    const int64_t last = L - 1;
    CHECK(ltx2_dit_perturb_set(g_ctx, pert, L, 1, LTX2_DIT_SKIP_VIDEO_SELF_ATTN | LTX2_DIT_SKIP_AUDIO_SELF_ATTN, &last,
                               1) == LTX2_OK,
          "perturb_set");
    p.perturb = pert;
    p.stg_blend_every_block = false;
    FWD(v0, a0);
    p.stg_blend_every_block = true;
    FWD(v1, a1);
    const double ev = rel_l2(v0, v1, nv), ea = rel_l2(a0, a1, na);
    CHECK(ev < BLEND_REL_L2_MAX && ea < BLEND_REL_L2_MAX, "%s: blend moved the output by %.3g / %.3g", version, ev, ea);
    CHECK(memcmp(v0, v1, (size_t)nv * sizeof(float)) != 0,
          "%s: the blend's extra rounding should show in the video output", version);
    printf("%s: STG blend vs select rel-L2 video %.3g audio %.3g\n", version, ev, ea);
#undef FWD
    free(pert);
    free(v0), free(a0), free(v1), free(a1);
    dit_golden_close(w, g, &in);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    /* the blend primitive on the CPU backend: sample 0 kept (m 1), sample 1 skipped (m 0) */
    float o[2] = {1e-8f, 1e-8f}, v[2] = {3.0f, 3.0f};
    const uint8_t skip[2] = {0, 1};
    int64_t sh[3] = {2, 1, 1};
    ltx2_tensor to = ltx2_tensor_make(o, LTX2_F32, 3, sh), tv = ltx2_tensor_make(v, LTX2_F32, 3, sh);
    dit_run r = {.ctx = g_ctx, .be = ltx2_backend_cpu(), .dt = LTX2_F32};
    CHECK(ltx2_bpool_create(g_ctx, r.be, &r.pool) == LTX2_OK, "pool: %s", ltx2_last_error(g_ctx));
    CHECK(r.pool && dit_stg_blend(&r, &to, &tv, skip) == LTX2_OK, "blend: %s", ltx2_last_error(g_ctx));
    ltx2_bpool_free(r.pool);
    CHECK(o[0] == 0.0f, "v + 1 * (1e-8 - 3) should round to 0, got %g", (double)o[0]);
    CHECK(o[1] == 3.0f, "m = 0 must give v exactly, got %g", (double)o[1]);
    /* the rules per reference */
    const ltx2_sem_rules lc = ltx2_sem_rules_for(LTX2_SEM_LTX_CORE), df = ltx2_sem_rules_for(LTX2_SEM_DIFFUSERS),
                         md = ltx2_sem_rules_for(LTX2_SEM_MAXDIFFUSION);
    CHECK(!lc.dit_stg_blend_every_block && !df.dit_stg_blend_every_block && md.dit_stg_blend_every_block,
          "STG scope: only maxdiffusion blends in every block");
    CHECK(!lc.dit_rope_xla && !df.dit_rope_xla && md.dit_rope_xla,
          "RoPE ladder: only maxdiffusion is fp32");
    check_version("2.0");
    check_version("2.3");
    ltx2_context_free(g_ctx);
    return test_finish();
}
