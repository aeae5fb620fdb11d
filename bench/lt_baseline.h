/* The benches' GEMM baseline: a bare cuBLASLt matmul y[M,N] = x[M,K] w[N,K]^T (row-major, fp32
 * accumulation, no epilogue), the library's first heuristic choice for the shape with a workspace
 * and nothing else asked of it, on a CUDA backend's stream. The engine's own GEMM
 * (src/backend/backend_cuda.c) and the GEMM-rate ceilings are timed against it; the engine has no
 * use for it, so it lives here. */
#ifndef LTX2_BENCH_LT_BASELINE_H
#define LTX2_BENCH_LT_BASELINE_H

#include <stdint.h>

#include "backend/backend.h"

typedef struct bench_lt bench_lt;

/* A cuBLASLt handle and workspace for be's device; LTX2_ERR_UNSUPPORTED without a CUDA backend (or
 * in a build without CUDA). */
ltx2_status bench_lt_create(const ltx2_backend *be, ltx2_context *ctx, bench_lt **out);
void bench_lt_free(bench_lt *b);
/* Plans the matmul (descriptors + heuristic) and launches it iters times on be's stream without
 * waiting. dt: LTX2_F32 or LTX2_BF16 for x, w and y. */
ltx2_status bench_lt_gemm(bench_lt *b, ltx2_context *ctx, ltx2_dtype dt, int64_t M, int64_t N, int64_t K,
                          const void *x, const void *w, void *y, int iters);

#endif
