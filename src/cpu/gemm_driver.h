/* The blocked fp32 GEMM driver shared by ltx2_cpu_gemm and the implicit-GEMM conv3d: a BLIS-style
 * loop nest (NC -> KC -> MC -> NR -> MR) over packed panels with a register-tile microkernel. The
 * operands are only ever seen through two packers, so a convolution can pack its A panels straight
 * from input patches while using exactly the same blocking, kernel and summation order. */
#ifndef LTX2_CPU_GEMM_DRIVER_H
#define LTX2_CPU_GEMM_DRIVER_H

#include <stdint.h>

#include "core/context.h"

/* Register tile MR x NR. AVX-512 has 32 zmm registers: 12 rows x 2 vectors = 24 accumulators,
 * plus 2 B vectors and a broadcast A value, leaves room without spills. AVX2 has 16 ymm
 * registers: 6 x 2 = 12 accumulators + 3. The fallback keeps a 4 x 16 tile GCC vectorises. */
#if defined(__AVX512F__)
#define LTX2_GEMM_MR 12
#define LTX2_GEMM_NR 32
#elif defined(__AVX2__) && defined(__FMA__)
#define LTX2_GEMM_MR 6
#define LTX2_GEMM_NR 16
#else
#define LTX2_GEMM_MR 4
#define LTX2_GEMM_NR 16
#endif

/* KC: depth of one packed panel. The B micro-panel (KC x NR floats = 32 KB at NR 32) stays in the
 * 48 KB L1d while the MR-row A micro-panels (12 KB) stream past it from L2. */
#define LTX2_GEMM_KC 384
/* MC_MAX: rows of the packed A block (MC x KC floats = 240 KB), sized to sit in a 1-2 MB L2 with
 * room for the streaming B panel; a multiple of every MR above (12, 6, 4). */
#define LTX2_GEMM_MC_MAX 240
/* NC: columns of the packed B panel shared by all threads (KC x NC floats = 4 MB), sized for L3. */
#define LTX2_GEMM_NC 4096
/* Packed buffers are aligned to a cache line (and the widest vector). */
#define LTX2_GEMM_ALIGN 64

/* pack_a: rows [i0, i0+mc) x depth [p0, p0+kc) of A into consecutive MR-row micro-panels, each
 * k-major (dst[k*MR + i]), rows past mc zero. pack_b: columns [j0, j0+nr) x depth [p0, p0+kc) of
 * op(B) into one NR-column micro-panel, k-major (dst[k*NR + j]), columns past nr zero. */
typedef struct ltx2_gemm_packers {
    void (*pack_a)(float *restrict dst, const void *a, int64_t i0, int64_t mc, int64_t p0, int64_t kc);
    void (*pack_b)(float *restrict dst, const void *b, int64_t j0, int64_t nr, int64_t p0, int64_t kc);
    const void *a, *b;
} ltx2_gemm_packers;

/* C[M,N] = alpha * A * op(B) + beta * C + bias[N] through the packers (bias may be NULL; when beta
 * is 0 C is not read). Sizes must be validated by the caller; M, N, K > 0. */
ltx2_status ltx2_cpu_gemm_packed(ltx2_context *ctx, int64_t M, int64_t N, int64_t K, float alpha,
                                 const ltx2_gemm_packers *pk, float beta, float *C, int64_t ldc,
                                 const float *bias);

/* A row-major matrix as the standard packers see it (the bf16-weight packers read p as bf16 bits). */
typedef struct ltx2_gemm_matrix {
    const float *p;
    int64_t ld;
} ltx2_gemm_matrix;

/* The standard pack_b for a [K, N] row-major B (b points to an ltx2_gemm_matrix), shared with the
 * convolution's packed weights. */
void ltx2_gemm_pack_b_kn(float *restrict dst, const void *b, int64_t j0, int64_t nr, int64_t p0, int64_t kc);

#endif
