// The vocoders' memory-bound 1-D ops over channels-last [n, len, c]: the depthwise FIR resamplers
// of BigVGAN-v2's anti-aliased activations and LTX-2.3's bandwidth-extension resampler
// (replicate padding, one shared f32 filter), SnakeBeta, and the STFT magnitude. One thread per
// output element with the channel fastest, so a warp's loads and stores are coalesced runs of one
// time step; each output's sum is taken in the CPU reference's order (src/cpu/conv1d.c,
// src/cpu/audio_ops.c) in fp32, so results differ from it only by FMA contraction.
#include "common.cuh"

__device__ __forceinline__ int64_t audio_clamp(int64_t i, int64_t len) { return i < 0 ? 0 : (i >= len ? len - 1 : i); }

template <typename T>
__global__ void __launch_bounds__(LTX2_K_THREADS)
fir_upsample_kernel(const T *x, const float *filt, T *y, int64_t n, int64_t len, int64_t c, int64_t taps,
                    int64_t ratio, int64_t pad_left, int64_t pad_right, int64_t crop_left, int64_t out_len) {
    const int64_t total = n * out_len * c;
    const float fr = (float)ratio;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ch = e % c, row = e / c, o = row % out_len, b = row / out_len;
        // full (uncropped) index f = i*ratio + j over padded inputs i: the reference's loop, i
        // descending from the last input that reaches f, until the tap index leaves the filter
        const int64_t f = o + crop_left;
        const T *xb = x + b * len * c + ch;
        float acc = 0.0f;
        const int64_t last = len + pad_left + pad_right - 1; /* the last padded input */
        for (int64_t i = f / ratio < last ? f / ratio : last; i >= 0; i--) {
            const int64_t j = f - i * ratio;
            if (j >= taps) break;
            acc += ltx2_to_f32(xb[audio_clamp(i - pad_left, len) * c]) * filt[j];
        }
        y[e] = ltx2_from_f32<T>(acc * fr);
    }
}

template <typename T>
__global__ void __launch_bounds__(LTX2_K_THREADS)
fir_downsample_kernel(const T *x, const float *filt, T *y, int64_t n, int64_t len, int64_t c, int64_t taps,
                      int64_t ratio, int64_t pad_left, int64_t out_len) {
    const int64_t total = n * out_len * c;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ch = e % c, row = e / c, o = row % out_len, b = row / out_len;
        const T *xb = x + b * len * c + ch;
        const int64_t base = o * ratio - pad_left;
        float acc = 0.0f;
        for (int64_t j = 0; j < taps; j++) acc += ltx2_to_f32(xb[audio_clamp(base + j, len) * c]) * filt[j];
        y[e] = ltx2_from_f32<T>(acc);
    }
}

template <typename T>
__global__ void __launch_bounds__(LTX2_K_THREADS)
snake_kernel(const T *x, T *y, const float *alpha, const float *inv_beta, int64_t rows, int64_t c) {
    const int64_t total = rows * c;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ch = e % c;
        const float v = ltx2_to_f32(x[e]);
        const float s = sinf(v * alpha[ch]); // accurate sinf: arguments reach |x * alpha| >> pi
        y[e] = ltx2_from_f32<T>(v + inv_beta[ch] * (s * s));
    }
}

template <typename T>
__global__ void __launch_bounds__(LTX2_K_THREADS)
complex_abs_kernel(const T *x, T *y, int64_t rows, int64_t nf) {
    const int64_t total = rows * nf;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t f = e % nf, r = e / nf;
        const float re = ltx2_to_f32(x[r * 2 * nf + f]), im = ltx2_to_f32(x[r * 2 * nf + nf + f]);
        y[e] = ltx2_from_f32<T>(sqrtf(re * re + im * im));
    }
}

extern "C" int ltx2_k_fir_upsample(void *stream, int dtype, const void *x, const float *filt, void *y, int64_t n,
                                   int64_t len, int64_t c, int64_t taps, int64_t ratio, int64_t pad_left,
                                   int64_t pad_right, int64_t crop_left, int64_t out_len) {
    if (!x || !filt || !y || n < 0 || len < 1 || c < 1 || taps < 1 || ratio < 1 || pad_left < 0 || pad_right < 0 ||
        crop_left < 0 || out_len < 0)
        LTX2_K_BAD_ARG();
    if (n == 0 || out_len == 0) return 0;
    const unsigned blocks = ltx2_k_grid(n * out_len * c, LTX2_K_THREADS);
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        ltx2_launch<fir_upsample_kernel<float>>(blocks, LTX2_K_THREADS, 0, st, (const float *)x, filt, (float *)y, n,
                                                len, c, taps, ratio, pad_left, pad_right, crop_left, out_len);
    else if (dtype == LTX2_KDT_BF16)
        ltx2_launch<fir_upsample_kernel<__nv_bfloat16>>(blocks, LTX2_K_THREADS, 0, st, (const __nv_bfloat16 *)x, filt,
                                                        (__nv_bfloat16 *)y, n, len, c, taps, ratio, pad_left,
                                                        pad_right, crop_left, out_len);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_fir_downsample(void *stream, int dtype, const void *x, const float *filt, void *y, int64_t n,
                                     int64_t len, int64_t c, int64_t taps, int64_t ratio, int64_t pad_left,
                                     int64_t out_len) {
    if (!x || !filt || !y || n < 0 || len < 1 || c < 1 || taps < 1 || ratio < 1 || pad_left < 0 || out_len < 0)
        LTX2_K_BAD_ARG();
    if (n == 0 || out_len == 0) return 0;
    const unsigned blocks = ltx2_k_grid(n * out_len * c, LTX2_K_THREADS);
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        ltx2_launch<fir_downsample_kernel<float>>(blocks, LTX2_K_THREADS, 0, st, (const float *)x, filt, (float *)y, n,
                                                  len, c, taps, ratio, pad_left, out_len);
    else if (dtype == LTX2_KDT_BF16)
        ltx2_launch<fir_downsample_kernel<__nv_bfloat16>>(blocks, LTX2_K_THREADS, 0, st, (const __nv_bfloat16 *)x,
                                                          filt, (__nv_bfloat16 *)y, n, len, c, taps, ratio, pad_left,
                                                          out_len);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_snake(void *stream, int dtype, const void *x, void *y, const float *alpha,
                            const float *inv_beta, int64_t rows, int64_t c) {
    if (!x || !y || !alpha || !inv_beta || rows < 0 || c < 1) LTX2_K_BAD_ARG();
    if (rows == 0) return 0;
    const unsigned blocks = ltx2_k_grid(rows * c, LTX2_K_THREADS);
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        ltx2_launch<snake_kernel<float>>(blocks, LTX2_K_THREADS, 0, st, (const float *)x, (float *)y, alpha, inv_beta,
                                         rows, c);
    else if (dtype == LTX2_KDT_BF16)
        ltx2_launch<snake_kernel<__nv_bfloat16>>(blocks, LTX2_K_THREADS, 0, st, (const __nv_bfloat16 *)x,
                                                 (__nv_bfloat16 *)y, alpha, inv_beta, rows, c);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_complex_abs(void *stream, int dtype, const void *x, void *y, int64_t rows, int64_t nf) {
    if (!x || !y || rows < 0 || nf < 1) LTX2_K_BAD_ARG();
    if (rows == 0) return 0;
    const unsigned blocks = ltx2_k_grid(rows * nf, LTX2_K_THREADS);
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        ltx2_launch<complex_abs_kernel<float>>(blocks, LTX2_K_THREADS, 0, st, (const float *)x, (float *)y, rows, nf);
    else if (dtype == LTX2_KDT_BF16)
        ltx2_launch<complex_abs_kernel<__nv_bfloat16>>(blocks, LTX2_K_THREADS, 0, st, (const __nv_bfloat16 *)x,
                                                       (__nv_bfloat16 *)y, rows, nf);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}
