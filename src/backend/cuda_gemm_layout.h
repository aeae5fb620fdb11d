/* The cuBLASLt arguments of our row-major GEMMs as plain numbers: which tensor is cuBLASLt's A and
 * which its B, the two transposes, and the (rows, cols, ld) each cublasLtMatrixLayoutCreate gets.
 * No CUDA types, so tests/test_layout_gemm.c checks them on any machine against a column-major
 * emulator written from cuBLAS's definition of op(A), lda, ... and the bias epilogue.
 *
 * cuBLASLt is column-major: element (i, j) of a layout with leading dimension ld is at i + j*ld.
 * A row-major [R, C] array is therefore the column-major [C, R] matrix of its transpose, and
 * row-major y[M,N] = x[M,K] op(w) is computed as the column-major y^T[N,M] = op(w)^T x^T:
 *   A = w, B = x, D = C = y; cuBLAS's (m, n, k) = our (N, M, K).
 *   w [N,K] (LTX2_B_NK, a torch Linear) is column-major [K,N] = (w^T): transa = T, lda = K.
 *   w [K,N] (LTX2_B_KN) is column-major [N,K] = (w^T) already: transa = N, lda = N.
 *   x [M,K] is column-major [K,M] = x^T: transb = N, ldb = K.  y^T is column-major [N,M]: ldc = N.
 * The bias epilogue adds bias[i] to row i of D (cuBLASLt: "Bias vector length must match matrix D
 * rows ... broadcasted to all columns"), i.e. to our output feature n: per column of y. */
#ifndef LTX2_BACKEND_CUDA_GEMM_LAYOUT_H
#define LTX2_BACKEND_CUDA_GEMM_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/op_desc.h"

/* cuBLAS's FP8 rule ("pointers and matrix dimensions must support 16-byte alignment", and the
 * Tensor Core Usage section's (ld * type size) % 16 == 0 for every matrix). */
#define LTX2_LT_FP8_ALIGN_BYTES 16

/* One cublasLtMatrixLayoutCreate call: column-major rows x cols, leading dimension ld (elements). */
typedef struct ltx2_lt_mat {
    uint64_t rows, cols;
    int64_t ld;
} ltx2_lt_mat;

typedef struct ltx2_lt_gemm {
    bool a_is_w;          /* cuBLASLt's A pointer is the weight w (and B is x); else A = x, B = w */
    bool trans_a, trans_b; /* CUBLASLT_MATMUL_DESC_TRANSA / _TRANSB: true = CUBLAS_OP_T */
    ltx2_lt_mat a, b, c;   /* layouts of A, B and C (D uses the same one as C) */
} ltx2_lt_gemm;

/* The call for row-major y[M,N] = x[M,K] op(w) with w stored as wl; see the comment at the top. */
static inline ltx2_lt_gemm ltx2_lt_gemm_rowmajor(int64_t M, int64_t N, int64_t K, ltx2_b_layout wl) {
    ltx2_lt_gemm g;
    g.a_is_w = true;
    g.trans_b = false;
    g.b = (ltx2_lt_mat){(uint64_t)K, (uint64_t)M, K};
    g.c = (ltx2_lt_mat){(uint64_t)N, (uint64_t)M, N};
    if (wl == LTX2_B_NK) {
        g.trans_a = true;
        g.a = (ltx2_lt_mat){(uint64_t)K, (uint64_t)N, K};
    } else {
        g.trans_a = false;
        g.a = (ltx2_lt_mat){(uint64_t)N, (uint64_t)K, N};
    }
    return g;
}

/* cuBLASLt's FP8 (e4m3) requirements on Ada / Hopper that do not depend on pointers: A
 * transposed and B not ("TN"), and every leading dimension a multiple of 16 bytes; a_bytes,
 * b_bytes, c_bytes are the element sizes. */
static inline bool ltx2_lt_gemm_fp8_ok(const ltx2_lt_gemm *g, int a_bytes, int b_bytes, int c_bytes) {
    return g->trans_a && !g->trans_b && (g->a.ld * a_bytes) % LTX2_LT_FP8_ALIGN_BYTES == 0 &&
           (g->b.ld * b_bytes) % LTX2_LT_FP8_ALIGN_BYTES == 0 && (g->c.ld * c_bytes) % LTX2_LT_FP8_ALIGN_BYTES == 0;
}

#endif
