// torch GroupNorm on channels-last activations (the latent upsampler's norm), optional SiLU: one
// block per (sample, group) walks the group's positions three times (mean, centred variance,
// normalise), as the CPU reference does (src/cpu/group_norm.c). A warp reads 32 consecutive
// elements of the group (its channels at one position, then the next position), so loads are
// coalesced for any channels-per-group. First version: the grid is samples x groups blocks (32 for
// one sample of the upsampler), which leaves most SMs idle on large latents; splitting the
// positions over several blocks is the known next step (device timing owed).
#include "common.cuh"

template <typename T>
__global__ void group_norm_kernel(const T *x, T *y, int64_t inner, int64_t c, int64_t cg, float eps,
                                  const T *weight, const T *bias, int silu) {
    __shared__ float red[32];
    const int64_t groups = c / cg, b = blockIdx.x / groups, g = blockIdx.x % groups;
    const int64_t base = b * inner * c + g * cg, count = inner * cg;
    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) s += ltx2_to_f32(x[base + (i / cg) * c + i % cg]);
    const float mean = ltx2_block_sum(s, red) / (float)count;
    float s2 = 0.0f;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
        const float d = ltx2_to_f32(x[base + (i / cg) * c + i % cg]) - mean;
        s2 += d * d;
    }
    const float rstd = rsqrtf(ltx2_block_sum(s2, red) / (float)count + eps);
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
        const int64_t k = i % cg, at = base + (i / cg) * c + k, ch = g * cg + k;
        float o = (ltx2_to_f32(x[at]) - mean) * rstd;
        o = o * (weight ? ltx2_to_f32(weight[ch]) : 1.0f) + (bias ? ltx2_to_f32(bias[ch]) : 0.0f);
        if (silu) o = o / (1.0f + expf(-o));
        y[at] = ltx2_from_f32<T>(o);
    }
}

extern "C" int ltx2_k_group_norm(void *stream, int dtype, const void *x, void *y, int64_t n, int64_t inner,
                                 int64_t c, int64_t groups, float eps, const void *weight, const void *bias,
                                 int silu) {
    if (!x || !y || n < 0 || inner < 0 || c < 1 || groups < 1 || c % groups != 0) LTX2_K_BAD_ARG();
    if (n == 0 || inner == 0) return 0;
    if (n * groups > (int64_t)INT32_MAX) LTX2_K_BAD_ARG(); // one block per (sample, group)
    cudaStream_t st = (cudaStream_t)stream;
    const unsigned blocks = (unsigned)(n * groups);
    const int64_t cg = c / groups;
    if (dtype == LTX2_KDT_F32)
        ltx2_launch<group_norm_kernel<float>>(blocks, LTX2_K_THREADS, 0, st, (const float *)x, (float *)y, inner, c,
                                              cg, eps, (const float *)weight, (const float *)bias, silu);
    else if (dtype == LTX2_KDT_BF16)
        ltx2_launch<group_norm_kernel<__nv_bfloat16>>(blocks, LTX2_K_THREADS, 0, st, (const __nv_bfloat16 *)x,
                                                      (__nv_bfloat16 *)y, inner, c, cg, eps,
                                                      (const __nv_bfloat16 *)weight, (const __nv_bfloat16 *)bias,
                                                      silu);
    else
        LTX2_K_BAD_ARG();
    LTX2_K_RETURN_LAUNCH();
}
