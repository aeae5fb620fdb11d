// Softmax over the last dim (max-subtracted, fp32 accumulation): one warp per short row, one
// block per long row, 16-byte vector accesses when possible.
#include "common.cuh"

template <typename T, int V, bool WARP>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_softmax_kernel(const T *__restrict__ x, T *y, int64_t rows, int64_t dim) {
    __shared__ float smem[32];
    ltx2_row_group<WARP> g;
    if (g.row >= rows) return;
    const T *xr = x + g.row * dim;
    T *yr = y + g.row * dim;
    float mx = -INFINITY;
    for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
        float v[V];
        ltx2_load<V>(xr + i, v);
#pragma unroll
        for (int j = 0; j < V; j++) mx = fmaxf(mx, v[j]);
    }
    mx = g.max(mx, smem);
    float s = 0.0f;
    for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
        float v[V];
        ltx2_load<V>(xr + i, v);
#pragma unroll
        for (int j = 0; j < V; j++) s += expf(v[j] - mx);
    }
    float inv = 1.0f / g.sum(s, smem);
    for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
        float v[V];
        ltx2_load<V>(xr + i, v);
#pragma unroll
        for (int j = 0; j < V; j++) v[j] = expf(v[j] - mx) * inv;
        ltx2_store<V>(yr + i, v);
    }
}

template <typename T, int V>
static void ltx2_softmax_launch(cudaStream_t s, const T *x, T *y, int64_t rows, int64_t dim) {
    bool warp = ltx2_k_row_use_warp(dim);
    unsigned blocks = ltx2_k_row_blocks(rows, warp);
    if (warp)
        ltx2_launch<ltx2_softmax_kernel<T, V, true>>(blocks, LTX2_K_THREADS, 0, s, x, y, rows, dim);
    else
        ltx2_launch<ltx2_softmax_kernel<T, V, false>>(blocks, LTX2_K_THREADS, 0, s, x, y, rows, dim);
}

template <typename T>
static int ltx2_softmax_t(void *stream, const void *xv, void *yv, int64_t rows, int64_t dim) {
    const T *x = (const T *)xv;
    T *y = (T *)yv;
    cudaStream_t s = (cudaStream_t)stream;
    if (dim % ltx2_vec<T>::n == 0 && ltx2_k_aligned16(x) && ltx2_k_aligned16(y))
        ltx2_softmax_launch<T, ltx2_vec<T>::n>(s, x, y, rows, dim);
    else
        ltx2_softmax_launch<T, 1>(s, x, y, rows, dim);
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_softmax(void *stream, int dtype, const void *x, void *y, int64_t rows,
                              int64_t dim) {
    if (rows < 0 || dim <= 0 || rows > INT32_MAX) LTX2_K_BAD_ARG();
    if (rows == 0) return 0;
    if (!x || !y) LTX2_K_BAD_ARG();
    if (dtype == LTX2_KDT_F32) return ltx2_softmax_t<float>(stream, x, y, rows, dim);
    if (dtype == LTX2_KDT_BF16) return ltx2_softmax_t<__nv_bfloat16>(stream, x, y, rows, dim);
    LTX2_K_BAD_ARG();
}
