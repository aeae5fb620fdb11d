// f32 <-> bf16 conversion (round to nearest even, NaN preserved): grid-stride over 8-element
// groups (one 16-byte bf16 access, two float4s) when n and the pointers allow.
#include "common.cuh"

// Elements per thread-iteration in the vector path: one 16-byte bf16 vector.
#define LTX2_CONVERT_V 8

template <typename S, typename D, int V>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_convert_kernel(const S *src, D *dst, int64_t n_vec) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
        float v[V];
        if constexpr (V == LTX2_CONVERT_V && sizeof(S) == 4) {
            ltx2_load<4>(src + i * V, v);
            ltx2_load<4>(src + i * V + 4, v + 4);
        } else {
            ltx2_load<V>(src + i * V, v);
        }
        if constexpr (V == LTX2_CONVERT_V && sizeof(D) == 4) {
            ltx2_store<4>(dst + i * V, v);
            ltx2_store<4>(dst + i * V + 4, v + 4);
        } else {
            ltx2_store<V>(dst + i * V, v);
        }
    }
}

template <typename S, typename D>
static int ltx2_convert_t(cudaStream_t s, const void *srcv, void *dstv, int64_t n) {
    const S *src = (const S *)srcv;
    D *dst = (D *)dstv;
    if (n % LTX2_CONVERT_V == 0 && ltx2_k_aligned16(src) && ltx2_k_aligned16(dst)) {
        int64_t nv = n / LTX2_CONVERT_V;
        ltx2_launch<ltx2_convert_kernel<S, D, LTX2_CONVERT_V>>(ltx2_k_grid(nv, LTX2_K_THREADS), LTX2_K_THREADS, 0, s,
            src, dst, nv);
    } else {
        ltx2_launch<ltx2_convert_kernel<S, D, 1>>(ltx2_k_grid(n, LTX2_K_THREADS), LTX2_K_THREADS, 0, s, src, dst, n);
    }
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_convert(void *stream, int src_dtype, const void *src, int dst_dtype,
                              void *dst, int64_t n) {
    if (n < 0) LTX2_K_BAD_ARG();
    if (n == 0) return 0;
    if (!src || !dst) LTX2_K_BAD_ARG();
    cudaStream_t s = (cudaStream_t)stream;
    if (src_dtype == LTX2_KDT_F32 && dst_dtype == LTX2_KDT_BF16)
        return ltx2_convert_t<float, __nv_bfloat16>(s, src, dst, n);
    if (src_dtype == LTX2_KDT_BF16 && dst_dtype == LTX2_KDT_F32)
        return ltx2_convert_t<__nv_bfloat16, float>(s, src, dst, n);
    if (src_dtype == LTX2_KDT_F32 && dst_dtype == LTX2_KDT_F32)
        return ltx2_convert_t<float, float>(s, src, dst, n);
    if (src_dtype == LTX2_KDT_BF16 && dst_dtype == LTX2_KDT_BF16)
        return ltx2_convert_t<__nv_bfloat16, __nv_bfloat16>(s, src, dst, n);
    LTX2_K_BAD_ARG();
}
