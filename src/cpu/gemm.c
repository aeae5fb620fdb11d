/* Cache-blocked fp32 GEMM for the CPU reference path: a BLIS-style loop nest (NC -> KC -> MC ->
 * NR -> MR) over packed panels, an AVX-512 / AVX2 register-tile microkernel with a portable C
 * fallback, and OpenMP over (M block x N slice) tasks. */
#include "cpu/cpu_ops.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

/* Register tile MR x NR. AVX-512 has 32 zmm registers: 12 rows x 2 vectors = 24 accumulators,
 * plus 2 B vectors and a broadcast A value, leaves room without spills. AVX2 has 16 ymm
 * registers: 6 x 2 = 12 accumulators + 3. The fallback keeps a 4 x 16 tile GCC vectorises. */
#if defined(__AVX512F__)
#define GEMM_MR 12
#define GEMM_NR 32
#elif defined(__AVX2__) && defined(__FMA__)
#define GEMM_MR 6
#define GEMM_NR 16
#else
#define GEMM_MR 4
#define GEMM_NR 16
#endif

/* KC: depth of one packed panel. The B micro-panel (KC x NR floats = 32 KB at NR 32) stays in the
 * 48 KB L1d while the MR-row A micro-panels (12 KB) stream past it from L2. */
#define GEMM_KC 256
/* MC_MAX: rows of the packed A block (MC x KC floats = 240 KB), sized to sit in a 1-2 MB L2 with
 * room for the streaming B panel; a multiple of every MR above (12, 6, 4). */
#define GEMM_MC_MAX 240
/* NC: columns of the packed B panel shared by all threads (KC x NC floats = 4 MB), sized for L3. */
#define GEMM_NC 4096
/* Packed buffers are aligned to a cache line (and the widest vector). */
#define GEMM_ALIGN 64

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/* tile[MR][NR] = sum_k ap[k][0..MR) (outer) bp[k][0..NR). */
#if defined(__AVX512F__)
__attribute__((noinline)) static void gemm_ukernel(int64_t kc, const float *restrict ap, const float *restrict bp,
                         float *restrict tile) {
    __m512 c[GEMM_MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < GEMM_MR; i++) c[i][0] = c[i][1] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_load_ps(bp);
        __m512 b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 12
        for (int i = 0; i < GEMM_MR; i++) {
            __m512 a = _mm512_set1_ps(ap[i]);
            c[i][0] = _mm512_fmadd_ps(a, b0, c[i][0]);
            c[i][1] = _mm512_fmadd_ps(a, b1, c[i][1]);
        }
        ap += GEMM_MR;
        bp += GEMM_NR;
    }
#pragma GCC unroll 12
    for (int i = 0; i < GEMM_MR; i++) {
        _mm512_store_ps(tile + i * GEMM_NR, c[i][0]);
        _mm512_store_ps(tile + i * GEMM_NR + 16, c[i][1]);
    }
}
#elif defined(__AVX2__) && defined(__FMA__)
__attribute__((noinline)) static void gemm_ukernel(int64_t kc, const float *restrict ap, const float *restrict bp,
                         float *restrict tile) {
    __m256 c[GEMM_MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < GEMM_MR; i++) c[i][0] = c[i][1] = _mm256_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_load_ps(bp);
        __m256 b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 6
        for (int i = 0; i < GEMM_MR; i++) {
            __m256 a = _mm256_broadcast_ss(ap + i);
            c[i][0] = _mm256_fmadd_ps(a, b0, c[i][0]);
            c[i][1] = _mm256_fmadd_ps(a, b1, c[i][1]);
        }
        ap += GEMM_MR;
        bp += GEMM_NR;
    }
#pragma GCC unroll 6
    for (int i = 0; i < GEMM_MR; i++) {
        _mm256_store_ps(tile + i * GEMM_NR, c[i][0]);
        _mm256_store_ps(tile + i * GEMM_NR + 8, c[i][1]);
    }
}
#else
__attribute__((noinline)) static void gemm_ukernel(int64_t kc, const float *restrict ap, const float *restrict bp,
                         float *restrict tile) {
    float c[GEMM_MR][GEMM_NR];
    memset(c, 0, sizeof(c));
    for (int64_t k = 0; k < kc; k++) {
        for (int i = 0; i < GEMM_MR; i++) {
            float a = ap[i];
            for (int j = 0; j < GEMM_NR; j++) c[i][j] += a * bp[j];
        }
        ap += GEMM_MR;
        bp += GEMM_NR;
    }
    memcpy(tile, c, sizeof(c));
}
#endif

/* Packs rows [i0, i0+mc) x cols [p0, p0+kc) of A into MR-row micro-panels, k-major, zero-padded. */
static void pack_a(float *restrict dst, const float *restrict A, int64_t lda, int64_t i0,
                   int64_t mc, int64_t p0, int64_t kc) {
    for (int64_t ir = 0; ir < mc; ir += GEMM_MR) {
        int64_t mr = mc - ir < GEMM_MR ? mc - ir : GEMM_MR;
        for (int64_t i = 0; i < GEMM_MR; i++) {
            if (i < mr) {
                const float *src = A + (i0 + ir + i) * lda + p0;
                for (int64_t k = 0; k < kc; k++) dst[k * GEMM_MR + i] = src[k];
            } else {
                for (int64_t k = 0; k < kc; k++) dst[k * GEMM_MR + i] = 0.0f;
            }
        }
        dst += kc * GEMM_MR;
    }
}

/* Packs micro-panel p (columns j0 .. j0+NR of op(B), depth p0 .. p0+kc) k-major, zero-padded. */
static void pack_b_panel(float *restrict dst, const float *restrict B, int64_t ldb,
                         ltx2_b_layout layout, int64_t j0, int64_t nr, int64_t p0, int64_t kc) {
    if (layout == LTX2_B_NK) {
        for (int64_t j = 0; j < GEMM_NR; j++) {
            if (j < nr) {
                const float *src = B + (j0 + j) * ldb + p0;
                for (int64_t k = 0; k < kc; k++) dst[k * GEMM_NR + j] = src[k];
            } else {
                for (int64_t k = 0; k < kc; k++) dst[k * GEMM_NR + j] = 0.0f;
            }
        }
    } else {
        for (int64_t k = 0; k < kc; k++) {
            const float *src = B + (p0 + k) * ldb + j0;
            float *d = dst + k * GEMM_NR;
            int64_t j = 0;
            for (; j < nr; j++) d[j] = src[j];
            for (; j < GEMM_NR; j++) d[j] = 0.0f;
        }
    }
}

/* Writes an MR x NR tile into C. On the first K panel it applies beta and the bias; later panels
 * accumulate into what the first one wrote. */
static void store_tile(const float *restrict tile, float *restrict C, int64_t ldc, int64_t mr,
                       int64_t nr, float alpha, float beta, const float *restrict bias,
                       int first) {
    for (int64_t i = 0; i < mr; i++) {
        const float *t = tile + i * GEMM_NR;
        float *c = C + i * ldc;
        if (!first) {
            for (int64_t j = 0; j < nr; j++) c[j] += alpha * t[j];
        } else if (beta == 0.0f) {
            if (bias)
                for (int64_t j = 0; j < nr; j++) c[j] = alpha * t[j] + bias[j];
            else
                for (int64_t j = 0; j < nr; j++) c[j] = alpha * t[j];
        } else {
            if (bias)
                for (int64_t j = 0; j < nr; j++) c[j] = alpha * t[j] + beta * c[j] + bias[j];
            else
                for (int64_t j = 0; j < nr; j++) c[j] = alpha * t[j] + beta * c[j];
        }
    }
}

/* C = beta*C + bias, for K == 0 or alpha == 0 (no product to add). */
static void gemm_scale_only(int64_t M, int64_t N, float beta, float *C, int64_t ldc,
                            const float *bias) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        for (int64_t j = 0; j < N; j++) {
            float v = beta == 0.0f ? 0.0f : beta * c[j];
            c[j] = v + (bias ? bias[j] : 0.0f);
        }
    }
}

ltx2_status ltx2_cpu_gemm(ltx2_context *ctx, int64_t M, int64_t N, int64_t K, float alpha,
                          const float *A, int64_t lda, const float *B, int64_t ldb,
                          ltx2_b_layout b_layout, float beta, float *C, int64_t ldc,
                          const float *bias) {
    if (M < 0 || N < 0 || K < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "cpu gemm: negative size M=%lld N=%lld K=%lld",
                          (long long)M, (long long)N, (long long)K);
    if (b_layout != LTX2_B_NK && b_layout != LTX2_B_KN)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu gemm: unknown B layout %d", (int)b_layout);
    int64_t ldb_min = b_layout == LTX2_B_NK ? K : N;
    if (lda < K || ldb < ldb_min || ldc < N)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "cpu gemm: leading dims too small: lda=%lld (need >= %lld), ldb=%lld "
                          "(need >= %lld), ldc=%lld (need >= %lld)",
                          (long long)lda, (long long)K, (long long)ldb, (long long)ldb_min,
                          (long long)ldc, (long long)N);
    if (M == 0 || N == 0) return LTX2_OK;
    if (!C || (K > 0 && (!A || !B)))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu gemm: NULL operand (A=%p B=%p C=%p)",
                          (const void *)A, (const void *)B, (void *)C);
    if (K == 0 || alpha == 0.0f) {
        gemm_scale_only(M, N, beta, C, ldc, bias);
        return LTX2_OK;
    }

    int nthreads = omp_get_max_threads();
    if (nthreads < 1) nthreads = 1;

    /* Split M into blocks whose count is a multiple of the thread count (balanced), and when
     * there are fewer M blocks than threads also split each N panel into slices. */
    int64_t n_mb = ceil_div(M, GEMM_MC_MAX);
    if (n_mb >= nthreads) n_mb = round_up(n_mb, nthreads);
    int64_t mc_blk = round_up(ceil_div(M, n_mb), GEMM_MR);
    n_mb = ceil_div(M, mc_blk);
    int64_t n_ns = n_mb >= nthreads ? 1 : ceil_div(nthreads, n_mb);

    int64_t nc_max = N < GEMM_NC ? round_up(N, GEMM_NR) : GEMM_NC;
    int64_t kc_max = K < GEMM_KC ? K : GEMM_KC;
    size_t b_bytes = (size_t)(kc_max * nc_max) * sizeof(float);
    size_t a_bytes = (size_t)(kc_max * mc_blk) * sizeof(float);
    b_bytes = (size_t)round_up((int64_t)b_bytes, GEMM_ALIGN);
    a_bytes = (size_t)round_up((int64_t)a_bytes, GEMM_ALIGN);
    float *bpack = aligned_alloc(GEMM_ALIGN, b_bytes);
    float *apack = aligned_alloc(GEMM_ALIGN, a_bytes * (size_t)nthreads);
    if (!bpack || !apack) {
        free(bpack);
        free(apack);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu gemm: cannot allocate %zu bytes of packing buffers",
                          b_bytes + a_bytes * (size_t)nthreads);
    }

#pragma omp parallel num_threads(nthreads)
    {
        float *ap = apack + (size_t)omp_get_thread_num() * (a_bytes / sizeof(float));
        _Alignas(GEMM_ALIGN) float tile[GEMM_MR * GEMM_NR];
        for (int64_t jc = 0; jc < N; jc += GEMM_NC) {
            int64_t nc = N - jc < GEMM_NC ? N - jc : GEMM_NC;
            int64_t n_np = ceil_div(nc, GEMM_NR);
            for (int64_t pc = 0; pc < K; pc += GEMM_KC) {
                int64_t kc = K - pc < GEMM_KC ? K - pc : GEMM_KC;
#pragma omp for schedule(static)
                for (int64_t p = 0; p < n_np; p++) {
                    int64_t j0 = p * GEMM_NR;
                    int64_t nr = nc - j0 < GEMM_NR ? nc - j0 : GEMM_NR;
                    pack_b_panel(bpack + p * kc * GEMM_NR, B, ldb, b_layout, jc + j0, nr, pc, kc);
                }
                /* implicit barrier: the B panel is complete */
#pragma omp for schedule(static)
                for (int64_t t = 0; t < n_mb * n_ns; t++) {
                    int64_t ib = t / n_ns, js = t % n_ns;
                    int64_t i0 = ib * mc_blk;
                    int64_t mc = M - i0 < mc_blk ? M - i0 : mc_blk;
                    int64_t p_lo = js * n_np / n_ns, p_hi = (js + 1) * n_np / n_ns;
                    if (p_lo == p_hi) continue;
                    pack_a(ap, A, lda, i0, mc, pc, kc);
                    for (int64_t p = p_lo; p < p_hi; p++) {
                        int64_t j0 = p * GEMM_NR;
                        int64_t nr = nc - j0 < GEMM_NR ? nc - j0 : GEMM_NR;
                        const float *bp = bpack + p * kc * GEMM_NR;
                        for (int64_t ir = 0; ir < mc; ir += GEMM_MR) {
                            int64_t mr = mc - ir < GEMM_MR ? mc - ir : GEMM_MR;
                            gemm_ukernel(kc, ap + ir * kc, bp, tile);
                            store_tile(tile, C + (i0 + ir) * ldc + jc + j0, ldc, mr, nr, alpha,
                                       beta, bias ? bias + jc + j0 : NULL, pc == 0);
                        }
                    }
                }
                /* implicit barrier: nobody still reads bpack when the next panel is packed */
            }
        }
    }
    free(bpack);
    free(apack);
    return LTX2_OK;
}
