/* GEMM throughput. CPU: our OpenMP GEMM (weight layout [N,K]) in GFLOP/s for square and LTX-2-like
 * linear shapes (hidden 4096/4), as a fraction of the measured fp32 FMA peak on all threads (the
 * roofline), with the theoretical peak cores*clock*flops/cycle printed beside it, and the speedup
 * over a naive OpenMP i-k-j loop; each shape again on bf16 weights against the f32-weight row. CUDA (when built and a device exists): our cuBLASLt path
 * (plan cache, bias epilogue off) vs a bare cuBLASLt call on full-size LTX-2 linears, TFLOP/s. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "bench.h"
#include "cpu/cpu_ops.h"
#include "cpu_peak.h"
#include "device_util.h"
#include "lt_baseline.h"
#include "core/dtype.h"
#include "core/rng.h"

/* Seconds of FMA loop per peak measurement (each run on all threads). The machine may be shared,
 * so every row measures the peak right before and right after itself and uses the mean: the
 * fraction then compares rates taken under the same load. */
#define PEAK_SECONDS 1.0
#define PEAK_SECONDS_QUICK 0.3
#define PEAK_SECONDS_ROW 0.3
/* The naive baseline is only timed up to this much work (it runs ~10x slower). */
#define NAIVE_MAX_FLOPS 5e9
/* GPU: launches per timed sample, so launch gaps and the final sync are amortised. */
#define GPU_INNER 20
/* Philox seed of the inputs. */
#define GEMM_SEED 7

typedef struct gemm_shape {
    const char *name;
    int64_t M, N, K;
    bool quick; /* part of --quick */
} gemm_shape;

static const gemm_shape cpu_shapes[] = {
    {"square 1024", 1024, 1024, 1024, true},
    {"square 2048", 2048, 2048, 2048, false},
    {"ltx qkv M1024 K1024 N1024", 1024, 1024, 1024, false},
    {"ltx ffn_up M1024 K1024 N4096", 1024, 4096, 1024, true},
    {"ltx ffn_down M1024 K4096 N1024", 1024, 1024, 4096, false},
    {"ltx adaln M64 K1024 N6144", 64, 6144, 1024, false},
};

static const gemm_shape gpu_shapes[] = {
    {"ltx qkv M8192 K4096 N4096", 8192, 4096, 4096, true},
    {"ltx ffn_up M8192 K4096 N16384", 8192, 16384, 4096, false},
    {"ltx ffn_down M8192 K16384 N4096", 8192, 4096, 16384, true},
    {"ltx audio M2048 K2048 N2048", 2048, 2048, 2048, false},
    {"ltx adaln M2 K4096 N24576", 2, 24576, 4096, false},
};

typedef struct cpu_job {
    ltx2_context *ctx; /* as a run calls the GEMM: its packing buffers are the context's, reused */
    int64_t M, N, K;
    float *A, *B, *Bkn, *C;
    uint16_t *Bbf; /* B rounded to bf16: a checkpoint's stored weights */
} cpu_job;

static void run_ours(void *u) {
    cpu_job *j = u;
    ltx2_cpu_gemm(j->ctx, j->M, j->N, j->K, 1.0f, j->A, j->K, j->B, j->K, LTX2_B_NK, 0.0f, j->C, j->N, NULL);
}

/* The same product on bf16 weights, widened while packing (what the CPU forward runs on a real
 * checkpoint); its baseline is the f32-weight row. */
static void run_ours_bf16w(void *u) {
    cpu_job *j = u;
    ltx2_cpu_gemm_wdt(j->ctx, j->M, j->N, j->K, 1.0f, j->A, j->K, j->Bbf, LTX2_BF16, j->K, LTX2_B_NK, 0.0f, j->C, j->N,
                      NULL);
}

/* Baseline: the loop order a C programmer writes first (i-k-j, vectorisable inner loop). */
static void run_naive(void *u) {
    cpu_job *j = u;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < j->M; i++) {
        float *c = j->C + i * j->N;
        memset(c, 0, (size_t)j->N * sizeof(float));
        for (int64_t k = 0; k < j->K; k++) {
            float a = j->A[i * j->K + k];
            const float *b = j->Bkn + k * j->N;
            for (int64_t n = 0; n < j->N; n++) c[n] += a * b[n];
        }
    }
}

static float *randn(uint64_t stream, int64_t n) {
    float *p = malloc((size_t)n * sizeof(float));
    if (p) ltx2_rng_normal(GEMM_SEED, stream, 0, (size_t)n, p);
    return p;
}

static void bench_cpu(const bench_opts *o, bench_report *r, ltx2_context *ctx) {
    int threads = omp_get_max_threads();
    double peak0 = ltx2_cpu_measure_fma_peak(o->quick ? PEAK_SECONDS_QUICK : PEAK_SECONDS);
    double hz = ltx2_cpu_measure_clock_hz();
    int fpc = ltx2_cpu_flops_per_cycle();
    bench_report_note(r, "cpu: %d threads, measured FMA peak %.1f GFLOP/s (%.1f per thread)", threads,
                      peak0 * 1e-9, peak0 * 1e-9 / threads);
    if (hz > 0)
        bench_report_note(r, "cpu: clock %.2f GHz (dependent-add chain), theoretical peak %d x %.2f GHz x %d "
                          "FLOP/cycle = %.1f GFLOP/s (assumes 2 FMA pipes per core)",
                          hz * 1e-9, threads, hz * 1e-9, fpc, threads * hz * fpc * 1e-9);
    double peak = peak0;
    for (size_t s = 0; s < sizeof(cpu_shapes) / sizeof(cpu_shapes[0]); s++) {
        const gemm_shape *g = &cpu_shapes[s];
        if (o->quick && !g->quick) continue;
        cpu_job j = {ctx, g->M, g->N, g->K, randn(1, g->M * g->K), randn(2, g->N * g->K), NULL, NULL, NULL};
        j.Bkn = malloc((size_t)(g->N * g->K) * sizeof(float));
        j.C = malloc((size_t)(g->M * g->N) * sizeof(float));
        j.Bbf = malloc((size_t)(g->N * g->K) * sizeof(uint16_t));
        if (!j.A || !j.B || !j.Bkn || !j.C || !j.Bbf ||
            ltx2_convert(NULL, j.Bbf, LTX2_BF16, j.B, LTX2_F32, (size_t)(g->N * g->K)) != LTX2_OK) {
            bench_report_note(r, "cpu %s: out of memory", g->name);
            goto next;
        }
        for (int64_t n = 0; n < g->N; n++)
            for (int64_t k = 0; k < g->K; k++) j.Bkn[k * g->N + n] = j.B[n * g->K + k];
        double flops = 2.0 * (double)g->M * (double)g->N * (double)g->K;
        bench_row row = {.bench = "gemm", .name = g->name, .device = "cpu", .flops = flops,
                         .bytes = 4.0 * (double)(g->M * g->K + g->N * g->K + g->M * g->N),
                         .roof = "fma_peak"};
        double pk_before = ltx2_cpu_measure_fma_peak(PEAK_SECONDS_ROW);
        row.st = bench_measure(o, run_ours, &j, 1);
        double pk_after = ltx2_cpu_measure_fma_peak(PEAK_SECONDS_ROW);
        row.roof_rate = 0.5 * (pk_before + pk_after);
        peak = row.roof_rate;
        if (flops <= NAIVE_MAX_FLOPS) {
            bench_opts once = *o;
            once.min_reps = 1;
            once.budget_s = 0.0;
            row.baseline = "naive_ikj";
            row.baseline_s = bench_measure(&once, run_naive, &j, 1).median_s;
        }
        bench_report_row(r, &row);
        char name_bf[96];
        snprintf(name_bf, sizeof name_bf, "%s bf16 weights", g->name);
        bench_row rbf = {.bench = "gemm", .name = name_bf, .device = "cpu", .flops = flops,
                         .bytes = 4.0 * (double)(g->M * g->K + g->M * g->N) + 2.0 * (double)(g->N * g->K),
                         .roof = "fma_peak", .baseline = "f32_weights", .baseline_s = row.st.median_s};
        pk_before = ltx2_cpu_measure_fma_peak(PEAK_SECONDS_ROW);
        rbf.st = bench_measure(o, run_ours_bf16w, &j, 1);
        rbf.roof_rate = 0.5 * (pk_before + ltx2_cpu_measure_fma_peak(PEAK_SECONDS_ROW));
        bench_report_row(r, &rbf);
    next:
        free(j.A);
        free(j.B);
        free(j.Bkn);
        free(j.C);
        free(j.Bbf);
    }
    /* The machine is shared; a second peak reading shows how much the denominator moved. */
    double peak1 = ltx2_cpu_measure_fma_peak(o->quick ? PEAK_SECONDS_QUICK : PEAK_SECONDS);
    bench_report_note(r, "cpu: FMA peak re-measured after the rows: %.1f GFLOP/s (last row's peak %.1f)",
                      peak1 * 1e-9, peak * 1e-9);
}

typedef struct gpu_job {
    const ltx2_backend *be;
    bench_lt *lt;
    ltx2_context *ctx;
    ltx2_tensor x, w, y;
    int64_t M, N, K;
    ltx2_status st;
} gpu_job;

static void run_gpu_ours(void *u) {
    gpu_job *j = u;
    for (int i = 0; i < GPU_INNER && j->st == LTX2_OK; i++)
        j->st = ltx2_backend_gemm(j->be, j->ctx, &j->x, &j->w, LTX2_B_NK, NULL, &j->y);
    if (j->st == LTX2_OK) j->st = j->be->sync(j->be, j->ctx);
}

static void run_gpu_bare(void *u) {
    gpu_job *j = u;
    if (j->st == LTX2_OK)
        j->st = bench_lt_gemm(j->lt, j->ctx, j->x.dtype, j->M, j->N, j->K, j->x.data, j->w.data, j->y.data, GPU_INNER);
    if (j->st == LTX2_OK) j->st = j->be->sync(j->be, j->ctx);
}

static void bench_gpu(const bench_opts *o, bench_report *r, ltx2_context *ctx) {
    ltx2_backend *be = NULL;
    if (ltx2_backend_cuda_create(ctx, 0, &be) != LTX2_OK) {
        bench_report_note(r, "cuda: skipped (%s)", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
        return;
    }
    bench_lt *lt = NULL;
    if (bench_lt_create(be, ctx, &lt) != LTX2_OK) {
        bench_report_note(r, "cuda: skipped (%s)", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
        ltx2_backend_free(be);
        return;
    }
    static const ltx2_dtype dts[] = {LTX2_BF16, LTX2_F32};
    for (size_t d = 0; d < 2; d++) {
        for (size_t s = 0; s < sizeof(gpu_shapes) / sizeof(gpu_shapes[0]); s++) {
            const gemm_shape *g = &gpu_shapes[s];
            if (o->quick && !g->quick) continue;
            if (dts[d] == LTX2_F32 && s > 0) continue; /* one f32 row: the fp32 (non-TF32) reference rate */
            gpu_job j = {.be = be, .lt = lt, .ctx = ctx, .M = g->M, .N = g->N, .K = g->K, .st = LTX2_OK};
            int64_t xs[2] = {g->M, g->K}, ws[2] = {g->N, g->K}, ys[2] = {g->M, g->N};
            void *px = bench_dev_randn(be, ctx, dts[d], g->M * g->K, GEMM_SEED, 1, 1.0f);
            void *pw = bench_dev_randn(be, ctx, dts[d], g->N * g->K, GEMM_SEED, 2, 1.0f);
            void *py = NULL;
            be->alloc(be, ctx, (size_t)(g->M * g->N) * ltx2_dtype_size(dts[d]), &py);
            if (px && pw && py) {
                j.x = ltx2_tensor_make(px, dts[d], 2, xs);
                j.w = ltx2_tensor_make(pw, dts[d], 2, ws);
                j.y = ltx2_tensor_make(py, dts[d], 2, ys);
                j.x.device = j.w.device = j.y.device = LTX2_DEVICE_CUDA;
                char name[96];
                snprintf(name, sizeof(name), "%s %s", g->name, ltx2_dtype_name(dts[d]));
                double flops = 2.0 * (double)g->M * (double)g->N * (double)g->K;
                bench_row row = {.bench = "gemm", .name = name, .device = "cuda", .flops = flops,
                                 .bytes = (double)ltx2_dtype_size(dts[d]) * (double)(g->M * g->K + g->N * g->K + g->M * g->N),
                                 .baseline = "cublaslt"};
                row.st = bench_measure(o, run_gpu_ours, &j, GPU_INNER);
                row.baseline_s = bench_measure(o, run_gpu_bare, &j, GPU_INNER).median_s;
                if (j.st != LTX2_OK) {
                    bench_report_note(r, "cuda %s: %s", name, ltx2_last_error(ctx));
                    ltx2_clear_error(ctx);
                } else {
                    bench_report_row(r, &row);
                }
            } else {
                bench_report_note(r, "cuda %s: allocation failed: %s", g->name, ltx2_last_error(ctx));
                ltx2_clear_error(ctx);
            }
            be->free(be, px);
            be->free(be, pw);
            be->free(be, py);
        }
    }
    bench_lt_free(lt);
    ltx2_backend_free(be);
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = bench_parse_args(argc, argv, &o, "CPU GEMM vs FMA peak; CUDA GEMM vs bare cuBLASLt when available\n");
    if (rc >= 0) return rc;
    bench_report r;
    if (!bench_report_open(&r, &o)) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);
    bench_cpu(&o, &r, ctx);
    bench_gpu(&o, &r, ctx);
    ltx2_context_free(ctx);
    bench_report_close(&r);
    return 0;
}
