/* CPU conv3d over NDHWC fp32 (see cpu_conv3d.h) as an implicit GEMM: M = output voxels, N = c_out,
 * K = taps x c_in. Padding is an index remap (temporal clamp, spatial zero/reflect) applied while
 * packing the GEMM's A micro-panels straight from the input (no im2col buffer), then a
 * register-tiled FMA microkernel against B panels packed from the [kt,kh,kw,c_in][c_out] weight.
 * The loop nest and blocking (KC, MC, NR/MR, first-panel bias, later panels accumulate) are those
 * of ltx2_cpu_gemm, so results equal the old im2col + GEMM path bit for bit. 1x1x1 stride-1 convs
 * call ltx2_cpu_gemm on the input directly. OpenMP over (M block x N slice) tasks. */
#include "cpu/cpu_conv3d.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_ops.h"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

/* Below this many floats the weight repack runs on one thread (fork/join costs more). */
#define CONV3D_PARALLEL_MIN_FLOATS ((int64_t)1 << 15)

/* Register tile and blocking: identical to src/cpu/gemm.c (see the reasoning there) so the
 * summation order, and therefore every output bit, matches ltx2_cpu_gemm on an im2col matrix. */
#if defined(__AVX512F__)
#define CONV_MR 12
#define CONV_NR 32
#elif defined(__AVX2__) && defined(__FMA__)
#define CONV_MR 6
#define CONV_NR 16
#else
#define CONV_MR 4
#define CONV_NR 16
#endif
#define CONV_KC 256
#define CONV_MC_MAX 240
#define CONV_NC 4096
#define CONV_ALIGN 64
static void pad_amounts(const ltx2_conv3d_desc *d, int64_t *front, int64_t *back) {
    switch (d->tpad) {
    case LTX2_CONV_TPAD_CAUSAL: *front = d->kt - 1; *back = 0; break;
    case LTX2_CONV_TPAD_SYMMETRIC: *front = (d->kt - 1) / 2; *back = (d->kt - 1) / 2; break;
    default: *front = 0; *back = 0; break;
    }
}

ltx2_status ltx2_cpu_conv3d_check(ltx2_context *ctx, const ltx2_conv3d_desc *d) {
    if (!d) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: NULL descriptor");
    if (d->c_in < 1 || d->c_out < 1 || d->kt < 1 || d->kh < 1 || d->kw < 1 || d->st < 1 ||
        d->sh < 1 || d->sw < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "conv3d: sizes must be >= 1 (c_in %lld c_out %lld kernel %lldx%lldx%lld "
                          "stride %lldx%lldx%lld)",
                          (long long)d->c_in, (long long)d->c_out, (long long)d->kt, (long long)d->kh,
                          (long long)d->kw, (long long)d->st, (long long)d->sh, (long long)d->sw);
    if (d->kh % 2 == 0 || d->kw % 2 == 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "conv3d: spatial kernel %lldx%lld must be odd (padding is k/2 per side)",
                          (long long)d->kh, (long long)d->kw);
    if (d->tpad != LTX2_CONV_TPAD_CAUSAL && d->tpad != LTX2_CONV_TPAD_SYMMETRIC &&
        d->tpad != LTX2_CONV_TPAD_NONE)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: unknown temporal padding %d", (int)d->tpad);
    if (d->spad != LTX2_CONV_SPAD_ZEROS && d->spad != LTX2_CONV_SPAD_REFLECT)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: unknown spatial padding %d", (int)d->spad);
    return LTX2_OK;
}

ltx2_status ltx2_cpu_conv3d_out_shape(ltx2_context *ctx, const ltx2_conv3d_desc *d, int64_t t,
                                      int64_t h, int64_t w, int64_t out_thw[3]) {
    LTX2_TRY(ltx2_cpu_conv3d_check(ctx, d));
    if (t < 1 || h < 1 || w < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "conv3d: empty input %lldx%lldx%lld (T x H x W)",
                          (long long)t, (long long)h, (long long)w);
    int64_t front, back;
    pad_amounts(d, &front, &back);
    int64_t ph = d->kh / 2, pw = d->kw / 2;
    if (d->spad == LTX2_CONV_SPAD_REFLECT && (ph >= h || pw >= w))
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "conv3d: reflect padding %lld/%lld needs H and W larger than it, got H %lld W %lld",
                          (long long)ph, (long long)pw, (long long)h, (long long)w);
    int64_t tp = t + front + back, hp = h + 2 * ph, wp = w + 2 * pw;
    if (tp < d->kt || hp < d->kh || wp < d->kw)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "conv3d: padded input %lldx%lldx%lld smaller than kernel %lldx%lldx%lld",
                          (long long)tp, (long long)hp, (long long)wp, (long long)d->kt,
                          (long long)d->kh, (long long)d->kw);
    out_thw[0] = (tp - d->kt) / d->st + 1;
    out_thw[1] = (hp - d->kh) / d->sh + 1;
    out_thw[2] = (wp - d->kw) / d->sw + 1;
    return LTX2_OK;
}

int64_t ltx2_cpu_conv3d_packed_numel(const ltx2_conv3d_desc *d) {
    return d->kt * d->kh * d->kw * d->c_in * d->c_out;
}

ltx2_status ltx2_cpu_conv3d_pack_weight(ltx2_context *ctx, const ltx2_conv3d_desc *d,
                                        const float *w_oikkk, float *w_packed) {
    LTX2_TRY(ltx2_cpu_conv3d_check(ctx, d));
    if (!w_oikkk || !w_packed)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d pack: NULL weight pointer");
    const int64_t taps = d->kt * d->kh * d->kw, ci = d->c_in, co = d->c_out;
#pragma omp parallel for schedule(static) if (taps * ci * co > CONV3D_PARALLEL_MIN_FLOATS)
    for (int64_t o = 0; o < co; o++)
        for (int64_t i = 0; i < ci; i++)
            for (int64_t k = 0; k < taps; k++)
                w_packed[(k * ci + i) * co + o] = w_oikkk[(o * ci + i) * taps + k];
    return LTX2_OK;
}

/* Source index of padded spatial position p (already minus the pad) or -1 for a zero. */
static inline int64_t spatial_src(int64_t i, int64_t size, ltx2_conv_spad mode) {
    if (i >= 0 && i < size) return i;
    if (mode == LTX2_CONV_SPAD_ZEROS) return -1;
    return i < 0 ? -i : 2 * (size - 1) - i;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/* tile[MR][NR] = sum_k ap[k][0..MR) (outer) bp[k][0..NR). */
#if defined(__AVX512F__)
__attribute__((noinline)) static void conv_ukernel(int64_t kc, const float *restrict ap, const float *restrict bp,
                                                   float *restrict tile) {
    __m512 c[CONV_MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < CONV_MR; i++) c[i][0] = c[i][1] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        const __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 12
        for (int i = 0; i < CONV_MR; i++) {
            const __m512 a = _mm512_set1_ps(ap[i]);
            c[i][0] = _mm512_fmadd_ps(a, b0, c[i][0]);
            c[i][1] = _mm512_fmadd_ps(a, b1, c[i][1]);
        }
        ap += CONV_MR;
        bp += CONV_NR;
    }
#pragma GCC unroll 12
    for (int i = 0; i < CONV_MR; i++) {
        _mm512_store_ps(tile + i * CONV_NR, c[i][0]);
        _mm512_store_ps(tile + i * CONV_NR + 16, c[i][1]);
    }
}
#elif defined(__AVX2__) && defined(__FMA__)
__attribute__((noinline)) static void conv_ukernel(int64_t kc, const float *restrict ap, const float *restrict bp,
                                                   float *restrict tile) {
    __m256 c[CONV_MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < CONV_MR; i++) c[i][0] = c[i][1] = _mm256_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        const __m256 b0 = _mm256_load_ps(bp), b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 6
        for (int i = 0; i < CONV_MR; i++) {
            const __m256 a = _mm256_broadcast_ss(ap + i);
            c[i][0] = _mm256_fmadd_ps(a, b0, c[i][0]);
            c[i][1] = _mm256_fmadd_ps(a, b1, c[i][1]);
        }
        ap += CONV_MR;
        bp += CONV_NR;
    }
#pragma GCC unroll 6
    for (int i = 0; i < CONV_MR; i++) {
        _mm256_store_ps(tile + i * CONV_NR, c[i][0]);
        _mm256_store_ps(tile + i * CONV_NR + 8, c[i][1]);
    }
}
#else
__attribute__((noinline)) static void conv_ukernel(int64_t kc, const float *restrict ap, const float *restrict bp,
                                                   float *restrict tile) {
    float c[CONV_MR][CONV_NR];
    memset(c, 0, sizeof(c));
    for (int64_t k = 0; k < kc; k++) {
        for (int i = 0; i < CONV_MR; i++)
            for (int j = 0; j < CONV_NR; j++) c[i][j] += ap[i] * bp[j];
        ap += CONV_MR;
        bp += CONV_NR;
    }
    memcpy(tile, c, sizeof(c));
}
#endif

/* Geometry shared by the packers. */
typedef struct conv_geom {
    const ltx2_conv3d_desc *d;
    const float *x;
    int64_t t, h, w;        /* input extent */
    int64_t to, ho, wo;     /* output extent */
    int64_t front, ph, pw;  /* temporal front pad, spatial pads */
} conv_geom;

/* Input voxel offset (in floats, channel 0) read by output row m at tap (a, bb, c), or -1 for a
 * zero (spatial zero padding). Time is clamped (replicated edge frames). */
static inline int64_t tap_src(const conv_geom *g, int64_t m, int64_t tap) {
    const ltx2_conv3d_desc *d = g->d;
    const int64_t c = tap % d->kw, bb = (tap / d->kw) % d->kh, a = tap / (d->kw * d->kh);
    const int64_t xo = m % g->wo, yo = (m / g->wo) % g->ho, tt = (m / (g->wo * g->ho)) % g->to;
    const int64_t b = m / (g->wo * g->ho * g->to);
    int64_t ts = tt * d->st + a - g->front;
    ts = ts < 0 ? 0 : (ts >= g->t ? g->t - 1 : ts);
    const int64_t hs = spatial_src(yo * d->sh + bb - g->ph, g->h, d->spad);
    const int64_t ws = spatial_src(xo * d->sw + c - g->pw, g->w, d->spad);
    if (hs < 0 || ws < 0) return -1;
    return (((b * g->t + ts) * g->h + hs) * g->w + ws) * d->c_in;
}

/* Packs the implicit A rows [i0, i0+mc) x K columns [p0, p0+kc) into MR-row micro-panels,
 * k-major (dst[k*MR + i]), zero-padded rows, reading input patches directly. */
static void pack_a_implicit(float *restrict dst, const conv_geom *g, int64_t i0, int64_t mc, int64_t m_total,
                            int64_t p0, int64_t kc) {
    const int64_t ci = g->d->c_in;
    for (int64_t ir = 0; ir < mc; ir += CONV_MR) {
        for (int64_t i = 0; i < CONV_MR; i++) {
            const int64_t m = i0 + ir + i;
            float *col = dst + i;
            if (ir + i >= mc || m >= m_total) {
                for (int64_t k = 0; k < kc; k++) col[k * CONV_MR] = 0.0f;
                continue;
            }
            int64_t k = 0;
            while (k < kc) {
                const int64_t kk = p0 + k, tap = kk / ci, c0 = kk % ci;
                const int64_t seg = ci - c0 < kc - k ? ci - c0 : kc - k;
                const int64_t src = tap_src(g, m, tap);
                if (src < 0) {
                    for (int64_t q = 0; q < seg; q++) col[(k + q) * CONV_MR] = 0.0f;
                } else {
                    const float *s = g->x + src + c0;
                    for (int64_t q = 0; q < seg; q++) col[(k + q) * CONV_MR] = s[q];
                }
                k += seg;
            }
        }
        dst += kc * CONV_MR;
    }
}

/* Packs B micro-panel (columns j0 .. j0+nr, depth p0 .. p0+kc) of the [K][N] weight, zero-padded. */
static void pack_b_panel(float *restrict dst, const float *restrict B, int64_t ldb, int64_t j0, int64_t nr,
                         int64_t p0, int64_t kc) {
    for (int64_t k = 0; k < kc; k++) {
        const float *src = B + (p0 + k) * ldb + j0;
        float *d = dst + k * CONV_NR;
        int64_t j = 0;
        for (; j < nr; j++) d[j] = src[j];
        for (; j < CONV_NR; j++) d[j] = 0.0f;
    }
}

/* First K panel writes tile + bias, later panels accumulate (as ltx2_cpu_gemm with alpha 1, beta 0). */
static void store_tile(const float *restrict tile, float *restrict C, int64_t ldc, int64_t mr, int64_t nr,
                       const float *restrict bias, int first) {
    for (int64_t i = 0; i < mr; i++) {
        const float *t = tile + i * CONV_NR;
        float *c = C + i * ldc;
        if (!first) {
            for (int64_t j = 0; j < nr; j++) c[j] += 1.0f * t[j];
        } else if (bias) {
            for (int64_t j = 0; j < nr; j++) c[j] = 1.0f * t[j] + bias[j];
        } else {
            for (int64_t j = 0; j < nr; j++) c[j] = 1.0f * t[j];
        }
    }
}

ltx2_status ltx2_cpu_conv3d(ltx2_context *ctx, const ltx2_conv3d_desc *d, const float *x,
                            int64_t n, int64_t t, int64_t h, int64_t w, const float *w_packed,
                            const float *bias, float *y) {
    int64_t o[3];
    LTX2_TRY(ltx2_cpu_conv3d_out_shape(ctx, d, t, h, w, o));
    if (!x || !w_packed || !y)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "conv3d: NULL input, weight or output");
    if (n < 1) return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "conv3d: batch %lld < 1", (long long)n);
    const int64_t co = d->c_out;
    const int64_t M = n * o[0] * o[1] * o[2], N = co, K = d->kt * d->kh * d->kw * d->c_in;

    if (d->kt == 1 && d->kh == 1 && d->kw == 1 && d->st == 1 && d->sh == 1 && d->sw == 1)
        return ltx2_cpu_gemm(ctx, M, co, d->c_in, 1.0f, x, d->c_in, w_packed, co, LTX2_B_KN, 0.0f, y, co, bias);

    int64_t front, back;
    pad_amounts(d, &front, &back);
    (void)back;
    const conv_geom g = {.d = d, .x = x, .t = t, .h = h, .w = w, .to = o[0], .ho = o[1], .wo = o[2],
                         .front = front, .ph = d->kh / 2, .pw = d->kw / 2};

    int nthreads = omp_get_max_threads();
    if (nthreads < 1) nthreads = 1;
    /* Same M / N split as ltx2_cpu_gemm (balanced M blocks, N slices when blocks < threads). */
    int64_t n_mb = ceil_div(M, CONV_MC_MAX);
    if (n_mb >= nthreads) n_mb = round_up(n_mb, nthreads);
    const int64_t mc_blk = round_up(ceil_div(M, n_mb), CONV_MR);
    n_mb = ceil_div(M, mc_blk);
    const int64_t n_ns = n_mb >= nthreads ? 1 : ceil_div(nthreads, n_mb);
    const int64_t nc_max = N < CONV_NC ? round_up(N, CONV_NR) : CONV_NC;
    const int64_t kc_max = K < CONV_KC ? K : CONV_KC;
    const size_t b_bytes = (size_t)round_up(kc_max * nc_max * (int64_t)sizeof(float), CONV_ALIGN);
    const size_t a_bytes = (size_t)round_up(kc_max * mc_blk * (int64_t)sizeof(float), CONV_ALIGN);
    float *bpack = aligned_alloc(CONV_ALIGN, b_bytes);
    float *apack = aligned_alloc(CONV_ALIGN, a_bytes * (size_t)nthreads);
    if (!bpack || !apack) {
        free(bpack);
        free(apack);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "conv3d: cannot allocate %zu bytes of packing buffers",
                          b_bytes + a_bytes * (size_t)nthreads);
    }

#pragma omp parallel num_threads(nthreads)
    {
        float *ap = apack + (size_t)omp_get_thread_num() * (a_bytes / sizeof(float));
        _Alignas(CONV_ALIGN) float tile[CONV_MR * CONV_NR];
        for (int64_t jc = 0; jc < N; jc += CONV_NC) {
            const int64_t nc = N - jc < CONV_NC ? N - jc : CONV_NC, n_np = ceil_div(nc, CONV_NR);
            for (int64_t pc = 0; pc < K; pc += CONV_KC) {
                const int64_t kc = K - pc < CONV_KC ? K - pc : CONV_KC;
#pragma omp for schedule(static)
                for (int64_t p = 0; p < n_np; p++) {
                    const int64_t j0 = p * CONV_NR, nr = nc - j0 < CONV_NR ? nc - j0 : CONV_NR;
                    pack_b_panel(bpack + p * kc * CONV_NR, w_packed, co, jc + j0, nr, pc, kc);
                }
#pragma omp for schedule(static)
                for (int64_t tk = 0; tk < n_mb * n_ns; tk++) {
                    const int64_t ib = tk / n_ns, js = tk % n_ns, i0 = ib * mc_blk;
                    const int64_t mc = M - i0 < mc_blk ? M - i0 : mc_blk;
                    const int64_t p_lo = js * n_np / n_ns, p_hi = (js + 1) * n_np / n_ns;
                    if (p_lo == p_hi) continue;
                    pack_a_implicit(ap, &g, i0, mc, M, pc, kc);
                    for (int64_t p = p_lo; p < p_hi; p++) {
                        const int64_t j0 = p * CONV_NR, nr = nc - j0 < CONV_NR ? nc - j0 : CONV_NR;
                        const float *bp = bpack + p * kc * CONV_NR;
                        for (int64_t ir = 0; ir < mc; ir += CONV_MR) {
                            const int64_t mr = mc - ir < CONV_MR ? mc - ir : CONV_MR;
                            conv_ukernel(kc, ap + ir * kc, bp, tile);
                            store_tile(tile, y + (i0 + ir) * co + jc + j0, co, mr, nr, bias ? bias + jc + j0 : NULL,
                                       pc == 0);
                        }
                    }
                }
            }
        }
    }
    free(bpack);
    free(apack);
    return LTX2_OK;
}
