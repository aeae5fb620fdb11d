// The video VAE's memory-bound ops besides conv3d: PixelNorm (RMS over channels, no weight)
// fused with the SiLU that always follows it, and the DepthToSpaceUpsample rearrangement with
// its optional channel-repeated residual (src/cpu/cpu_depth_to_space.h).
#include "common.cuh"

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
        pixel_norm_kernel<T, true><<<blocks, LTX2_K_THREADS, 0, st>>>(x, y, rows, dim, eps, silu);
    else
        pixel_norm_kernel<T, false><<<blocks, LTX2_K_THREADS, 0, st>>>(x, y, rows, dim, eps, silu);
}

extern "C" int ltx2_k_pixel_norm(void *stream, int dtype, const void *x, void *y, int64_t rows, int64_t dim,
                                 float eps, int silu) {
    if (!x || !y || rows < 0 || dim < 1) LTX2_K_BAD_ARG();
    if (rows == 0) return 0;
    if (!ltx2_k_row_use_warp(dim) && rows > 0x7fffffff) LTX2_K_BAD_ARG();
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        pixel_norm_launch<float>(st, (const float *)x, (float *)y, rows, dim, eps, silu);
    else if (dtype == LTX2_KDT_BF16)
        pixel_norm_launch<__nv_bfloat16>(st, (const __nv_bfloat16 *)x, (__nv_bfloat16 *)y, rows, dim, eps, silu);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}

// One thread per output element (channel fastest, so stores are coalesced).
template <typename T>
__global__ void d2s_kernel(const T *x, const T *res, T *y, int64_t t, int64_t h, int64_t w, int64_t c, int64_t s0,
                           int64_t s1, int64_t s2, int64_t drop, int64_t rc, int64_t T_, int64_t H_, int64_t W_,
                           int64_t total) {
    const int64_t prod = s0 * s1 * s2;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i;
        const int64_t cc = r % c;
        r /= c;
        const int64_t w2 = r % W_;
        r /= W_;
        const int64_t h2 = r % H_;
        r /= H_;
        const int64_t t2 = r % T_;
        const int64_t bn = r / T_;
        const int64_t tt = t2 + drop, a = tt % s0, bb = h2 % s1, e = w2 % s2;
        const int64_t vox = ((bn * t + tt / s0) * h + h2 / s1) * w + w2 / s2;
        float v = ltx2_to_f32(x[vox * c * prod + ((cc * s0 + a) * s1 + bb) * s2 + e]);
        if (res) v += ltx2_to_f32(res[vox * rc * prod + (((cc % rc) * s0 + a) * s1 + bb) * s2 + e]);
        y[i] = ltx2_from_f32<T>(v);
    }
}

extern "C" int ltx2_k_depth_to_space(void *stream, int dtype, const void *x, const void *residual, void *y,
                                     int64_t n, int64_t t, int64_t h, int64_t w, int64_t c, int64_t s0, int64_t s1,
                                     int64_t s2, int drop, int64_t rc) {
    if (!x || !y || n < 1 || t < 1 || h < 1 || w < 1 || c < 1 || s0 < 1 || s1 < 1 || s2 < 1) LTX2_K_BAD_ARG();
    if (residual && (rc < 1 || c % rc)) LTX2_K_BAD_ARG();
    const int64_t T_ = t * s0 - (drop ? 1 : 0), H_ = h * s1, W_ = w * s2;
    if (T_ < 1) LTX2_K_BAD_ARG();
    const int64_t total = n * T_ * H_ * W_ * c;
    const unsigned grid = ltx2_k_grid(total, LTX2_K_THREADS);
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        d2s_kernel<float><<<grid, LTX2_K_THREADS, 0, st>>>((const float *)x, (const float *)residual, (float *)y, t, h,
                                                           w, c, s0, s1, s2, drop ? 1 : 0, rc, T_, H_, W_, total);
    else if (dtype == LTX2_KDT_BF16)
        d2s_kernel<__nv_bfloat16><<<grid, LTX2_K_THREADS, 0, st>>>(
            (const __nv_bfloat16 *)x, (const __nv_bfloat16 *)residual, (__nv_bfloat16 *)y, t, h, w, c, s0, s1, s2,
            drop ? 1 : 0, rc, T_, H_, W_, total);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}
