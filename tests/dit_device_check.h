/* The tiny LTX-2.0 / LTX-2.3 DiT forward on a device backend (bf16 weights and activations, the
 * model's one forward) against the same forward on the CPU backend in fp32, on the golden inputs of
 * dit_blocks_<v>.safetensors: plain, with STG and modality-isolation perturbations, with the
 * own-timestep A/V rule, and with the text mask and K/V cache (second call hits). Shared by
 * test_dit_cuda (a GPU) and test_emu_dit (the CPU emulator of the kernels, where every forward
 * costs seconds: each case runs once, the mask with the cache). */
#ifndef LTX2_TEST_DIT_DEVICE_CHECK_H
#define LTX2_TEST_DIT_DEVICE_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_pool.h"
#include "core/context.h"
#include "dit_fp8_fuse_check.h"
#include "dit_inputs.h"
#include "model/dit.h"
#include "model/dit_config.h"
#include "model/dit_weights.h"
#include "model/fp8_cast.h"
#include "test_util.h"

/* bf16 storage of weights, the residual stream and every activation (2^-9 relative rounding per
 * step, a few dozen steps per block, two blocks) keeps the outputs' direction to ~1e-5 and their
 * rel-L2 near 1e-2; a wrong modulation row, gate, mask or RoPE table drops the cosine below 0.99. */
#define DIT_DEVICE_MIN_COSINE 0.9999
#define DIT_DEVICE_MAX_REL_L2 2e-2
/* fp8 weights: as above, plus the activations each side quantises to e4m3 differing by bf16
 * rounding, so that some round to the neighbouring e4m3 step (1/16 relative). Measured on the
 * emulator: rel-L2 0.018-0.026, cosine >= 0.99966; the bounds leave 1.5x. A lost scale or bias is
 * off by far more; fp8 exactness is test_dit_fp8_scaled's, on the CPU. */
#define DIT_DEVICE_FP8_MIN_COSINE 0.9993
#define DIT_DEVICE_FP8_MAX_REL_L2 0.04

/* got against ref: finite, cosine >= min_cos, rel-L2 <= max_rel; *worst keeps the largest rel-L2. */
static inline void dit_device_compare_within(const char *what, const float *ref, const float *got, int64_t n, double min_cos,
                                      double max_rel, double *worst) {
    double ab = 0, aa = 0, bb = 0, d2 = 0;
    bool finite = true;
    for (int64_t i = 0; i < n; i++) {
        finite = finite && isfinite(got[i]);
        ab += (double)ref[i] * got[i], aa += (double)ref[i] * ref[i], bb += (double)got[i] * got[i];
        d2 += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
    }
    const double cosine = aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0, rel = aa > 0 ? sqrt(d2 / aa) : sqrt(d2);
    CHECK(finite && cosine >= min_cos && rel <= max_rel, "%s: cosine %.7f (min %.4f), rel-L2 %.3g (max %.2g)%s", what,
          cosine, min_cos, rel, max_rel, finite ? "" : ", non-finite values");
    if (rel > *worst) *worst = rel;
}

static inline void dit_device_compare(const char *what, const float *ref, const float *got, int64_t n, double *worst) {
    dit_device_compare_within(what, ref, got, n, DIT_DEVICE_MIN_COSINE, DIT_DEVICE_MAX_REL_L2, worst);
}

/* Runs every case of one version on `dev`; prints the worst rel-L2. */
static inline void dit_device_check(ltx2_context *ctx, const ltx2_backend *dev, const char *version) {
    char ck[1024], gp[1024];
    snprintf(ck, sizeof ck, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(gp, sizeof gp, "%s/tests/golden/data/dit_blocks_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_dit_weights *cpu = NULL, *dw = NULL;
    ltx2_st_file *g = NULL;
    ltx2_status st = ltx2_dit_weights_load_file(ctx, ck, &cpu);
    if (st == LTX2_OK) st = ltx2_dit_weights_to(ctx, cpu, dev, LTX2_BF16, &dw);
    if (st == LTX2_OK) st = ltx2_st_open(ctx, gp, &g);
    CHECK(st == LTX2_OK, "%s: %s", version, ltx2_last_error(ctx));
    double worst = 0;
    int cases = 0;
    for (int masked = 0; st == LTX2_OK && masked < 2; masked++) {
        dit_inputs in;
        if (!dit_inputs_load(ctx, g, masked ? DIT_INPUTS_MASKED : DIT_INPUTS_UNMASKED, &in)) break;
        /* unmasked: plain, perturbed, own timesteps; masked: the text cache */
        const int mode0 = masked ? 3 : 0, mode1 = masked ? 4 : 3;
        const int64_t B = in.B, L = cpu->cfg.num_layers;
        const int64_t nv = B * in.video.T * cpu->cfg.out_channels, na = B * in.audio.T * cpu->cfg.audio_out_channels;
        float *rv = malloc((size_t)nv * sizeof(float)), *ra = malloc((size_t)na * sizeof(float));
        float *gv = malloc((size_t)nv * sizeof(float)), *ga = malloc((size_t)na * sizeof(float));
        uint32_t *pert = calloc((size_t)(B * L), sizeof(uint32_t));
        ltx2_dit_text_cache *cache = NULL;
        ltx2_dit_rope_cache *rope = NULL;
        ltx2_dit_act_pool *act = NULL;
        ltx2_dit_text_cache_create(ctx, 4, &cache);
        ltx2_dit_rope_cache_create(ctx, &rope);
        ltx2_dit_act_pool_create(ctx, &act);
        float *first = malloc((size_t)(nv + na) * sizeof(float)); /* the cached mode's first device outputs */
        const char *modes[4] = {"plain", "STG + isolation", "own A/V timesteps", "text cache"};
        int64_t act_allocs = 0; /* the pool's allocations after the cached mode's first call */
        for (int mode = mode0; mode < mode1 && rv && ra && gv && ga && pert && cache && rope && act && first; mode++) {
            ltx2_dit_forward_params p = in.p;
            if (mode == 1) {
                const int64_t last = L - 1;
                ltx2_dit_perturb_set(ctx, pert, L, 0, LTX2_DIT_SKIP_VIDEO_SELF_ATTN | LTX2_DIT_SKIP_AUDIO_SELF_ATTN,
                                     &last, 1);
                ltx2_dit_perturb_set(ctx, pert, L, B - 1, LTX2_DIT_SKIP_A2V_CROSS_ATTN | LTX2_DIT_SKIP_V2A_CROSS_ATTN,
                                     NULL, 0);
                p.perturb = pert;
            }
            if (mode == 2) p.av_timestep = LTX2_DIT_AV_TS_OWN;
            st = ltx2_dit_forward(ctx, cpu, &p, rv, ra);
            if (mode == 3) p.text_cache = cache, p.rope_cache = rope, p.act_pool = act;
            for (int rep = 0; st == LTX2_OK && rep < (mode == 3 ? 2 : 1); rep++) {
                st = ltx2_dit_forward(ctx, dw, &p, gv, ga);
                CHECK(st == LTX2_OK, "%s %s: device forward: %s", version, modes[mode], ltx2_last_error(ctx));
                if (st != LTX2_OK) break;
                char what[160];
                snprintf(what, sizeof what, "%s %s%s%s video", version, masked ? "masked " : "", modes[mode],
                         rep ? " (cached)" : "");
                dit_device_compare(what, rv, gv, nv, &worst);
                snprintf(what, sizeof what, "%s %s%s%s audio", version, masked ? "masked " : "", modes[mode],
                         rep ? " (cached)" : "");
                dit_device_compare(what, ra, ga, na, &worst);
                cases++;
                /* the second call reuses the first one's text K/V and RoPE tables and makes no context:
                 * the same bits */
                const size_t bv = (size_t)nv * sizeof(float), ba = (size_t)na * sizeof(float);
                ltx2_dit_act_pool_stats as;
                ltx2_dit_act_pool_get_stats(act, &as);
                if (mode == 3 && rep == 0) memcpy(first, gv, bv), memcpy(first + nv, ga, ba), act_allocs = as.allocs;
                if (mode == 3 && rep == 1)
                    CHECK(as.allocs == act_allocs && as.calls == 2,
                          "%s: the second device forward through the activation pool allocated %lld times", version,
                          (long long)(as.allocs - act_allocs));
                if (mode == 3 && rep == 1)
                    CHECK(!memcmp(first, gv, bv) && !memcmp(first + nv, ga, ba),
                          "%s: the device forward from the caches differs from the one that filled them", version);
            }
        }
        if (cache && masked) {
            ltx2_dit_text_cache_stats cs;
            ltx2_dit_rope_cache_stats rs;
            ltx2_dit_text_cache_get_stats(cache, &cs);
            ltx2_dit_rope_cache_get_stats(rope, &rs);
            CHECK(cs.hits > 0 && cs.contexts_skipped == 2,
                  "%s: the device text cache: %lld hits, %lld contexts skipped", version, (long long)cs.hits,
                  (long long)cs.contexts_skipped);
            CHECK(rs.builds == 2 && rs.hits == 2, "%s: the device RoPE cache: %lld builds, %lld hits (want 2, 2)",
                  version, (long long)rs.builds, (long long)rs.hits);
        }
        ltx2_dit_text_cache_free(cache);
        ltx2_dit_rope_cache_free(rope);
        ltx2_dit_act_pool_free(act);
        free(rv), free(ra), free(gv), free(ga), free(pert), free(first);
        dit_inputs_free(&in);
    }
    printf("%s on %s: %d forwards against the CPU, worst rel-L2 %.3g\n", version, dev->name, cases, worst);
    ltx2_st_close(g);
    ltx2_dit_weights_free(dw);
    ltx2_dit_weights_free(cpu);
}

/* One masked forward of cpu (the reference) and dw (on dev) on g's inputs, compared within (min_cos,
 * max_rel) per stream; label names the case. */
static inline void dit_device_pair_forward(ltx2_context *ctx, const ltx2_backend *dev, const ltx2_st_file *g,
                                    const ltx2_dit_weights *cpu, const ltx2_dit_weights *dw, const char *label,
                                    double min_cos, double max_rel) {
    dit_inputs in;
    if (!dit_inputs_load(ctx, g, DIT_INPUTS_MASKED, &in)) return;
    const int64_t nv = in.B * in.video.T * cpu->cfg.out_channels, na = in.B * in.audio.T * cpu->cfg.audio_out_channels;
    float *rv = malloc((size_t)nv * sizeof(float)), *ra = malloc((size_t)na * sizeof(float));
    float *gv = malloc((size_t)nv * sizeof(float)), *ga = malloc((size_t)na * sizeof(float));
    ltx2_status st = rv && ra && gv && ga ? ltx2_dit_forward(ctx, cpu, &in.p, rv, ra) : LTX2_ERR_OOM;
    if (st == LTX2_OK) st = ltx2_dit_forward(ctx, dw, &in.p, gv, ga);
    CHECK(st == LTX2_OK, "%s forward: %s", label, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        const float *ref[2] = {rv, ra}, *got[2] = {gv, ga};
        const int64_t n[2] = {nv, na};
        for (int m = 0; m < 2; m++) {
            char what[128];
            snprintf(what, sizeof what, "%s %s on %s", label, m ? "audio" : "video", dev->name);
            double rel = 0;
            dit_device_compare_within(what, ref[m], got[m], n[m], min_cos, max_rel, &rel);
            printf("%s vs the CPU: rel-L2 %.3g\n", what, rel);
        }
    }
    free(rv), free(ra), free(gv), free(ga);
    dit_inputs_free(&in);
}

/* Scaled fp8 weights (dit_fp8_<v>.safetensors, test_dit_fp8_scaled): the same file loaded with its fp8
 * Linears kept fp8 on the CPU (fp32 activations) and on dev (bf16 activations, the fp8 quantise
 * kernel, the fp8 GEMM), one masked forward each. The activations the two quantise differ by bf16
 * rounding, so some land in other e4m3 steps: the bounds are DIT_DEVICE_FP8_*. */
static inline void dit_device_check_fp8(ltx2_context *ctx, const ltx2_backend *dev, const char *version) {
    char gp[1024];
    snprintf(gp, sizeof gp, "%s/tests/golden/data/dit_fp8_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_st_file *g = NULL;
    ltx2_dit_weights *cpu = NULL, *dw = NULL;
    ltx2_dit_config cfg;
    ltx2_status st = ltx2_st_open(ctx, gp, &g);
    if (st == LTX2_OK) st = ltx2_dit_config_from_st(ctx, g, &cfg);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_fp8(ctx, ltx2_backend_cpu(), LTX2_F32, g, NULL, &cfg, NULL, &cpu);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_fp8(ctx, dev, LTX2_BF16, g, NULL, &cfg, NULL, &dw);
    CHECK(st == LTX2_OK, "%s fp8: %s", version, ltx2_last_error(ctx));
    char label[32];
    snprintf(label, sizeof label, "%s fp8", version);
    if (st == LTX2_OK)
        dit_device_pair_forward(ctx, dev, g, cpu, dw, label, DIT_DEVICE_FP8_MIN_COSINE, DIT_DEVICE_FP8_MAX_REL_L2);
    snprintf(label, sizeof label, "%s %s", version, dev->name);
    if (st == LTX2_OK) dit_fp8_fuse_check(ctx, dw, g, label);
    ltx2_dit_weights_free(dw);
    ltx2_dit_weights_free(cpu);
    ltx2_st_close(g);
}

/* What dit_device_check_fp8_cast compares Linear by Linear. */
typedef struct dit_cast_walk {
    ltx2_context *ctx;
    const ltx2_backend *dev;
    ltx2_dit_weights *dw;
    int cast, same;
} dit_cast_walk;

/* t (on dev, bf16) against ref (host f32): the same values. */
static inline bool dit_device_same_values(ltx2_context *ctx, const ltx2_backend *dev, const ltx2_tensor *t, const ltx2_tensor *ref) {
    const int64_t n = ltx2_tensor_numel(ref);
    if (!t->data || ltx2_tensor_numel(t) != n) return false;
    float *f = malloc((size_t)n * sizeof *f);
    const bool ok = f && ltx2_backend_to_host_f32(ctx, dev, t, f) == LTX2_OK && !memcmp(f, ref->data, (size_t)n * sizeof *f);
    free(f);
    return ok;
}

static ltx2_status dit_cast_linear(void *user, const char *name, ltx2_dit_linear *lin) {
    dit_cast_walk *c = user;
    if (!ltx2_fp8_cast_applies(name)) return LTX2_OK;
    char module[LTX2_WNAME_CAP];
    snprintf(module, sizeof module, "%.*s", (int)(strlen(name) - strlen(".weight")), name);
    const ltx2_dit_linear *d = ltx2_dit_weights_find_linear(c->dw, module);
    c->cast++;
    c->same += d && dit_device_same_values(c->ctx, c->dev, &d->w, &lin->w) &&
               dit_device_same_values(c->ctx, c->dev, &d->b, &lin->b);
    return LTX2_OK;
}

/* ltx-core's fp8_cast policy (test_dit_fp8_cast) loaded on the CPU and on dev: every cast Linear's weight
 * and bias hold the same (e4m3, so bf16-exact) values on both, the bias through dev's round trip; one
 * masked forward each within the plain bf16 bounds. */
static inline void dit_device_check_fp8_cast(ltx2_context *ctx, const ltx2_backend *dev, const char *version) {
    char ck[1024], gp[1024];
    snprintf(ck, sizeof ck, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(gp, sizeof gp, "%s/tests/golden/data/dit_fp8_cast_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_st_file *f = NULL, *g = NULL;
    ltx2_dit_weights *cpu = NULL, *dw = NULL;
    ltx2_dit_config cfg;
    ltx2_status st = ltx2_st_open(ctx, ck, &f);
    if (st == LTX2_OK) st = ltx2_st_open(ctx, gp, &g);
    if (st == LTX2_OK) st = ltx2_dit_config_from_st(ctx, f, &cfg);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_fp8_cast(ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, &cpu);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_fp8_cast(ctx, dev, LTX2_BF16, f, NULL, &cfg, &dw);
    CHECK(st == LTX2_OK, "%s fp8-cast: %s", version, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        dit_cast_walk c = {ctx, dev, dw, 0, 0};
        ltx2_dit_weights_each_linear(ctx, cpu, dit_cast_linear, &c);
        CHECK(c.cast > 0 && c.same == c.cast, "%s fp8-cast on %s: %d of %d cast Linears hold the CPU's values", version,
              dev->name, c.same, c.cast);
    }
    char label[32];
    snprintf(label, sizeof label, "%s fp8-cast", version);
    if (st == LTX2_OK) dit_device_pair_forward(ctx, dev, g, cpu, dw, label, DIT_DEVICE_MIN_COSINE, DIT_DEVICE_MAX_REL_L2);
    ltx2_dit_weights_free(dw);
    ltx2_dit_weights_free(cpu);
    ltx2_st_close(g);
    ltx2_st_close(f);
}

/* dit_device_check, the fp8-cast check, then dit_device_check_fp8 where dev has an fp8 GEMM (CUDA
 * compute capability 8.9+, the emulator). */
static inline void dit_device_check_all(ltx2_context *ctx, const ltx2_backend *dev, const char *version) {
    dit_device_check(ctx, dev, version);
    dit_device_check_fp8_cast(ctx, dev, version);
    if (ltx2_backend_supports(dev, LTX2_OP_GEMM_FP8, LTX2_F8_E4M3))
        dit_device_check_fp8(ctx, dev, version);
    else
        printf("%s fp8 on %s: skipped (no fp8 GEMM on this device)\n", version, dev->name);
}

#endif
