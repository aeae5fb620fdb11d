/* Cache-blocked fp32 GEMM for the CPU reference path: the blocked driver (gemm_driver.h) with its
 * register-tile microkernel (AVX-512 / AVX2 / portable C), OpenMP over (M block x N slice) tasks,
 * and the standard packers for a row-major A and a B stored [N,K] (torch Linear) or [K,N]. */
#include "cpu/gemm_driver.h"

#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_ops.h"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#define MR LTX2_GEMM_MR
#define NR LTX2_GEMM_NR

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/* How one tile is written into C. The first K panel applies beta and the bias; later panels add
 * alpha * tile to what the first wrote. The operation order per element is the same on every path
 * (vector or scalar, full or partial tile): alpha*t, then + beta*c, then + bias; or c + alpha*t. */
typedef struct tile_out {
    float *C;
    int64_t ldc, mr, nr;
    float alpha, beta;
    const float *bias;
    int first;
} tile_out;

/* Scalar store of an MR x NR tile held in memory (partial tiles, and the portable kernel). */
static void store_tile(const float *restrict tile, const tile_out *o) {
    for (int64_t i = 0; i < o->mr; i++) {
        const float *t = tile + i * NR;
        float *c = o->C + i * o->ldc;
        if (!o->first) {
            for (int64_t j = 0; j < o->nr; j++) c[j] += o->alpha * t[j];
        } else if (o->beta == 0.0f) {
            if (o->bias)
                for (int64_t j = 0; j < o->nr; j++) c[j] = o->alpha * t[j] + o->bias[j];
            else
                for (int64_t j = 0; j < o->nr; j++) c[j] = o->alpha * t[j];
        } else {
            if (o->bias)
                for (int64_t j = 0; j < o->nr; j++) c[j] = o->alpha * t[j] + o->beta * c[j] + o->bias[j];
            else
                for (int64_t j = 0; j < o->nr; j++) c[j] = o->alpha * t[j] + o->beta * c[j];
        }
    }
}

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#if defined(__AVX512F__)
typedef __m512 vf;
#define VW 16
#define V_ZERO() _mm512_setzero_ps()
#define V_LOAD(p) _mm512_load_ps(p)
#define V_LOADU(p) _mm512_loadu_ps(p)
#define V_STORE(p, v) _mm512_store_ps(p, v)
#define V_STOREU(p, v) _mm512_storeu_ps(p, v)
#define V_SET1(x) _mm512_set1_ps(x)
#define V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V_MUL(a, b) _mm512_mul_ps(a, b)
#define V_ADD(a, b) _mm512_add_ps(a, b)
#else
typedef __m256 vf;
#define VW 8
#define V_ZERO() _mm256_setzero_ps()
#define V_LOAD(p) _mm256_load_ps(p)
#define V_LOADU(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_store_ps(p, v)
#define V_STOREU(p, v) _mm256_storeu_ps(p, v)
#define V_SET1(x) _mm256_set1_ps(x)
#define V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define V_MUL(a, b) _mm256_mul_ps(a, b)
#define V_ADD(a, b) _mm256_add_ps(a, b)
#endif

/* Stores accumulator v (columns [j, j+VW) of one row) with the tile_out rule. */
static inline void store_vec(float *c, vf v, const tile_out *o, int64_t j) {
    const vf t = V_MUL(V_SET1(o->alpha), v);
    if (!o->first) {
        V_STOREU(c, V_ADD(V_LOADU(c), t));
    } else {
        vf r = o->beta == 0.0f ? t : V_ADD(t, V_MUL(V_SET1(o->beta), V_LOADU(c)));
        if (o->bias) r = V_ADD(r, V_LOADU(o->bias + j));
        V_STOREU(c, r);
    }
}

/* One MR x NR tile: acc = sum_k ap[k][0..MR) (outer) bp[k][0..NR), then written to C: straight
 * from registers for a full tile, through a small buffer for a partial one. noinline keeps the
 * accumulators from spilling into the caller's frame. */
__attribute__((noinline)) static void gemm_tile(int64_t kc, const float *restrict ap, const float *restrict bp,
                                                const tile_out *o) {
    /* the tile's C lines are far away (a C row is a whole N apart): asked for now, they arrive
     * while the k loop runs instead of stalling the stores after it (~11% of an FFN GEMM) */
    for (int64_t i = 0; i < o->mr; i++) {
        __builtin_prefetch(o->C + i * o->ldc, 1, 3);
        __builtin_prefetch(o->C + i * o->ldc + NR - 1, 1, 3);
    }
    vf c[MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) c[i][0] = c[i][1] = V_ZERO();
    for (int64_t k = 0; k < kc; k++) {
        const vf b0 = V_LOAD(bp), b1 = V_LOAD(bp + VW);
#pragma GCC unroll 12
        for (int i = 0; i < MR; i++) {
            const vf a = V_SET1(ap[i]);
            c[i][0] = V_FMA(a, b0, c[i][0]);
            c[i][1] = V_FMA(a, b1, c[i][1]);
        }
        ap += MR;
        bp += NR;
    }
    if (o->mr == MR && o->nr == NR) {
#pragma GCC unroll 12
        for (int i = 0; i < MR; i++) {
            store_vec(o->C + i * o->ldc, c[i][0], o, 0);
            store_vec(o->C + i * o->ldc + VW, c[i][1], o, VW);
        }
        return;
    }
    _Alignas(LTX2_GEMM_ALIGN) float tile[MR * NR];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) {
        V_STORE(tile + i * NR, c[i][0]);
        V_STORE(tile + i * NR + VW, c[i][1]);
    }
    store_tile(tile, o);
}
#else
__attribute__((noinline)) static void gemm_tile(int64_t kc, const float *restrict ap, const float *restrict bp,
                                                const tile_out *o) {
    float c[MR][NR];
    memset(c, 0, sizeof(c));
    for (int64_t k = 0; k < kc; k++) {
        for (int i = 0; i < MR; i++) {
            float a = ap[i];
            for (int j = 0; j < NR; j++) c[i][j] += a * bp[j];
        }
        ap += MR;
        bp += NR;
    }
    store_tile(&c[0][0], o);
}
#endif

/* Row-major A: k-outer so each micro-panel is written contiguously (12-16 read streams). */
static void pack_a_rows(float *restrict dst, const void *a, int64_t i0, int64_t mc, int64_t p0, int64_t kc) {
    const ltx2_gemm_matrix *A = a;
    for (int64_t ir = 0; ir < mc; ir += MR) {
        const int64_t mr = mc - ir < MR ? mc - ir : MR;
        const float *rows[MR];
        for (int64_t i = 0; i < MR; i++) rows[i] = A->p + (i0 + ir + (i < mr ? i : 0)) * A->ld + p0;
        for (int64_t k = 0; k < kc; k++) {
            float *d = dst + k * MR;
            for (int64_t i = 0; i < mr; i++) d[i] = rows[i][k];
            for (int64_t i = mr; i < MR; i++) d[i] = 0.0f;
        }
        dst += kc * MR;
    }
}

#if defined(__AVX512F__)
/* r[i] (i < 16) holds 16 consecutive values of row i; afterwards r[k] holds element k of every row:
 * a 16 x 16 transpose in three shuffle stages (pairs of floats, pairs of doubles, 128-bit lanes). */
static inline void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) { /* per lane: a0 b0 a1 b1 | a2 b2 a3 b3 */
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int g = 0; g < 16; g += 4) { /* r[g + m], lane L: rows g..g+3 at element 4L + m */
        const __m512d a = _mm512_castps_pd(t[g]), b = _mm512_castps_pd(t[g + 1]);
        const __m512d c = _mm512_castps_pd(t[g + 2]), d = _mm512_castps_pd(t[g + 3]);
        r[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int m = 0; m < 4; m++) { /* element 4L + m of the four row groups -> one row each */
        const __m512 u0 = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x88), u1 = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xDD);
        const __m512 v0 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x88);
        const __m512 v1 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xDD);
        t[m] = _mm512_shuffle_f32x4(u0, v0, 0x88);
        t[8 + m] = _mm512_shuffle_f32x4(u0, v0, 0xDD);
        t[4 + m] = _mm512_shuffle_f32x4(u1, v1, 0x88);
        t[12 + m] = _mm512_shuffle_f32x4(u1, v1, 0xDD);
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
}

/* A full NR-column panel of a [N, K] B (f32, or bf16 bits widened) in 16 x 16 blocks through
 * registers: every load and store a whole cache line, where the scalar packer scatters each value
 * to its own line (it cost ~12% of an FFN-shaped GEMM). Returns the depth packed (a multiple of 16). */
static int64_t pack_b_nk_blocks(float *restrict dst, const ltx2_gemm_matrix *B, bool bf16, int64_t j0, int64_t p0,
                                int64_t kc) {
    int64_t k = 0;
    for (; k + 16 <= kc; k += 16)
        for (int64_t h = 0; h < NR; h += 16) {
            __m512 r[16];
            for (int64_t i = 0; i < 16; i++) {
                const int64_t off = (j0 + h + i) * B->ld + p0 + k;
                if (bf16) {
                    const __m256i v = _mm256_loadu_si256((const __m256i *)((const uint16_t *)B->p + off));
                    r[i] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
                } else {
                    r[i] = _mm512_loadu_ps(B->p + off);
                }
            }
            transpose16(r);
            for (int64_t i = 0; i < 16; i++) _mm512_storeu_ps(dst + (k + i) * NR + h, r[i]);
        }
    return k;
}
#endif

void ltx2_gemm_pack_b_kn(float *restrict dst, const void *b, int64_t j0, int64_t nr, int64_t p0, int64_t kc) {
    const ltx2_gemm_matrix *B = b;
    for (int64_t k = 0; k < kc; k++) {
        const float *src = B->p + (p0 + k) * B->ld + j0;
        float *d = dst + k * NR;
        int64_t j = 0;
        for (; j < nr; j++) d[j] = src[j];
        for (; j < NR; j++) d[j] = 0.0f;
    }
}

/* bf16 weights (a checkpoint's stored dtype) widened while packing: the shift is exact, so the
 * product is bitwise the f32 GEMM of the same values, at half the weight bytes in memory. */
static inline float bf16_bits_to_f32(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* B stored [N, K] (a torch Linear weight; f32, or bf16 bits widened exactly): columns of op(B) are
 * rows of B. Full panels go through pack_b_nk_blocks where AVX-512 has it; the rest row by row: one
 * contiguous read stream, the strided writes landing in the L1-sized panel. */
static void pack_b_nk_of(float *restrict dst, const ltx2_gemm_matrix *B, bool bf16, int64_t j0, int64_t nr, int64_t p0,
                         int64_t kc) {
    int64_t k0 = 0;
#if defined(__AVX512F__)
    if (nr == NR) k0 = pack_b_nk_blocks(dst, B, bf16, j0, p0, kc);
#endif
    for (int64_t j = 0; j < NR; j++) {
        const int64_t row = (j0 + j) * B->ld + p0;
        for (int64_t k = k0; k < kc; k++)
            dst[k * NR + j] = j >= nr ? 0.0f
                              : bf16  ? bf16_bits_to_f32(((const uint16_t *)B->p)[row + k])
                                      : B->p[row + k];
    }
}

static void pack_b_nk(float *restrict dst, const void *b, int64_t j0, int64_t nr, int64_t p0, int64_t kc) {
    pack_b_nk_of(dst, b, false, j0, nr, p0, kc);
}

static void pack_b_nk_bf16(float *restrict dst, const void *b, int64_t j0, int64_t nr, int64_t p0, int64_t kc) {
    pack_b_nk_of(dst, b, true, j0, nr, p0, kc);
}

static void pack_b_kn_bf16(float *restrict dst, const void *b, int64_t j0, int64_t nr, int64_t p0, int64_t kc) {
    const ltx2_gemm_matrix *B = b;
    for (int64_t k = 0; k < kc; k++) {
        const uint16_t *src = (const uint16_t *)B->p + (p0 + k) * B->ld + j0;
        float *d = dst + k * NR;
        int64_t j = 0;
        for (; j < nr; j++) d[j] = bf16_bits_to_f32(src[j]);
        for (; j < NR; j++) d[j] = 0.0f;
    }
}

/* C = beta*C + bias, for K == 0 or alpha == 0 (no product to add). */
static void gemm_scale_only(int64_t M, int64_t N, float beta, float *C, int64_t ldc, const float *bias) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        for (int64_t j = 0; j < N; j++) {
            float v = beta == 0.0f ? 0.0f : beta * c[j];
            c[j] = v + (bias ? bias[j] : 0.0f);
        }
    }
}

ltx2_status ltx2_cpu_gemm_packed(ltx2_context *ctx, int64_t M, int64_t N, int64_t K, float alpha,
                                 const ltx2_gemm_packers *pk, float beta, float *C, int64_t ldc,
                                 const float *bias) {
    int nthreads = omp_get_max_threads();
    if (nthreads < 1) nthreads = 1;

    /* Split M into blocks whose count is a multiple of the thread count (balanced), and when
     * there are fewer M blocks than threads also split each N panel into slices. */
    int64_t n_mb = ceil_div(M, LTX2_GEMM_MC_MAX);
    if (n_mb >= nthreads) n_mb = round_up(n_mb, nthreads);
    const int64_t mc_blk = round_up(ceil_div(M, n_mb), MR);
    n_mb = ceil_div(M, mc_blk);
    const int64_t n_ns = n_mb >= nthreads ? 1 : ceil_div(nthreads, n_mb);

    const int64_t nc_max = N < LTX2_GEMM_NC ? round_up(N, NR) : LTX2_GEMM_NC;
    const int64_t kc_max = K < LTX2_GEMM_KC ? K : LTX2_GEMM_KC;
    const size_t b_bytes = (size_t)round_up(kc_max * nc_max * (int64_t)sizeof(float), LTX2_GEMM_ALIGN);
    const size_t a_bytes = (size_t)round_up(kc_max * mc_blk * (int64_t)sizeof(float), LTX2_GEMM_ALIGN);
    /* the packing buffers: ctx's scratch, kept between calls (not from inside a parallel region,
     * where threads could share one ctx), else allocated for this call */
    const size_t all_bytes = b_bytes + a_bytes * (size_t)nthreads;
    float *scratch = omp_in_parallel() ? NULL : ltx2_ctx_scratch(ctx, all_bytes, LTX2_GEMM_ALIGN);
    float *own = scratch ? NULL : aligned_alloc(LTX2_GEMM_ALIGN, all_bytes);
    if (!scratch && !own)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu gemm: cannot allocate %zu bytes of packing buffers", all_bytes);
    float *bpack = scratch ? scratch : own, *apack = bpack + b_bytes / sizeof(float);

#pragma omp parallel num_threads(nthreads)
    {
        float *ap = apack + (size_t)omp_get_thread_num() * (a_bytes / sizeof(float));
        for (int64_t jc = 0; jc < N; jc += LTX2_GEMM_NC) {
            const int64_t nc = N - jc < LTX2_GEMM_NC ? N - jc : LTX2_GEMM_NC;
            const int64_t n_np = ceil_div(nc, NR);
            for (int64_t pc = 0; pc < K; pc += LTX2_GEMM_KC) {
                const int64_t kc = K - pc < LTX2_GEMM_KC ? K - pc : LTX2_GEMM_KC;
#pragma omp for schedule(static)
                for (int64_t p = 0; p < n_np; p++) {
                    const int64_t j0 = p * NR, nr = nc - j0 < NR ? nc - j0 : NR;
                    pk->pack_b(bpack + p * kc * NR, pk->b, jc + j0, nr, pc, kc);
                }
                /* implicit barrier: the B panel is complete */
#pragma omp for schedule(static)
                for (int64_t t = 0; t < n_mb * n_ns; t++) {
                    const int64_t ib = t / n_ns, js = t % n_ns, i0 = ib * mc_blk;
                    const int64_t mc = M - i0 < mc_blk ? M - i0 : mc_blk;
                    const int64_t p_lo = js * n_np / n_ns, p_hi = (js + 1) * n_np / n_ns;
                    if (p_lo == p_hi) continue;
                    pk->pack_a(ap, pk->a, i0, mc, pc, kc);
                    for (int64_t p = p_lo; p < p_hi; p++) {
                        const int64_t j0 = p * NR, nr = nc - j0 < NR ? nc - j0 : NR;
                        const float *bp = bpack + p * kc * NR;
                        for (int64_t ir = 0; ir < mc; ir += MR) {
                            const tile_out o = {.C = C + (i0 + ir) * ldc + jc + j0, .ldc = ldc,
                                                .mr = mc - ir < MR ? mc - ir : MR, .nr = nr, .alpha = alpha,
                                                .beta = beta, .bias = bias ? bias + jc + j0 : NULL,
                                                .first = pc == 0};
                            gemm_tile(kc, ap + ir * kc, bp, &o);
                        }
                    }
                }
                /* implicit barrier: nobody still reads bpack when the next panel is packed */
            }
        }
    }
    free(own);
    return LTX2_OK;
}

/* A few rows (generation's one token per step): the packed driver would pack all of B for them,
 * reading and writing every weight once more than the product does, which made a decoding step as
 * slow as a 128-token prompt. This path streams B once, in blocks of GEMM_FEW_COLS columns shared
 * by the rows. Every element sees the driver's operations in its order: per KC panel an FMA chain
 * from zero, then stored as tile_out stores it, so the bits are the driver's. */
#define GEMM_FEW_ROWS 8
#define GEMM_FEW_COLS 16
/* the microkernel's multiply-add: fused with the vector kernels, two roundings in the portable one */
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#define FEW_MADD(a, b, c) fmaf(a, b, c)
#else
#define FEW_MADD(a, b, c) ((c) + (a) * (b))
#endif

/* acc[0..nj) over k in [k0, k1): one loop per weight layout and dtype, so each inner loop is plain */
#define FEW_PANEL(LOAD)                                                                   \
    for (int64_t k = k0; k < k1; k++) {                                                   \
        const float av = a[k];                                                            \
        for (int64_t jj = 0; jj < nj; jj++) acc[jj] = FEW_MADD(av, (LOAD), acc[jj]);      \
    }

static void few_panel(const float *a, const void *B, bool bf, bool nk, int64_t ldb, int64_t k0, int64_t k1,
                      int64_t j0, int64_t nj, float *acc) {
    const float *bf32 = B;
    const uint16_t *b16 = B;
    if (nk && !bf) FEW_PANEL(bf32[(j0 + jj) * ldb + k])
    else if (nk) FEW_PANEL(bf16_bits_to_f32(b16[(j0 + jj) * ldb + k]))
    else if (!bf) FEW_PANEL(bf32[k * ldb + j0 + jj])
    else FEW_PANEL(bf16_bits_to_f32(b16[k * ldb + j0 + jj]))
}
#undef FEW_PANEL

static void gemm_few_rows(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda, const void *B,
                          bool bf, bool nk, int64_t ldb, float beta, float *C, int64_t ldc, const float *bias) {
#pragma omp parallel for schedule(static)
    for (int64_t j0 = 0; j0 < N; j0 += GEMM_FEW_COLS) {
        const int64_t nj = N - j0 < GEMM_FEW_COLS ? N - j0 : GEMM_FEW_COLS;
        for (int64_t i = 0; i < M; i++) {
            const float *a = A + i * lda;
            for (int64_t pc = 0; pc < K; pc += LTX2_GEMM_KC) {
                const int64_t kc = K - pc < LTX2_GEMM_KC ? K - pc : LTX2_GEMM_KC;
                float acc[GEMM_FEW_COLS] = {0};
                few_panel(a, B, bf, nk, ldb, pc, pc + kc, j0, nj, acc);
                /* one row: store_tile reads acc[0, nj) alone */
                const tile_out o = {.C = C + i * ldc + j0, .ldc = ldc, .mr = 1, .nr = nj, .alpha = alpha,
                                    .beta = beta, .bias = bias ? bias + j0 : NULL, .first = pc == 0};
                store_tile(acc, &o);
            }
        }
    }
}

ltx2_status ltx2_cpu_gemm_wdt(ltx2_context *ctx, int64_t M, int64_t N, int64_t K, float alpha,
                              const float *A, int64_t lda, const void *B, ltx2_dtype b_dtype, int64_t ldb,
                              ltx2_b_layout b_layout, float beta, float *C, int64_t ldc, const float *bias) {
    if (b_dtype != LTX2_F32 && b_dtype != LTX2_BF16)
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "cpu gemm: weights in %s (f32 or bf16)", ltx2_dtype_name(b_dtype));
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
    const bool bf = b_dtype == LTX2_BF16, nk = b_layout == LTX2_B_NK;
    if (M <= GEMM_FEW_ROWS) {
        gemm_few_rows(M, N, K, alpha, A, lda, B, bf, nk, ldb, beta, C, ldc, bias);
        return LTX2_OK;
    }
    const ltx2_gemm_matrix a = {A, lda}, b = {B, ldb};
    const ltx2_gemm_packers pk = {.pack_a = pack_a_rows,
                                  .pack_b = bf ? (nk ? pack_b_nk_bf16 : pack_b_kn_bf16)
                                               : (nk ? pack_b_nk : ltx2_gemm_pack_b_kn),
                                  .a = &a,
                                  .b = &b};
    return ltx2_cpu_gemm_packed(ctx, M, N, K, alpha, &pk, beta, C, ldc, bias);
}

ltx2_status ltx2_cpu_gemm(ltx2_context *ctx, int64_t M, int64_t N, int64_t K, float alpha,
                          const float *A, int64_t lda, const float *B, int64_t ldb,
                          ltx2_b_layout b_layout, float beta, float *C, int64_t ldc,
                          const float *bias) {
    return ltx2_cpu_gemm_wdt(ctx, M, N, K, alpha, A, lda, B, LTX2_F32, ldb, b_layout, beta, C, ldc, bias);
}
