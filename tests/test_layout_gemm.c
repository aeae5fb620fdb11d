/* The cuBLASLt arguments of the CUDA backend's GEMMs (src/backend/cuda_gemm_layout.h), checked
 * without a GPU: a column-major GEMM emulator written from cuBLAS's definitions is handed exactly
 * what backend_cuda.c passes to cublasLtMatrixLayoutCreate / the matmul descriptor /
 * cublasLtMatmul (pointers, transposes, rows, cols, ld, bias, alpha, beta and C), and its output
 * must equal the row-major y = x op(w) + bias + residual we want, exactly (integer data).
 * Also the FP8 "TN" and 16-byte leading-dimension rules. */
#include <stdint.h>
#include <string.h>

#include "backend/cuda_gemm_layout.h"
#include "test_util.h"

/* ---- the emulator: cuBLAS(Lt) semantics, written from the documentation ----
 * A matrix described by (rows, cols, ld) holds element (i, j) at base[i + j*ld], ld >= rows.
 * D = alpha * op(A) op(B) + beta * C, with op(A) m x k, op(B) k x n, C and D m x n;
 * op(X) = X for CUBLAS_OP_N, X^T for CUBLAS_OP_T, so A is stored m x k (N) or k x m (T), B is
 * stored k x n (N) or n x k (T). m, n are D's rows and cols, k is read off A.
 * CUBLASLT_EPILOGUE_BIAS: "Bias vector length must match matrix D rows ... broadcasted to all
 * columns and added before applying final postprocessing", i.e. D(i, j) += bias[i].
 * Returns false where cuBLASLt would reject the descriptors (CUBLAS_STATUS_INVALID_VALUE). */
typedef struct emu_mat {
    uint64_t rows, cols;
    int64_t ld;
    size_t cap; /* elements the buffer really holds: the test's bounds check, not cuBLAS's */
} emu_mat;

/* The layout addresses only elements the buffer has (on a GPU: no illegal address). */
static bool emu_fits(const emu_mat *L) {
    return L->rows == 0 || L->cols == 0 || (L->cols - 1) * (uint64_t)L->ld + L->rows <= L->cap;
}

static double emu_at(const double *base, const emu_mat *L, uint64_t i, uint64_t j) {
    return base[i + j * (uint64_t)L->ld];
}

static bool emu_gemm(bool transa, bool transb, double alpha, const double *A, emu_mat La, const double *B, emu_mat Lb,
                     double beta, const double *C, emu_mat Lc, double *D, emu_mat Ld, const double *bias) {
    const uint64_t m = Ld.rows, n = Ld.cols;
    const uint64_t am = transa ? La.cols : La.rows, k = transa ? La.rows : La.cols;
    const uint64_t bk = transb ? Lb.cols : Lb.rows, bn = transb ? Lb.rows : Lb.cols;
    if (am != m || bk != k || bn != n || Lc.rows != m || Lc.cols != n) return false;
    if (La.ld < (int64_t)La.rows || Lb.ld < (int64_t)Lb.rows || Lc.ld < (int64_t)Lc.rows || Ld.ld < (int64_t)Ld.rows)
        return false;
    /* out-of-place needs C and D alike; our calls always pass one descriptor for both */
    if (Lc.ld != Ld.ld) return false;
    if (!emu_fits(&La) || !emu_fits(&Lb) || !emu_fits(&Lc) || !emu_fits(&Ld)) return false;
    for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) {
            double s = 0.0;
            for (uint64_t l = 0; l < k; l++) {
                const double a = transa ? emu_at(A, &La, l, i) : emu_at(A, &La, i, l);
                const double b = transb ? emu_at(B, &Lb, j, l) : emu_at(B, &Lb, l, j);
                s += a * b;
            }
            double v = alpha * s + (beta != 0.0 ? beta * emu_at(C, &Lc, i, j) : 0.0);
            if (bias) v += bias[i];
            D[i + j * (uint64_t)Ld.ld] = v;
        }
    return true;
}

/* ---- the case: what backend_cuda.c passes, against the row-major product ---- */

static emu_mat emu_of(ltx2_lt_mat m, size_t cap) { return (emu_mat){m.rows, m.cols, m.ld, cap}; }

/* Small signed integers, so every sum is exact in double. */
static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}
static double rng_int(uint64_t *s) { return (double)((int)(rng_next(s) % 9) - 4); }

static void check_case(int64_t M, int64_t N, int64_t K, ltx2_b_layout wl, bool bias, bool residual, bool in_place,
                       uint64_t seed) {
    const size_t nx = (size_t)(M * K), nw = (size_t)(N * K), ny = (size_t)(M * N);
    double *x = malloc(nx * sizeof(double)), *w = malloc(nw * sizeof(double)), *b = malloc((size_t)N * sizeof(double));
    double *r = malloc(ny * sizeof(double)), *y = malloc(ny * sizeof(double)), *want = malloc(ny * sizeof(double));
    if (!x || !w || !b || !r || !y || !want) {
        CHECK(false, "out of memory");
        goto done;
    }
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < nx; i++) x[i] = rng_int(&s);
    for (size_t i = 0; i < nw; i++) w[i] = rng_int(&s);
    for (int64_t i = 0; i < N; i++) b[i] = rng_int(&s);
    for (size_t i = 0; i < ny; i++) r[i] = rng_int(&s);
    /* what we want, row-major: y[m][n] = sum_k x[m][k] W(n, k) + bias[n] + residual[m][n],
     * W(n, k) = w[n][k] for [N, K] storage, w[k][n] for [K, N] */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0.0;
            for (int64_t k = 0; k < K; k++) acc += x[m * K + k] * (wl == LTX2_B_NK ? w[n * K + k] : w[k * N + n]);
            want[m * N + n] = acc + (bias ? b[n] : 0.0) + (residual ? r[m * N + n] : 0.0);
        }
    /* what backend_cuda.c does: cuda_gemm_ex's C is the residual (y itself when in place),
     * beta = 1 with a residual; D is y; one layout for C and D */
    for (size_t i = 0; i < ny; i++) y[i] = in_place ? r[i] : -1e9; /* garbage where C is not read */
    const ltx2_lt_gemm g = ltx2_lt_gemm_rowmajor(M, N, K, wl);
    const double *pa = g.a_is_w ? w : x, *pb = g.a_is_w ? x : w;
    const double *pc = residual ? (in_place ? y : r) : y;
    const size_t na = g.a_is_w ? nw : nx, nb = g.a_is_w ? nx : nw;
    const bool ok = emu_gemm(g.trans_a, g.trans_b, 1.0, pa, emu_of(g.a, na), pb, emu_of(g.b, nb), residual ? 1.0 : 0.0,
                             pc, emu_of(g.c, ny), y, emu_of(g.c, ny), bias ? b : NULL);
    CHECK(ok, "M=%lld N=%lld K=%lld %s: the emulated cuBLASLt rejects the layouts (inconsistent dims, ld < rows, or "
          "past the end of a buffer)", (long long)M, (long long)N, (long long)K, wl == LTX2_B_NK ? "NK" : "KN");
    size_t bad = 0, first = 0;
    for (size_t i = 0; ok && i < ny; i++)
        if (y[i] != want[i] && bad++ == 0) first = i;
    if (ok)
        CHECK(bad == 0, "M=%lld N=%lld K=%lld %s%s%s%s: %zu of %zu outputs differ (first at row %zu col %zu: %g, want %g)",
              (long long)M, (long long)N, (long long)K, wl == LTX2_B_NK ? "NK" : "KN", bias ? " bias" : "",
              residual ? " residual" : "", in_place ? " in-place" : "", bad, ny, first / (size_t)N,
              first % (size_t)N, ny ? y[first] : 0.0, ny ? want[first] : 0.0);
done:
    free(x), free(w), free(b), free(r), free(y), free(want);
}

/* FP8 rules: TN only, 16-byte leading dimensions for A, B (1-byte e4m3) and C / D (2-byte bf16). */
static void check_fp8_rules(void) {
    ltx2_lt_gemm g = ltx2_lt_gemm_rowmajor(64, 128, 256, LTX2_B_NK);
    CHECK(g.trans_a && !g.trans_b, "a torch-Linear weight must give cuBLASLt's \"TN\" form");
    CHECK(ltx2_lt_gemm_fp8_ok(&g, 1, 1, 2), "M=64 N=128 K=256 [N,K] meets the FP8 rules");
    g = ltx2_lt_gemm_rowmajor(64, 128, 256, LTX2_B_KN);
    CHECK(!ltx2_lt_gemm_fp8_ok(&g, 1, 1, 2), "a [K,N] weight is \"NN\": not allowed for FP8");
    g = ltx2_lt_gemm_rowmajor(64, 128, 24, LTX2_B_NK);
    CHECK(!ltx2_lt_gemm_fp8_ok(&g, 1, 1, 2), "K=24: lda = ldb = 24 bytes is not a multiple of 16");
    g = ltx2_lt_gemm_rowmajor(64, 12, 32, LTX2_B_NK);
    CHECK(!ltx2_lt_gemm_fp8_ok(&g, 1, 1, 2), "N=12: ldc = 24 bytes of bf16 is not a multiple of 16");
    g = ltx2_lt_gemm_rowmajor(3, 8, 16, LTX2_B_NK);
    CHECK(ltx2_lt_gemm_fp8_ok(&g, 1, 1, 2), "M is cuBLAS's n, a column count: M=3 is fine");
}

int main(void) {
    /* distinct M, N, K so any swapped dimension shows; 1s for the degenerate vectors */
    static const int64_t shapes[][3] = {{1, 1, 1}, {1, 5, 3}, {4, 1, 6}, {3, 7, 1}, {5, 3, 7}, {7, 9, 4}, {16, 8, 32}};
    uint64_t seed = 1;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        for (int wl = 0; wl < 2; wl++)
            for (int epi = 0; epi < 4; epi++) {
                const bool bias = epi & 1, residual = epi & 2;
                check_case(shapes[i][0], shapes[i][1], shapes[i][2], wl ? LTX2_B_KN : LTX2_B_NK, bias, residual, false,
                           seed++);
                if (residual)
                    check_case(shapes[i][0], shapes[i][1], shapes[i][2], wl ? LTX2_B_KN : LTX2_B_NK, bias, true, true,
                               seed++);
            }
    check_fp8_rules();
    return test_finish();
}
