// Gemma-3's per-head QK norm and its RoPE in one pass over q or k [B, S, heads * d]: each (token,
// head) row of d values normalised as the RMSNorm kernel normalises it (its sum of squares, its
// rounding to the dtype), then its split halves rotated as the RoPE kernel rotates them. The two
// kernels it replaces each read and wrote the tensor; this reads and writes it once, and its bits
// are theirs (tests/test_emu_rms_norm_rope.c).
#include "common.cuh"
#include "rope.cuh"

// The widest head the kernel takes: a block-per-row launch stages the normalised row in shared
// memory (32 KB at 8192 f32 values); wider rows run the two kernels (backend_kernels.c).
#define LTX2_K_NORM_ROPE_MAX_DIM 8192

// The normalised values as the RMSNorm kernel would store them (rounded to T), kept as floats.
template <typename T, int V> struct ltx2_row_stage {
    float *to;
    __device__ __forceinline__ void operator()(int64_t i, const float *v) const {
#pragma unroll
        for (int j = 0; j < V; j++) to[i + j] = ltx2_to_f32(ltx2_from_f32<T>(v[j]));
    }
};

template <typename T, int V, bool WARP>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_rms_norm_rope_kernel(const T *x, T *y, const T *__restrict__ w, const float *__restrict__ cos_t,
                          const float *__restrict__ sin_t, int64_t rows, int64_t S, int64_t heads, int64_t d,
                          float eps, int64_t tab_rows, int64_t tab_heads) {
    LTX2_K_DYN_SMEM(float, staged);  // a row's normalised values, one row per warp (WARP) or per block
    __shared__ float red[32];
    ltx2_row_group<WARP> g;
    if (g.row >= rows) return;  // whole warps leave together; block mode never takes this
    float *nr = staged + (WARP ? (int64_t)(threadIdx.x >> 5) * d : 0);
    const T *xr = x + g.row * d;
    // the RMSNorm kernel's arithmetic (ltx2_row_sumsq_of, then ltx2_row_scale's v * inv * w, rounded
    // to T), staged instead of stored: x is read whole before y, which may alias it, is written
    const float inv = rsqrtf(ltx2_row_sumsq_of<T, V, WARP>(g, xr, d, red) / (float)d + eps);
    ltx2_row_stage<T, V> stage = {nr};
    ltx2_row_scale_each<T, V, WARP>(g, xr, w, inv, d, stage);
    if (WARP) __syncwarp();
    else __syncthreads();
    // the RoPE kernel's rotation of the split halves, with the tables it reads
    const int64_t half = d / 2, token = g.row / heads, h = g.row % heads, b = token / S, t = token % S;
    const int64_t tb = tab_rows == 1 ? 0 : b, th = tab_heads == 1 ? 0 : h;
    const int64_t ti = ((tb * tab_heads + th) * S + t) * half;
    T *yr = y + g.row * d;
    for (int64_t p = g.tid; p < half; p += g.size) {
        float a = nr[p], bb = nr[p + half];
        ltx2_rope_rotate(a, bb, cos_t[ti + p], sin_t[ti + p], cos_t[ti + p], sin_t[ti + p]);
        yr[p] = ltx2_from_f32<T>(a);
        yr[p + half] = ltx2_from_f32<T>(bb);
    }
}

template <typename T, int V>
static void ltx2_rms_norm_rope_launch(cudaStream_t s, const T *x, T *y, const T *w, const float *c, const float *sn,
                                      int64_t rows, int64_t S, int64_t heads, int64_t d, float eps, int64_t tab_rows,
                                      int64_t tab_heads) {
    const bool warp = ltx2_k_row_use_warp(d);
    const unsigned blocks = ltx2_k_row_blocks(rows, warp);
    const size_t smem = (size_t)(warp ? LTX2_K_THREADS / 32 : 1) * (size_t)d * sizeof(float);
    if (warp)
        ltx2_launch<ltx2_rms_norm_rope_kernel<T, V, true>>(blocks, LTX2_K_THREADS, smem, s, x, y, w, c, sn, rows, S,
                                                           heads, d, eps, tab_rows, tab_heads);
    else
        ltx2_launch<ltx2_rms_norm_rope_kernel<T, V, false>>(blocks, LTX2_K_THREADS, smem, s, x, y, w, c, sn, rows, S,
                                                            heads, d, eps, tab_rows, tab_heads);
}

template <typename T>
static int ltx2_rms_norm_rope_t(cudaStream_t s, const T *x, T *y, const T *w, const float *c, const float *sn,
                                int64_t B, int64_t S, int64_t heads, int64_t d, float eps, int64_t tab_rows,
                                int64_t tab_heads) {
    // the RMSNorm kernel's choice of vector width (ltx2_norm_t), so its sums come out the same
    const bool vec = d % ltx2_vec<T>::n == 0 && ltx2_k_aligned16(x) && ltx2_k_aligned16(y) &&
                     (!w || ltx2_k_aligned16(w));
    const int64_t rows = B * S * heads;
    if (vec)
        ltx2_rms_norm_rope_launch<T, ltx2_vec<T>::n>(s, x, y, w, c, sn, rows, S, heads, d, eps, tab_rows, tab_heads);
    else
        ltx2_rms_norm_rope_launch<T, 1>(s, x, y, w, c, sn, rows, S, heads, d, eps, tab_rows, tab_heads);
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_rms_norm_rope(void *stream, int dtype, const void *x, void *y, const void *w,
                                    const float *cos_t, const float *sin_t, int64_t B, int64_t S, int64_t heads,
                                    int64_t head_dim, float eps, int64_t tab_rows, int64_t tab_heads) {
    if (!x || !y || !cos_t || !sin_t || B < 0 || S < 0 || heads < 1 || head_dim < 2 || head_dim % 2) LTX2_K_BAD_ARG();
    if (head_dim > LTX2_K_NORM_ROPE_MAX_DIM || B * S * heads > INT32_MAX) return LTX2_KERR_NOT_SUPPORTED;
    if ((tab_rows != B && tab_rows != 1) || (tab_heads != heads && tab_heads != 1)) LTX2_K_BAD_ARG();
    if (B * S == 0) return 0;
    cudaStream_t s = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        return ltx2_rms_norm_rope_t<float>(s, (const float *)x, (float *)y, (const float *)w, cos_t, sin_t, B, S,
                                           heads, head_dim, eps, tab_rows, tab_heads);
    if (dtype == LTX2_KDT_BF16) {
        typedef __nv_bfloat16 Bf;
        return ltx2_rms_norm_rope_t<Bf>(s, (const Bf *)x, (Bf *)y, (const Bf *)w, cos_t, sin_t, B, S, heads,
                                        head_dim, eps, tab_rows, tab_heads);
    }
    LTX2_K_BAD_ARG();
}
