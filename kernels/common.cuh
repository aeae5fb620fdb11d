// Shared device helpers for kernels/*.cu: launch-error return, warp/block reductions, 16-byte
// vector loads/stores that widen to fp32, and bf16 conversions. C-style, no STL.
#ifndef LTX2_KERNELS_COMMON_CUH
#define LTX2_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "ltx2_kernels.h"

// Threads per block for the streaming kernels: 8 warps keeps enough loads in flight per SM
// without limiting occupancy through registers.
#define LTX2_K_THREADS 256
// Grid-stride kernels launch at most this many blocks; beyond it each thread loops. 64K blocks
// of 256 threads is far more than any GPU keeps resident at once.
#define LTX2_K_MAX_BLOCKS 65536

// Reports a bad launcher argument the same way CUDA reports a bad launch.
#define LTX2_K_BAD_ARG() return (int)cudaErrorInvalidValue
// After a launch: the launch error, if any (asynchronous errors surface at the next sync).
#define LTX2_K_RETURN_LAUNCH() return (int)cudaGetLastError()

// ---- launching ----
// Every launch site is ltx2_launch<kernel>(grid, block, dyn_smem, stream, args...): the <<<>>>
// launch under nvcc; under the CPU emulator (LTX2_EMU, tests/emu/) a run of the kernel body on
// every emulated thread, the kernel's name (from K in __PRETTY_FUNCTION__) naming any fault.
#ifdef LTX2_EMU
template <auto K, typename... A>
static inline void ltx2_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t, A... args) {
    auto body = [&]() { K(args...); };
    (void)ltx2_emu_launch(__PRETTY_FUNCTION__, ltx2_emu_dim(grid), ltx2_emu_dim(block), smem,
                          ltx2_emu_run_closure<decltype(body)>, &body);
}
#else
template <auto K, typename... A>
static inline void ltx2_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, A... args) {
    K<<<grid, block, smem, stream>>>(args...);
}
#endif

// Declares a kernel's dynamic shared memory as `type name[]`, 16-byte aligned. Under the emulator
// it is the block's own buffer, allocated with exactly the launch's size (ASan sees overruns).
#ifdef LTX2_EMU
#define LTX2_K_DYN_SMEM(type, name) type *const name = static_cast<type *>(ltx2_emu_dyn_smem())
#else
#define LTX2_K_DYN_SMEM(type, name) extern __shared__ __align__(16) type name[]
#endif

static inline unsigned ltx2_k_grid(int64_t work, int threads) {
    int64_t blocks = (work + threads - 1) / threads;
    if (blocks < 1) blocks = 1;
    if (blocks > LTX2_K_MAX_BLOCKS) blocks = LTX2_K_MAX_BLOCKS;
    return (unsigned)blocks;
}

static inline bool ltx2_k_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

// ---- scalar conversions ----
__device__ __forceinline__ float ltx2_to_f32(float v) { return v; }
__device__ __forceinline__ float ltx2_to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T ltx2_from_f32(float v);
template <> __device__ __forceinline__ float ltx2_from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 ltx2_from_f32<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

// Whether T is bf16 (fp8 quantisation rounds a bf16 source's scaled value to bf16 first, as torch).
template <typename T> struct ltx2_is_bf16 { static const bool value = false; };
template <> struct ltx2_is_bf16<__nv_bfloat16> { static const bool value = true; };

// Elements of T in one 16-byte access.
template <typename T> struct ltx2_vec { static const int n = 16 / (int)sizeof(T); };

// ---- V-element loads/stores widening to fp32. V == ltx2_vec<T>::n uses one 16-byte access
// (pointer must be 16-byte aligned); any other V falls back to scalar accesses. ----
template <int V> __device__ __forceinline__ void ltx2_load(const float *p, float *v) {
    if constexpr (V == 4) {
        float4 q = *reinterpret_cast<const float4 *>(p);
        v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
    } else {
#pragma unroll
        for (int i = 0; i < V; i++) v[i] = p[i];
    }
}
template <int V> __device__ __forceinline__ void ltx2_load(const __nv_bfloat16 *p, float *v) {
    if constexpr (V == 8) {
        uint4 q = *reinterpret_cast<const uint4 *>(p);
        const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&q);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            float2 f = __bfloat1622float2(h[i]);
            v[2 * i] = f.x;
            v[2 * i + 1] = f.y;
        }
    } else {
#pragma unroll
        for (int i = 0; i < V; i++) v[i] = __bfloat162float(p[i]);
    }
}
// V fp32 values: 16-byte accesses when V is a multiple of 4 (p 16-byte aligned then: the caller
// checked), else one by one.
// V values from p, or V copies of fill when p is NULL (an optional weight or bias vector).
template <int V, typename T> __device__ __forceinline__ void ltx2_load_or(const T *p, float fill, float *v) {
    if (p) {
        ltx2_load<V>(p, v);
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) v[j] = fill;
    }
}
template <int V> __device__ __forceinline__ void ltx2_load_f32v(const float *p, float *v) {
    if constexpr (V % 4 == 0) {
#pragma unroll
        for (int j = 0; j < V; j += 4) ltx2_load<4>(p + j, v + j);
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) v[j] = p[j];
    }
}
template <int V> __device__ __forceinline__ void ltx2_store(float *p, const float *v) {
    if constexpr (V == 4) {
        *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
#pragma unroll
        for (int i = 0; i < V; i++) p[i] = v[i];
    }
}
template <int V> __device__ __forceinline__ void ltx2_store(__nv_bfloat16 *p, const float *v) {
    if constexpr (V == 8) {
        uint4 q;
        __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&q);
#pragma unroll
        for (int i = 0; i < 4; i++) h[i] = __floats2bfloat162_rn(v[2 * i], v[2 * i + 1]);
        *reinterpret_cast<uint4 *>(p) = q;
    } else {
#pragma unroll
        for (int i = 0; i < V; i++) p[i] = __float2bfloat16_rn(v[i]);
    }
}

// ---- reductions ----
__device__ __forceinline__ float ltx2_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float ltx2_warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// Whole-block reductions; every thread gets the result. smem holds >= 32 floats. The trailing
// barrier lets the caller reuse smem for the next reduction. blockDim.x must be a multiple of 32.
__device__ __forceinline__ float ltx2_block_sum(float v, float *smem) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = ltx2_warp_sum(v);
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    float r = 0.0f;
    for (int i = 0; i < nw; i++) r += smem[i];
    __syncthreads();
    return r;
}
__device__ __forceinline__ float ltx2_block_max(float v, float *smem) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = ltx2_warp_max(v);
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    float r = -INFINITY;
    for (int i = 0; i < nw; i++) r = fmaxf(r, smem[i]);
    __syncthreads();
    return r;
}

// Row kernels run either one warp per row (WARP, short rows: several rows per block) or one
// block per row (long rows). These give the row, the thread's index in its group and the
// group size, and reduce across the group.
#define LTX2_K_ROW_WARP_MAX_DIM 1024
template <bool WARP> struct ltx2_row_group {
    int64_t row;
    int tid, size;
    __device__ __forceinline__ ltx2_row_group() {
        if (WARP) {
            row = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
            tid = threadIdx.x & 31;
            size = 32;
        } else {
            row = blockIdx.x;
            tid = threadIdx.x;
            size = blockDim.x;
        }
    }
    __device__ __forceinline__ float sum(float v, float *smem) const {
        return WARP ? ltx2_warp_sum(v) : ltx2_block_sum(v, smem);
    }
    __device__ __forceinline__ float max(float v, float *smem) const {
        return WARP ? ltx2_warp_max(v) : ltx2_block_max(v, smem);
    }
};

// The sum of squares of a row of dim values over the group (each thread's strided V-wide share,
// then the group's sum): one summation order for every RMSNorm, so fused kernels that normalise
// give the RMSNorm kernel's bits.
template <typename T, int V, bool WARP>
__device__ __forceinline__ float ltx2_row_sumsq_of(const ltx2_row_group<WARP> &g, const T *row, int64_t dim,
                                                   float *smem) {
    float ss = 0.0f;
    for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
        float v[V];
        ltx2_load<V>(row + i, v);
#pragma unroll
        for (int j = 0; j < V; j++) ss += v[j] * v[j];
    }
    return g.sum(ss, smem);
}

// row * inv * w over the group's shares (w NULL: 1), V values at a time handed to sink(i, v) (v: the
// V values from row index i, unrounded): the RMSNorm's application, with the same shares as
// ltx2_row_sumsq_of. ltx2_row_scale stores them; fused kernels do more with them first.
template <typename T, int V, bool WARP, typename Sink>
__device__ __forceinline__ void ltx2_row_scale_each(const ltx2_row_group<WARP> &g, const T *row, const T *w,
                                                    float inv, int64_t dim, Sink &sink) {
    for (int64_t i = (int64_t)g.tid * V; i < dim; i += (int64_t)g.size * V) {
        float v[V], wv[V];
        ltx2_load<V>(row + i, v);
        ltx2_load_or<V>(w ? w + i : NULL, 1.0f, wv);
#pragma unroll
        for (int j = 0; j < V; j++) v[j] = v[j] * inv * wv[j];
        sink(i, v);
    }
}

template <typename T, int V> struct ltx2_row_store {
    T *out;
    __device__ __forceinline__ void operator()(int64_t i, float *v) const { ltx2_store<V>(out + i, v); }
};

// out = row * inv * w (out may be row).
template <typename T, int V, bool WARP>
__device__ __forceinline__ void ltx2_row_scale(const ltx2_row_group<WARP> &g, const T *row, const T *w, float inv,
                                               int64_t dim, T *out) {
    ltx2_row_store<T, V> st = {out};
    ltx2_row_scale_each<T, V, WARP>(g, row, w, inv, dim, st);
}

// Launch geometry for a row kernel: warp-per-row packs LTX2_K_THREADS/32 rows per block.
static inline bool ltx2_k_row_use_warp(int64_t dim) { return dim <= LTX2_K_ROW_WARP_MAX_DIM; }
static inline unsigned ltx2_k_row_blocks(int64_t rows, bool warp) {
    return warp ? (unsigned)((rows + (LTX2_K_THREADS / 32) - 1) / (LTX2_K_THREADS / 32))
                : (unsigned)rows;
}

#endif
