// What the two conv3d kernels share beyond conv3d_layout.h: the epilogue, and the entry points
// between their files (ltx2_k_conv3d in conv3d.cu, the mma.sync kernel and dispatch, hands
// LTX2_KCONV_WGMMA launches to the sm_90a kernel in conv3d_sm90.cu).
#ifndef LTX2_KERNELS_CONV3D_CUH
#define LTX2_KERNELS_CONV3D_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "conv3d_layout.h"
#include "ltx2_kernels.h"

// What both kernels receive: the operands and the GEMM geometry (conv3d_layout.h).
struct ltx2_c3_params {
    const __nv_bfloat16 *x, *w, *bias;
    __nv_bfloat16 *y;
    ltx2_c3_geom g;
    int silu;
};

// From arguments ltx2_k_conv3d has validated.
static inline ltx2_c3_params ltx2_c3_params_from_args(const ltx2_k_conv3d_args *a) {
    ltx2_c3_params p;
    p.x = (const __nv_bfloat16 *)a->x;
    p.w = (const __nv_bfloat16 *)a->w;
    p.bias = (const __nv_bfloat16 *)a->bias;
    p.y = (__nv_bfloat16 *)a->y;
    p.g = ltx2_c3_geom_from_args(a);
    p.silu = a->silu;
    return p;
}

// The epilogue both kernels end with: + bias, SiLU when asked, one bf16x2 store of columns n and
// n + 1 of output row m (n even and c_out % 8 == 0, so the pair is in range and 4-byte aligned).
__device__ __forceinline__ void ltx2_c3_store_pair(__nv_bfloat16 *y, const __nv_bfloat16 *bias, int silu, int64_t m,
                                                   int64_t n, int64_t c_out, float v0, float v1) {
    if (bias) {
        v0 += __bfloat162float(bias[n]);
        v1 += __bfloat162float(bias[n + 1]);
    }
    if (silu) {
        v0 = v0 / (1.0f + expf(-v0));
        v1 = v1 / (1.0f + expf(-v1));
    }
    *reinterpret_cast<__nv_bfloat162 *>(y + m * c_out + n) = __floats2bfloat162_rn(v0, v1);
}

// 1 when the current device runs the sm_90a kernel (compute capability 9.x and a build that
// carries its body).
bool c90_available(void);
// Launches the sm_90a kernel on arguments ltx2_k_conv3d has validated; cudaErrorNotSupported
// where c90_available() is false.
int c90_launch(cudaStream_t st, const ltx2_k_conv3d_args *a);

#endif
