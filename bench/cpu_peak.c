/* Measures the CPU's fp32 FMA throughput and clock (cpu_peak.h). Compiled with the same ISA flags
 * as the engine's GEMM (src/cpu/gemm.c, bench/CMakeLists.txt) so "peak" means the peak our kernel
 * can use. */
#include "cpu_peak.h"

#include <omp.h>
#include <time.h>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

/* Independent accumulator chains: FMA latency (4 cycles) x 2 pipes needs >= 8 in flight; 24
 * leaves slack and still fits the 32 zmm registers (16 ymm for AVX2: 12 chains). */
#define PEAK_CHAINS_512 24
#define PEAK_CHAINS_256 12
/* Inner iterations between clock reads: long enough that the clock call is noise. */
#define PEAK_BATCH 1000000

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int ltx2_cpu_flops_per_cycle(void) {
#if defined(__AVX512F__)
    return 64;
#elif defined(__AVX2__) && defined(__FMA__)
    return 32;
#else
    return 2;
#endif
}

/* One thread's FMA loop for `batch` iterations; returns FLOPs done (sink keeps it alive). */
static double fma_batch(long batch, float *sink) {
#if defined(__AVX512F__)
    __m512 c[PEAK_CHAINS_512];
    __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-3f);
#pragma GCC unroll 24
    for (int i = 0; i < PEAK_CHAINS_512; i++) c[i] = _mm512_set1_ps((float)i);
    for (long it = 0; it < batch; it++) {
#pragma GCC unroll 24
        for (int i = 0; i < PEAK_CHAINS_512; i++) c[i] = _mm512_fmadd_ps(c[i], a, b);
    }
    float s = 0.0f;
#pragma GCC unroll 24
    for (int i = 0; i < PEAK_CHAINS_512; i++) s += _mm512_reduce_add_ps(c[i]);
    *sink += s;
    return 2.0 * 16 * PEAK_CHAINS_512 * (double)batch;
#elif defined(__AVX2__) && defined(__FMA__)
    __m256 c[PEAK_CHAINS_256];
    __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-3f);
#pragma GCC unroll 12
    for (int i = 0; i < PEAK_CHAINS_256; i++) c[i] = _mm256_set1_ps((float)i);
    for (long it = 0; it < batch; it++) {
#pragma GCC unroll 12
        for (int i = 0; i < PEAK_CHAINS_256; i++) c[i] = _mm256_fmadd_ps(c[i], a, b);
    }
    float s = 0.0f;
    for (int i = 0; i < PEAK_CHAINS_256; i++) {
        float t[8];
        _mm256_storeu_ps(t, c[i]);
        for (int j = 0; j < 8; j++) s += t[j];
    }
    *sink += s;
    return 2.0 * 8 * PEAK_CHAINS_256 * (double)batch;
#else
    float c[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    for (long it = 0; it < batch; it++)
        for (int i = 0; i < 8; i++) c[i] = c[i] * 0.999f + 1e-3f;
    for (int i = 0; i < 8; i++) *sink += c[i];
    return 2.0 * 8 * (double)batch;
#endif
}

double ltx2_cpu_measure_fma_peak(double min_seconds) {
    double total = 0.0;
    float sink = 0.0f;
    /* Every thread times its own loop after a barrier; the machine rate is the sum of the
     * per-thread rates over the same window. */
#pragma omp parallel reduction(+ : total, sink)
    {
        fma_batch(PEAK_BATCH / 10, &sink); /* warm up (clock ramp, AVX-512 license) */
#pragma omp barrier
        double t0 = now_s(), flops = 0.0, t = 0.0;
        do {
            flops += fma_batch(PEAK_BATCH, &sink);
            t = now_s() - t0;
        } while (t < min_seconds);
        total += flops / t;
    }
    return sink == 12345.678f ? total + 1e-9 : total; /* use sink so the loops stay */
}

double ltx2_cpu_measure_clock_hz(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    /* A chain of register-register adds: one per cycle (adds of an immediate may be folded at
     * rename on recent cores, so the addend is a register). */
    const long n = 50000000;
    unsigned long x = 0, y = 1;
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                         : "+r"(x)
                         : "r"(y));
    }
    double t = now_s() - t0;
    return x ? 8.0 * (double)n / t : 0.0;
#else
    return 0.0;
#endif
}
