// Pointwise activations (GELU with torch's tanh approximation, SiLU): grid-stride, 16-byte
// vector accesses when n and the pointers allow.
#include "common.cuh"

// sqrt(2/pi) and the cubic coefficient, as torch's gelu(approximate='tanh').
#define LTX2_GELU_SQRT_2_OVER_PI 0.7978845608028654f
#define LTX2_GELU_COEF_A 0.044715f

template <int OP> __device__ __forceinline__ float ltx2_act(float v) {
    if constexpr (OP == LTX2_KUNARY_GELU_TANH) {
        float inner = LTX2_GELU_SQRT_2_OVER_PI * (v + LTX2_GELU_COEF_A * v * v * v);
        return 0.5f * v * (1.0f + tanhf(inner));
    } else {
        return v / (1.0f + expf(-v));
    }
}

template <typename T, int V, int OP>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_unary_kernel(const T *x, T *y, int64_t n_vec) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
        float v[V];
        ltx2_load<V>(x + i * V, v);
#pragma unroll
        for (int j = 0; j < V; j++) v[j] = ltx2_act<OP>(v[j]);
        ltx2_store<V>(y + i * V, v);
    }
}

template <typename T, int OP>
static void ltx2_unary_launch(cudaStream_t s, const T *x, T *y, int64_t n) {
    const int VN = ltx2_vec<T>::n;
    if (n % VN == 0 && ltx2_k_aligned16(x) && ltx2_k_aligned16(y)) {
        int64_t nv = n / VN;
        ltx2_launch<ltx2_unary_kernel<T, ltx2_vec<T>::n, OP>>(ltx2_k_grid(nv, LTX2_K_THREADS), LTX2_K_THREADS, 0, s,
            x, y, nv);
    } else {
        ltx2_launch<ltx2_unary_kernel<T, 1, OP>>(ltx2_k_grid(n, LTX2_K_THREADS), LTX2_K_THREADS, 0, s, x, y, n);
    }
}

template <typename T>
static int ltx2_unary_t(void *stream, int op, const void *x, void *y, int64_t n) {
    cudaStream_t s = (cudaStream_t)stream;
    if (op == LTX2_KUNARY_GELU_TANH)
        ltx2_unary_launch<T, LTX2_KUNARY_GELU_TANH>(s, (const T *)x, (T *)y, n);
    else if (op == LTX2_KUNARY_SILU)
        ltx2_unary_launch<T, LTX2_KUNARY_SILU>(s, (const T *)x, (T *)y, n);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_unary(void *stream, int dtype, int op, const void *x, void *y, int64_t n) {
    if (n < 0) LTX2_K_BAD_ARG();
    if (n == 0) return 0;
    if (!x || !y) LTX2_K_BAD_ARG();
    if (dtype == LTX2_KDT_F32) return ltx2_unary_t<float>(stream, op, x, y, n);
    if (dtype == LTX2_KDT_BF16) return ltx2_unary_t<__nv_bfloat16>(stream, op, x, y, n);
    LTX2_K_BAD_ARG();
}
