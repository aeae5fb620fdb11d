/* CPU conv3d (implicit GEMM, src/cpu/conv3d.c) throughput on LTX-2 video-decoder layer shapes.
 * Channel counts and the 3x3x3 kernel are the real decoder's (LTX-2.3 widths 1024 / 512 / 256 /
 * 128 and conv_out 128 -> 48); the T x H x W extents are scaled down so one call is 0.1-1 GFLOP
 * (a real 121-frame 512 px decode runs the same layers on ~100-1000x more voxels, which only
 * lengthens M). Each row reports GFLOP/s, the ratio to ltx2_cpu_gemm at the same M x N x K
 * (A = a dense M x K matrix: the GEMM rate the conv would reach if patch gathering were free),
 * and the fraction of the measured all-thread FMA peak (src/cpu/peak.c), measured right around
 * the row because the machine may be shared. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

#include "bench.h"
#include "cpu_peak.h"
#include "core/rng.h"
#include "cpu/cpu_conv3d.h"
#include "cpu/cpu_ops.h"

/* Seconds of FMA loop per peak reading (before and after each row; the mean is the roofline). */
#define PEAK_SECONDS_ROW 0.3

typedef struct conv_shape {
    const char *name;
    int64_t c_in, c_out, t, h, w;
    bool quick;
} conv_shape;

/* Decoder layers (symmetric time padding, zero spatial padding as LTX-2.3). */
static const conv_shape shapes[] = {
    {"dec conv_in 128->1024 @3x8x8", 128, 1024, 3, 8, 8, false},
    {"dec res 1024 @3x6x6", 1024, 1024, 3, 6, 6, false},
    {"dec res 512 @5x8x8", 512, 512, 5, 8, 8, true},
    {"dec res 256 @9x16x16", 256, 256, 9, 16, 16, false},
    {"dec res 128 @9x32x32", 128, 128, 9, 32, 32, true},
    {"dec conv_out 128->48 @9x32x32", 128, 48, 9, 32, 32, false},
};

typedef struct job {
    ltx2_context *ctx; /* its GEMM packing buffers reused between calls, as in a decode */
    ltx2_conv3d_desc d;
    int64_t t, h, w, M, K;
    float *x, *wp, *bias, *y, *a, *c;
} job;

static void run_conv(void *u) {
    job *j = u;
    ltx2_cpu_conv3d(j->ctx, &j->d, j->x, 1, j->t, j->h, j->w, j->wp, j->bias, j->y);
}

static void run_gemm(void *u) {
    job *j = u;
    ltx2_cpu_gemm(j->ctx, j->M, j->d.c_out, j->K, 1.0f, j->a, j->K, j->wp, j->d.c_out, LTX2_B_KN, 0.0f, j->c,
                  j->d.c_out, j->bias);
}

static float *randn(uint64_t stream, int64_t n) {
    float *p = malloc((size_t)n * sizeof(float));
    if (p) ltx2_rng_normal(11, stream, 0, (size_t)n, p);
    return p;
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = bench_parse_args(argc, argv, &o, "CPU conv3d (implicit GEMM) on scaled LTX-2 decoder layers\n");
    if (rc >= 0) return rc;
    bench_report r;
    if (!bench_report_open(&r, &o)) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);
    bench_report_note(&r, "cpu conv3d: %d threads; real decoder channel widths, T x H x W scaled down (see names)",
                      omp_get_max_threads());
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        const conv_shape *cs = &shapes[s];
        if (o.quick && !cs->quick) continue;
        job j = {.ctx = ctx, .d = {.c_in = cs->c_in, .c_out = cs->c_out, .kt = 3, .kh = 3, .kw = 3, .st = 1, .sh = 1, .sw = 1,
                       .tpad = LTX2_CONV_TPAD_SYMMETRIC, .spad = LTX2_CONV_SPAD_ZEROS},
                 .t = cs->t, .h = cs->h, .w = cs->w};
        int64_t out[3];
        if (ltx2_conv3d_out_shape(NULL, &j.d, j.t, j.h, j.w, out) != LTX2_OK) continue;
        j.M = out[0] * out[1] * out[2];
        j.K = 27 * cs->c_in;
        j.x = randn(1, j.t * j.h * j.w * cs->c_in);
        j.wp = randn(2, j.K * cs->c_out);
        j.bias = randn(3, cs->c_out);
        j.y = malloc((size_t)(j.M * cs->c_out) * sizeof(float));
        j.a = randn(4, j.M * j.K);
        j.c = malloc((size_t)(j.M * cs->c_out) * sizeof(float));
        if (j.x && j.wp && j.bias && j.y && j.a && j.c) {
            const double flops = 2.0 * (double)j.M * (double)cs->c_out * (double)j.K;
            bench_row row = {.bench = "conv3d_cpu", .name = cs->name, .device = "cpu", .flops = flops,
                             .bytes = 4.0 * (double)(j.t * j.h * j.w * cs->c_in + j.K * cs->c_out + j.M * cs->c_out),
                             .baseline = "cpu_gemm", .roof = "fma_peak"};
            const double pk0 = ltx2_cpu_measure_fma_peak(PEAK_SECONDS_ROW);
            row.st = bench_measure(&o, run_conv, &j, 1);
            row.baseline_s = bench_measure(&o, run_gemm, &j, 1).median_s;
            const double pk1 = ltx2_cpu_measure_fma_peak(PEAK_SECONDS_ROW);
            row.roof_rate = 0.5 * (pk0 + pk1);
            bench_report_row(&r, &row);
            bench_report_note(&r, "%s: M %lld N %lld K %lld; conv %.1f GFLOP/s = %.0f%% of cpu_gemm %.1f GFLOP/s, "
                                  "%.0f%% of FMA peak %.1f GFLOP/s",
                              cs->name, (long long)j.M, (long long)cs->c_out, (long long)j.K,
                              flops / row.st.median_s * 1e-9, 100.0 * row.baseline_s / row.st.median_s,
                              flops / row.baseline_s * 1e-9, 100.0 * flops / row.st.median_s / row.roof_rate,
                              row.roof_rate * 1e-9);
        } else {
            bench_report_note(&r, "%s: out of memory", cs->name);
        }
        free(j.x);
        free(j.wp);
        free(j.bias);
        free(j.y);
        free(j.a);
        free(j.c);
    }
    ltx2_context_free(ctx);
    bench_report_close(&r);
    return 0;
}
