// The DiT's fused memory-bound steps, one pass each: normalise (none / RMS / LayerNorm without
// affine) + AdaLN modulate, gated residual add, and the LTX-2.3 per-head attention gate. The
// modulation rows (scale, shift, gate) are fp32 (the block precomputes table + AdaLN in fp32, as
// the CPU reference does); x / y are f32 or bf16 with fp32 arithmetic. A token row r uses
// modulation row row_idx[r] when row_idx is given (per-token timesteps), else r / rows_per_group
// (per-sample); the index arithmetic lives in fused_layout.h (checked on the CPU by
// tests/test_layout_fused.c). 16-byte accesses whenever the row length and the pointers allow.
// norm_modulate can also write fp8 copies of its output for the fp8 GEMMs that read it (q / k /
// v / gate each with their own input scale), with or without the output itself: the copies are
// bit for bit what the fp8 quantise kernel makes from the stored output, without the output's
// write and one re-read per copy.
#include "common.cuh"
#include "fp8_layout.h"
#include "fused_layout.h"

// V fp8 bytes in one access (8: a bf16 vector's worth, 4: an f32 one), else one by one.
template <int V> __device__ __forceinline__ void ltx2_store_u8(uint8_t *p, const uint8_t *b) {
    if constexpr (V == 8) {
        *reinterpret_cast<uint2 *>(p) = *reinterpret_cast<const uint2 *>(b);
    } else if constexpr (V == 4) {
        *reinterpret_cast<uint32_t *>(p) = *reinterpret_cast<const uint32_t *>(b);
    } else {
#pragma unroll
        for (int i = 0; i < V; i++) p[i] = b[i];
    }
}

// A launcher's fp8 copies are well formed: 0..LTX2_K_FP8_OUTS_MAX of them, each with a pointer and a
// positive scale, and something written (no_y needs a copy).
static bool ltx2_k_fp8_outs_ok(const ltx2_k_fp8_outs &q) {
    if (q.n < 0 || q.n > LTX2_K_FP8_OUTS_MAX || (q.no_y && q.n == 0)) return false;
    for (int k = 0; k < q.n; k++)
        if (!q.q[k] || !(q.inv_scale[k] > 0.0f)) return false;
    return true;
}

// Elements [e, e + V) of each fp8 copy in q from the output values v as computed: rounded to T as
// the output is stored, then quantised as the quantise kernel does (fp8_layout.h). v is rounded in
// place.
template <typename T, int V>
__device__ __forceinline__ void ltx2_store_fp8_copies(const ltx2_k_fp8_outs &q, int64_t e, float *v) {
#pragma unroll
    for (int j = 0; j < V; j++) v[j] = ltx2_to_f32(ltx2_from_f32<T>(v[j]));
#pragma unroll
    for (int k = 0; k < LTX2_K_FP8_OUTS_MAX; k++) {
        if (k >= q.n) break;
        __align__(8) uint8_t c[V]; // stored as one access by ltx2_store_u8
#pragma unroll
        for (int j = 0; j < V; j++) c[j] = (uint8_t)ltx2_fp8_quant_scaled(v[j], q.inv_scale[k], ltx2_is_bf16<T>::value);
        ltx2_store_u8<V>(q.q[k] + e, c);
    }
}


// x carries no __restrict__: y may alias x (in-place modulate), and a restrict pointer promises
// that the memory it reads is not written through another pointer during the kernel.
template <typename T, int V, bool WARP, int NORM>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_norm_modulate_kernel(const T *x, T *y, const float *__restrict__ scale,
                          const float *__restrict__ shift, int64_t mod_stride, const int32_t *__restrict__ row_idx,
                          int64_t rows_per_group, int64_t rows, int64_t dim, float eps, ltx2_k_fp8_outs q) {
    __shared__ float smem[32];
    ltx2_row_group<WARP> g;
    if (g.row >= rows) return;
    // table offset before the reductions: computed after them, ptxas spilled 8 bytes on sm_80
    const int64_t m0 = ltx2_fused_mod_off(row_idx, rows_per_group, mod_stride, g.row, 0);
    const float *sc = scale + m0, *sh = shift + m0;
    const T *xr = x + g.row * dim;
    T *yr = y + g.row * dim;
    float mean = 0.0f, inv = 1.0f;
    if constexpr (NORM == LTX2_KNORM_RMS) {
        inv = rsqrtf(ltx2_row_sumsq_of<T, V, WARP>(g, xr, dim, smem) / (float)dim + eps);
    } else if constexpr (NORM == LTX2_KNORM_LAYER) {
        float s = 0.0f;
        for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
            float v[V];
            ltx2_load<V>(xr + i, v);
#pragma unroll
            for (int j = 0; j < V; j++) s += v[j];
        }
        mean = g.sum(s, smem) / (float)dim;
        // second pass over (x - mean): no E[x^2] - mean^2 cancellation
        float sq = 0.0f;
        for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
            float v[V];
            ltx2_load<V>(xr + i, v);
#pragma unroll
            for (int j = 0; j < V; j++) sq += (v[j] - mean) * (v[j] - mean);
        }
        inv = rsqrtf(g.sum(sq, smem) / (float)dim + eps);
    }
    for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
        float v[V], a[V], b[V];
        ltx2_load<V>(xr + i, v);
        ltx2_load_f32v<V>(sc + i, a);
        ltx2_load_f32v<V>(sh + i, b);
#pragma unroll
        for (int j = 0; j < V; j++) {
            float xn = NORM == LTX2_KNORM_NONE ? v[j] : (NORM == LTX2_KNORM_RMS ? v[j] * inv : (v[j] - mean) * inv);
            v[j] = xn * (1.0f + a[j]) + b[j];
        }
        if (!q.no_y) ltx2_store<V>(yr + i, v);
        if (q.n > 0) ltx2_store_fp8_copies<T, V>(q, g.row * dim + i, v);
    }
}

template <typename T, int V, int NORM>
static void ltx2_norm_modulate_launch(cudaStream_t s, const ltx2_k_modulate_args *a) {
    bool warp = ltx2_k_row_use_warp(a->dim);
    unsigned blocks = ltx2_k_row_blocks(a->rows, warp);
    const T *x = (const T *)a->x;
    T *y = (T *)a->y;
    if (warp)
        ltx2_launch<ltx2_norm_modulate_kernel<T, V, true, NORM>>(blocks, LTX2_K_THREADS, 0, s,
            x, y, a->scale, a->shift, a->mod_stride, a->row_idx, a->rows_per_group, a->rows, a->dim, a->eps, a->q);
    else
        ltx2_launch<ltx2_norm_modulate_kernel<T, V, false, NORM>>(blocks, LTX2_K_THREADS, 0, s,
            x, y, a->scale, a->shift, a->mod_stride, a->row_idx, a->rows_per_group, a->rows, a->dim, a->eps, a->q);
}

template <typename T, int V>
static int ltx2_norm_modulate_v(cudaStream_t s, const ltx2_k_modulate_args *a) {
    if (a->norm == LTX2_KNORM_NONE) ltx2_norm_modulate_launch<T, V, LTX2_KNORM_NONE>(s, a);
    else if (a->norm == LTX2_KNORM_RMS) ltx2_norm_modulate_launch<T, V, LTX2_KNORM_RMS>(s, a);
    else if (a->norm == LTX2_KNORM_LAYER) ltx2_norm_modulate_launch<T, V, LTX2_KNORM_LAYER>(s, a);
    else LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}

template <typename T>
static int ltx2_norm_modulate_t(cudaStream_t s, const ltx2_k_modulate_args *a) {
    const int VN = ltx2_vec<T>::n;
    bool vec = a->dim % VN == 0 && a->mod_stride % 4 == 0 && ltx2_k_aligned16(a->x) && ltx2_k_aligned16(a->y) &&
               ltx2_k_aligned16(a->scale) && ltx2_k_aligned16(a->shift);
    for (int k = 0; k < a->q.n; k++) vec = vec && ltx2_k_aligned16(a->q.q[k]);
    return vec ? ltx2_norm_modulate_v<T, ltx2_vec<T>::n>(s, a) : ltx2_norm_modulate_v<T, 1>(s, a);
}

extern "C" int ltx2_k_norm_modulate(void *stream, int dtype, const ltx2_k_modulate_args *a) {
    if (!a || a->rows < 0 || a->dim <= 0 || a->rows > INT32_MAX || a->mod_stride < a->dim) LTX2_K_BAD_ARG();
    if (a->rows == 0) return 0;
    if (!a->x || !a->y || !a->scale || !a->shift || (!a->row_idx && a->rows_per_group < 1)) LTX2_K_BAD_ARG();
    if (!ltx2_k_fp8_outs_ok(a->q)) LTX2_K_BAD_ARG();
    cudaStream_t s = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32) return ltx2_norm_modulate_t<float>(s, a);
    if (dtype == LTX2_KDT_BF16) return ltx2_norm_modulate_t<__nv_bfloat16>(s, a);
    LTX2_K_BAD_ARG();
}

// x[r, c] += y[r, c] * gate[row(r), c] (gate NULL: plain add), flattened over rows * dim.
template <typename T, int V>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_gated_add_kernel(T *x, const T *__restrict__ y, const float *__restrict__ gate, int64_t gate_stride,
                      const int32_t *__restrict__ row_idx, int64_t rows_per_group, int64_t dim, int64_t n_vec) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
        const int64_t e = i * V;
        float xv[V], yv[V], gv[V];
        if (gate) {
            // dim % V == 0 on the vector path: the V elements share a row, so their gates are
            // the V consecutive table elements from this offset
            ltx2_load_f32v<V>(gate + ltx2_fused_mod_off_flat(row_idx, rows_per_group, gate_stride, dim, e), gv);
        } else {
#pragma unroll
            for (int j = 0; j < V; j++) gv[j] = 1.0f;
        }
        ltx2_load<V>(x + e, xv);
        ltx2_load<V>(y + e, yv);
#pragma unroll
        for (int j = 0; j < V; j++) xv[j] = xv[j] + yv[j] * gv[j];
        ltx2_store<V>(x + e, xv);
    }
}

template <typename T>
static int ltx2_gated_add_t(cudaStream_t s, void *xv, const void *yv, const float *gate, int64_t gate_stride,
                            const int32_t *row_idx, int64_t rows_per_group, int64_t rows, int64_t dim) {
    T *x = (T *)xv;
    const T *y = (const T *)yv;
    const int VN = ltx2_vec<T>::n;
    const int64_t n = rows * dim;
    bool vec = dim % VN == 0 && ltx2_k_aligned16(x) && ltx2_k_aligned16(y) &&
               (!gate || (gate_stride % 4 == 0 && ltx2_k_aligned16(gate)));
    if (vec)
        ltx2_launch<ltx2_gated_add_kernel<T, ltx2_vec<T>::n>>(ltx2_k_grid(n / VN, LTX2_K_THREADS), LTX2_K_THREADS, 0, s,
            x, y, gate, gate_stride, row_idx, rows_per_group, dim, n / VN);
    else
        ltx2_launch<ltx2_gated_add_kernel<T, 1>>(ltx2_k_grid(n, LTX2_K_THREADS), LTX2_K_THREADS, 0, s,
            x, y, gate, gate_stride, row_idx, rows_per_group, dim, n);
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_gated_add(void *stream, int dtype, void *x, const void *y, const float *gate,
                                int64_t gate_stride, const int32_t *row_idx, int64_t rows_per_group, int64_t rows,
                                int64_t dim) {
    if (rows < 0 || dim <= 0 || (gate && gate_stride < dim)) LTX2_K_BAD_ARG();
    if (rows == 0) return 0;
    if (!x || !y || (gate && !row_idx && rows_per_group < 1)) LTX2_K_BAD_ARG();
    cudaStream_t s = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        return ltx2_gated_add_t<float>(s, x, y, gate, gate_stride, row_idx, rows_per_group, rows, dim);
    if (dtype == LTX2_KDT_BF16)
        return ltx2_gated_add_t<__nv_bfloat16>(s, x, y, gate, gate_stride, row_idx, rows_per_group, rows, dim);
    LTX2_K_BAD_ARG();
}

// o[r, h*d + j] *= 2 * sigmoid(logits[r, h]) (LTX-2.3 gated attention, per head).
template <typename T, int V>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_head_gate_kernel(T *o, const T *__restrict__ logits, int64_t heads, int64_t head_dim, int64_t n_vec,
                      ltx2_k_fp8_outs q) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
        const int64_t e = i * V;  // head_dim % V == 0 on the vector path: one head per vector
        float lv = ltx2_to_f32(logits[ltx2_fused_head_logit(heads, head_dim, e)]);
        float gv = 2.0f / (1.0f + expf(-lv));
        float v[V];
        ltx2_load<V>(o + e, v);
#pragma unroll
        for (int j = 0; j < V; j++) v[j] *= gv;
        if (!q.no_y) ltx2_store<V>(o + e, v);
        if (q.n > 0) ltx2_store_fp8_copies<T, V>(q, e, v);
    }
}

template <typename T>
static int ltx2_head_gate_t(cudaStream_t s, void *ov, const void *lv, int64_t rows, int64_t heads, int64_t hd,
                            const ltx2_k_fp8_outs &q) {
    T *o = (T *)ov;
    const T *l = (const T *)lv;
    const int VN = ltx2_vec<T>::n;
    const int64_t n = rows * heads * hd;
    bool vec = hd % VN == 0 && ltx2_k_aligned16(o);
    for (int k = 0; k < q.n; k++) vec = vec && ltx2_k_aligned16(q.q[k]);
    if (vec)
        ltx2_launch<ltx2_head_gate_kernel<T, ltx2_vec<T>::n>>(ltx2_k_grid(n / VN, LTX2_K_THREADS), LTX2_K_THREADS, 0, s,
            o, l, heads, hd, n / VN, q);
    else
        ltx2_launch<ltx2_head_gate_kernel<T, 1>>(ltx2_k_grid(n, LTX2_K_THREADS), LTX2_K_THREADS, 0, s,
            o, l, heads, hd, n, q);
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_head_gate(void *stream, int dtype, void *o, const void *logits, int64_t rows, int64_t heads,
                                int64_t head_dim, const ltx2_k_fp8_outs *q) {
    if (rows < 0 || heads <= 0 || head_dim <= 0) LTX2_K_BAD_ARG();
    if (rows == 0) return 0;
    if (!o || !logits) LTX2_K_BAD_ARG();
    const ltx2_k_fp8_outs none = {};
    const ltx2_k_fp8_outs &qq = q ? *q : none;
    if (!ltx2_k_fp8_outs_ok(qq)) LTX2_K_BAD_ARG();
    cudaStream_t s = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32) return ltx2_head_gate_t<float>(s, o, logits, rows, heads, head_dim, qq);
    if (dtype == LTX2_KDT_BF16) return ltx2_head_gate_t<__nv_bfloat16>(s, o, logits, rows, heads, head_dim, qq);
    LTX2_K_BAD_ARG();
}
