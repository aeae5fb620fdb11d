// RMSNorm and LayerNorm over the last dim: one warp per row for short rows, one block per row
// for long ones; 16-byte vector accesses when the row layout allows; fp32 accumulation for f32
// and bf16 storage. The RMSNorm kernel also serves tensor parallelism, where a row is split across
// ranks: it can stop after the sum of squares (row_sumsq) or start from a given one (rms_apply).
#include "common.cuh"

// x carries no __restrict__ in these kernels: y may alias x (in-place norm), and a restrict
// pointer promises that the memory it reads is not written through another pointer meanwhile.
template <typename T, int V, bool WARP>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_rms_norm_kernel(const T *x, T *y, const T *__restrict__ w, int64_t rows,
                     int64_t dim, float eps, const float *__restrict__ ss_in, float *__restrict__ ss_out,
                     float n) {
    __shared__ float smem[32];
    ltx2_row_group<WARP> g;
    if (g.row >= rows) return;  // whole warps leave together; block mode never takes this
    const T *xr = x + g.row * dim;
    T *yr = y + g.row * dim;
    // ss_in is uniform over the launch: every thread takes the same branch
    const float ss = ss_in ? ss_in[g.row] : ltx2_row_sumsq_of<T, V, WARP>(g, xr, dim, smem);
    if (ss_out) {
        if (g.tid == 0) ss_out[g.row] = ss;
        return;
    }
    ltx2_row_scale<T, V, WARP>(g, xr, w, rsqrtf(ss / n + eps), dim, yr);
}

template <typename T, int V, bool WARP>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_layer_norm_kernel(const T *x, T *y, const T *__restrict__ w,
                       const T *__restrict__ b, int64_t rows, int64_t dim, float eps) {
    __shared__ float smem[32];
    ltx2_row_group<WARP> g;
    if (g.row >= rows) return;
    const T *xr = x + g.row * dim;
    T *yr = y + g.row * dim;
    float s = 0.0f;
    for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
        float v[V];
        ltx2_load<V>(xr + i, v);
#pragma unroll
        for (int j = 0; j < V; j++) s += v[j];
    }
    float mean = g.sum(s, smem) / (float)dim;
    // Second pass over (x - mean): avoids the cancellation of E[x^2] - mean^2.
    float sq = 0.0f;
    for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
        float v[V];
        ltx2_load<V>(xr + i, v);
#pragma unroll
        for (int j = 0; j < V; j++) sq += (v[j] - mean) * (v[j] - mean);
    }
    float inv = rsqrtf(g.sum(sq, smem) / (float)dim + eps);
    for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
        float v[V], wv[V], bv[V];
        ltx2_load<V>(xr + i, v);
        ltx2_load_or<V>(w ? w + i : NULL, 1.0f, wv);
        ltx2_load_or<V>(b ? b + i : NULL, 0.0f, bv);
#pragma unroll
        for (int j = 0; j < V; j++) v[j] = (v[j] - mean) * inv * wv[j] + bv[j];
        ltx2_store<V>(yr + i, v);
    }
}

// The RMS side: plain (ss_in, ss_out NULL, n = dim), sum of squares only, or from a given one.
typedef struct ltx2_rms_io {
    const float *ss_in;
    float *ss_out;
    float n;
} ltx2_rms_io;

template <typename T, int V>
static void ltx2_norm_launch(cudaStream_t s, bool layer, const T *x, T *y, const T *w,
                             const T *b, int64_t rows, int64_t dim, float eps, ltx2_rms_io io) {
    bool warp = ltx2_k_row_use_warp(dim);
    unsigned blocks = ltx2_k_row_blocks(rows, warp);
    if (layer) {
        if (warp)
            ltx2_launch<ltx2_layer_norm_kernel<T, V, true>>(blocks, LTX2_K_THREADS, 0, s, x, y, w, b, rows, dim, eps);
        else
            ltx2_launch<ltx2_layer_norm_kernel<T, V, false>>(blocks, LTX2_K_THREADS, 0, s, x, y, w, b, rows, dim, eps);
    } else {
        if (warp)
            ltx2_launch<ltx2_rms_norm_kernel<T, V, true>>(blocks, LTX2_K_THREADS, 0, s, x, y, w, rows, dim, eps,
                                                          io.ss_in, io.ss_out, io.n);
        else
            ltx2_launch<ltx2_rms_norm_kernel<T, V, false>>(blocks, LTX2_K_THREADS, 0, s, x, y, w, rows, dim, eps,
                                                           io.ss_in, io.ss_out, io.n);
    }
}

template <typename T>
static int ltx2_norm_t(void *stream, bool layer, const void *xv, void *yv, const void *wv,
                       const void *bv, int64_t rows, int64_t dim, float eps, ltx2_rms_io io) {
    const T *x = (const T *)xv, *w = (const T *)wv, *b = (const T *)bv;
    T *y = (T *)yv;
    const int VN = ltx2_vec<T>::n;
    bool vec = dim % VN == 0 && ltx2_k_aligned16(x) && (!y || ltx2_k_aligned16(y)) &&
               (!w || ltx2_k_aligned16(w)) && (!b || ltx2_k_aligned16(b));
    cudaStream_t s = (cudaStream_t)stream;
    if (vec)
        ltx2_norm_launch<T, ltx2_vec<T>::n>(s, layer, x, y, w, b, rows, dim, eps, io);
    else
        ltx2_norm_launch<T, 1>(s, layer, x, y, w, b, rows, dim, eps, io);
    LTX2_K_RETURN_LAUNCH();
}

static int ltx2_norm_dispatch(void *stream, int dtype, bool layer, const void *x, void *y,
                              const void *w, const void *b, int64_t rows, int64_t dim, float eps,
                              ltx2_rms_io io) {
    if (rows < 0 || dim <= 0 || rows > INT32_MAX) LTX2_K_BAD_ARG();
    if (rows == 0) return 0;
    if (!x || (!y && !io.ss_out)) LTX2_K_BAD_ARG();
    if (dtype == LTX2_KDT_F32) return ltx2_norm_t<float>(stream, layer, x, y, w, b, rows, dim, eps, io);
    if (dtype == LTX2_KDT_BF16)
        return ltx2_norm_t<__nv_bfloat16>(stream, layer, x, y, w, b, rows, dim, eps, io);
    LTX2_K_BAD_ARG();
}

extern "C" int ltx2_k_rms_norm(void *stream, int dtype, const void *x, void *y, const void *weight,
                               int64_t rows, int64_t dim, float eps) {
    ltx2_rms_io io = {NULL, NULL, (float)dim};
    return ltx2_norm_dispatch(stream, dtype, false, x, y, weight, NULL, rows, dim, eps, io);
}

extern "C" int ltx2_k_row_sumsq(void *stream, int dtype, const void *x, float *ss, int64_t rows, int64_t dim) {
    if (!ss && rows > 0) LTX2_K_BAD_ARG();
    ltx2_rms_io io = {NULL, ss, (float)dim};
    return ltx2_norm_dispatch(stream, dtype, false, x, NULL, NULL, NULL, rows, dim, 0.0f, io);
}

// Per-row sum, min and max (LTX-2.0's text feature statistics), one warp or block a row like the
// norms; fminf / fmaxf, so NaN never wins.
template <typename T, int V, bool WARP>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_row_stats_kernel(const T *__restrict__ x, float *__restrict__ st, int64_t rows, int64_t dim) {
    __shared__ float smem[32];
    ltx2_row_group<WARP> g;
    if (g.row >= rows) return;  // whole warps leave together; block mode never takes this
    const T *xr = x + g.row * dim;
    float s = 0.0f, lo = INFINITY, hi = -INFINITY;
    for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
        float v[V];
        ltx2_load<V>(xr + i, v);
#pragma unroll
        for (int j = 0; j < V; j++) {
            s += v[j];
            lo = fminf(lo, v[j]);
            hi = fmaxf(hi, v[j]);
        }
    }
    s = g.sum(s, smem);  // each reduction ends on a barrier: smem is free again
    lo = -g.max(-lo, smem);
    hi = g.max(hi, smem);
    if (g.tid == 0) {
        st[3 * g.row] = s;
        st[3 * g.row + 1] = lo;
        st[3 * g.row + 2] = hi;
    }
}

template <typename T>
static int ltx2_row_stats_t(cudaStream_t s, const T *x, float *st, int64_t rows, int64_t dim) {
    const bool warp = ltx2_k_row_use_warp(dim), vec = dim % ltx2_vec<T>::n == 0 && ltx2_k_aligned16(x);
    const unsigned blocks = ltx2_k_row_blocks(rows, warp);
    if (vec && warp)
        ltx2_launch<ltx2_row_stats_kernel<T, ltx2_vec<T>::n, true>>(blocks, LTX2_K_THREADS, 0, s, x, st, rows, dim);
    else if (vec)
        ltx2_launch<ltx2_row_stats_kernel<T, ltx2_vec<T>::n, false>>(blocks, LTX2_K_THREADS, 0, s, x, st, rows, dim);
    else if (warp)
        ltx2_launch<ltx2_row_stats_kernel<T, 1, true>>(blocks, LTX2_K_THREADS, 0, s, x, st, rows, dim);
    else
        ltx2_launch<ltx2_row_stats_kernel<T, 1, false>>(blocks, LTX2_K_THREADS, 0, s, x, st, rows, dim);
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_row_stats(void *stream, int dtype, const void *x, float *st, int64_t rows, int64_t dim) {
    if (rows < 0 || dim <= 0 || rows > INT32_MAX) LTX2_K_BAD_ARG();
    if (rows == 0) return 0;
    if (!x || !st) LTX2_K_BAD_ARG();
    cudaStream_t s = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32) return ltx2_row_stats_t<float>(s, (const float *)x, st, rows, dim);
    if (dtype == LTX2_KDT_BF16) return ltx2_row_stats_t<__nv_bfloat16>(s, (const __nv_bfloat16 *)x, st, rows, dim);
    LTX2_K_BAD_ARG();
}

extern "C" int ltx2_k_rms_apply(void *stream, int dtype, const void *x, void *y, const void *weight, const float *ss,
                                int64_t rows, int64_t dim, float n, float eps) {
    if ((!ss || !y) && rows > 0) LTX2_K_BAD_ARG();
    if (!(n >= (float)dim)) LTX2_K_BAD_ARG();
    ltx2_rms_io io = {ss, NULL, n};
    return ltx2_norm_dispatch(stream, dtype, false, x, y, weight, NULL, rows, dim, eps, io);
}

extern "C" int ltx2_k_layer_norm(void *stream, int dtype, const void *x, void *y,
                                 const void *weight, const void *bias, int64_t rows, int64_t dim,
                                 float eps) {
    ltx2_rms_io io = {NULL, NULL, (float)dim};
    return ltx2_norm_dispatch(stream, dtype, true, x, y, weight, bias, rows, dim, eps, io);
}

// x[i..i+V) += the normalised branch values v, each rounded to T as the RMSNorm would store it, the
// sum rounded as the add stores it; ss gathers the new x's squares for the norm that follows.
template <typename T, int V> struct ltx2_residual_add {
    T *x;
    float ss;
    __device__ __forceinline__ void operator()(int64_t i, const float *v) {
        float xv[V];
        ltx2_load<V>(x + i, xv);
#pragma unroll
        for (int j = 0; j < V; j++) {
            xv[j] = ltx2_to_f32(ltx2_from_f32<T>(xv[j] + ltx2_to_f32(ltx2_from_f32<T>(v[j]))));
            ss += xv[j] * xv[j];
        }
        ltx2_store<V>(x + i, xv);
    }
};

// x += RMSNorm(y) * wy, out = RMSNorm(x) * w, one row per warp or block as the RMSNorm kernel
// (the same launch geometry and vector width, so the same summation order): each value rounded to
// T where the three ops it replaces store it (RMSNorm(y) * wy, the sum, out), so the result is
// theirs bit for bit. A thread reads back only the x elements it wrote itself.
template <typename T, int V, bool WARP>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_add_rms_norm_kernel(T *x, const T *__restrict__ y, const T *__restrict__ wy, const T *__restrict__ w,
                         T *__restrict__ out, int64_t rows, int64_t dim, float eps) {
    __shared__ float smem[32];
    ltx2_row_group<WARP> g;
    if (g.row >= rows) return;
    T *xr = x + g.row * dim;
    const T *yr = y + g.row * dim;
    T *orow = out + g.row * dim;
    const float n = (float)dim;
    const float inv_y = rsqrtf(ltx2_row_sumsq_of<T, V, WARP>(g, yr, dim, smem) / n + eps);
    ltx2_residual_add<T, V> add = {xr, 0.0f};
    ltx2_row_scale_each<T, V, WARP>(g, yr, wy, inv_y, dim, add);
    ltx2_row_scale<T, V, WARP>(g, xr, w, rsqrtf(g.sum(add.ss, smem) / n + eps), dim, orow);
}

template <typename T>
static int ltx2_add_rms_norm_t(cudaStream_t s, T *x, const T *y, const T *wy, const T *w, T *out, int64_t rows,
                               int64_t dim, float eps) {
    const bool warp = ltx2_k_row_use_warp(dim);
    const bool vec = dim % ltx2_vec<T>::n == 0 && ltx2_k_aligned16(x) && ltx2_k_aligned16(y) &&
                     ltx2_k_aligned16(out) && (!wy || ltx2_k_aligned16(wy)) && (!w || ltx2_k_aligned16(w));
    const unsigned blocks = ltx2_k_row_blocks(rows, warp);
    if (vec && warp)
        ltx2_launch<ltx2_add_rms_norm_kernel<T, ltx2_vec<T>::n, true>>(blocks, LTX2_K_THREADS, 0, s, x, y, wy, w, out,
                                                                       rows, dim, eps);
    else if (vec)
        ltx2_launch<ltx2_add_rms_norm_kernel<T, ltx2_vec<T>::n, false>>(blocks, LTX2_K_THREADS, 0, s, x, y, wy, w, out,
                                                                        rows, dim, eps);
    else if (warp)
        ltx2_launch<ltx2_add_rms_norm_kernel<T, 1, true>>(blocks, LTX2_K_THREADS, 0, s, x, y, wy, w, out, rows, dim,
                                                          eps);
    else
        ltx2_launch<ltx2_add_rms_norm_kernel<T, 1, false>>(blocks, LTX2_K_THREADS, 0, s, x, y, wy, w, out, rows, dim,
                                                           eps);
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_add_rms_norm(void *stream, int dtype, void *x, const void *y, const void *wy, const void *w,
                                   void *out, int64_t rows, int64_t dim, float eps) {
    if (rows < 0 || dim <= 0 || rows > INT32_MAX) LTX2_K_BAD_ARG();
    if (rows == 0) return 0;
    if (!x || !y || !out || out == x) LTX2_K_BAD_ARG();
    cudaStream_t s = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        return ltx2_add_rms_norm_t<float>(s, (float *)x, (const float *)y, (const float *)wy, (const float *)w,
                                          (float *)out, rows, dim, eps);
    if (dtype == LTX2_KDT_BF16) {
        typedef __nv_bfloat16 B;
        return ltx2_add_rms_norm_t<B>(s, (B *)x, (const B *)y, (const B *)wy, (const B *)w, (B *)out, rows, dim, eps);
    }
    LTX2_K_BAD_ARG();
}
