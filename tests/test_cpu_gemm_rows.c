/* The CPU GEMM's few-rows path (M <= 8: generation's one token a step, AdaLN rows) against its
 * packed driver: every row of an M-row product bitwise equal to the same row of a 9-row product
 * (which the packed driver computes), for f32 and bf16 weights in both layouts, over three K panels,
 * with and without bias and beta, leading dims wider than the matrices. A mismatch would make a
 * token's numbers depend on how many rows shared its GEMM. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/rng.h"
#include "cpu/cpu_ops.h"
#include "test_util.h"

/* K spans three of the driver's 384-deep panels; N is no multiple of the 16- or 32-column tiles */
#define T_K 1000
#define T_N 70
#define T_REF_ROWS 9
#define T_LD_PAD 3

int main(void) {
    ltx2_context *ctx = test_context_quiet();
    if (!ctx) return 1;
    const int64_t lda = T_K + T_LD_PAD, ldc = T_N + T_LD_PAD, nb = (int64_t)T_N * T_K;
    float *A = malloc((size_t)(T_REF_ROWS * lda) * sizeof *A), *Bf = malloc((size_t)nb * sizeof *Bf);
    uint16_t *Bh = malloc((size_t)nb * sizeof *Bh);
    float *bias = malloc(T_N * sizeof *bias), *C0 = malloc((size_t)(T_REF_ROWS * ldc) * sizeof *C0);
    float *ref = malloc((size_t)(T_REF_ROWS * ldc) * sizeof *ref), *got = malloc((size_t)(T_REF_ROWS * ldc) * sizeof *got);
    if (!A || !Bf || !Bh || !bias || !C0 || !ref || !got) return 1;
    ltx2_rng_normal(1, 0, 0, (size_t)(T_REF_ROWS * lda), A);
    ltx2_rng_normal(1, 1, 0, (size_t)nb, Bf);
    ltx2_rng_normal(1, 2, 0, T_N, bias);
    ltx2_rng_normal(1, 3, 0, (size_t)(T_REF_ROWS * ldc), C0);
    for (int64_t i = 0; i < nb; i++) Bh[i] = ltx2_f32_to_bf16(Bf[i]);
    int cases = 0, differ = 0;
    for (int dt = 0; dt < 2; dt++)
        for (int lay = 0; lay < 2; lay++)
            for (int v = 0; v < 3; v++) { /* plain; bias; beta 0.5 with bias and alpha 0.75 */
                const ltx2_b_layout bl = lay ? LTX2_B_KN : LTX2_B_NK;
                const int64_t ldb = lay ? T_N : T_K;
                const float alpha = v == 2 ? 0.75f : 1.0f, beta = v == 2 ? 0.5f : 0.0f;
                const float *bs = v ? bias : NULL;
                const void *B = dt ? (const void *)Bh : (const void *)Bf;
                const ltx2_dtype bd = dt ? LTX2_BF16 : LTX2_F32;
                memcpy(ref, C0, (size_t)(T_REF_ROWS * ldc) * sizeof *ref);
                CHECK(ltx2_cpu_gemm_wdt(ctx, T_REF_ROWS, T_N, T_K, alpha, A, lda, B, bd, ldb, bl, beta, ref, ldc, bs) ==
                          LTX2_OK, "reference: %s", ltx2_last_error(ctx));
                for (int64_t m = 1; m < T_REF_ROWS; m++) {
                    memcpy(got, C0, (size_t)(T_REF_ROWS * ldc) * sizeof *got);
                    CHECK(ltx2_cpu_gemm_wdt(ctx, m, T_N, T_K, alpha, A, lda, B, bd, ldb, bl, beta, got, ldc, bs) ==
                              LTX2_OK, "M %lld: %s", (long long)m, ltx2_last_error(ctx));
                    bool same = true;
                    for (int64_t i = 0; i < m; i++) same = same && !memcmp(got + i * ldc, ref + i * ldc, T_N * sizeof(float));
                    same = same && !memcmp(got + m * ldc, C0 + m * ldc, (size_t)((T_REF_ROWS - m) * ldc) * sizeof(float));
                    CHECK(same, "%s weights, %s, variant %d, M %lld: rows differ from the packed driver's (or rows "
                          "past M were written)", dt ? "bf16" : "f32", lay ? "[K,N]" : "[N,K]", v, (long long)m);
                    cases++, differ += !same;
                }
            }
    printf("%d few-row products (M 1..8, f32/bf16 weights, both layouts, bias/beta): %d differ from the packed "
           "driver's rows\n", cases, differ);
    free(A), free(Bf), free(Bh), free(bias), free(C0), free(ref), free(got);
    ltx2_context_free(ctx);
    return test_finish();
}
