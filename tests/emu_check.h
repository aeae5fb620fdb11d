/* Helpers shared by the emulated-kernel tests (tests/test_emu_conv3d.c, test_emu_ops.c,
 * test_emu_elementwise.c, test_emu_attention.c and its parts): aligned "device" buffers with a
 * guard tail, seeded inputs, bf16 storage, the element-wise comparison with per-case statistics
 * (max abs error, max ulp, cosine), and the check that a launch neither failed nor faulted.
 * Include after "emu_kernels.h" (it declares ltx2_emu_last_fault). The file must define
 * _POSIX_C_SOURCE before any include. */
#ifndef LTX2_TESTS_EMU_CHECK_H
#define LTX2_TESTS_EMU_CHECK_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/dtype.h"
#include "core/rng.h"
#include "test_util.h"

/* ---- tolerances: the op harness's (tests/test_ops.c), repeated here by name and value ----
 * bf16 has 8 significant bits (eps 2^-7); a device result rounded to bf16 may differ from the
 * f32 CPU result by one bf16 ulp, plus fp32 noise before the rounding (BF16_ATOL). */
#define EPS_BF16 0.0078125
#define BF16_ATOL 1e-4
/* bf16 implicit-GEMM (conv3d): fp32 accumulation in a different order, ~1e-4 * sqrt(K). */
#define GEMM_BF16_ATOL_PER_SQRT_K 1e-4
#define GEMM_F32_RTOL 1e-5
/* fp32 row reductions (norms) against the CPU's double-accumulated statistics. */
#define ROW_F32_RTOL 1e-5
#define ROW_F32_ATOL 1e-5
/* Row means of offset inputs: fp32 partial sums carry rounding proportional to |offset|. */
#define ROW_OFFSET_ATOL_GAIN 1e-6
/* The fused DiT ops' device tolerances (tests/test_ops_fused.c): f32 summation order only;
 * bf16 output rounding (one eps) plus fp32 noise. */
#define DEV_F32_RTOL 1e-5
#define DEV_F32_ATOL 1e-5
#define DEV_BF16_RTOL 0.0078125
#define DEV_BF16_ATOL 1e-3
/* fp32 activations: a few ulps of expf / tanhf through the formula. */
#define ACT_F32_RTOL 1e-5
#define ACT_F32_ATOL 1e-6

/* Buffers are 256-byte aligned like cudaMalloc's; outputs get this many guard bytes after them,
 * pre-filled with GUARD_BYTE, that must stay untouched (out-of-bounds writes). 0xFF is also NaN
 * in f32 and bf16, so an output element the kernel forgot to write fails the comparison. */
#define EMU_ALIGN 256
#define EMU_GUARD_BYTES 64
#define GUARD_BYTE 0xFF
/* Philox seed of every input (streams pick the tensor). */
#define EMU_SEED 20251122u

static inline void emu_out_of_memory(size_t bytes) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    exit(2);
}

/* Host memory (never NULL: the test ends on exhaustion). */
static inline void *emu_xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) emu_out_of_memory(bytes);
    return p;
}

/* Exact-size allocation (ASan's redzone starts right after the last byte), 256-byte aligned,
 * followed by the guard tail. */
static inline void *emu_alloc(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, EMU_ALIGN, bytes + EMU_GUARD_BYTES) != 0) emu_out_of_memory(bytes);
    memset(p, GUARD_BYTE, bytes + EMU_GUARD_BYTES);
    return p;
}

static inline void *emu_alloc_copy(const void *src, size_t bytes) {
    void *p = emu_alloc(bytes);
    memcpy(p, src, bytes);
    return p;
}

/* Puts a buffer from emu_alloc back as allocated: all `bytes` and the guard tail GUARD_BYTE. */
static inline void emu_refill(void *p, size_t bytes) { memset(p, GUARD_BYTE, bytes + EMU_GUARD_BYTES); }

static inline int emu_count_not_guard(const unsigned char *p, size_t n) {
    int bad = 0;
    for (size_t i = 0; i < n; i++) bad += p[i] != GUARD_BYTE;
    return bad;
}

/* Guard bytes after an output of `bytes` bytes that a launch overwrote. */
static inline int emu_guard_damage(const void *p, size_t bytes) {
    return emu_count_not_guard((const unsigned char *)p + bytes, EMU_GUARD_BYTES);
}

/* Whether neither the `bytes` of a filled buffer nor its guard tail were written (a refused
 * launch must not touch its output). */
static inline bool emu_untouched(const void *p, size_t bytes) {
    return emu_count_not_guard((const unsigned char *)p, bytes + EMU_GUARD_BYTES) == 0;
}

static inline double emu_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* n seeded values offset + scale * N(0, 1), rounded to bf16 when round_bf16 (so the CPU reference
 * and a bf16 kernel see identical inputs). Caller frees. */
static inline float *emu_normal_seeded(uint64_t seed, uint64_t stream, int64_t n, float scale, float offset,
                                       bool round_bf16) {
    float *p = (float *)emu_xmalloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    ltx2_rng_normal(seed, stream, 0, (size_t)n, p);
    for (int64_t i = 0; i < n; i++) {
        p[i] = offset + scale * p[i];
        if (round_bf16) p[i] = ltx2_round_bf16(p[i]);
    }
    return p;
}

static inline float *emu_normal(uint64_t stream, int64_t n, float scale, float offset, bool round_bf16) {
    return emu_normal_seeded(EMU_SEED, stream, n, scale, offset, round_bf16);
}

/* The kernel's storage of n f32 values: f32 copied, or bf16 (round to nearest even) when bf. */
static inline void emu_store(void *dst, const float *src, int64_t n, bool bf) {
    if (!bf) {
        memcpy(dst, src, (size_t)n * sizeof(float));
        return;
    }
    uint16_t *d = (uint16_t *)dst;
    for (int64_t i = 0; i < n; i++) d[i] = ltx2_f32_to_bf16(src[i]);
}

static inline void emu_load(float *dst, const void *src, int64_t n, bool bf) {
    if (!bf) {
        memcpy(dst, src, (size_t)n * sizeof(float));
        return;
    }
    const uint16_t *s = (const uint16_t *)src;
    for (int64_t i = 0; i < n; i++) dst[i] = ltx2_bf16_to_f32(s[i]);
}

/* A device buffer (emu_alloc) holding n f32 values as the kernel stores them (emu_store). */
static inline void *emu_alloc_stored(const float *src, int64_t n, bool bf) {
    void *p = emu_alloc((size_t)n * (bf ? sizeof(uint16_t) : sizeof(float)));
    emu_store(p, src, n, bf);
    return p;
}

/* Distance in units in the last place between two finite floats (0 for equal, -0 == +0). */
static inline int64_t emu_ulp_f32(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia, ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return oa > ob ? oa - ob : ob - oa;
}

/* Statistics of one comparison (printed for every case, kept for the report). */
typedef struct emu_stats {
    int64_t n, n_bad;
    double max_abs, cosine;
    double max_ulp; /* see emu_compare */
} emu_stats;

/* Compares out with ref element-wise: |out - ref| <= atol + rtol * |ref|; NaN must meet NaN and
 * an infinity the same infinity. bf: values are bf16 (ulps counted in bf16 units). */
static inline emu_stats emu_compare(const float *out, const float *ref, int64_t n, double atol, double rtol,
                                    bool bf, const char *name, bool quiet) {
    emu_stats s = {n, 0, 0.0, 1.0, 0.0};
    double dot = 0, o2 = 0, r2 = 0;
    int printed = 0;
    for (int64_t i = 0; i < n; i++) {
        const double o = out[i], r = ref[i];
        bool bad;
        if (isnan(r)) {
            bad = !isnan(o);
        } else if (isinf(r)) {
            bad = !(isinf(o) && (o > 0) == (r > 0));
        } else if (!isfinite(o)) {
            bad = true;
        } else {
            const double e = fabs(o - r);
            if (e > s.max_abs) s.max_abs = e;
            /* f32: the error in ulps of max(|ref|, 1) (outputs here are O(1); a norm's outputs
             * near 0 would otherwise count cancellation noise in their own tiny ulps).
             * bf16: bf16 ulps from the CPU result rounded to bf16 (bf16 values are f32 with 16
             * zero low bits), so 0 means the correctly rounded result. */
            const double u = bf ? (double)(emu_ulp_f32(out[i], ltx2_round_bf16(ref[i])) >> 16)
                                : e / ldexp(1.0, ilogb(fabs(r) > 1.0 ? fabs(r) : 1.0) - 23);
            if (u > s.max_ulp) s.max_ulp = u;
            dot += o * r;
            o2 += o * o;
            r2 += r * r;
            bad = e > atol + rtol * fabs(r);
        }
        if (bad) {
            if (!quiet && printed++ < 5)
                fprintf(stderr, "    %s: element %lld: out %.9g ref %.9g (allowed %.3g)\n", name, (long long)i, o, r,
                        atol + rtol * fabs(r));
            s.n_bad++;
        }
    }
    s.cosine = o2 > 0 && r2 > 0 ? dot / sqrt(o2 * r2) : (o2 == r2 ? 1.0 : 0.0);
    return s;
}

/* Records and prints a case's comparison. */
static inline void emu_report(const char *name, emu_stats s, double ms) {
    printf("  %-58s max_abs %.3g  max_ulp %.3g  cos %.9f  %6.1f ms%s\n", name, s.max_abs, s.max_ulp,
           s.cosine, ms, s.n_bad ? "  FAIL" : "");
    CHECK(s.n_bad == 0, "%s: %lld/%lld elements out of tolerance (max abs err %.3g)", name, (long long)s.n_bad,
          (long long)s.n, s.max_abs);
}

/* Every comparison must be able to fail: moving one output element by `by` must be flagged.
 * (The sensitivity check a test runs once per op; it counts as a pass when the comparison
 * catches the perturbation.) */
static inline void emu_check_sensitive(const char *name, const float *out, const float *ref, int64_t n,
                                       double atol, double rtol, bool bf, int64_t at, float by) {
    if (emu_compare(out, ref, n, atol, rtol, bf, name, true).n_bad) return; /* already failing */
    float *p = (float *)emu_xmalloc((size_t)n * sizeof(float));
    memcpy(p, out, (size_t)n * sizeof(float));
    p[at] += by;
    emu_stats s = emu_compare(p, ref, n, atol, rtol, bf, name, true);
    CHECK(s.n_bad == 1, "%s: a perturbation of element %lld by %g was not caught (%lld bad)", name, (long long)at,
          by, (long long)s.n_bad);
    free(p);
}

/* A launch must return 0 and leave no emulator fault behind. */
#define EMU_CHECK_LAUNCH(rc, name)                                                                             \
    do {                                                                                                       \
        const char *emu_fault_ = ltx2_emu_last_fault();                                                        \
        CHECK((rc) == 0, "%s: launcher returned %d", (name), (rc));                                            \
        CHECK(emu_fault_ == NULL, "%s: emulator fault: %s", (name), emu_fault_ ? emu_fault_ : "");             \
        if (emu_fault_) ltx2_emu_reset_fault();                                                                \
    } while (0)

#endif
