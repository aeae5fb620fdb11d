/* One denoising step and one video decode at real sizes, on any backend: the LTX-2 19B (or LTX-2.3
 * 22B) DiT at 768x512x121 (6,144 video + 126 audio tokens, 1,024 text tokens, CFG-batched: B 2),
 * synthetic weights, timed as ltx2_dit_forward calls in the steady state of a generation (the text
 * K/V and RoPE table caches filled by the first call; a second row times the call with the RoPE
 * tables made in it, as before the cache); its matmul TFLOP/s and ratio to the GEMM rate measured in the
 * same run; where the time goes (one call through the profiling backend: GEMMs, attention, the
 * elementwise ops, transfers; one rank, so no communication); then the video VAE decode of the same
 * clip. Goals (issue #12): a DiT call <= 0.40 s and the decode <= 0.4 s on one H100.
 *
 * Weights: the DiT's store is laid out on the device and filled from one seeded pool of bf16
 * normals (random-looking values cost no host-side generation at 35 GB); the VAE decoder loads from
 * a synthetic full-size file (tests/full_ckpt.h) whose vae.* tensors hold the pool's values. On the
 * CPU the defaults shrink to what fits: one layer and a 25-frame 256x256 clip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "cpu/cpu_ops.h"
#include "device_util.h"
#include "dit_bench.h"
#include "full_ckpt.h"
#include "io/json.h"
#include "model/connectors.h"
#include "model/dit_weights.h"
#include "model/video_vae.h"
#include "pipeline/pipeline.h"
#include "profile_backend.h"

/* The text tokens after the connectors (ltx-pipelines pads the prompt to 1024) and the CFG pair. */
#define STEP_TEXT_TOKENS 1024
#define STEP_BATCH 2
#define STEP_FPS 24.0
/* The clip: ltx-pipelines' default 768x512x121 on a device; on the CPU 25 frames of 256x256 (256
 * video tokens: matmuls with enough rows to run near the CPU GEMM's rate, a step in seconds). */
#define FULL_FRAMES 121
#define FULL_HEIGHT 512
#define FULL_WIDTH 768
#define CPU_FRAMES 25
#define CPU_SIDE 256
/* The pool the weights are filled from: 128M normals (256 MiB in bf16; the VAE's largest tensor,
 * the 19B decoder's 1024 -> 4096 x 27 depth-to-space conv, is 113M) times a scale ~ 1/sqrt(width)
 * that keeps activations O(1). */
#define POOL_ELEMS ((int64_t)1 << 27)
#define WEIGHT_SCALE 0.02f
/* --weights-dtype fp8: the blocks' Linear weights are e4m3 codes of normals times FP8_CODE_SPREAD
 * (spanning the format's range without saturating) with w_scale WEIGHT_SCALE / FP8_CODE_SPREAD, the
 * same weight values as above to fp8 precision; activations enter with the static input scale
 * FP8_X_SCALE (|x| up to 448 * FP8_X_SCALE = 7 before saturation). The values set no timing. */
#define FP8_CODE_SPREAD 32.0f
#define FP8_X_SCALE (1.0f / 64.0f)
/* CPU GEMM rate reference: a block-sized linear (bench_dit_block's). */
#define CPU_GEMM_M 1024
#define CPU_GEMM_N 4096
#define CPU_GEMM_K 1024
#define GEMM_INNER 5

typedef struct step_args {
    const char *device, *version;
    int64_t layers, frames, height, width;
    bool no_vae, no_profile;
    bool fp8; /* --weights-dtype fp8 */
} step_args;

typedef struct step_job {
    ltx2_context *ctx;
    const ltx2_dit_weights *w;
    const ltx2_dit_forward_params *p;
    float *vo, *ao;
    ltx2_status st;
} step_job;

static void run_step(void *u) {
    step_job *j = u;
    if (j->st == LTX2_OK) j->st = ltx2_dit_forward(j->ctx, j->w, j->p, j->vo, j->ao);
}

/* The timed call again with one thing changed (the caller changed j's params): a row "<row's name>
 * <what>" and a note "<note>: <this> s per call against <row's> s". false: the call failed. */
static bool ab_row(const bench_opts *o, bench_report *r, step_job *j, const bench_row *row, const char *what,
                   const char *note) {
    char name[160];
    snprintf(name, sizeof name, "%s %s", row->name, what);
    bench_row row2 = *row;
    row2.name = name;
    row2.st = bench_measure(o, run_step, j, 1);
    if (j->st != LTX2_OK) {
        fprintf(stderr, "bench_step: DiT forward (%s): %s\n", what, ltx2_last_error(j->ctx));
        return false;
    }
    bench_report_row(r, &row2);
    bench_report_note(r, "%s: %.3f s per call against %.3f s (difference %+.3f s)", note, row2.st.median_s,
                      row->st.median_s, row2.st.median_s - row->st.median_s);
    return true;
}

typedef struct vae_job {
    ltx2_context *ctx;
    const ltx2_video_decoder *dec;
    const ltx2_tensor *lat;
    ltx2_tensor *video;
    ltx2_status st;
} vae_job;

static void run_vae(void *u) {
    vae_job *j = u;
    if (j->st == LTX2_OK) j->st = ltx2_video_decoder_decode(j->ctx, j->dec, j->lat, j->video, NULL, NULL);
}

typedef struct cpu_gemm_job {
    ltx2_context *ctx; /* the run's: its GEMM packing buffers reused, as in the forward */
    float *a, *b, *c;
} cpu_gemm_job;

static void run_cpu_gemm(void *u) {
    cpu_gemm_job *j = u;
    for (int i = 0; i < GEMM_INNER; i++)
        ltx2_cpu_gemm(j->ctx, CPU_GEMM_M, CPU_GEMM_N, CPU_GEMM_K, 1.0f, j->a, CPU_GEMM_K, j->b, CPU_GEMM_K, LTX2_B_NK,
                      0.0f, j->c, CPU_GEMM_N, NULL);
}

/* The GEMM rate rows are compared with: cuBLASLt bf16 at 8192^3 on a device, ltx2_cpu_gemm on the CPU. */
static double gemm_rate(const bench_opts *o, const ltx2_backend *be, ltx2_context *ctx) {
    if (be->device != LTX2_DEVICE_CPU) return bench_gemm_ceiling(o, be, ctx, GEMM_INNER);
    cpu_gemm_job j = {ctx, malloc(sizeof(float) * CPU_GEMM_M * CPU_GEMM_K), malloc(sizeof(float) * CPU_GEMM_N * CPU_GEMM_K),
                      malloc(sizeof(float) * CPU_GEMM_M * CPU_GEMM_N)};
    double rate = 0;
    if (j.a && j.b && j.c) {
        ltx2_rng_normal(3, 0, 0, (size_t)CPU_GEMM_M * CPU_GEMM_K, j.a);
        ltx2_rng_normal(3, 1, 0, (size_t)CPU_GEMM_N * CPU_GEMM_K, j.b);
        const bench_stats st = bench_measure(o, run_cpu_gemm, &j, GEMM_INNER);
        rate = 2.0 * CPU_GEMM_M * (double)CPU_GEMM_N * CPU_GEMM_K / st.median_s;
    }
    free(j.a), free(j.b), free(j.c);
    return rate;
}

/* bytes of dt values copied over and over from pool into the device range [dst, dst + n). */
static ltx2_status fill_from_pool(ltx2_context *ctx, const ltx2_backend *be, void *dst, size_t n, const void *pool,
                                  size_t pool_bytes) {
    for (size_t off = 0; off < n; off += pool_bytes)
        LTX2_TRY(be->upload(be, ctx, (char *)dst + off, pool, n - off < pool_bytes ? n - off : pool_bytes));
    return LTX2_OK;
}

/* The configs of the version's full-size single file (tests/data/config_full_<v>.json). */
typedef struct step_cfg {
    ltx2_json_doc *doc;
    ltx2_dit_config dit;
    ltx2_connectors_config conn;
    ltx2_vae_config vae;
    ltx2_audio_vae_config audio;
} step_cfg;

static bool configs_load(ltx2_context *ctx, const char *v, step_cfg *c) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/config_full_%s.json", LTX2_SOURCE_DIR, v);
    char *text = NULL;
    size_t n = 0;
    memset(c, 0, sizeof *c);
    bool ok = ltx2_file_read_all(ctx, path, &text, &n) == LTX2_OK && ltx2_json_parse(ctx, text, n, path, &c->doc) == LTX2_OK;
    free(text);
    const ltx2_json *root = ok ? ltx2_json_root(c->doc) : NULL, *tr = root ? ltx2_json_get(root, "transformer") : NULL;
    ok = ok && tr && ltx2_dit_config_parse(ctx, tr, path, &c->dit) == LTX2_OK &&
         ltx2_connectors_config_parse(ctx, tr, path, &c->conn) == LTX2_OK &&
         ltx2_vae_config_parse(ctx, root, path, &c->vae) == LTX2_OK &&
         ltx2_audio_vae_config_parse(ctx, root, path, &c->audio) == LTX2_OK;
    if (!ok) fprintf(stderr, "bench_step: %s: %s\n", path, ltx2_last_error(ctx));
    return ok;
}

/* What fill_fp8 hands each Linear. */
typedef struct fp8_fill {
    ltx2_context *ctx;
    const ltx2_backend *be;
    const uint8_t *pool8;
    size_t pool_bytes;
} fp8_fill;

static ltx2_status fill_fp8_linear(void *user, const char *name, ltx2_dit_linear *L) {
    (void)name;
    const fp8_fill *f = user;
    if (!L->w.data || L->w.dtype != LTX2_F8_E4M3) return LTX2_OK;
    LTX2_TRY(fill_from_pool(f->ctx, f->be, L->w.data, (size_t)ltx2_tensor_numel(&L->w), f->pool8, f->pool_bytes));
    L->w_scale = WEIGHT_SCALE / FP8_CODE_SPREAD;
    L->x_scale = FP8_X_SCALE;
    return LTX2_OK;
}

/* The fp8 weights of w (ltx2_dit_weights_layout_fp8: every block Linear) from pool8 (e4m3 codes), with
 * their scales. */
static ltx2_status fill_fp8(ltx2_context *ctx, const ltx2_backend *be, ltx2_dit_weights *w, const uint8_t *pool8,
                            size_t pool_bytes) {
    fp8_fill f = {ctx, be, pool8, pool_bytes};
    return ltx2_dit_weights_each_linear(ctx, w, fill_fp8_linear, &f);
}

static int bench_dit(const bench_opts *o, bench_report *r, ltx2_context *ctx, const ltx2_backend *be,
                     const step_args *a, const step_cfg *c, const ltx2_pipe_geometry *g, const void *pool,
                     const uint8_t *pool8, double rate) {
    ltx2_dit_config cfg = c->dit;
    cfg.num_layers = a->layers;
    const ltx2_dtype dt = be->device == LTX2_DEVICE_CPU ? LTX2_F32 : LTX2_BF16;
    ltx2_dit_weights *w = NULL;
    ltx2_dit_text_cache *cache = NULL;
    ltx2_dit_rope_cache *rope = NULL;
    ltx2_dit_act_pool *act = NULL;
    dit_bench_inputs in = {0};
    ltx2_dit_forward_params p;
    int rc = 1;
    const ltx2_status lst = a->fp8 ? ltx2_dit_weights_layout_fp8(ctx, be, dt, &cfg, NULL, &w)
                                   : ltx2_dit_weights_layout_on(ctx, be, dt, &cfg, &w);
    if (lst != LTX2_OK ||
        fill_from_pool(ctx, be, w->store.mem, w->store.n_bytes, pool, (size_t)POOL_ELEMS * ltx2_dtype_size(dt)) !=
            LTX2_OK ||
        (a->fp8 && fill_fp8(ctx, be, w, pool8, (size_t)POOL_ELEMS) != LTX2_OK) ||
        ltx2_dit_text_cache_create(ctx, LTX2_PIPE_TEXT_CACHE_ENTRIES, &cache) != LTX2_OK ||
        ltx2_dit_rope_cache_create(ctx, &rope) != LTX2_OK || ltx2_dit_act_pool_create(ctx, &act) != LTX2_OK) {
        fprintf(stderr, "bench_step: DiT weights: %s\n", ltx2_last_error(ctx));
        goto done;
    }
    const int64_t B = STEP_BATCH, S = STEP_TEXT_TOKENS;
    step_job j = {ctx, w, &p, malloc(sizeof(float) * B * g->video_tokens * cfg.out_channels),
                  malloc(sizeof(float) * B * g->at * cfg.audio_out_channels), LTX2_OK};
    if (!j.vo || !j.ao || !dit_bench_inputs_make(&w->cfg, B, g->lf, g->lh, g->lw, g->at, S, c->conn.video.inner_dim,
                                                 c->conn.audio.inner_dim, &in, &p)) {
        fprintf(stderr, "bench_step: out of memory (inputs)\n");
        goto done_job;
    }
    p.text_cache = cache;
    p.rope_cache = rope;
    p.act_pool = act;
    const double flops = dit_bench_forward_flops(w, B, g->video_tokens, g->at, S, true);
    bench_report_note(r, "DiT %s: %lld layers, B %lld (CFG pair), %lld video tokens (%lldx%lldx%lld latents), %lld "
                      "audio, %lld text (K/V, RoPE tables and activation buffers kept after the first call); %.2f GiB of %s "
                      "weights%s; "
                      "%.4g TFLOP per call (matmuls)",
                      a->version, (long long)cfg.num_layers, (long long)B, (long long)g->video_tokens, (long long)g->lf,
                      (long long)g->lh, (long long)g->lw, (long long)g->at, (long long)S,
                      (double)w->store.n_bytes / (double)(1 << 30), ltx2_dtype_name(dt),
                      a->fp8 ? " (the blocks' Linear weights fp8 e4m3)" : "", flops * 1e-12);
    char name[96];
    snprintf(name, sizeof name, "dit %s %lldL B%lld Tv%lld S%lld%s", a->version, (long long)cfg.num_layers,
             (long long)B, (long long)g->video_tokens, (long long)S, a->fp8 ? " fp8" : "");
    bench_row row = {.bench = "step", .name = name, .device = be->name, .flops = flops, .baseline = "gemm",
                     .baseline_s = rate > 0 ? flops / rate : 0};
    const int64_t plans0 = ltx2_backend_cuda_gemm_plans_built(be);
    row.st = bench_measure(o, run_step, &j, 1); /* its warm-up call fills the text cache */
    const int64_t plans1 = ltx2_backend_cuda_gemm_plans_built(be);
    ltx2_dit_act_pool_stats as;
    ltx2_dit_act_pool_get_stats(act, &as);
    bench_report_note(r, "activation pool: %lld device allocations over %lld calls (one call's worth when it holds), "
                      "%.2f GiB held between calls", (long long)as.allocs, (long long)as.calls,
                      (double)as.bytes / (double)(1 << 30));
    if (plans0 >= 0)
        bench_report_note(r, "cuBLASLt plans built over the %d timed calls and the warm-up: %lld (a plan-cache miss "
                          "each; more than one call's distinct GEMMs means the cache evicts within a call)",
                          row.st.reps, (long long)(plans1 - plans0));
    if (j.st != LTX2_OK) {
        fprintf(stderr, "bench_step: DiT forward: %s\n", ltx2_last_error(ctx));
        goto done_job;
    }
    bench_report_row(r, &row);
    /* the same call with the RoPE tables computed on the host and uploaded in it, as every call did
     * before the denoising loop kept them (ltx2_dit_rope_cache): what the cache saves a step */
    p.rope_cache = NULL;
    const bool ab_ok = ab_row(o, r, &j, &row, "no-rope-cache", "RoPE tables made and uploaded in every call");
    p.rope_cache = rope;
    if (!ab_ok) goto done_job;
    /* the activation buffers allocated and freed in every call, as before the loop kept them */
    p.act_pool = NULL;
    const bool ab_pool = ab_row(o, r, &j, &row, "no-act-pool", "activations allocated and freed in every call");
    p.act_pool = act;
    if (!ab_pool) goto done_job;
    if (a->fp8) {
        /* each fp8 Linear quantising its own input, as before the modulations wrote them */
        p.fp8_separate_quant = true;
        const bool ok8 = ab_row(o, r, &j, &row, "separate-fp8-quant", "every fp8 Linear quantising its own input");
        p.fp8_separate_quant = false;
        if (!ok8) goto done_job;
    }
    if (be->device != LTX2_DEVICE_CPU && ltx2_backend_supports(be, LTX2_OP_ATTENTION, LTX2_F8_E4M3)) {
        /* e4m3 attention (--attention-dtype fp8): the video self- and text attention; a speed option
         * (the CPU runs its reference, not a speed path) */
        p.attention_fp8 = true;
        const bool ok_att = ab_row(o, r, &j, &row, "fp8-attention", "the video self- and text attention in e4m3");
        p.attention_fp8 = false;
        if (!ok_att) goto done_job;
    }
    int64_t bad = 0;
    const int64_t nv = B * g->video_tokens * cfg.out_channels, na = B * g->at * cfg.audio_out_channels;
    for (int64_t i = 0; i < nv; i++) bad += !isfinite(j.vo[i]);
    for (int64_t i = 0; i < na; i++) bad += !isfinite(j.ao[i]);
    bench_report_note(r, "velocities: %lld of %lld values not finite", (long long)bad, (long long)(nv + na));
    bench_report_note(r, "DiT call %.3f s (%.3f s per sample), %.4g TFLOP/s = %.3f of the GEMM rate %.4g TFLOP/s",
                      row.st.median_s, row.st.median_s / (double)B, flops / row.st.median_s * 1e-12,
                      rate > 0 ? flops / row.st.median_s / rate : 0.0, rate * 1e-12);
    if (!a->no_profile) {
        /* the same tensors, their ops through the profiling backend, with a text cache of its own (a
         * cache frees its entries on the backend that made them); the second call is the steady one */
        ltx2_backend *pb = NULL;
        ltx2_dit_text_cache *pcache = NULL;
        ltx2_dit_rope_cache *prope = NULL;
        ltx2_dit_act_pool *pact = NULL; /* its buffers belong to the profiling backend */
        ltx2_dit_weights pw = *w;
        ltx2_dit_forward_params pp = p;
        if (prof_backend_create(ctx, be, &pb) == LTX2_OK &&
            ltx2_dit_text_cache_create(ctx, LTX2_PIPE_TEXT_CACHE_ENTRIES, &pcache) == LTX2_OK &&
            ltx2_dit_rope_cache_create(ctx, &prope) == LTX2_OK && ltx2_dit_act_pool_create(ctx, &pact) == LTX2_OK) {
            pw.be = pb;
            pp.text_cache = pcache;
            pp.rope_cache = prope;
            pp.act_pool = pact;
            step_job pj = {ctx, &pw, &pp, j.vo, j.ao, LTX2_OK};
            run_step(&pj);
            prof_backend_reset(pb);
            const double t0 = bench_now();
            run_step(&pj);
            const double wall = bench_now() - t0;
            if (pj.st == LTX2_OK) {
                const prof_account acc = prof_backend_account(pb);
                prof_report(r, &acc, wall, "profiled DiT call, one rank (no communication)");
            } else {
                fprintf(stderr, "bench_step: profiled DiT forward: %s\n", ltx2_last_error(ctx));
            }
        }
        ltx2_dit_text_cache_free(pcache);
        ltx2_dit_rope_cache_free(prope);
        ltx2_dit_act_pool_free(pact);
        ltx2_backend_free(pb);
    }
    rc = 0;
done_job:
    free(j.vo);
    free(j.ao);
done:
    dit_bench_inputs_free(&in);
    ltx2_dit_text_cache_free(cache);
    ltx2_dit_rope_cache_free(rope);
    ltx2_dit_act_pool_free(act);
    ltx2_dit_weights_free(w);
    return rc;
}

static int bench_vae(const bench_opts *o, bench_report *r, ltx2_context *ctx, const ltx2_backend *be,
                     const step_args *a, const step_cfg *c, const ltx2_pipe_geometry *g, const void *pool) {
    char path[256];
    snprintf(path, sizeof path, "/tmp/ltx2_bench_step_%d.safetensors", (int)getpid());
    uint64_t params = 0;
    ltx2_st_set *set = NULL;
    ltx2_video_decoder *dec = NULL, *pdec = NULL;
    float *lat = NULL, *video = NULL;
    int rc = 1;
    if (!full_ckpt_write_ex(ctx, a->version, path, &params, "vae.", pool, POOL_ELEMS) ||
        ltx2_st_set_open(ctx, path, &set) != LTX2_OK ||
        ltx2_video_decoder_load(ctx, set, "vae.", &c->vae, &dec) != LTX2_OK ||
        ltx2_video_decoder_place(ctx, dec, be) != LTX2_OK) {
        fprintf(stderr, "bench_step: VAE decoder: %s\n", ltx2_last_error(ctx));
        goto done;
    }
    const int64_t ls[5] = {1, g->lf, g->lh, g->lw, g->lc}; /* NDHWC, as the decoder takes it */
    int64_t vs[5];
    if (ltx2_video_decoder_out_shape(ctx, dec, ls, vs) != LTX2_OK) {
        fprintf(stderr, "bench_step: VAE shape: %s\n", ltx2_last_error(ctx));
        goto done;
    }
    const size_t nl = (size_t)(ls[1] * ls[2] * ls[3] * ls[4]), nv = (size_t)(vs[1] * vs[2] * vs[3] * vs[4]);
    lat = malloc(nl * sizeof(float));
    video = malloc(nv * sizeof(float));
    if (!lat || !video) {
        fprintf(stderr, "bench_step: out of memory (VAE buffers)\n");
        goto done;
    }
    ltx2_rng_normal(9, 0, 0, nl, lat);
    ltx2_tensor lt = ltx2_tensor_make(lat, LTX2_F32, 5, ls), vt = ltx2_tensor_make(video, LTX2_F32, 5, vs);
    vae_job j = {ctx, dec, &lt, &vt, LTX2_OK};
    char name[96];
    snprintf(name, sizeof name, "vae decode %s %lldx%lldx%lld", a->version, (long long)vs[3], (long long)vs[2],
             (long long)vs[1]);
    bench_row row = {.bench = "step", .name = name, .device = be->name};
    row.st = bench_measure(o, run_vae, &j, 1);
    if (j.st != LTX2_OK) {
        fprintf(stderr, "bench_step: VAE decode: %s\n", ltx2_last_error(ctx));
        goto done;
    }
    bench_report_row(r, &row);
    bench_report_note(r, "VAE decode of %lld frames of %lldx%lld (latent %lldx%lldx%lld, untiled): %.3f s",
                      (long long)vs[1], (long long)vs[3], (long long)vs[2], (long long)ls[1], (long long)ls[2],
                      (long long)ls[3], row.st.median_s);
    if (!a->no_profile) {
        /* a second copy of the decoder placed through the profiling backend: where the decode's time
         * goes (the convolutions against the norms, upsampling and the transfers of the latent in and
         * the video out); the second decode is the steady one */
        ltx2_backend *pb = NULL;
        ltx2_status pst = prof_backend_create(ctx, be, &pb);
        if (pst == LTX2_OK) pst = ltx2_video_decoder_load(ctx, set, "vae.", &c->vae, &pdec);
        if (pst == LTX2_OK) pst = ltx2_video_decoder_place(ctx, pdec, pb);
        if (pst == LTX2_OK) {
            vae_job pj = {ctx, pdec, &lt, &vt, LTX2_OK};
            run_vae(&pj);
            prof_backend_reset(pb);
            const double t0 = bench_now();
            run_vae(&pj);
            const double wall = bench_now() - t0;
            pst = pj.st;
            if (pst == LTX2_OK) {
                const prof_account acc = prof_backend_account(pb);
                prof_report(r, &acc, wall, "profiled VAE decode");
            }
        }
        if (pst != LTX2_OK) fprintf(stderr, "bench_step: profiled VAE decode: %s\n", ltx2_last_error(ctx));
        ltx2_video_decoder_free(pdec);
        pdec = NULL;
        ltx2_backend_free(pb);
    }
    rc = 0;
done:
    free(lat);
    free(video);
    ltx2_video_decoder_free(pdec);
    ltx2_video_decoder_free(dec);
    ltx2_st_set_close(set);
    unlink(path);
    return rc;
}

/* Our flags (the harness's go to bench_parse_args). Returns false on a bad value. */
static bool parse_step(int argc, char **argv, step_args *a, char **rest, int *n_rest) {
    *a = (step_args){.device = "auto", .version = "2.0", .layers = -1, .frames = -1, .height = -1, .width = -1};
    int n = 0;
    for (int i = 0; i < argc; i++) {
        const bool val = i > 0 && i + 1 < argc;
        if (val && !strcmp(argv[i], "--device")) a->device = argv[++i];
        else if (val && !strcmp(argv[i], "--version")) a->version = argv[++i];
        else if (val && !strcmp(argv[i], "--layers")) a->layers = atoll(argv[++i]);
        else if (val && !strcmp(argv[i], "--frames")) a->frames = atoll(argv[++i]);
        else if (val && !strcmp(argv[i], "--height")) a->height = atoll(argv[++i]);
        else if (val && !strcmp(argv[i], "--width")) a->width = atoll(argv[++i]);
        else if (i > 0 && !strcmp(argv[i], "--no-vae")) a->no_vae = true;
        else if (i > 0 && !strcmp(argv[i], "--no-profile")) a->no_profile = true;
        else if (val && !strcmp(argv[i], "--weights-dtype")) {
            const char *v = argv[++i];
            if (strcmp(v, "bf16") && strcmp(v, "fp8")) return false;
            a->fp8 = !strcmp(v, "fp8");
        } else rest[n++] = argv[i];
    }
    rest[n] = NULL;
    *n_rest = n;
    return (!strcmp(a->version, "2.0") || !strcmp(a->version, "2.3")) && a->layers != 0 && a->frames != 0 &&
           a->height != 0 && a->width != 0;
}

int main(int argc, char **argv) {
    step_args a;
    char **rest = malloc((size_t)(argc + 1) * sizeof *rest);
    int n = 0;
    if (!rest) return 1;
    const bool ok = parse_step(argc, argv, &a, rest, &n);
    bench_opts o;
    int rc = bench_parse_args(n, rest, &o,
                              "  --device SPEC     cpu | cuda[:N] | auto (default)\n"
                              "  --version V       2.0 (19B, default) | 2.3 (22B)\n"
                              "  --layers N        DiT blocks (default: all on a device, 1 on the CPU)\n"
                              "  --frames F --height H --width W   the clip (default 121x512x768 on a device, 25x256x256 "
                              "on the CPU)\n"
                              "  --no-vae          skip the VAE decode\n"
                              "  --no-profile      skip the profiled DiT call\n"
                              "  --weights-dtype bf16|fp8   the blocks' Linear weights (default bf16; fp8: e4m3 with\n"
                              "                    per-tensor scales, static input scales, fp8 GEMMs)\n"
                              "One DiT call (CFG pair) and one VAE decode at real sizes, synthetic weights\n");
    free(rest);
    if (rc >= 0) return rc;
    if (!ok) {
        fprintf(stderr, "bench_step: bad --version / --layers / --frames / --height / --width / --weights-dtype\n");
        return 2;
    }
    ltx2_context *ctx = ltx2_context_create(NULL);
    const ltx2_backend *be = NULL;
    char desc[256];
    if (!ctx || ltx2_backend_open(ctx, a.device, &be, desc, sizeof desc) != LTX2_OK) {
        fprintf(stderr, "bench_step: device %s: %s\n", a.device, ctx ? ltx2_last_error(ctx) : "no context");
        ltx2_context_free(ctx);
        return 1;
    }
    const bool cpu = be->device == LTX2_DEVICE_CPU;
    step_cfg c;
    ltx2_video_decoder *shape = NULL;
    ltx2_pipe_geometry g;
    void *pool = NULL;
    uint8_t *pool8 = NULL;
    rc = 1;
    if (!configs_load(ctx, a.version, &c)) goto out;
    if (a.layers < 0) a.layers = cpu ? 1 : c.dit.num_layers;
    if (a.frames < 0) a.frames = cpu ? CPU_FRAMES : FULL_FRAMES;
    if (a.height < 0) a.height = cpu ? CPU_SIDE : FULL_HEIGHT;
    if (a.width < 0) a.width = cpu ? CPU_SIDE : FULL_WIDTH;
    if (ltx2_video_decoder_shape_only(ctx, &c.vae, &shape) != LTX2_OK ||
        ltx2_pipe_geometry_make(ctx, a.frames, a.height, a.width, STEP_FPS, shape->time_factor, shape->space_factor,
                                c.vae.latent_channels, c.audio.z_channels,
                                c.dit.audio_in_channels ? c.dit.audio_in_channels : 128, &g) != LTX2_OK) {
        fprintf(stderr, "bench_step: geometry: %s\n", ltx2_last_error(ctx));
        goto out;
    }
    /* one pool of normals, in bf16 (the device's weights, the VAE file) and f32 (the CPU's weights) */
    const ltx2_dtype pdt = cpu ? LTX2_F32 : LTX2_BF16;
    float *f = malloc((size_t)POOL_ELEMS * sizeof(float));
    pool = malloc((size_t)POOL_ELEMS * ltx2_dtype_size(pdt));
    void *pool16 = malloc((size_t)POOL_ELEMS * 2);
    if (!f || !pool || !pool16) {
        free(f), free(pool16);
        fprintf(stderr, "bench_step: out of memory (weight pool)\n");
        goto out;
    }
    ltx2_rng_normal(5, 0, 0, (size_t)POOL_ELEMS, f);
    for (int64_t i = 0; i < POOL_ELEMS; i++) f[i] *= WEIGHT_SCALE;
    if (a.fp8) {
        pool8 = malloc((size_t)POOL_ELEMS);
        if (!pool8) {
            free(f), free(pool16);
            fprintf(stderr, "bench_step: out of memory (fp8 weight pool)\n");
            goto out;
        }
        for (int64_t i = 0; i < POOL_ELEMS; i++) pool8[i] = ltx2_f32_to_fp8e4m3(f[i] * (FP8_CODE_SPREAD / WEIGHT_SCALE));
    }
    ltx2_convert(ctx, pool, pdt, f, LTX2_F32, (size_t)POOL_ELEMS);
    ltx2_convert(ctx, pool16, LTX2_BF16, f, LTX2_F32, (size_t)POOL_ELEMS);
    free(f);
    printf("device: %s\n", desc);
    bench_report r;
    if (!bench_report_open(&r, &o)) {
        free(pool16);
        goto out;
    }
    const double rate = gemm_rate(&o, be, ctx);
    rc = bench_dit(&o, &r, ctx, be, &a, &c, &g, pool, pool8, rate);
    if (rc == 0 && !a.no_vae) rc = bench_vae(&o, &r, ctx, be, &a, &c, &g, pool16);
    bench_report_close(&r);
    free(pool16);
out:
    free(pool);
    free(pool8);
    ltx2_video_decoder_free(shape);
    ltx2_json_free(c.doc);
    ltx2_backend_free(be);
    ltx2_context_free(ctx);
    return rc;
}
