/* The DiT with scaled fp8 Linear weights kept fp8 against ltx-core's fp8_scaled_mm (FP8Linear) on the tiny
 * LTX-2.0 / LTX-2.3 models: tests/golden/data/dit_fp8_<v>.safetensors (gen_dit_fp8_goldens.py) is a
 * pre-quantised checkpoint (block 1's Linears e4m3 with weight_scale and input_scale, block 0 bf16)
 * plus inputs and the reference velocities. Loaded with ltx2_dit_weights_load_fp8 on the CPU, each
 * fp8 Linear quantises its input with the static scale and runs the fp8 GEMM; the forward must
 * match the reference's fp8 forward, and be clearly nearer to it than the ordinary load of the same
 * file (weights dequantised, activations not quantised) is, which must match the reference's
 * dequantised forward instead. The fp8 inputs written by the modulations give the bits of each Linear
 * quantising its own (dit_fp8_fuse_check.h). LoRAs fused into the fp8 weights against ltx-core's apply_loras. Also
 * what is refused: a bf16 file, a missing input_scale. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_config.h"
#include "model/dit_weights.h"
#include "model/lora.h"
#include "ckpt_edit.h"
#include "dit_fp8_fuse_check.h"
#include "dit_inputs.h"
#include "test_util.h"

/* fp8 forward vs fp8 reference, both fp32 around the fp8 GEMMs. Where no quantised input lies within
 * float32 noise of an e4m3 rounding boundary they agree to fp32 noise (measured 1.5e-6 - 2.0e-6), the
 * floor below. Where one does, it may round the other way (one e4m3 step on one element) and on the
 * tiny model that moves the output by up to ~1e-2: the golden records how far its own reference
 * moves under float32-sized input noise ("sensitivity"), and the tolerance is FP8_FLIP_FACTOR times
 * that (measured: 2.0 audio 3.24e-3 against a sensitivity of 3.3e-3, one flip in
 * video_to_audio_attn's K/V inputs). */
#define FP8_REL_L2_FLOOR 2e-5
#define FP8_FLIP_FACTOR 2.0
/* the ordinary load vs the dequantised reference: fp32 against fp32, as test_dit_golden */
#define DEQUANT_REL_L2_TOL 1e-5
/* the fp8 path must be at least this many times nearer the fp8 reference than the ordinary load
 * (measured: the ordinary load is 3.9-5.0% away; the fp8 path 2e-6, or 3.2e-3 with the one flip) */
#define FP8_MARGIN 10.0
/* LoRA fusion into fp8 weights (lora_fusion): the weight scale is 1 / (448 / amax) on both sides,
 * amax of the same f32 sums; a code may flip where an f32 sum sits on an e4m3 rounding boundary */
#define FP8_LORA_SCALE_RTOL 1e-6
#define FP8_LORA_MAX_FLIPS 2

static ltx2_context *g_ctx;

static double rel_l2(const ltx2_st_file *f, const char *name, const float *ours, int64_t n) {
    int64_t gn = 0;
    float *ref = ltx2_st_read_f32(g_ctx, f, name, &gn);
    CHECK(ref && gn == n, "%s: golden missing or %lld elements, ours %lld", name, (long long)gn, (long long)n);
    if (!ref || gn != n) {
        free(ref);
        return 1e30;
    }
    ltx2_tensor a = ltx2_tensor_make(ref, LTX2_F32, 1, &gn), b = ltx2_tensor_make((void *)ours, LTX2_F32, 1, &n);
    ltx2_diff_stats st;
    ltx2_diff(&a, &b, 0.0, 0.0, &st);
    free(ref);
    return st.rel_l2;
}

/* One forward of w on the golden inputs; video / audio rel-L2 against "<pfx>.video|audio". */
static bool forward_vs(const ltx2_st_file *f, const ltx2_dit_weights *w, const char *pfx, double out[2]) {
    dit_inputs in;
    bool ok = dit_inputs_load(g_ctx, f, DIT_INPUTS_MASKED, &in);
    const ltx2_dit_forward_params p = in.p;
    if (ok) {
        const int64_t nv = p.batch * p.video.T * w->cfg.out_channels, na = p.batch * p.audio.T * w->cfg.audio_out_channels;
        float *vo = calloc((size_t)nv, sizeof(float)), *ao = calloc((size_t)na, sizeof(float));
        const ltx2_status st = ltx2_dit_forward(g_ctx, w, &p, vo, ao);
        CHECK(st == LTX2_OK, "forward: %s", ltx2_last_error(g_ctx));
        ok = st == LTX2_OK;
        if (ok) {
            char n[64];
            snprintf(n, sizeof n, "%s.video", pfx);
            out[0] = rel_l2(f, n, vo, nv);
            snprintf(n, sizeof n, "%s.audio", pfx);
            out[1] = rel_l2(f, n, ao, na);
        }
        free(vo), free(ao);
    }
    dit_inputs_free(&in);
    return ok;
}

/* The checkpoint tensors (under the DiT prefix; the golden's "lora.*" are not) ending in suffix. */
static size_t count_suffix(const ltx2_st_file *f, const char *suffix) {
    size_t n = 0, ls = strlen(suffix);
    for (size_t i = 0; i < f->n_tensors; i++) {
        const char *name = f->tensors[i].name;
        size_t l = strlen(name);
        n += !strncmp(name, LTX2_DIT_PREFIX, strlen(LTX2_DIT_PREFIX)) && l >= ls && !strcmp(name + l - ls, suffix);
    }
    return n;
}

static void run_version(const char *version) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/golden/data/dit_fp8_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_st_file *f = NULL;
    ltx2_status st = ltx2_st_open(g_ctx, path, &f);
    CHECK(st == LTX2_OK, "%s: %s", path, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    ltx2_dit_config cfg;
    st = ltx2_dit_config_from_st(g_ctx, f, &cfg);
    CHECK(st == LTX2_OK, "%s: config: %s", version, ltx2_last_error(g_ctx));
    ltx2_dit_weights *w8 = NULL, *wd = NULL;
    if (st == LTX2_OK) {
        st = ltx2_dit_weights_load_fp8(g_ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, NULL, &w8);
        CHECK(st == LTX2_OK, "%s: fp8 load: %s", version, ltx2_last_error(g_ctx));
        st = ltx2_dit_weights_load_on(g_ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, &wd);
        CHECK(st == LTX2_OK, "%s: ordinary load: %s", version, ltx2_last_error(g_ctx));
    }
    if (w8 && wd) {
        const size_t want = count_suffix(f, ".weight_scale");
        CHECK(want > 0 && w8->store.n_fp8 == want && wd->store.n_fp8 == 0,
              "%s: %zu fp8 Linears kept, the file has %zu scaled (ordinary load kept %zu)", version, w8->store.n_fp8,
              want, wd->store.n_fp8);
        const ltx2_dit_linear *q = &w8->blocks[1].ff.proj_in, *b0 = &w8->blocks[0].ff.proj_in;
        CHECK(q->w.dtype == LTX2_F8_E4M3 && q->w_scale > 0.0f && q->x_scale > 0.0f && b0->w.dtype != LTX2_F8_E4M3,
              "%s: block 1 FF up fp8 with scales, block 0 not", version);
        double e8[2], ed[2], e8d[2];
        int64_t ns = 0;
        float *sens = ltx2_st_read_f32(g_ctx, f, "sensitivity", &ns);
        CHECK(sens && ns == 2, "%s: golden sensitivity missing", version);
        if (sens && ns == 2 && forward_vs(f, w8, "output", e8) && forward_vs(f, wd, "dequant", ed) &&
            forward_vs(f, wd, "output", e8d)) {
            for (int m = 0; m < 2; m++) {
                const char *mod = m ? "audio" : "video";
                const double tol = FP8_FLIP_FACTOR * sens[m] > FP8_REL_L2_FLOOR ? FP8_FLIP_FACTOR * sens[m]
                                                                                 : FP8_REL_L2_FLOOR;
                CHECK(e8[m] <= tol, "%s %s: fp8 forward vs ltx-core FP8Linear rel-L2 %.3g > %.3g (reference "
                      "sensitivity %.3g)", version, mod, e8[m], tol, (double)sens[m]);
                CHECK(ed[m] <= DEQUANT_REL_L2_TOL, "%s %s: ordinary load vs dequantised reference rel-L2 %.3g > %.1g",
                      version, mod, ed[m], DEQUANT_REL_L2_TOL);
                CHECK(e8d[m] >= FP8_MARGIN * e8[m], "%s %s: the ordinary load is only %.3g from the fp8 reference "
                      "(fp8 path %.3g): the golden does not tell the paths apart", version, mod, e8d[m], e8[m]);
            }
            printf("%s: fp8 vs FP8Linear rel-L2 video %.3g audio %.3g (reference sensitivity %.3g / %.3g); ordinary "
                   "load vs dequantised %.3g / %.3g, vs fp8 reference %.3g / %.3g\n", version, e8[0], e8[1],
                   (double)sens[0], (double)sens[1], ed[0], ed[1], e8d[0], e8d[1]);
        }
        free(sens);
        char label[32];
        snprintf(label, sizeof label, "%s cpu", version);
        dit_fp8_fuse_check(g_ctx, w8, f, label);
    }
    ltx2_dit_weights_free(w8);
    ltx2_dit_weights_free(wd);
    ltx2_st_close(f);
}

/* Block 1's fp8 weights with the tiny style (0.8) and distilled (0.5) LoRAs fused by the fp8 rule
 * (dequantise, add the bf16-summed deltas, re-quantise) against ltx-core's apply_loras ("lora.*" of
 * the golden): the scales to FP8_LORA_SCALE_RTOL, the codes equal but for FP8_LORA_MAX_FLIPS per
 * tensor (an f32 rounding of delta + weight that lands on an e4m3 rounding boundary). */
static void lora_fusion(const char *version) {
    char path[1024], lp[2][1024];
    snprintf(path, sizeof path, "%s/tests/golden/data/dit_fp8_%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(lp[0], sizeof lp[0], "%s/weights/tiny/ltx2-tiny-lora-style-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(lp[1], sizeof lp[1], "%s/weights/tiny/ltx2-tiny-lora-distilled-%s.safetensors", LTX2_SOURCE_DIR, version);
    const ltx2_lora_spec specs[2] = {{lp[0], 0.8}, {lp[1], 0.5}};
    ltx2_st_file *f = NULL;
    ltx2_lora_set *loras = NULL;
    ltx2_dit_weights *w = NULL;
    ltx2_dit_config cfg;
    ltx2_status st = ltx2_st_open(g_ctx, path, &f);
    if (st == LTX2_OK) st = ltx2_dit_config_from_st(g_ctx, f, &cfg);
    if (st == LTX2_OK) st = ltx2_lora_set_open(g_ctx, specs, 2, &loras);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_fp8(g_ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, loras, &w);
    CHECK(st == LTX2_OK, "%s fp8 + LoRAs: %s", version, ltx2_last_error(g_ctx));
    size_t n_mod = 0, flips = 0, worst = 0;
    double worst_scale = 0;
    for (size_t i = 0; w && i < f->n_tensors; i++) {
        const char *gname = f->tensors[i].name;
        const size_t gl = strlen(gname);
        if (strncmp(gname, "lora.", 5) || gl < 8 || strcmp(gname + gl - 7, ".weight")) continue;
        char module[256];
        snprintf(module, sizeof module, "%.*s", (int)(gl - 5 - 7), gname + 5);
        const ltx2_dit_linear *L = ltx2_dit_weights_find_linear(w, module);
        CHECK(L && L->w.dtype == LTX2_F8_E4M3, "%s: %s not an fp8 Linear after the LoRA load", version, module);
        if (!L || L->w.dtype != LTX2_F8_E4M3) continue;
        char sname[300];
        snprintf(sname, sizeof sname, "lora.%s.weight_scale", module);
        float *gs = ltx2_st_read_f32(g_ctx, f, sname, NULL);
        const ltx2_st_tensor *gq = &f->tensors[i];
        const uint8_t *want = gq->data, *got = L->w.data;
        size_t bad = 0;
        for (int64_t k = 0; k < ltx2_tensor_numel(&L->w); k++) bad += want[k] != got[k];
        const double sd = gs ? fabs((double)L->w_scale - gs[0]) / gs[0] : 1.0;
        CHECK(bad <= FP8_LORA_MAX_FLIPS && sd <= FP8_LORA_SCALE_RTOL,
              "%s %s: %zu of %lld codes differ from ltx-core's fused weight, scale %.9g vs %.9g", version, module, bad,
              (long long)ltx2_tensor_numel(&L->w), (double)L->w_scale, gs ? (double)gs[0] : 0.0);
        flips += bad, worst = bad > worst ? bad : worst, worst_scale = sd > worst_scale ? sd : worst_scale;
        n_mod++;
        free(gs);
    }
    CHECK(n_mod == w->store.n_fp8 && n_mod > 0, "%s: %zu fused fp8 Linears compared, %zu stored", version, n_mod,
          w ? w->store.n_fp8 : 0);
    printf("%s fp8 + LoRAs: %zu Linears re-quantised, %zu codes differ in all (worst %zu), scales within %.2g\n",
           version, n_mod, flips, worst, worst_scale);
    ltx2_dit_weights_free(w);
    ltx2_lora_set_free(loras);
    ltx2_st_close(f);
}

/* dst = the 2.0 golden checkpoint with drop removed; then load_fp8's status. */
static ltx2_status load_fp8_file(const char *src, const char *dst, const char *drop) {
    if (drop && !ckpt_write_broken(src, dst, drop, NULL, NULL, NULL)) return LTX2_ERR_INTERNAL;
    ltx2_st_file *f = NULL;
    ltx2_clear_error(g_ctx);
    ltx2_status st = ltx2_st_open(g_ctx, drop ? dst : src, &f);
    if (st != LTX2_OK) return st;
    ltx2_dit_config cfg;
    ltx2_dit_weights *w = NULL;
    st = ltx2_dit_config_from_st(g_ctx, f, &cfg);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_fp8(g_ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, NULL, &w);
    CHECK(st == LTX2_OK || w == NULL, "weights returned on failure");
    ltx2_dit_weights_free(w);
    ltx2_st_close(f);
    if (drop) unlink(dst);
    return st;
}

static void refusals(void) {
    char tiny[1024], gold[1024], dst[1200];
    snprintf(tiny, sizeof tiny, "%s/weights/tiny/ltx2-tiny-2.0.safetensors", LTX2_SOURCE_DIR);
    snprintf(gold, sizeof gold, "%s/tests/golden/data/dit_fp8_2.0.safetensors", LTX2_SOURCE_DIR);
    ltx2_status st = load_fp8_file(tiny, NULL, NULL);
    CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "pre-quantised"),
          "fp8 load of a bf16 file: %s", ltx2_last_error(g_ctx));

    char dir[] = "/tmp/ltx2_fp8_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    snprintf(dst, sizeof dst, "%s/no_input_scale.safetensors", dir);
    const char *key = "model.diffusion_model.transformer_blocks.1.attn1.to_q.input_scale";
    st = load_fp8_file(gold, dst, key);
    CHECK(st == LTX2_ERR_NOT_FOUND && strstr(ltx2_last_error(g_ctx), key), "missing input_scale: %s: %s",
          ltx2_status_name(st), ltx2_last_error(g_ctx));
    rmdir(dir);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    if (!g_ctx) return 1;
    run_version("2.0");
    run_version("2.3");
    lora_fusion("2.0");
    lora_fusion("2.3");
    refusals();
    ltx2_context_free(g_ctx);
    return test_finish();
}
