/* Which cuBLASLt algorithms add the bias / residual after a bf16 rounding? y = x w^T (+bias) (+res) */
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#define CK(x) do { int e_ = (int)(x); if (e_) { printf("%s:%d err %d\n", #x, __LINE__, e_); return; } } while (0)
static float rbf(float f) { uint32_t u; memcpy(&u, &f, 4); u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u; memcpy(&f, &u, 4); return f; }
static uint16_t tob(float f) { uint32_t u; memcpy(&u, &f, 4); return (uint16_t)(u >> 16); }
static float fromb(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static uint64_t s = 88172645463325252ull;
static float rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return ((s >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1; }
static void run(int M, int N, int K, int bias, int res, int out_f32) {
    cublasLtHandle_t lt; cublasLtCreate(&lt);
    float *x = malloc(4 * M * K), *w = malloc(4 * N * K), *b = malloc(4 * N), *r = malloc(4 * M * N);
    for (int i = 0; i < M * K; i++) x[i] = rbf(rnd() * 1.7f);
    for (int i = 0; i < N * K; i++) w[i] = rbf(rnd() * 1.7f);
    for (int i = 0; i < N; i++) b[i] = rbf(rnd() * 1.7f);
    for (int i = 0; i < M * N; i++) r[i] = rbf(rnd() * 1.7f);
    uint16_t *hx = malloc(2 * M * K), *hw = malloc(2 * N * K), *hb = malloc(2 * N), *hr = malloc(2 * M * N);
    for (int i = 0; i < M * K; i++) hx[i] = tob(x[i]);
    for (int i = 0; i < N * K; i++) hw[i] = tob(w[i]);
    for (int i = 0; i < N; i++) hb[i] = tob(b[i]);
    for (int i = 0; i < M * N; i++) hr[i] = tob(r[i]);
    void *dx, *dw, *db, *dd; size_t osz = out_f32 ? 4 : 2;
    cudaMalloc(&dx, 2 * M * K); cudaMalloc(&dw, 2 * N * K); cudaMalloc(&db, 4 * N); cudaMalloc(&dd, osz * M * N);
    cudaMemcpy(dx, hx, 2 * M * K, cudaMemcpyHostToDevice); cudaMemcpy(dw, hw, 2 * N * K, cudaMemcpyHostToDevice);
    if (out_f32) cudaMemcpy(db, b, 4 * N, cudaMemcpyHostToDevice); else cudaMemcpy(db, hb, 2 * N, cudaMemcpyHostToDevice);
    void *ws; size_t wsb = 32 << 20; cudaMalloc(&ws, wsb);
    cudaDataType_t ot = out_f32 ? CUDA_R_32F : CUDA_R_16BF;
    cublasLtMatmulDesc_t op; CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t T = CUBLAS_OP_T, Nn = CUBLAS_OP_N;
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &T, sizeof T));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &Nn, sizeof Nn));
    if (bias) {
        cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_BIAS;
        CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
        CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &ot, sizeof ot));
        CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &db, sizeof db));
    }
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, K, N, K));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, K, M, K));
    CK(cublasLtMatrixLayoutCreate(&lc, ot, N, M, N));
    cublasLtMatmulPreference_t pref; CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
    cublasLtMatmulHeuristicResult_t h[16]; int nf = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 16, h, &nf));
    float alpha = 1, beta = res ? 1 : 0;
    double *ref = malloc(8 * M * N);
    for (int m = 0; m < M; m++) for (int n = 0; n < N; n++) {
        double a = 0; for (int k = 0; k < K; k++) a += (double)x[m * K + k] * w[n * K + k];
        ref[m * N + n] = a + (bias ? b[n] : 0) + (res ? r[m * N + n] : 0);
    }
    printf("M%d N%d K%d bias%d res%d out %s: %d algos\n", M, N, K, bias, res, out_f32 ? "f32" : "bf16", nf);
    void *ho = malloc(osz * M * N);
    for (int a = 0; a < nf; a++) {
        if (res) { if (out_f32) cudaMemcpy(dd, r, 4 * M * N, cudaMemcpyHostToDevice); else cudaMemcpy(dd, hr, 2 * M * N, cudaMemcpyHostToDevice); }
        int st = cublasLtMatmul(lt, op, &alpha, dw, la, dx, lb, &beta, dd, lc, dd, lc, &h[a].algo, ws, wsb, 0);
        cudaDeviceSynchronize();
        cudaMemcpy(ho, dd, osz * M * N, cudaMemcpyDeviceToHost);
        double maxe = 0, maxulp = 0;
        for (int i = 0; i < M * N; i++) {
            double o = out_f32 ? ((float *)ho)[i] : fromb(((uint16_t *)ho)[i]);
            double e = fabs(o - ref[i]); if (e > maxe) maxe = e;
            double ul = out_f32 ? e : e / fmax(fabs(ref[i]) * (1.0 / 256), 1e-30);
            if (ul > maxulp) maxulp = ul;
        }
        int tile = 0, splitk = 0, red = 0, stages = 0, cust = 0; size_t sz;
        cublasLtMatmulAlgoConfigGetAttribute(&h[a].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, 4, &sz);
        cublasLtMatmulAlgoConfigGetAttribute(&h[a].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, 4, &sz);
        cublasLtMatmulAlgoConfigGetAttribute(&h[a].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, 4, &sz);
        cublasLtMatmulAlgoConfigGetAttribute(&h[a].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, 4, &sz);
        cublasLtMatmulAlgoConfigGetAttribute(&h[a].algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &cust, 4, &sz);
        int id = 0; cublasLtMatmulAlgoConfigGetAttribute(&h[a].algo, CUBLASLT_ALGO_CONFIG_ID, &id, 4, &sz);
        printf("  algo %2d id %3d tile %3d splitk %2d red %d stages %3d custom %d ws %zu: st %d max err %.3g (%.2f bf16-ulps of |ref|/256)\n",
               a, id, tile, splitk, red, stages, cust, h[a].workspaceSize, st, maxe, maxulp);
    }
    cublasLtDestroy(lt);
}
int main(void) {
    run(37, 71, 129, 1, 0, 0);
    run(50, 33, 300, 1, 0, 0);
    run(25, 80, 96, 0, 1, 0);
    run(128, 256, 1024, 1, 1, 0);
    run(37, 71, 129, 0, 0, 0);
    run(37, 71, 129, 1, 0, 1);
    run(128, 1024, 256, 1, 0, 0);
    return 0;
}
