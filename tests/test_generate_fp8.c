/* Generation with fp8 DiT weights (--weights-dtype fp8) from a pre-quantised checkpoint, on the CPU:
 * the tiny LTX-2.3 single file with its DiT replaced by the mixed fp8/bf16 DiT of
 * tests/golden/data/dit_fp8_2.3.safetensors (whose forward test_dit_fp8_scaled holds to ltx-core's
 * FP8Linear) runs the one-stage pipeline with its scaled Linears kept fp8; the same file with the
 * default weights dtype runs them dequantised, which must give another, still close, result; the
 * same for the two-stage pipeline with the style LoRA in both stages and the distilled LoRA in stage
 * 2 (fused into the fp8 weights by ltx-core's rule, test_dit_fp8_scaled; stage 2's DiT reloaded fp8).
 * The memory plan counts the fp8 weights at a byte each. fp8-cast (ltx-core's fp8_cast policy) through
 * the whole pipeline: bitwise the run of a file whose cast tensors were rounded beforehand. Across ranks
 * (loopback threads, each keeping its shards fp8 or cast; fp32 latents): context 2 bitwise one rank's
 * run, tensor 2 (whose LoRA re-quantisation takes each weight's amax from both halves) within
 * RANKS_TP_REL_L2. Models loaded once with fp8 weights (ltx2_model_load_dtype) give the fp8 run. And what is
 * refused: an unknown weights dtype, fp8 of a checkpoint that holds no scaled fp8 weights, fp8-cast with
 * LoRAs (the two-stage pipeline). */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend_plan.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "ltx2/ltx2.h"
#include "model/dit_config.h"
#include "model/dit_parallel.h"
#include "model/dit_weights.h"
#include "model/fp8_cast.h"
#include "pipeline/generate_parallel.h"
#include "test_util.h"
#include "fp8_tiny_checkpoint.h"

#define TINY LTX2_SOURCE_DIR "/weights/tiny/"
#define DIT_PREFIX "model.diffusion_model."
/* Two runs of the tiny model whose block 1 runs in fp8 or not: measured 0.077 (one-stage) and 0.058
 * (two-stage) apart in the final video latent (the DiT forwards themselves are 4-5% apart,
 * test_dit_fp8_scaled). The bounds say the fp8 path ran (not the dequantised one) and did not
 * derail. */
#define FP8_VS_BF16_MIN 1e-3
#define FP8_VS_BF16_MAX 0.3
/* Tensor 2 against one rank: the row-parallel halves' fp32 summation order moves the DiT's output by
 * ~1e-7 (test_dit_parallel_fp8.c), and where that tips a quantised input across an e4m3 rounding
 * boundary the tiny model's output moves by ~1e-3 (test_dit_fp8_scaled.c). Measured on the fp32
 * latents: 3.2e-4 (one-stage: a flip), 2.4e-6 (two-stage + LoRAs), and 6.9e-7 for fp8-cast, whose
 * activations are not quantised. A wrong shard or scale is ~1e-1. */
#define RANKS_TP_REL_L2 2e-3

static const ltx2_lora_spec k_style = {TINY "ltx2-tiny-lora-style-2.3.safetensors", 0.8};

static void params(ltx2_generate_params *p, const char *ckpt, const char *wdt, bool two_stage) {
    ltx2_generate_params_init(p);
    p->device = "cpu";
    p->checkpoint = ckpt;
    p->weights_dtype = wdt;
    p->prompt_embeds = TINY "prompt_embeds_positive.safetensors";
    p->negative_prompt_embeds = TINY "prompt_embeds_negative.safetensors";
    p->steps = 2, p->height = 64, p->width = 96, p->frames = 9;
    p->stg_block = 1;
    if (two_stage) {
        p->pipeline = LTX2_PIPELINE_TWO_STAGE;
        p->height = p->width = 128; /* stage 1 at half, in multiples of 32 */
        p->spatial_upsampler = TINY "ltx2-tiny-upsampler-spatial-x2.safetensors";
        p->loras = &k_style, p->n_loras = 1;
        p->distilled_lora = (ltx2_lora_spec){TINY "ltx2-tiny-lora-distilled-2.3.safetensors", 1.0};
    }
}

static double latent_rel_l2(const ltx2_generate_result *a, const ltx2_generate_result *b) {
    const int64_t *s = a->video_latent_shape;
    int64_t n = s[0] * s[1] * s[2] * s[3] * s[4];
    ltx2_tensor ta = ltx2_tensor_make(a->video_latent, LTX2_F32, 1, &n);
    ltx2_tensor tb = ltx2_tensor_make(b->video_latent, LTX2_F32, 1, &n);
    ltx2_diff_stats st;
    ltx2_diff(&ta, &tb, 0.0, 0.0, &st);
    return st.rel_l2;
}

static bool all_finite(const float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return false;
    return true;
}

/* p over loopback ranks of mesh m (data, fsdp, context, tensor) against one rank's run of p: bitwise,
 * or within RANKS_TP_REL_L2 when m splits tensor. Both keep fp32 latents (per-step bf16 rounding
 * would hide the tensor splits' summation-order differences). */
static void ranks_vs(ltx2_context *ctx, const char *what, const ltx2_generate_params *p, const int m[4]) {
    ltx2_generate_params q = *p;
    q.latent_bf16 = 0;
    ltx2_generate_parallel_opts o;
    ltx2_generate_parallel_opts_init(&o);
    o.mesh = (ltx2_mesh){{m[0], m[1], m[2], m[3]}};
    ltx2_generate_result one, r;
    ltx2_status st = ltx2_generate(ctx, &q, &one);
    CHECK(st == LTX2_OK, "%s on one rank: %s", what, ltx2_last_error(ctx));
    if (st != LTX2_OK) return;
    st = ltx2_generate_loopback(ctx, &q, &o, &r);
    CHECK(st == LTX2_OK, "%s over mesh %d,%d,%d,%d: %s", what, m[0], m[1], m[2], m[3], ltx2_last_error(ctx));
    if (st != LTX2_OK) {
        ltx2_generate_result_free(&one);
        return;
    }
    const ltx2_generate_result *ref = &one;
    const double d = latent_rel_l2(ref, &r);
    const int64_t nv = r.frames * r.height * r.width * 3;
    if (m[3] == 1)
        CHECK(d == 0.0 && !memcmp(ref->video, r.video, (size_t)nv * sizeof(float)),
              "%s over mesh %d,%d,%d,%d: not bitwise one rank's run (video latent rel-L2 %.3g)", what, m[0], m[1], m[2],
              m[3], d);
    else
        CHECK(d <= RANKS_TP_REL_L2, "%s over mesh %d,%d,%d,%d: video latent rel-L2 %.3g > %g", what, m[0], m[1], m[2],
              m[3], d, RANKS_TP_REL_L2);
    printf("%s over mesh %d,%d,%d,%d: video latent rel-L2 %.3g from one rank's run\n", what, m[0], m[1], m[2], m[3], d);
    ltx2_generate_result_free(&r);
    ltx2_generate_result_free(&one);
}

static const int k_context2[4] = {1, 1, 2, 1}, k_tensor2[4] = {1, 1, 1, 2};

static void runs(ltx2_context *ctx, const char *ckpt, bool two_stage) {
    const char *what = two_stage ? "two-stage + LoRAs" : "one-stage";
    ltx2_generate_params p;
    ltx2_generate_result r8, r16;
    params(&p, ckpt, "fp8", two_stage);
    ltx2_status st = ltx2_generate(ctx, &p, &r8);
    CHECK(st == LTX2_OK, "%s fp8 run: %s", what, ltx2_last_error(ctx));
    if (st != LTX2_OK) return;
    char rw[64];
    snprintf(rw, sizeof rw, "2.3 %s fp8", what);
    ranks_vs(ctx, rw, &p, k_context2);
    ranks_vs(ctx, rw, &p, k_tensor2);
    params(&p, ckpt, NULL, two_stage);
    st = ltx2_generate(ctx, &p, &r16);
    CHECK(st == LTX2_OK, "%s default run of the fp8 file: %s", what, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        const double d = latent_rel_l2(&r8, &r16);
        CHECK(d >= FP8_VS_BF16_MIN && d <= FP8_VS_BF16_MAX,
              "%s fp8 vs dequantised run: video latent rel-L2 %.3g outside [%.0e, %.1f]", what, d, FP8_VS_BF16_MIN,
              FP8_VS_BF16_MAX);
        CHECK(all_finite(r8.video, r8.frames * r8.height * r8.width * 3) &&
                  all_finite(r8.audio, r8.audio_channels * r8.audio_samples),
              "%s fp8 run: video or audio not finite", what);
        printf("2.3 %s with fp8 DiT weights: video latent %.3g from the dequantised run\n", what, d);
        ltx2_generate_result_free(&r16);
    }
    ltx2_generate_result_free(&r8);
}

/* The bytes rank 0 of tensor 2 lays out for its DiT shards (fp8_file: those of its scaled fp8
 * weights at a byte each), as the memory plan does: over the null communicator, on the planning
 * backend. */
static bool rank_shard_bytes(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_dit_config *cfg,
                             const ltx2_st_file *fp8_file, size_t *bytes) {
    ltx2_backend *pb = NULL;
    ltx2_dit_weights *rep = NULL;
    ltx2_dit_parallel *dp = NULL;
    ltx2_comm *c = NULL;
    const ltx2_mesh tp2 = {{1, 1, 1, 2}};
    ltx2_dit_parallel_opts o;
    ltx2_dit_parallel_opts_init(&o);
    size_t before = 0, after = 0;
    (void)f;
    bool ok = ltx2_backend_plan_create(ctx, &pb) == LTX2_OK && ltx2_comm_null(ctx, &tp2, 0, &c) == LTX2_OK &&
              ltx2_dit_weights_layout_replicated_on(ctx, pb, LTX2_BF16, cfg, &rep) == LTX2_OK;
    if (ok) ltx2_backend_plan_counts(pb, &before, NULL);
    ok = ok && ltx2_dit_parallel_create_layout(ctx, c, rep, fp8_file, &o, &dp) == LTX2_OK;
    if (ok) ltx2_backend_plan_counts(pb, &after, NULL);
    CHECK(ok, "tensor 2 shard layout%s: %s", fp8_file ? " (fp8)" : "", ltx2_last_error(ctx));
    *bytes = after - before;
    ltx2_dit_parallel_free(dp);
    ltx2_dit_weights_free(rep);
    ltx2_comm_free(c);
    ltx2_backend_free(pb);
    return ok;
}

/* The memory plan's DiT bytes, bf16 and fp8, through the weight layouts it uses. */
static void plan_bytes(ltx2_context *ctx, const char *ckpt) {
    ltx2_st_file *f = NULL;
    ltx2_backend *pb = NULL;
    ltx2_dit_weights *w16 = NULL, *w8 = NULL;
    ltx2_dit_config cfg;
    bool ok = ltx2_st_open(ctx, ckpt, &f) == LTX2_OK && ltx2_dit_config_from_st(ctx, f, &cfg) == LTX2_OK &&
              ltx2_backend_plan_create(ctx, &pb) == LTX2_OK &&
              ltx2_dit_weights_layout_on(ctx, pb, LTX2_BF16, &cfg, &w16) == LTX2_OK &&
              ltx2_dit_weights_layout_fp8(ctx, pb, LTX2_BF16, &cfg, f, &w8) == LTX2_OK;
    CHECK(ok, "layouts: %s", ltx2_last_error(ctx));
    if (ok) {
        size_t fp8_elems = 0, n = 0;
        for (size_t i = 0; i < f->n_tensors; i++)
            if (f->tensors[i].dtype == LTX2_F8_E4M3) {
                fp8_elems += (size_t)(f->tensors[i].shape[0] * f->tensors[i].shape[1]);
                n++;
            }
        CHECK(w8->store.n_fp8 == n && n > 0, "fp8 layout keeps %zu fp8 matrices, the file has %zu", w8->store.n_fp8, n);
        /* each fp8 matrix is half its bf16 size, both rounded up to the store's tensor alignment */
        const size_t saved = w16->store.n_bytes - w8->store.n_bytes;
        CHECK(saved >= fp8_elems - n * 256 && saved <= fp8_elems + n * 256,
              "fp8 layout saves %zu bytes, the fp8 matrices hold %zu elements", saved, fp8_elems);
        /* rank 0 of tensor 2 lays out half of each fp8 matrix at a byte an element */
        size_t b16 = 0, b8 = 0;
        ok = rank_shard_bytes(ctx, f, &cfg, NULL, &b16) && rank_shard_bytes(ctx, f, &cfg, f, &b8);
        CHECK(ok && b16 - b8 >= fp8_elems / 2 - n * 256 && b16 - b8 <= fp8_elems / 2 + n * 256,
              "tensor 2: fp8 shards save %zu bytes per rank, half the fp8 matrices hold %zu elements", b16 - b8,
              fp8_elems / 2);
    }
    ltx2_dit_weights_free(w16);
    ltx2_dit_weights_free(w8);
    ltx2_backend_free(pb);
    ltx2_st_close(f);
}

/* The tiny 2.3 file with the tensors ltx-core's fp8_cast policy casts rounded to e4m3 values (kept bf16). */
static bool write_cast_checkpoint(ltx2_context *ctx, const char *path) {
    ltx2_st_file *tiny = NULL;
    ltx2_st_writer *w = NULL;
    bool ok = ltx2_st_open(ctx, TINY "ltx2-tiny-2.3.safetensors", &tiny) == LTX2_OK &&
              ltx2_st_writer_create(ctx, &w) == LTX2_OK;
    float **keep = ok ? calloc(tiny->n_tensors, sizeof *keep) : NULL;
    ok = ok && keep;
    for (size_t i = 0; ok && i < tiny->n_meta; i++)
        ok = ltx2_st_writer_set_meta(ctx, w, tiny->meta[i].key, tiny->meta[i].value) == LTX2_OK;
    for (size_t i = 0; ok && i < tiny->n_tensors; i++) {
        const ltx2_st_tensor *t = &tiny->tensors[i];
        ltx2_tensor v = ltx2_st_view(t);
        const bool dit = strncmp(t->name, DIT_PREFIX, strlen(DIT_PREFIX)) == 0;
        if (dit && ltx2_fp8_cast_applies(t->name + strlen(DIT_PREFIX))) {
            int64_t n = 0;
            float *f = ltx2_st_read_f32(ctx, tiny, t->name, &n);
            uint16_t *b = f ? malloc((size_t)n * sizeof *b) : NULL;
            ok = f && b;
            if (ok) {
                ltx2_fp8_cast_round(f, (size_t)n);
                ok = ltx2_convert(ctx, b, LTX2_BF16, f, LTX2_F32, (size_t)n) == LTX2_OK;
                v = ltx2_tensor_make(b, LTX2_BF16, t->ndim, t->shape);
            }
            free(f);
            keep[i] = (float *)b;
        }
        if (ok) ok = ltx2_st_writer_add(ctx, w, t->name, &v) == LTX2_OK;
    }
    if (ok) ok = ltx2_st_writer_write(ctx, w, path) == LTX2_OK;
    CHECK(ok, "writing the pre-cast checkpoint: %s", ltx2_last_error(ctx));
    for (size_t i = 0; keep && i < tiny->n_tensors; i++) free(keep[i]);
    free(keep);
    ltx2_st_writer_free(w);
    ltx2_st_close(tiny);
    return ok;
}

/* --quantization fp8-cast through the whole pipeline: bitwise the run of a file whose cast tensors were
 * rounded beforehand (the rounding itself is held to ltx-core in test_dit_fp8_cast), and not the plain run. */
static void cast_runs(ltx2_context *ctx, const char *dir) {
    char pre[256];
    snprintf(pre, sizeof pre, "%s/ltx2-tiny-2.3-precast.safetensors", dir);
    if (!write_cast_checkpoint(ctx, pre)) return;
    ltx2_generate_params p;
    ltx2_generate_result rc, rp, r16;
    params(&p, TINY "ltx2-tiny-2.3.safetensors", "fp8-cast", false);
    ltx2_status st = ltx2_generate(ctx, &p, &rc);
    CHECK(st == LTX2_OK, "fp8-cast run: %s", ltx2_last_error(ctx));
    if (st == LTX2_OK) ranks_vs(ctx, "2.3 one-stage fp8-cast", &p, k_context2);
    if (st == LTX2_OK) ranks_vs(ctx, "2.3 one-stage fp8-cast", &p, k_tensor2);
    params(&p, pre, NULL, false);
    const ltx2_status st2 = ltx2_generate(ctx, &p, &rp);
    CHECK(st2 == LTX2_OK, "pre-cast file run: %s", ltx2_last_error(ctx));
    params(&p, TINY "ltx2-tiny-2.3.safetensors", NULL, false);
    const ltx2_status st3 = ltx2_generate(ctx, &p, &r16);
    CHECK(st3 == LTX2_OK, "plain run: %s", ltx2_last_error(ctx));
    if (st == LTX2_OK && st2 == LTX2_OK && st3 == LTX2_OK) {
        const double same = latent_rel_l2(&rc, &rp), plain = latent_rel_l2(&rc, &r16);
        CHECK(same == 0.0 && plain > 0.0, "fp8-cast run vs the pre-cast file's: rel-L2 %.3g (want 0); vs the plain run "
              "%.3g (want > 0)", same, plain);
        printf("2.3 one-stage with fp8-cast weights: bitwise the pre-cast file's run, %.3g from the plain run\n", plain);
    }
    if (st == LTX2_OK) ltx2_generate_result_free(&rc);
    if (st2 == LTX2_OK) ltx2_generate_result_free(&rp);
    if (st3 == LTX2_OK) ltx2_generate_result_free(&r16);
    unlink(pre);
}

/* Models loaded once with fp8 weights (ltx2_model_load_dtype): a generation that leaves the dtype
 * NULL is bitwise ltx2_generate's fp8 run; another dtype is refused, as is fp8 asked of a bf16
 * model, and an unknown dtype at the load. */
static void model_runs(ltx2_context *ctx, const char *ckpt) {
    ltx2_generate_params p;
    ltx2_generate_result r8, rm;
    ltx2_model *m8 = NULL, *m16 = NULL;
    params(&p, ckpt, "fp8", false);
    ltx2_status st = ltx2_generate(ctx, &p, &r8);
    CHECK(st == LTX2_OK, "fp8 run: %s", ltx2_last_error(ctx));
    const ltx2_status sl = ltx2_model_load_dtype(ctx, &ckpt, 1, "cpu", "fp8", &m8);
    CHECK(sl == LTX2_OK, "fp8 model load: %s", ltx2_last_error(ctx));
    if (st == LTX2_OK && sl == LTX2_OK) {
        params(&p, ckpt, NULL, false);
        const ltx2_status sg = ltx2_generate_model(ctx, m8, &p, &rm);
        CHECK(sg == LTX2_OK && latent_rel_l2(&r8, &rm) == 0.0, "fp8 model: %s, video latent rel-L2 %.3g from the fp8 run",
              sg == LTX2_OK ? "ran" : ltx2_last_error(ctx), sg == LTX2_OK ? latent_rel_l2(&r8, &rm) : -1.0);
        if (sg == LTX2_OK) {
            printf("2.3 one-stage on a model loaded with fp8 weights: bitwise the fp8 run\n");
            ltx2_generate_result_free(&rm);
        }
        params(&p, ckpt, "fp8-cast", false);
        CHECK(ltx2_generate_model(ctx, m8, &p, &rm) == LTX2_ERR_INVALID_ARG &&
                  strstr(ltx2_last_error(ctx), "loaded with fp8 weights"),
              "fp8-cast on an fp8 model: %s", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }
    if (ltx2_model_load_dtype(ctx, &ckpt, 1, "cpu", NULL, &m16) == LTX2_OK) {
        params(&p, ckpt, "fp8", false);
        CHECK(ltx2_generate_model(ctx, m16, &p, &rm) == LTX2_ERR_INVALID_ARG &&
                  strstr(ltx2_last_error(ctx), "ltx2_model_load_dtype"),
              "fp8 on a bf16 model: %s", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }
    ltx2_model *bad = NULL;
    CHECK(ltx2_model_load_dtype(ctx, &ckpt, 1, "cpu", "fp4", &bad) == LTX2_ERR_INVALID_ARG && !bad &&
              strstr(ltx2_last_error(ctx), "bf16, fp8 or fp8-cast"),
          "weights dtype fp4 at the model load: %s", ltx2_last_error(ctx));
    ltx2_clear_error(ctx);
    ltx2_model_free(m8);
    ltx2_model_free(m16);
    if (st == LTX2_OK) ltx2_generate_result_free(&r8);
}

static void refused(ltx2_context *ctx, const char *what, const char *ckpt, const char *wdt, ltx2_status want,
                    const char *needle) {
    ltx2_generate_params p;
    params(&p, ckpt, wdt, false);
    ltx2_generate_result r;
    const ltx2_status st = ltx2_generate(ctx, &p, &r);
    CHECK(st == want && strstr(ltx2_last_error(ctx), needle), "%s: want %d with \"%s\", got %d: %s", what, (int)want,
          needle, (int)st, ltx2_last_error(ctx));
    if (st == LTX2_OK) ltx2_generate_result_free(&r);
    ltx2_clear_error(ctx);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    char dir[] = "/tmp/ltx2_gen_fp8_XXXXXX", ckpt[256];
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return test_finish();
    }
    snprintf(ckpt, sizeof ckpt, "%s/ltx2-tiny-2.3-fp8.safetensors", dir);
    if (fp8_tiny_checkpoint_write(ctx, ckpt)) {
        runs(ctx, ckpt, false);
        runs(ctx, ckpt, true);
        plan_bytes(ctx, ckpt);
        model_runs(ctx, ckpt);
        refused(ctx, "weights dtype fp4", ckpt, "fp4", LTX2_ERR_INVALID_ARG, "use bf16, fp8 or fp8-cast");
        unlink(ckpt);
    }
    refused(ctx, "fp8 of a bf16 checkpoint", TINY "ltx2-tiny-2.3.safetensors", "fp8", LTX2_ERR_UNSUPPORTED,
            "pre-quantised");
    cast_runs(ctx, dir);
    { /* fp8-cast takes no LoRA, so no two-stage pipeline either */
        ltx2_generate_params p;
        ltx2_generate_result r;
        params(&p, TINY "ltx2-tiny-2.3.safetensors", "fp8-cast", true);
        ltx2_status st = ltx2_generate(ctx, &p, &r);
        CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(ctx), "stochastic rounding"),
              "fp8-cast with LoRAs and two stages: %d %s", (int)st, ltx2_last_error(ctx));
        if (st == LTX2_OK) ltx2_generate_result_free(&r);
        ltx2_clear_error(ctx);
    }
    rmdir(dir);
    ltx2_context_free(ctx);
    return test_finish();
}
