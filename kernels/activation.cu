// Pointwise ops of LTX2_KUNARY_* (GELU with torch's tanh approximation, SiLU, and the vocoders'
// leaky ReLU, tanh, hardtanh, log with a floor, divide by a scalar): grid-stride, 16-byte vector
// accesses when n and the pointers allow. The op is a template parameter so each instantiation
// is a branch-free loop; alpha is the op's one runtime parameter.
#include "common.cuh"

// sqrt(2/pi) and the cubic coefficient, as torch's gelu(approximate='tanh').
#define LTX2_GELU_SQRT_2_OVER_PI 0.7978845608028654f
#define LTX2_GELU_COEF_A 0.044715f

// NaN must pass through (torch's semantics): every clamp is written as comparisons that are
// false for NaN, never fminf / fmaxf (which would return the bound).
template <int OP> __device__ __forceinline__ float ltx2_act(float v, float alpha) {
    if constexpr (OP == LTX2_KUNARY_GELU_TANH) {
        float inner = LTX2_GELU_SQRT_2_OVER_PI * (v + LTX2_GELU_COEF_A * v * v * v);
        return 0.5f * v * (1.0f + tanhf(inner));
    } else if constexpr (OP == LTX2_KUNARY_SILU) {
        return v / (1.0f + expf(-v));
    } else if constexpr (OP == LTX2_KUNARY_LEAKY_RELU) {
        return v >= 0.0f ? v : v * alpha;
    } else if constexpr (OP == LTX2_KUNARY_TANH) {
        return tanhf(v);
    } else if constexpr (OP == LTX2_KUNARY_HARDTANH) {
        return v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v);
    } else if constexpr (OP == LTX2_KUNARY_LOG_FLOOR) {
        return logf(v < alpha ? alpha : v);
    } else {
        static_assert(OP == LTX2_KUNARY_DIV_SCALAR, "unknown unary op");
        return v / alpha; // IEEE division (no fast-math), as the CPU's
    }
}

template <typename T, int V, int OP>
__global__ void __launch_bounds__(LTX2_K_THREADS)
ltx2_unary_kernel(const T *x, T *y, int64_t n_vec, float alpha) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
        float v[V];
        ltx2_load<V>(x + i * V, v);
#pragma unroll
        for (int j = 0; j < V; j++) v[j] = ltx2_act<OP>(v[j], alpha);
        ltx2_store<V>(y + i * V, v);
    }
}

template <typename T, int OP>
static void ltx2_unary_launch(cudaStream_t s, const void *xv, void *yv, int64_t n, float alpha) {
    const T *x = (const T *)xv;
    T *y = (T *)yv;
    const int VN = ltx2_vec<T>::n;
    if (n % VN == 0 && ltx2_k_aligned16(x) && ltx2_k_aligned16(y)) {
        int64_t nv = n / VN;
        ltx2_launch<ltx2_unary_kernel<T, ltx2_vec<T>::n, OP>>(ltx2_k_grid(nv, LTX2_K_THREADS), LTX2_K_THREADS, 0, s,
            x, y, nv, alpha);
    } else {
        ltx2_launch<ltx2_unary_kernel<T, 1, OP>>(ltx2_k_grid(n, LTX2_K_THREADS), LTX2_K_THREADS, 0, s, x, y, n,
                                                 alpha);
    }
}

template <typename T>
static int ltx2_unary_t(void *stream, int op, const void *x, void *y, int64_t n, float alpha) {
    cudaStream_t s = (cudaStream_t)stream;
    switch (op) {
    case LTX2_KUNARY_GELU_TANH: ltx2_unary_launch<T, LTX2_KUNARY_GELU_TANH>(s, x, y, n, alpha); break;
    case LTX2_KUNARY_SILU: ltx2_unary_launch<T, LTX2_KUNARY_SILU>(s, x, y, n, alpha); break;
    case LTX2_KUNARY_LEAKY_RELU: ltx2_unary_launch<T, LTX2_KUNARY_LEAKY_RELU>(s, x, y, n, alpha); break;
    case LTX2_KUNARY_TANH: ltx2_unary_launch<T, LTX2_KUNARY_TANH>(s, x, y, n, alpha); break;
    case LTX2_KUNARY_HARDTANH: ltx2_unary_launch<T, LTX2_KUNARY_HARDTANH>(s, x, y, n, alpha); break;
    case LTX2_KUNARY_LOG_FLOOR: ltx2_unary_launch<T, LTX2_KUNARY_LOG_FLOOR>(s, x, y, n, alpha); break;
    case LTX2_KUNARY_DIV_SCALAR: ltx2_unary_launch<T, LTX2_KUNARY_DIV_SCALAR>(s, x, y, n, alpha); break;
    default: LTX2_K_BAD_ARG();
    }
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_unary(void *stream, int dtype, int op, const void *x, void *y, int64_t n, float alpha) {
    if (n < 0) LTX2_K_BAD_ARG();
    if (n == 0) return 0;
    if (!x || !y) LTX2_K_BAD_ARG();
    if (dtype == LTX2_KDT_F32) return ltx2_unary_t<float>(stream, op, x, y, n, alpha);
    if (dtype == LTX2_KDT_BF16) return ltx2_unary_t<__nv_bfloat16>(stream, op, x, y, n, alpha);
    LTX2_K_BAD_ARG();
}
