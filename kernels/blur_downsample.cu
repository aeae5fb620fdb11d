// ltx-core BlurDownsample (dims 2, kernel 5) on channels-last frames: the rational latent
// upsampler's depthwise binomial blur with a stride (src/cpu/blur_downsample.c is the reference).
// One thread per output element, channel fastest, so a warp's loads and stores are coalesced; the
// 25 taps are summed in the reference's order in fp32.
#include "common.cuh"

#define BLUR_TAPS 5

template <typename T>
__global__ void blur_downsample_kernel(const T *x, T *y, int64_t frames, int64_t h, int64_t w, int64_t c, int64_t s) {
    const int64_t ho = (h - 1) / s + 1, wo = (w - 1) / s + 1, n = frames * ho * wo * c;
    const float k1[BLUR_TAPS] = {1.0f, 4.0f, 6.0f, 4.0f, 1.0f};
    for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ch = o % c, j = (o / c) % wo, i = (o / (c * wo)) % ho, f = o / (c * wo * ho);
        float acc = 0.0f;
#pragma unroll
        for (int a = 0; a < BLUR_TAPS; a++) {
            const int64_t hs = i * s + a - BLUR_TAPS / 2;
            if (hs < 0 || hs >= h) continue;
#pragma unroll
            for (int b = 0; b < BLUR_TAPS; b++) {
                const int64_t ws = j * s + b - BLUR_TAPS / 2;
                if (ws < 0 || ws >= w) continue;
                acc += k1[a] * k1[b] / 256.0f * ltx2_to_f32(x[((f * h + hs) * w + ws) * c + ch]);
            }
        }
        y[o] = ltx2_from_f32<T>(acc);
    }
}

extern "C" int ltx2_k_blur_downsample(void *stream, int dtype, const void *x, void *y, int64_t frames, int64_t h,
                                      int64_t w, int64_t c, int64_t s) {
    if (!x || !y || frames < 0 || h < 1 || w < 1 || c < 1 || s < 1) LTX2_K_BAD_ARG();
    if (frames == 0) return 0;
    const int64_t n = frames * ((h - 1) / s + 1) * ((w - 1) / s + 1) * c;
    const unsigned blocks = ltx2_k_grid(n, LTX2_K_THREADS);
    cudaStream_t st = (cudaStream_t)stream;
    if (dtype == LTX2_KDT_F32)
        ltx2_launch<blur_downsample_kernel<float>>(blocks, LTX2_K_THREADS, 0, st, (const float *)x, (float *)y, frames,
                                                   h, w, c, s);
    else if (dtype == LTX2_KDT_BF16)
        ltx2_launch<blur_downsample_kernel<__nv_bfloat16>>(blocks, LTX2_K_THREADS, 0, st, (const __nv_bfloat16 *)x,
                                                           (__nv_bfloat16 *)y, frames, h, w, c, s);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}
