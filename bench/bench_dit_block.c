/* DiT speed on the CPU: one LTX-2.0 block at a mid-size shape (1024 video tokens, Dv 1024, Da 512,
 * random weights) timed through ltx2_dit_forward, in GFLOP/s, as a ratio to ltx2_cpu_gemm's rate at
 * M1024 N4096 K1024 measured in the same run, and as a fraction of the measured FMA peak; from that
 * rate, the projected time of one full-size forward (19B and 22B at 768x512x121) per core count. Also
 * the peak RSS (VmHWM) of loading the tiny 2.0 checkpoint and running one golden-size forward. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_plan.h"
#include "bench.h"
#include "cpu_peak.h"
#include "core/rng.h"
#include "cpu/cpu_ops.h"
#include "dit_bench.h"
#include "io/file.h"
#include "io/json.h"
#include "model/dit.h"
#include "model/dit_config.h"

#define DEFAULT_CHECKPOINT "weights/tiny/ltx2-tiny-2.0.safetensors"
/* Mid-size model: video 8 x 128, audio 8 x 64, 128-wide latents, one block. The caption width is
 * set to Dv (the real 3840 would only grow the caption projection, which runs outside the block). */
#define MID_HEADS 8
#define MID_HEAD_DIM 128
#define MID_AUDIO_HEADS 8
#define MID_AUDIO_HEAD_DIM 64
#define MID_CHANNELS 128
#define MID_CAPTION 1024
/* Inputs: video grid frames x height x width tokens, audio tokens, text tokens. */
#define GRID_F 4
#define GRID_H 16
#define GRID_W 16
#define AUDIO_T 128
#define TEXT_S 128
/* Golden-size tiny forward (tests/golden/data/dit_blocks_2.0: batch 2, 2x3x3 video, 5 audio, 16 text). */
#define TINY_B 2
#define TINY_F 2
#define TINY_H 3
#define TINY_W 3
#define TINY_AT 5
#define TINY_S 16
/* Random weight scale ~ 1/sqrt(D): keeps activations O(1) so the timing sees ordinary floats. */
#define WEIGHT_SCALE 0.03f
#define PEAK_SECONDS 0.3
#define GEMM_M 1024
#define GEMM_N 4096
#define GEMM_K 1024

/* The full-size forward projected: 768x512x121 (latent 16 x 16 x 24 = 6144 video tokens), 5.04 s of
 * audio (126 latents), Gemma's 1024 text tokens; core counts of common CPU servers. */
#define FULL_TV (16 * 16 * 24)
#define FULL_TA 126
#define FULL_S 1024
static const int k_full_cores[] = {16, 32, 64, 128, 192};

static float *alloc_f(int64_t n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(float)); }

typedef struct dit_job {
    ltx2_context *ctx;
    const ltx2_dit_weights *w;
    const ltx2_dit_forward_params *p;
    float *vo, *ao;
    ltx2_status st;
} dit_job;

static void run_dit(void *u) {
    dit_job *j = u;
    if (j->st == LTX2_OK) j->st = ltx2_dit_forward(j->ctx, j->w, j->p, j->vo, j->ao);
}

typedef struct gemm_job {
    ltx2_context *ctx; /* the forward's: its GEMM packing buffers are reused as in the forward */
    float *A, *B, *C;
} gemm_job;

static void run_gemm(void *u) {
    gemm_job *j = u;
    ltx2_cpu_gemm(j->ctx, GEMM_M, GEMM_N, GEMM_K, 1.0f, j->A, GEMM_K, j->B, GEMM_K, LTX2_B_NK, 0.0f, j->C, GEMM_N, NULL);
}

/* VmHWM (peak resident set) in KiB from /proc/self/status; -1 when unavailable. */
static long vm_hwm_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kib;
}

/* Peak RSS of loading the tiny checkpoint and one golden-size forward. Runs first, before the
 * mid-size model has grown the high-water mark. */
static int tiny_rss(bench_report *r, ltx2_context *ctx, const char *path) {
    long before = vm_hwm_kib();
    ltx2_dit_weights *w = NULL;
    if (ltx2_dit_weights_load_file(ctx, path, &w) != LTX2_OK) {
        fprintf(stderr, "bench_dit_block: cannot load %s: %s\n(run from the repository root or pass --checkpoint PATH)\n",
                path, ltx2_last_error(ctx));
        return 1;
    }
    long loaded = vm_hwm_kib();
    dit_bench_inputs in;
    ltx2_dit_forward_params p;
    const int64_t Tv = TINY_F * TINY_H * TINY_W;
    float *vo = alloc_f(TINY_B * Tv * w->cfg.out_channels), *ao = alloc_f(TINY_B * TINY_AT * w->cfg.audio_out_channels);
    int rc = 0;
    if (!dit_bench_inputs_make(&w->cfg, TINY_B, TINY_F, TINY_H, TINY_W, TINY_AT, TINY_S, w->cfg.caption_channels,
                               w->cfg.caption_channels, &in, &p) || !vo || !ao) {
        fprintf(stderr, "bench_dit_block: out of memory (tiny inputs)\n");
        rc = 1;
    } else if (ltx2_dit_forward(ctx, w, &p, vo, ao) != LTX2_OK) {
        fprintf(stderr, "bench_dit_block: tiny forward: %s\n", ltx2_last_error(ctx));
        rc = 1;
    } else {
        long after = vm_hwm_kib();
        bench_report_note(r, "tiny 2.0 full forward (%lld layers, B %d, Tv %lld, Ta %d, S %d; %zu weight floats): "
                          "VmHWM %.1f MiB before load, %.1f MiB after load, %.1f MiB after forward",
                          (long long)w->cfg.num_layers, TINY_B, (long long)Tv, TINY_AT, TINY_S, w->store.n_elems,
                          before / 1024.0, loaded / 1024.0, after / 1024.0);
    }
    dit_bench_inputs_free(&in);
    free(vo);
    free(ao);
    ltx2_dit_weights_free(w);
    return rc;
}

/* One full-size forward's matmul FLOPs for version v (tests/data/config_full_<v>.json, the weights
 * laid out on the planning backend: shapes only, no memory); 0 when the config cannot be read. */
static double full_forward_flops(ltx2_context *ctx, const char *v) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/config_full_%s.json", LTX2_SOURCE_DIR, v);
    char *text = NULL;
    size_t n = 0;
    ltx2_json_doc *doc = NULL;
    ltx2_backend *plan = NULL;
    ltx2_dit_weights *w = NULL;
    ltx2_dit_config cfg;
    double flops = 0.0;
    if (ltx2_file_read_all(ctx, path, &text, &n) == LTX2_OK && ltx2_json_parse(ctx, text, n, path, &doc) == LTX2_OK &&
        ltx2_json_get(ltx2_json_root(doc), "transformer") &&
        ltx2_dit_config_parse(ctx, ltx2_json_get(ltx2_json_root(doc), "transformer"), path, &cfg) == LTX2_OK &&
        ltx2_backend_plan_create(ctx, &plan) == LTX2_OK &&
        ltx2_dit_weights_layout_on(ctx, plan, LTX2_F32, &cfg, &w) == LTX2_OK)
        flops = dit_bench_forward_flops(w, 1, FULL_TV, FULL_TA, FULL_S, false);
    else
        fprintf(stderr, "bench_dit_block: full-size %s config: %s\n", v, ltx2_last_error(ctx));
    ltx2_dit_weights_free(w);
    if (plan) plan->destroy(plan);
    ltx2_json_free(doc);
    free(text);
    return flops;
}

/* The projection: the block's measured rate per thread times the core count (linear scaling: an upper
 * bound on speed, since memory bandwidth per core falls on big servers). */
static void project_full(bench_report *r, ltx2_context *ctx, double rate, int threads) {
    static const char *const versions[2][2] = {{"2.0", "19B"}, {"2.3", "22B"}};
    for (int k = 0; k < 2; k++) {
        const double flops = full_forward_flops(ctx, versions[k][0]);
        if (flops <= 0) continue;
        char line[512];
        int len = snprintf(line, sizeof line, "projected full-size forward, %s (%s) at 768x512x121 (Tv %d, Ta %d, S %d; "
                           "%.0f TFLOP): %.0f s on the %d measured core(s)", versions[k][1], versions[k][0], FULL_TV,
                           FULL_TA, FULL_S, flops * 1e-12, flops / rate, threads);
        for (size_t c = 0; c < sizeof k_full_cores / sizeof k_full_cores[0] && len > 0 && (size_t)len < sizeof line; c++)
            len += snprintf(line + len, sizeof line - (size_t)len, ", %.0f s on %d", flops / (rate / threads * k_full_cores[c]),
                            k_full_cores[c]);
        bench_report_note(r, "%s (the mid-size block's rate per core, scaled linearly)", line);
    }
}

/* The mid-size one-block config, from the tiny 2.0 one (keeps its rope / eps / flags). */
static void mid_config(ltx2_dit_config *c) {
    c->num_layers = 1;
    c->heads = MID_HEADS;
    c->head_dim = MID_HEAD_DIM;
    c->inner_dim = c->cross_attention_dim = MID_HEADS * MID_HEAD_DIM;
    c->audio_heads = MID_AUDIO_HEADS;
    c->audio_head_dim = MID_AUDIO_HEAD_DIM;
    c->audio_inner_dim = c->audio_cross_attention_dim = MID_AUDIO_HEADS * MID_AUDIO_HEAD_DIM;
    c->in_channels = c->out_channels = MID_CHANNELS;
    c->audio_in_channels = c->audio_out_channels = MID_CHANNELS;
    c->caption_channels = MID_CAPTION;
}

static int bench_block(const bench_opts *o, bench_report *r, ltx2_context *ctx, const char *path) {
    ltx2_st_file *f = NULL;
    ltx2_dit_config cfg;
    if (ltx2_st_open(ctx, path, &f) != LTX2_OK || ltx2_dit_config_from_st(ctx, f, &cfg) != LTX2_OK) {
        fprintf(stderr, "bench_dit_block: config of %s: %s\n", path, ltx2_last_error(ctx));
        ltx2_st_close(f);
        return 1;
    }
    ltx2_st_close(f);
    mid_config(&cfg);
    ltx2_dit_weights *w = NULL;
    if (ltx2_dit_weights_random(ctx, &cfg, 5, WEIGHT_SCALE, &w) != LTX2_OK) {
        fprintf(stderr, "bench_dit_block: random weights: %s\n", ltx2_last_error(ctx));
        return 1;
    }
    const int64_t Tv = GRID_F * GRID_H * GRID_W;
    dit_bench_inputs in;
    ltx2_dit_forward_params p;
    dit_job j = {ctx, w, &p, alloc_f(Tv * cfg.out_channels), alloc_f(AUDIO_T * cfg.audio_out_channels), LTX2_OK};
    gemm_job g = {ctx, alloc_f((int64_t)GEMM_M * GEMM_K), alloc_f((int64_t)GEMM_N * GEMM_K), alloc_f((int64_t)GEMM_M * GEMM_N)};
    int rc = 0;
    if (!dit_bench_inputs_make(&w->cfg, 1, GRID_F, GRID_H, GRID_W, AUDIO_T, TEXT_S, w->cfg.caption_channels,
                               w->cfg.caption_channels, &in, &p) || !j.vo || !j.ao || !g.A || !g.B ||
        !g.C) {
        fprintf(stderr, "bench_dit_block: out of memory\n");
        rc = 1;
        goto done;
    }
    ltx2_rng_normal(7, 1, 0, (size_t)GEMM_M * GEMM_K, g.A);
    ltx2_rng_normal(7, 2, 0, (size_t)GEMM_N * GEMM_K, g.B);
    bench_report_note(r, "mid-size 2.0 block: Dv %lld (%lld x %lld), Da %lld (%lld x %lld), caption %lld, channels "
                      "%lld; B 1, Tv %lld (%dx%dx%d), Ta %d, S %d; %.1f MiB weights",
                      (long long)cfg.inner_dim, (long long)cfg.heads, (long long)cfg.head_dim,
                      (long long)cfg.audio_inner_dim, (long long)cfg.audio_heads, (long long)cfg.audio_head_dim,
                      (long long)cfg.caption_channels, (long long)cfg.in_channels, (long long)Tv, GRID_F, GRID_H,
                      GRID_W, AUDIO_T, TEXT_S, (double)w->store.n_elems * 4.0 / (1024.0 * 1024.0));

    double gflop = 2.0 * GEMM_M * (double)GEMM_N * GEMM_K;
    bench_row grow = {.bench = "dit_block", .name = "gemm M1024 N4096 K1024", .device = "cpu", .flops = gflop,
                      .bytes = 4.0 * ((double)GEMM_M * GEMM_K + (double)GEMM_N * GEMM_K + (double)GEMM_M * GEMM_N),
                      .roof = "fma_peak"};
    double pk0 = ltx2_cpu_measure_fma_peak(PEAK_SECONDS);
    grow.st = bench_measure(o, run_gemm, &g, 1);
    double pk1 = ltx2_cpu_measure_fma_peak(PEAK_SECONDS);
    grow.roof_rate = 0.5 * (pk0 + pk1);
    bench_report_row(r, &grow);

    double flops = dit_bench_forward_flops(w, 1, Tv, AUDIO_T, TEXT_S, false);
    /* baseline_s: the time ltx2_cpu_gemm would take for the same FLOPs at its measured rate, so
     * "x gemm" is the block's rate over the GEMM's. */
    bench_row row = {.bench = "dit_block", .name = "dit 2.0 1 block Tv1024 Dv1024", .device = "cpu",
                     .flops = flops, .baseline = "gemm", .baseline_s = grow.st.median_s * flops / gflop,
                     .roof = "fma_peak"};
    row.st = bench_measure(o, run_dit, &j, 1);
    double pk2 = ltx2_cpu_measure_fma_peak(PEAK_SECONDS);
    row.roof_rate = 0.5 * (pk1 + pk2);
    if (j.st != LTX2_OK) {
        fprintf(stderr, "bench_dit_block: forward: %s\n", ltx2_last_error(ctx));
        rc = 1;
        goto done;
    }
    bench_report_row(r, &row);
    bench_report_note(r, "dit block: %.2f GFLOP per forward (matmuls only), %.1f GFLOP/s; gemm %.1f GFLOP/s; FMA peak "
                      "%.1f GFLOP/s (mean of the readings around each row)",
                      flops * 1e-9, flops / row.st.median_s * 1e-9, gflop / grow.st.median_s * 1e-9,
                      row.roof_rate * 1e-9);
    project_full(r, ctx, flops / row.st.median_s, omp_get_max_threads());
done:
    dit_bench_inputs_free(&in);
    free(j.vo);
    free(j.ao);
    free(g.A);
    free(g.B);
    free(g.C);
    ltx2_dit_weights_free(w);
    return rc;
}

int main(int argc, char **argv) {
    const char *path = DEFAULT_CHECKPOINT;
    /* --checkpoint is ours; the rest goes to the harness. */
    char **rest = malloc((size_t)(argc + 1) * sizeof *rest);
    if (!rest) return 1;
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && !strcmp(argv[i], "--checkpoint") && i + 1 < argc)
            path = argv[++i];
        else
            rest[n++] = argv[i];
    }
    rest[n] = NULL;
    bench_opts o;
    int rc = bench_parse_args(n, rest, &o,
                              "  --checkpoint PATH  tiny LTX-2.0 checkpoint (default " DEFAULT_CHECKPOINT ")\n"
                              "One mid-size DiT block on the CPU vs ltx2_cpu_gemm and the FMA peak; tiny forward peak RSS\n");
    free(rest);
    if (rc >= 0) return rc;
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        fprintf(stderr, "bench_dit_block: checkpoint %s not found (run from the repository root or pass "
                        "--checkpoint PATH)\n", path);
        return 1;
    }
    fclose(probe);
    bench_report r;
    if (!bench_report_open(&r, &o)) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);
    rc = tiny_rss(&r, ctx, path);
    if (rc == 0) rc = bench_block(&o, &r, ctx, path);
    ltx2_context_free(ctx);
    bench_report_close(&r);
    return rc;
}
