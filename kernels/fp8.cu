// fp8 e4m3fn <-> f32 / bf16 with a per-tensor scale: decode then multiply (dequantise), or
// multiply by 1/scale (rounded to bf16 for a bf16 source, as torch's bf16 x * f32 reciprocal is a
// bf16 tensor in ltx-core's FP8Linear) then encode (quantise) with torch's saturating cast
// (src/core/dtype.c: round to nearest even, |x| past 448 and +-inf clamp to +-448, NaN keeps its
// sign as 0x7F|sign), as the CPU backend's fp8 op does for f32. The encoder is integer arithmetic (kernels/fp8_layout.h, checked by
// tests/test_layout_fp8.c) so it is bit-identical to the CPU cast on every GPU (sm_80 has no fp8
// convert instruction). 16 elements per thread-iteration: one 16-byte fp8 access.
#include "common.cuh"
#include "fp8_layout.h"

// Elements per vector iteration: 16 fp8 bytes.
#define LTX2_FP8_V 16

template <typename T, int V>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_fp8_dequant_kernel(const uint8_t *__restrict__ src, T *dst, int64_t n_vec, float scale) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
        // 16-byte aligned: written as one uint4 below (a byte array is only 1-byte aligned)
        __align__(16) uint8_t b[V];
        if constexpr (V == LTX2_FP8_V) {
            *reinterpret_cast<uint4 *>(b) = *reinterpret_cast<const uint4 *>(src + i * V);
        } else {
            b[0] = src[i];
        }
        float v[V];
#pragma unroll
        for (int j = 0; j < V; j++) v[j] = ltx2_e4m3_to_f32(b[j]) * scale;
        const int VS = ltx2_vec<T>::n;
        if constexpr (V == LTX2_FP8_V) {
#pragma unroll
            for (int j = 0; j < V; j += VS) ltx2_store<VS>(dst + i * V + j, v + j);
        } else {
            ltx2_store<1>(dst + i, v);
        }
    }
}

template <typename T, int V>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_fp8_quant_kernel(const T *__restrict__ src, uint8_t *dst, int64_t n_vec, float inv_scale) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
        float v[V];
        const int VS = ltx2_vec<T>::n;
        if constexpr (V == LTX2_FP8_V) {
#pragma unroll
            for (int j = 0; j < V; j += VS) ltx2_load<VS>(src + i * V + j, v + j);
        } else {
            ltx2_load<1>(src + i, v);
        }
        __align__(16) uint8_t b[V]; // read as one uint4 below
#pragma unroll
        for (int j = 0; j < V; j++) b[j] = (uint8_t)ltx2_fp8_quant_scaled(v[j], inv_scale, ltx2_is_bf16<T>::value);
        if constexpr (V == LTX2_FP8_V) {
            *reinterpret_cast<uint4 *>(dst + i * V) = *reinterpret_cast<const uint4 *>(b);
        } else {
            dst[i] = b[0];
        }
    }
}

template <typename T>
static int ltx2_fp8_t(cudaStream_t s, bool quant, const void *src, void *dst, int64_t n, float scale) {
    bool vec = n % LTX2_FP8_V == 0 && ltx2_k_aligned16(src) && ltx2_k_aligned16(dst);
    int64_t work = vec ? n / LTX2_FP8_V : n;
    unsigned grid = ltx2_k_grid(work, LTX2_K_THREADS);
    if (quant) {
        if (vec)
            ltx2_launch<ltx2_fp8_quant_kernel<T, LTX2_FP8_V>>(grid, LTX2_K_THREADS, 0, s,
                (const T *)src, (uint8_t *)dst, work, scale);
        else
            ltx2_launch<ltx2_fp8_quant_kernel<T, 1>>(grid, LTX2_K_THREADS, 0, s,
                (const T *)src, (uint8_t *)dst, work, scale);
    } else {
        if (vec)
            ltx2_launch<ltx2_fp8_dequant_kernel<T, LTX2_FP8_V>>(grid, LTX2_K_THREADS, 0, s,
                (const uint8_t *)src, (T *)dst, work, scale);
        else
            ltx2_launch<ltx2_fp8_dequant_kernel<T, 1>>(grid, LTX2_K_THREADS, 0, s,
                (const uint8_t *)src, (T *)dst, work, scale);
    }
    LTX2_K_RETURN_LAUNCH();
}

static int ltx2_fp8_dispatch(void *stream, bool quant, int dtype, const void *src, void *dst, int64_t n,
                             float scale) {
    if (n < 0) LTX2_K_BAD_ARG();
    if (n == 0) return 0;
    if (!src || !dst) LTX2_K_BAD_ARG();
    cudaStream_t s = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32) return ltx2_fp8_t<float>(s, quant, src, dst, n, scale);
    if (dtype == LTX2_KDT_BF16) return ltx2_fp8_t<__nv_bfloat16>(s, quant, src, dst, n, scale);
    LTX2_K_BAD_ARG();
}

extern "C" int ltx2_k_fp8_dequant(void *stream, const uint8_t *src, int dst_dtype, void *dst, int64_t n,
                                  float scale) {
    return ltx2_fp8_dispatch(stream, false, dst_dtype, src, dst, n, scale);
}

extern "C" int ltx2_k_fp8_quant(void *stream, int src_dtype, const void *src, uint8_t *dst, int64_t n,
                                float inv_scale) {
    return ltx2_fp8_dispatch(stream, true, src_dtype, src, dst, n, inv_scale);
}
