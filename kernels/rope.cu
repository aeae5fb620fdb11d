// Standalone RoPE (split and interleaved) over token-major [B, S, H*d] rows: one thread per
// rotated pair, fp32 arithmetic in the CPU reference's order (rope.cuh). It is the "RoPE kernel"
// half of the unfused baseline the attention bench compares the fused prologue against.
#include "common.cuh"
#include "rope.cuh"

// Split tables [tab_rows, tab_heads, S, d/2]: a table of one row / head serves every batch row /
// head (Gemma-3's one table), as the CPU reference reads them (ltx2_cpu_rope_apply_split_tab).
template <typename T>
__global__ void rope_kernel(const T *x, T *y, const float *cos_t, const float *sin_t, int64_t S, int64_t H,
                            int64_t d, bool il, int64_t n_pairs, int64_t tab_rows, int64_t tab_heads) {
    const int64_t D = H * d, per_row = D / 2;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_pairs;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / per_row, pp = i % per_row, b = row / S, t = row % S;
        const ltx2_rope_pair pr = ltx2_rope_pair_of(pp, d, il);
        float a = ltx2_to_f32(x[row * D + pr.c0]), bb = ltx2_to_f32(x[row * D + pr.c1]);
        if (il) {
            const int64_t ti = row * D;
            ltx2_rope_rotate(a, bb, cos_t[ti + pr.t0], sin_t[ti + pr.t0], cos_t[ti + pr.t1], sin_t[ti + pr.t1]);
        } else {
            const int64_t tb = tab_rows == 1 ? 0 : b, th = tab_heads == 1 ? 0 : pr.head;
            const int64_t ti = ((tb * tab_heads + th) * S + t) * (d / 2) + pr.t0;
            ltx2_rope_rotate(a, bb, cos_t[ti], sin_t[ti], cos_t[ti], sin_t[ti]);
        }
        y[row * D + pr.c0] = ltx2_from_f32<T>(a);
        y[row * D + pr.c1] = ltx2_from_f32<T>(bb);
    }
}

extern "C" int ltx2_k_rope(void *stream, int dtype, int rope, const void *x, void *y, const float *cos_t,
                           const float *sin_t, int64_t B, int64_t S, int64_t heads, int64_t head_dim,
                           int64_t tab_rows, int64_t tab_heads) {
    if (!x || !y || !cos_t || !sin_t || B < 0 || S < 0 || heads < 1 || head_dim < 2 || head_dim % 2) LTX2_K_BAD_ARG();
    if (rope != LTX2_KROPE_SPLIT && rope != LTX2_KROPE_INTERLEAVED) LTX2_K_BAD_ARG();
    if ((tab_rows != B && tab_rows != 1) || (tab_heads != heads && tab_heads != 1)) LTX2_K_BAD_ARG();
    if (rope == LTX2_KROPE_INTERLEAVED && (tab_rows != B || tab_heads != heads)) LTX2_K_BAD_ARG();
    const int64_t n = B * S * heads * head_dim / 2;
    if (n == 0) return 0;
    const bool il = rope == LTX2_KROPE_INTERLEAVED;
    const unsigned grid = ltx2_k_grid(n, LTX2_K_THREADS);
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        ltx2_launch<rope_kernel<float>>(grid, LTX2_K_THREADS, 0, st, (const float *)x, (float *)y, cos_t, sin_t, S,
                                        heads, head_dim, il, n, tab_rows, tab_heads);
    else if (dtype == LTX2_KDT_BF16)
        ltx2_launch<rope_kernel<__nv_bfloat16>>(grid, LTX2_K_THREADS, 0, st, (const __nv_bfloat16 *)x,
                                                (__nv_bfloat16 *)y, cos_t, sin_t, S, heads, head_dim, il, n,
                                                tab_rows, tab_heads);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}
