// What the two attention forward kernels share: the per-launch parameter block that
// ltx2_k_attention (kernels/attention.cu) fills after its Q/K pre-pass, and the entry points of
// the sm_90a wgmma/TMA path (kernels/attention_sm90.cu) that it dispatches to.
#ifndef LTX2_KERNELS_ATTENTION_CUH
#define LTX2_KERNELS_ATTENTION_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

struct att_params {
    const __nv_bfloat16 *q, *k, *v; // k is the pre-pass's normalised/rotated copy when norm/RoPE is on
    __nv_bfloat16 *out;
    int64_t Sq, Skv, H;
    float scale_log2; // scale * log2(e): scores go through exp2
    const uint8_t *mask;
    const float *q_inv_rms; // [B*Sq] or NULL (no QK norm)
    const __nv_bfloat16 *q_norm;     // [H*D] or NULL
    int rope;
    const float *q_cos, *q_sin;
};

// True when the current device can run the wgmma path: compute capability 9.x and this binary
// carries the sm_90a code of the kernel (a build without the 90a architecture has only a stub).
bool att90_available(void);
// True when the wgmma path handles this launch (head_dim, positive scale, TMA coordinate range).
bool att90_shape_ok(const att_params &p, int64_t B, int64_t head_dim);
// Launches the wgmma/TMA kernel; returns a cudaError_t as int.
int att90_launch(cudaStream_t st, const att_params &p, int64_t B, int64_t head_dim);

#endif
