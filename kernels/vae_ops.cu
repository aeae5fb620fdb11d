// The video VAE's memory-bound ops besides conv3d: PixelNorm (RMS over channels, no weight)
// fused with the SiLU that always follows it, and the DepthToSpaceUpsample rearrangement with
// its optional channel-repeated residual (src/cpu/cpu_depth_to_space.h), and the encoder's inverse
// SpaceToDepthDownsample with its group-mean skip (src/cpu/cpu_space_to_depth.h).
#include "common.cuh"
#include "vae_ops_layout.h"

template <typename T, bool WARP>
__global__ void pixel_norm_kernel(const T *x, T *y, int64_t rows, int64_t dim, float eps, int silu) {
    __shared__ float red[32];
    const ltx2_row_group<WARP> grp;
    if (grp.row >= rows) return; // WARP mode: whole warps leave together; block mode: grid == rows
    const T *xr = x + grp.row * dim;
    T *yr = y + grp.row * dim;
    float ss = 0.0f;
    for (int64_t c = grp.tid; c < dim; c += grp.size) {
        const float v = ltx2_to_f32(xr[c]);
        ss += v * v;
    }
    ss = grp.sum(ss, red);
    const float inv = rsqrtf(ss / (float)dim + eps);
    for (int64_t c = grp.tid; c < dim; c += grp.size) {
        float v = ltx2_to_f32(xr[c]) * inv;
        if (silu) v = v / (1.0f + expf(-v));
        yr[c] = ltx2_from_f32<T>(v);
    }
}

template <typename T>
static void pixel_norm_launch(cudaStream_t st, const T *x, T *y, int64_t rows, int64_t dim, float eps, int silu) {
    const bool warp = ltx2_k_row_use_warp(dim);
    const unsigned blocks = ltx2_k_row_blocks(rows, warp);
    if (warp)
        ltx2_launch<pixel_norm_kernel<T, true>>(blocks, LTX2_K_THREADS, 0, st, x, y, rows, dim, eps, silu);
    else
        ltx2_launch<pixel_norm_kernel<T, false>>(blocks, LTX2_K_THREADS, 0, st, x, y, rows, dim, eps, silu);
}

extern "C" int ltx2_k_pixel_norm(void *stream, int dtype, const void *x, void *y, int64_t rows, int64_t dim,
                                 float eps, int silu) {
    if (!x || !y || rows < 0 || dim < 1) LTX2_K_BAD_ARG();
    if (rows == 0) return 0;
    // gridDim.x <= 2^31 - 1: one row per block, or LTX2_K_THREADS/32 rows per block in warp mode
    // (a larger count fails the launch, or past 2^32 blocks wraps in ltx2_k_row_blocks' unsigned
    // cast and silently skips rows).
    const int64_t rows_per_block = ltx2_k_row_use_warp(dim) ? LTX2_K_THREADS / 32 : 1;
    if (rows > (int64_t)INT32_MAX * rows_per_block) LTX2_K_BAD_ARG();
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        pixel_norm_launch<float>(st, (const float *)x, (float *)y, rows, dim, eps, silu);
    else if (dtype == LTX2_KDT_BF16)
        pixel_norm_launch<__nv_bfloat16>(st, (const __nv_bfloat16 *)x, (__nv_bfloat16 *)y, rows, dim, eps, silu);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}

// One thread per output element (channel fastest, so stores are coalesced); the index arithmetic
// lives in vae_ops_layout.h (checked on the CPU by tests/test_layout_vae_ops.c).
template <typename T>
__global__ void __launch_bounds__(LTX2_K_THREADS)
d2s_kernel(const T *x, const T *res, T *y, ltx2_d2s_geom g, int64_t total) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t xo, ro = 0;
        ltx2_d2s_src(g, i, &xo, &ro);
        float v = ltx2_to_f32(x[xo]);
        if (res) v += ltx2_to_f32(res[ro]);
        y[i] = ltx2_from_f32<T>(v);
    }
}

extern "C" int ltx2_k_depth_to_space(void *stream, int dtype, const void *x, const void *residual, void *y,
                                     int64_t n, int64_t t, int64_t h, int64_t w, int64_t c, int64_t s0, int64_t s1,
                                     int64_t s2, int drop, int64_t rc) {
    if (!x || !y || n < 1 || t < 1 || h < 1 || w < 1 || c < 1 || s0 < 1 || s1 < 1 || s2 < 1) LTX2_K_BAD_ARG();
    if (residual && (rc < 1 || c % rc)) LTX2_K_BAD_ARG();
    const ltx2_d2s_geom g = ltx2_d2s_geom_make(t, h, w, c, s0, s1, s2, drop, residual ? rc : 0);
    if (g.T < 1) LTX2_K_BAD_ARG();
    const int64_t total = ltx2_d2s_total(g, n);
    const unsigned grid = ltx2_k_grid(total, LTX2_K_THREADS);
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        ltx2_launch<d2s_kernel<float>>(grid, LTX2_K_THREADS, 0, st, (const float *)x, (const float *)residual,
                                       (float *)y, g, total);
    else if (dtype == LTX2_KDT_BF16)
        ltx2_launch<d2s_kernel<__nv_bfloat16>>(grid, LTX2_K_THREADS, 0, st,
            (const __nv_bfloat16 *)x, (const __nv_bfloat16 *)residual, (__nv_bfloat16 *)y, g, total);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}

// One thread per output element: the gathered x value plus, with a residual, the fp32 mean of
// its g rearranged residual channels summed in order (the CPU reference's arithmetic).
template <typename T>
__global__ void __launch_bounds__(LTX2_K_THREADS)
s2d_kernel(const T *x, const T *res, T *y, ltx2_s2d_geom g, int64_t total) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t bn, t2, h2, w2, k;
        ltx2_s2d_split(g, i, &bn, &t2, &h2, &w2, &k);
        float v = ltx2_to_f32(x[ltx2_s2d_src(g, g.c, bn, t2, h2, w2, k)]);
        if (res) {
            float sum = 0.0f;
            for (int64_t q = k * g.g; q < (k + 1) * g.g; q++) sum += ltx2_to_f32(res[ltx2_s2d_src(g, g.rc, bn, t2, h2, w2, q)]);
            v += sum / (float)g.g;
        }
        y[i] = ltx2_from_f32<T>(v);
    }
}

extern "C" int ltx2_k_space_to_depth(void *stream, int dtype, const void *x, const void *residual, void *y,
                                     int64_t n, int64_t t, int64_t h, int64_t w, int64_t c, int64_t s0, int64_t s1,
                                     int64_t s2, int64_t rc) {
    if (!x || !y || n < 1 || t < 1 || h < 1 || w < 1 || c < 1 || s0 < 1 || s1 < 1 || s2 < 1) LTX2_K_BAD_ARG();
    if (t % s0 || h % s1 || w % s2) LTX2_K_BAD_ARG();
    if (residual && (rc < 1 || (rc * s0 * s1 * s2) % (c * s0 * s1 * s2))) LTX2_K_BAD_ARG();
    const ltx2_s2d_geom g = ltx2_s2d_geom_make(t, h, w, c, s0, s1, s2, residual ? rc : 0);
    const int64_t total = ltx2_s2d_total(g, n);
    const unsigned grid = ltx2_k_grid(total, LTX2_K_THREADS);
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        ltx2_launch<s2d_kernel<float>>(grid, LTX2_K_THREADS, 0, st, (const float *)x, (const float *)residual,
                                       (float *)y, g, total);
    else if (dtype == LTX2_KDT_BF16)
        ltx2_launch<s2d_kernel<__nv_bfloat16>>(grid, LTX2_K_THREADS, 0, st,
            (const __nv_bfloat16 *)x, (const __nv_bfloat16 *)residual, (__nv_bfloat16 *)y, g, total);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}
