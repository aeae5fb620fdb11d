/* Self-test of the CPU emulator (tests/emu/): each collective against a known answer (block
 * reduction vs the serial sum, ldmatrix + mma vs the naive product on integer-valued data where
 * fp32 is exact, cp.async landing only at its wait), the fault paths (a __syncthreads only some
 * threads reach = deadlock, a full-mask shuffle after lanes returned), grid coverage, dynamic
 * shared memory, launch-configuration errors, the launcher rename list, and one real kernel end
 * to end (ltx2_k_rms_norm vs the CPU reference) as the example for tests/test_emu_*.c.
 * The sm_90 mechanisms directly: mbarrier phases and parity, TMA boxes partly out of range
 * (128-byte swizzle, zero fill, transaction bytes), wgmma SS and RS against the naive product
 * and their async completion, and the deadlocks of a phase that cannot complete.
 * Also prints the emulation speed in warp collectives per second. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/dtype.h"
#include "cpu/cpu_ops.h"
#include "emu.h"
#include "emu_kernels.h"
#include "ltx2/ltx2.h"
#include "selftest_kernels.h"
#include "test_util.h"

/* A deadlock must be reported promptly, not after a long timeout. */
#define FAULT_MAX_SECONDS 5.0
/* Row-op tolerances of the op harness (tests/test_ops.c): f32 and bf16 (atol, plus one bf16
 * rounding 2^-7 on top of the f32 rtol). */
#define ROW_F32_ATOL 1e-5
#define ROW_F32_RTOL 1e-5
#define BF16_ATOL 1e-4
#define EPS_BF16 0.0078125
/* cudaErrorInvalidConfiguration */
#define ERR_INVALID_CONFIGURATION 9

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Emulated device memory: 256-byte aligned like cudaMalloc. C11 (and ASan) require the size of
 * an aligned_alloc to be a multiple of the alignment. */
#define DEV_ALIGN 256
static void *dev_alloc(size_t bytes) { return aligned_alloc(DEV_ALIGN, (bytes + DEV_ALIGN - 1) / DEV_ALIGN * DEV_ALIGN); }

static uint32_t rng_state = 12345u;
static int rnd_int(int lo, int hi) { /* [lo, hi] */
    rng_state = rng_state * 1664525u + 1013904223u;
    return lo + (int)((rng_state >> 8) % (uint32_t)(hi - lo + 1));
}
static float rnd_normal(void) {
    float s = 0.0f;
    for (int i = 0; i < 12; i++) s += (float)rnd_int(0, 1 << 20) / (float)(1 << 20);
    return s - 6.0f;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* Every launcher declared in ltx2_kernels.h must be renamed by emu_rename.h, or the emulator's
 * copy would clash with the real CUDA library in builds that link both. */
static void test_rename_list(void) {
    char *hdr = read_file(LTX2_SOURCE_DIR "/kernels/ltx2_kernels.h");
    char *ren = read_file(LTX2_SOURCE_DIR "/tests/emu/emu_rename.h");
    CHECK(hdr && ren, "cannot read ltx2_kernels.h / emu_rename.h");
    int found = 0;
    for (const char *p = hdr; p && ren && (p = strstr(p, "ltx2_k_")) != NULL;) {
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
        if (p[n] == '(') {
            char want[256];
            snprintf(want, sizeof want, "#define %.*s ltx2_emu_k_%.*s\n", (int)n, p, (int)(n - 7), p + 7);
            CHECK(strstr(ren, want) != NULL, "emu_rename.h lacks: %s", want);
            found++;
        }
        p += n;
    }
    CHECK(found >= 18, "only %d launchers found in ltx2_kernels.h", found);
    free(hdr);
    free(ren);
}

static void test_block_sum(void) {
    enum { N = 1000, BLOCKS = 3, THREADS = 128 };
    float *x = malloc(sizeof(float) * N * BLOCKS), out[BLOCKS];
    int any[BLOCKS];
    for (int i = 0; i < N * BLOCKS; i++) x[i] = (float)rnd_int(-8, 8);
    x[0] = 0.0f; /* block 0: __syncthreads_or sees no nonzero predicate */
    x[N] = 3.0f;
    x[2 * N] = -1.0f;
    int rc = ltx2_emu_st_block_sum(x, out, any, N, BLOCKS, THREADS);
    CHECK(rc == 0, "block sum launch returned %d", rc);
    for (int b = 0; b < BLOCKS; b++) {
        float s = 0.0f;
        for (int i = 0; i < N; i++) s += x[b * N + i];
        CHECK(out[b] == s, "block %d: sum %g, serial %g", b, out[b], s);
        CHECK(any[b] == (x[b * N] != 0.0f), "block %d: __syncthreads_or gave %d", b, any[b]);
    }
    free(x);
}

static void test_mma(int b_kn) {
    uint16_t a[256], b[256];
    float af[256], bf[256], c[256], d[256];
    for (int i = 0; i < 256; i++) {
        af[i] = (float)rnd_int(-4, 4);
        bf[i] = (float)rnd_int(-4, 4);
        a[i] = ltx2_f32_to_bf16(af[i]);
        b[i] = ltx2_f32_to_bf16(bf[i]);
        c[i] = (float)rnd_int(-50, 50);
    }
    int rc = ltx2_emu_st_mma(a, b, b_kn, c, d);
    CHECK(rc == 0, "mma launch returned %d", rc);
    int bad = 0;
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 16; n++) {
            float s = c[m * 16 + n];
            for (int k = 0; k < 16; k++) s += af[m * 16 + k] * (b_kn ? bf[k * 16 + n] : bf[n * 16 + k]);
            if (d[m * 16 + n] != s && bad++ < 4)
                fprintf(stderr, "mma (b %s) d[%d][%d] = %g, want %g\n", b_kn ? "[k][n] .trans" : "[n][k]", m, n,
                        d[m * 16 + n], s);
        }
    CHECK(bad == 0, "mma with B %s: %d of 256 wrong", b_kn ? "[k][n] (.trans)" : "[n][k]", bad);
}

static void test_cp_async(void) {
    float *src = dev_alloc(64 * sizeof(float)), out[64];
    const float sentinel = -7.0f;
    for (int i = 0; i < 64; i++) src[i] = (float)(i + 1);
    struct {
        int wait_n, zero_fill;
        const char *what;
    } cases[] = {{0, 0, "wait_group 0"}, {1, 0, "wait_group 1"}, {-1, 0, "no wait"}, {0, 1, "zero fill"}};
    for (int c = 0; c < 4; c++) {
        int rc = ltx2_emu_st_cp_async(src, out, sentinel, cases[c].wait_n, cases[c].zero_fill);
        CHECK(rc == 0, "%s: launch returned %d", cases[c].what, rc);
        int bad = 0;
        for (int i = 0; i < 64; i++) {
            /* threads 0-7 (elements 0-31) are in the older group, 8-15 in the newer one */
            const int landed = cases[c].wait_n == 0 || (cases[c].wait_n == 1 && i < 32);
            const float want = !landed ? sentinel : (cases[c].zero_fill ? 0.0f : src[i]);
            bad += out[i] != want;
        }
        CHECK(bad == 0, "cp.async %s: %d of 64 elements wrong", cases[c].what, bad);
    }
    free(src);
}

static void test_faults(void) {
    float out[128];
    ltx2_emu_reset_fault();
    CHECK(ltx2_emu_last_fault() == NULL, "fault not reset");
    double t0 = now_s();
    int rc = ltx2_emu_st_divergent_sync(out);
    double dt = now_s() - t0;
    const char *f = ltx2_emu_last_fault();
    CHECK(rc == LTX2_EMU_LAUNCH_FAILURE, "divergent __syncthreads returned %d, want 719", rc);
    CHECK(f && strstr(f, "deadlock"), "fault message: %s", f ? f : "(none)");
    CHECK(f && strstr(f, "st_divergent_sync_kernel") && strstr(f, "block (0,0,0)") && strstr(f, "__syncthreads"),
          "fault message lacks kernel / block / site: %s", f ? f : "(none)");
    CHECK(dt < FAULT_MAX_SECONDS, "deadlock took %.1f s to report", dt);

    /* the runtime is usable after a fault */
    ltx2_emu_reset_fault();
    test_block_sum();
    CHECK(ltx2_emu_last_fault() == NULL, "a good launch reported: %s", ltx2_emu_last_fault());

    rc = ltx2_emu_st_shfl_after_exit(out);
    f = ltx2_emu_last_fault();
    CHECK(rc == LTX2_EMU_LAUNCH_FAILURE, "shuffle after exit returned %d, want 719", rc);
    CHECK(f && (strstr(f, "exited") || strstr(f, "returned")) && strstr(f, "__shfl_xor_sync"),
          "fault message: %s", f ? f : "(none)");
    ltx2_emu_reset_fault();
}

/* The pipeline ordering checks (emu_race.c): the correct pipeline gives each warp the other warp's
 * totals; each dropped ordering is a shared-memory race fault whatever the threads' interleaving
 * (which of the hazards is met first, and so the message, may vary with it). */
static void test_pipeline_races(void) {
    enum { N = 1024 };
    uint16_t *src = dev_alloc(N * sizeof(uint16_t));
    float out[64];
    double want[2] = {0.0, 0.0}; /* per warp: the other warp's chunks in both fills */
    for (int i = 0; i < N; i++) {
        const float v = (float)(i % 13) - 6.0f; /* small integers: exact in bf16 and in the sums */
        uint32_t u;
        memcpy(&u, &v, sizeof u);
        src[i] = (uint16_t)(u >> 16);
        const int chunk = (i % 512) / 8, owner = chunk / 32;
        want[1 - owner] += v;
    }
    ltx2_emu_reset_fault();
    int rc = ltx2_emu_st_pipeline(src, out, ST_PIPE_OK);
    CHECK(rc == 0 && ltx2_emu_last_fault() == NULL, "correct pipeline: rc %d, fault %s", rc,
          ltx2_emu_last_fault() ? ltx2_emu_last_fault() : "(none)");
    for (int w = 0; w < 2; w++) {
        double got = 0.0;
        for (int l = 0; l < 32; l++) got += out[32 * w + l];
        CHECK(got == want[w], "correct pipeline, warp %d: sum %g, want %g", w, got, want[w]);
    }
    static const int bad[] = {ST_PIPE_NO_SYNC_BEFORE_REFILL, ST_PIPE_NO_SYNC_AFTER_WAIT, ST_PIPE_READ_IN_FLIGHT};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ltx2_emu_reset_fault();
        rc = ltx2_emu_st_pipeline(src, out, bad[i]);
        const char *f = ltx2_emu_last_fault();
        CHECK(rc == LTX2_EMU_LAUNCH_FAILURE && f && strstr(f, "shared-memory race") && strstr(f, "selftest_kernels.cu"),
              "pipeline mode %d: rc %d, fault '%s'", bad[i], rc, f ? f : "(none)");
    }
    ltx2_emu_reset_fault();
    free(src);
}

/* ---- sm_90 mechanisms (emu_sm90.c) ---- */

/* Threads of the mbarrier test; a fault must name the barrier as "[0x<shared address>]". */
#define MB_THREADS 8
/* Tensor of the TMA test: [TMA_BATCHES][TMA_ROWS][TMA_COLS] bf16 bit patterns, all nonzero and
 * distinct, so a zero in the tile can only be a fill and a wrong position shows. */
#define TMA_COLS 96
#define TMA_ROWS 20
#define TMA_BATCHES 2
#define TMA_BITS0 0x3000u
/* The 128-byte swizzle's period: 8 rows of 128 bytes. */
#define SWZ_ROW_BYTES 128
#define SWZ_ROWS 8
#define SWZ_CHUNK 16
#define SWZ_ATOM 1024u

static int has_barrier_name(const char *f, uint32_t bar) {
    char want[32];
    snprintf(want, sizeof want, "[0x%x]", bar);
    return f && strstr(f, want) != NULL;
}

/* A fresh barrier reports parity 1 complete; phase 0 completes at the count-th arrival (every
 * thread then sees all marks) and phase 1 at the next count; a phase that lacks an arrival is a
 * deadlock naming the barrier. */
static void test_mbarrier(void) {
    int out[2 * MB_THREADS];
    uint32_t bar = 0;
    ltx2_emu_reset_fault();
    int rc = ltx2_emu_st_mbar(out, &bar, MB_THREADS, 0);
    CHECK(rc == 0, "mbarrier phases: rc %d, fault %s", rc, ltx2_emu_last_fault() ? ltx2_emu_last_fault() : "(none)");
    int bad = 0;
    for (int r = 0; r < 2; r++)
        for (int t = 0; t < MB_THREADS; t++) bad += out[r * MB_THREADS + t] != (r + 1) * MB_THREADS;
    CHECK(bad == 0, "mbarrier: %d waits returned before all %d arrivals of their phase", bad, MB_THREADS);

    const double t0 = now_s();
    rc = ltx2_emu_st_mbar(out, &bar, MB_THREADS, 1);
    const double dt = now_s() - t0;
    const char *f = ltx2_emu_last_fault();
    CHECK(rc == LTX2_EMU_LAUNCH_FAILURE, "mbarrier with a missing arrival returned %d, want 719", rc);
    CHECK(f && strstr(f, "deadlock") && strstr(f, "mbarrier.try_wait.parity") && has_barrier_name(f, bar) &&
              strstr(f, "pending: 1 arrivals"),
          "missing arrival: fault does not name barrier 0x%x / its pending arrival: %s", bar, f ? f : "(none)");
    CHECK(dt < FAULT_MAX_SECONDS, "mbarrier deadlock took %.1f s to report", dt);
    ltx2_emu_reset_fault();
}

/* Where TMA's 128-byte swizzle puts box element (r, c) of 64-column rows in a destination on a
 * 1024-byte boundary: row r at 128 r, its 16-byte chunk index XORed with r % 8. */
static int swz_elem(int r, int c) {
    const int chunk = (c * 2) / SWZ_CHUNK, in_chunk = (c * 2) % SWZ_CHUNK;
    return (r * SWZ_ROW_BYTES + (chunk ^ (r % SWZ_ROWS)) * SWZ_CHUNK + in_chunk) / 2;
}

static void test_tma(void) {
    const size_t n = (size_t)TMA_BATCHES * TMA_ROWS * TMA_COLS;
    uint16_t *src = dev_alloc(n * sizeof *src), out[ST_TMA_BYTES / 2];
    for (size_t i = 0; i < n; i++) src[i] = (uint16_t)(TMA_BITS0 + i);
    struct {
        int c0, c1, c2;
        const char *what;
    } cases[] = {{0, 2, 0, "inside"},
                 {64, TMA_ROWS - 5, 1, "past the last column and row"},
                 {0, -3, 0, "before the first row"},
                 {0, 0, TMA_BATCHES, "past the last batch"}};
    for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        uint32_t info[2] = {0, 0};
        memset(out, 0xAB, sizeof out);
        ltx2_emu_reset_fault();
        const int rc = ltx2_emu_st_tma(src, TMA_COLS, TMA_ROWS, TMA_BATCHES, cases[k].c0, cases[k].c1, cases[k].c2, 0,
                                       out, info);
        CHECK(rc == 0, "TMA %s: expect_tx of the box bytes did not complete the phase: rc %d, fault %s", cases[k].what,
              rc, ltx2_emu_last_fault() ? ltx2_emu_last_fault() : "(none)");
        CHECK(info[1] % SWZ_ATOM == 0, "TMA destination 0x%x not on a 1024-byte boundary", info[1]);
        int bad = 0, zeros = 0;
        for (int r = 0; r < ST_TMA_ROWS; r++)
            for (int c = 0; c < 64; c++) {
                const int row = cases[k].c1 + r, col = cases[k].c0 + c, b = cases[k].c2;
                const int in = row >= 0 && row < TMA_ROWS && col < TMA_COLS && b < TMA_BATCHES;
                const uint16_t want = in ? src[((size_t)b * TMA_ROWS + (size_t)row) * TMA_COLS + (size_t)col] : 0;
                zeros += !in;
                if (out[swz_elem(r, c)] != want && bad++ < 4)
                    fprintf(stderr, "TMA %s: box (%d, %d) = 0x%04x, want 0x%04x\n", cases[k].what, r, c,
                            out[swz_elem(r, c)], want);
            }
        CHECK(bad == 0, "TMA %s: %d of %d elements not at their swizzled place / not zero-filled", cases[k].what, bad,
              ST_TMA_ROWS * 64);
        CHECK(k == 0 || zeros > 0, "TMA case %s has no out-of-range element", cases[k].what);
    }
    /* a transaction count the load does not cover: the phase never completes */
    uint32_t info[2] = {0, 0};
    ltx2_emu_reset_fault();
    const int rc = ltx2_emu_st_tma(src, TMA_COLS, TMA_ROWS, TMA_BATCHES, 0, 0, 0, 16, out, info);
    const char *f = ltx2_emu_last_fault();
    CHECK(rc == LTX2_EMU_LAUNCH_FAILURE, "expect_tx 16 bytes over the box returned %d, want 719", rc);
    CHECK(f && strstr(f, "deadlock") && strstr(f, "mbarrier.try_wait.parity") && has_barrier_name(f, info[0]) &&
              strstr(f, "tx 16"),
          "expect_tx too large: fault does not name barrier 0x%x / tx 16: %s", info[0], f ? f : "(none)");
    ltx2_emu_reset_fault();
    free(src);
}

/* wgmma SS (m64n128k16, K-major swizzled tiles written by TMA) and RS (m64n64k16, A from
 * registers, B MN-major): exact on small integers; the accumulators read between commit and
 * wait are still C (the operation runs at the wait). */
static void test_wgmma(int rs) {
    enum { M = 64, K = 64 };
    const int n = rs ? ST_WGMMA_N_RS : ST_WGMMA_N_SS;
    uint16_t *a = dev_alloc(M * K * sizeof *a), *b = dev_alloc((size_t)K * n * sizeof *b);
    float *af = malloc(sizeof(float) * M * K), *bfl = malloc(sizeof(float) * K * n);
    float *c = malloc(sizeof(float) * M * n), *early = malloc(sizeof(float) * M * n), *out = malloc(sizeof(float) * M * n);
    if (!a || !b || !af || !bfl || !c || !early || !out) {
        CHECK(0, "out of memory");
        return;
    }
    for (int i = 0; i < M * K; i++) {
        af[i] = (float)rnd_int(-3, 3);
        a[i] = ltx2_f32_to_bf16(af[i]);
    }
    for (int i = 0; i < K * n; i++) {
        bfl[i] = (float)rnd_int(-3, 3);
        b[i] = ltx2_f32_to_bf16(bfl[i]);
    }
    for (int i = 0; i < M * n; i++) c[i] = (float)rnd_int(-50, 50);
    ltx2_emu_reset_fault();
    const int rc = ltx2_emu_st_wgmma(a, b, c, early, out, rs);
    CHECK(rc == 0, "wgmma %s: rc %d, fault %s", rs ? "RS" : "SS", rc,
          ltx2_emu_last_fault() ? ltx2_emu_last_fault() : "(none)");
    int bad = 0, bad_early = 0;
    for (int m = 0; m < M; m++)
        for (int j = 0; j < n; j++) {
            float s = c[m * n + j];
            /* SS: B given [n][k]; RS: [k][n] */
            for (int k = 0; k < K; k++) s += af[m * K + k] * (rs ? bfl[k * n + j] : bfl[j * K + k]);
            if (out[m * n + j] != s && bad++ < 4)
                fprintf(stderr, "wgmma %s d[%d][%d] = %g, want %g\n", rs ? "RS" : "SS", m, j, out[m * n + j], s);
            bad_early += early[m * n + j] != c[m * n + j];
        }
    CHECK(bad == 0, "wgmma %s m64n%dk16: %d of %d wrong", rs ? "RS" : "SS", n, bad, M * n);
    CHECK(bad_early == 0, "wgmma %s: %d accumulators changed before wgmma.wait_group", rs ? "RS" : "SS", bad_early);
    free(a);
    free(b);
    free(af);
    free(bfl);
    free(c);
    free(early);
    free(out);
}

static void test_grid(void) {
    const unsigned gx = 3, gy = 2, gz = 2, bx = 48, by = 2, nb = gx * gy * gz, nt = bx * by;
    int *out = malloc(sizeof(int) * nb * nt);
    for (unsigned i = 0; i < nb * nt; i++) out[i] = -1;
    int rc = ltx2_emu_st_grid(out, gx, gy, gz, bx, by);
    CHECK(rc == 0, "grid launch returned %d", rc);
    int bad = 0;
    for (unsigned b = 0; b < nb; b++)
        for (unsigned t = 0; t < nt; t++) bad += out[b * nt + t] != (int)(b * 1000 + t);
    CHECK(bad == 0, "%d of %u (block, thread) slots wrong", bad, nb * nt);
    /* bad configurations fail like CUDA's, and the error is cleared for the next launch */
    rc = ltx2_emu_st_grid(out, 1, 1, 1, 2048, 1);
    CHECK(rc == ERR_INVALID_CONFIGURATION, "2048 threads per block returned %d", rc);
    rc = ltx2_emu_st_grid(out, 1, 1, 1, 32, 1);
    CHECK(rc == 0, "the launch after a failed one returned %d", rc);
    free(out);
}

static void test_dyn_smem(void) {
    int out[4] = {0, 0, 0, 0};
    int rc = ltx2_emu_st_dyn_smem(out, 1000, 2);
    CHECK(rc == 0, "dynamic smem launch returned %d", rc);
    for (int b = 0; b < 2; b++) {
        CHECK(out[2 * b] == 1, "block %d: dynamic smem not freshly 0xFF-filled", b);
        CHECK(out[2 * b + 1] == 1000, "block %d: %d of 1000 bytes read back", b, out[2 * b + 1]);
    }
}

static void test_speed(void) {
    enum { THREADS = 128, ITERS = 200 };
    float out[THREADS];
    const uint64_t c0 = ltx2_emu_collectives();
    const double t0 = now_s();
    int rc = ltx2_emu_st_shfl_loop(out, THREADS, ITERS);
    const double dt = now_s() - t0;
    const uint64_t n = ltx2_emu_collectives() - c0;
    CHECK(rc == 0, "shuffle loop returned %d", rc);
    int bad = 0;
    for (int i = 0; i < THREADS; i++) bad += out[i] != (float)i; /* an even number of swaps */
    CHECK(bad == 0, "shuffle loop: %d lanes wrong", bad);
    CHECK(n == (uint64_t)(THREADS / 32) * ITERS, "counted %llu warp collectives", (unsigned long long)n);
    printf("emulation speed: %d-thread block, %llu warp collectives in %.3f s = %.0f collectives/s\n", THREADS,
           (unsigned long long)n, dt, (double)n / dt);
}

/* ltx2_k_rms_norm on the emulator vs ltx2_cpu_rms_norm, f32 and bf16, warp- and block-per-row. */
static void test_rms_norm(ltx2_context *ctx, int bf16, int64_t rows, int64_t dim) {
    const int64_t n = rows * dim;
    float *x = malloc(sizeof(float) * n), *w = malloc(sizeof(float) * dim), *ref = malloc(sizeof(float) * n);
    const size_t es = bf16 ? 2 : 4;
    void *dx = dev_alloc((size_t)n * es), *dw = dev_alloc((size_t)dim * es), *dy = dev_alloc((size_t)n * es);
    for (int64_t i = 0; i < n; i++) x[i] = rnd_normal();
    for (int64_t i = 0; i < dim; i++) w[i] = 1.0f + 0.1f * rnd_normal();
    if (bf16) { /* the reference sees the bf16 inputs the kernel sees */
        uint16_t *hx = dx, *hw = dw;
        for (int64_t i = 0; i < n; i++) {
            hx[i] = ltx2_f32_to_bf16(x[i]);
            x[i] = ltx2_bf16_to_f32(hx[i]);
        }
        for (int64_t i = 0; i < dim; i++) {
            hw[i] = ltx2_f32_to_bf16(w[i]);
            w[i] = ltx2_bf16_to_f32(hw[i]);
        }
    } else {
        memcpy(dx, x, sizeof(float) * n);
        memcpy(dw, w, sizeof(float) * dim);
    }
    const float eps = 1e-6f;
    CHECK(ltx2_cpu_rms_norm(ctx, x, ref, rows, dim, w, eps) == LTX2_OK, "cpu rms_norm");
    int rc = ltx2_k_rms_norm(NULL, bf16 ? LTX2_KDT_BF16 : LTX2_KDT_F32, dx, dy, dw, rows, dim, eps);
    CHECK(rc == 0, "ltx2_k_rms_norm (emulated) returned %d: %s", rc, ltx2_emu_last_fault() ? ltx2_emu_last_fault() : "");
    const double atol = bf16 ? BF16_ATOL : ROW_F32_ATOL, rtol = bf16 ? ROW_F32_RTOL + EPS_BF16 : ROW_F32_RTOL;
    int bad = 0;
    double max_err = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float y = bf16 ? ltx2_bf16_to_f32(((uint16_t *)dy)[i]) : ((float *)dy)[i];
        const double e = fabs((double)y - ref[i]);
        if (e > max_err) max_err = e;
        bad += !(e <= atol + rtol * fabs(ref[i]));
    }
    CHECK(bad == 0, "rms_norm %s rows %lld dim %lld: %d of %lld outside tolerance (max err %g)", bf16 ? "bf16" : "f32",
          (long long)rows, (long long)dim, bad, (long long)n, max_err);
    free(x);
    free(w);
    free(ref);
    free(dx);
    free(dw);
    free(dy);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    test_rename_list();
    test_block_sum();
    test_mma(0);
    test_mma(1);
    test_cp_async();
    test_faults();
    test_pipeline_races();
    test_mbarrier();
    test_tma();
    test_wgmma(0);
    test_wgmma(1);
    test_grid();
    test_dyn_smem();
    test_speed();
    for (int bf = 0; bf < 2; bf++) {
        test_rms_norm(ctx, bf, 37, 96);   /* warp per row, vector path, a partial last block */
        test_rms_norm(ctx, bf, 3, 2056);  /* block per row */
        test_rms_norm(ctx, bf, 5, 33);    /* scalar path */
    }
    ltx2_context_free(ctx);
    return test_finish();
}
