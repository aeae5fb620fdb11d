/* bench/lt_baseline.h: the bare cuBLASLt baseline, its own handle and workspace. */
#include "lt_baseline.h"

#ifndef LTX2_HAVE_CUDA

ltx2_status bench_lt_create(const ltx2_backend *be, ltx2_context *ctx, bench_lt **out) {
    (void)be;
    *out = NULL;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "cuBLASLt baseline: this build has no CUDA");
}

void bench_lt_free(bench_lt *b) { (void)b; }

ltx2_status bench_lt_gemm(bench_lt *b, ltx2_context *ctx, ltx2_dtype dt, int64_t M, int64_t N, int64_t K,
                          const void *x, const void *w, void *y, int iters) {
    (void)b, (void)dt, (void)M, (void)N, (void)K, (void)x, (void)w, (void)y, (void)iters;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "cuBLASLt baseline: this build has no CUDA");
}

#else

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

/* What cuBLASLt may use for the baseline: as much as the engine's GEMM gets. */
#define BENCH_LT_WORKSPACE_BYTES ((size_t)32 << 20)

struct bench_lt {
    const ltx2_backend *be;
    cublasLtHandle_t lt;
    void *workspace;
    cudaStream_t stream;
};

#define LT_TRY(call)                                                                                             \
    do {                                                                                                         \
        cublasStatus_t s_ = (call);                                                                              \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                       \
            st = LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "cuBLASLt baseline: %s: %s", #call, cublasLtGetStatusString(s_)); \
            goto done;                                                                                           \
        }                                                                                                        \
    } while (0)

ltx2_status bench_lt_create(const ltx2_backend *be, ltx2_context *ctx, bench_lt **out) {
    *out = NULL;
    if (!be || be->device != LTX2_DEVICE_CUDA || !ltx2_backend_cuda_stream(be))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "cuBLASLt baseline needs a CUDA backend");
    bench_lt *b = calloc(1, sizeof *b);
    if (!b) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cuBLASLt baseline");
    ltx2_status st = LTX2_OK;
    b->be = be;
    b->stream = (cudaStream_t)ltx2_backend_cuda_stream(be);
    LT_TRY(cublasLtCreate(&b->lt));
    /* the backend's allocator: on its device */
    st = be->alloc(be, ctx, BENCH_LT_WORKSPACE_BYTES, &b->workspace);
done:
    if (st != LTX2_OK) {
        if (b->workspace) be->free(be, b->workspace);
        if (b->lt) cublasLtDestroy(b->lt);
        free(b);
        return st;
    }
    *out = b;
    return LTX2_OK;
}

void bench_lt_free(bench_lt *b) {
    if (!b) return;
    b->be->free(b->be, b->workspace);
    cublasLtDestroy(b->lt);
    free(b);
}

ltx2_status bench_lt_gemm(bench_lt *b, ltx2_context *ctx, ltx2_dtype dt, int64_t M, int64_t N, int64_t K,
                          const void *x, const void *w, void *y, int iters) {
    if (dt != LTX2_F32 && dt != LTX2_BF16)
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "cuBLASLt baseline: dtype %s (want f32 or bf16)", ltx2_dtype_name(dt));
    if (!b || M <= 0 || N <= 0 || K <= 0 || !x || !w || !y)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cuBLASLt baseline: bad arguments M=%lld N=%lld K=%lld",
                          (long long)M, (long long)N, (long long)K);
    ltx2_status st = LTX2_OK;
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    const cudaDataType_t cdt = dt == LTX2_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    /* column-major y^T [N, M] = (w as [K, N])^T (x as [K, M]): A = w transposed, B = x; pure fp32
     * accumulation (no TF32), as the engine's GEMM */
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT_TRY(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT_TRY(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_TRY(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    LT_TRY(cublasLtMatrixLayoutCreate(&la, cdt, (uint64_t)K, (uint64_t)N, K));
    LT_TRY(cublasLtMatrixLayoutCreate(&lb, cdt, (uint64_t)K, (uint64_t)M, K));
    LT_TRY(cublasLtMatrixLayoutCreate(&lc, cdt, (uint64_t)N, (uint64_t)M, N));
    LT_TRY(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = BENCH_LT_WORKSPACE_BYTES;
    LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t heur;
    memset(&heur, 0, sizeof heur);
    int found = 0;
    LT_TRY(cublasLtMatmulAlgoGetHeuristic(b->lt, op, la, lb, lc, lc, pref, 1, &heur, &found));
    if (found < 1) {
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "cuBLASLt baseline: no algorithm for M=%lld N=%lld K=%lld",
                        (long long)M, (long long)N, (long long)K);
        goto done;
    }
    const float alpha = 1.0f, beta = 0.0f;
    for (int i = 0; i < iters; i++)
        LT_TRY(cublasLtMatmul(b->lt, op, &alpha, w, la, x, lb, &beta, y, lc, y, lc, &heur.algo, b->workspace,
                              BENCH_LT_WORKSPACE_BYTES, b->stream));
done:
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
    return st;
}

#endif
