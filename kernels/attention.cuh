// What the attention forward kernels share: the per-launch parameter block that
// ltx2_k_attention (kernels/attention.cu) fills after its Q/K pre-pass, and the entry points of
// the sm_90a wgmma/TMA path (kernels/attention_sm90.cu) that it dispatches to.
#ifndef LTX2_KERNELS_ATTENTION_CUH
#define LTX2_KERNELS_ATTENTION_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "ltx2_kernels.h"
#include "rope.cuh"

struct att_params {
    const __nv_bfloat16 *q, *k, *v; // k is the pre-pass's normalised/rotated copy when norm/RoPE is on
    __nv_bfloat16 *out;
    int64_t Sq, Skv, H;
    float scale_log2; // scale * log2(e): scores go through exp2
    const uint8_t *mask;
    // The wgmma kernel's packed mask (att90_mask_words per batch), which it reads instead of mask
    // when set; NULL: mask's bytes
    const uint32_t *mask_bits;
    const float *q_inv_rms; // [B*Sq] or NULL (no QK norm, or q already normalised by the pre-pass)
    const __nv_bfloat16 *q_norm;     // [H*D] or NULL
    int rope;
    const float *q_cos, *q_sin;
    // Gemma-3's masks (the mma.sync and per-row kernels): kv heads (== H when not grouped), causal, window
    // (0: none), empty rows zero
    int64_t Hkv;
    int causal;
    int64_t window;
    int empty_zero;
    const int32_t *blocks; // [B, Sq] image-block ids or NULL (the per-row kernel only)
    // The e4m3 variant (the wgmma kernel, d = 128; att_fp8.cu's pre-pass fills these): Q [B, Sq,
    // H*d] and K [B, Skv, Hkv*d] (less its channel means) as e4m3 with a scale per (token, head) and
    // per (batch, kv head, 128-key tile), V^T [B, Hkv*d, skv_pad] (less its channel means; keys
    // permuted in groups of 32: att90_f8_vperm) with a scale per (batch, kv head, channel).
    int fp8;
    const uint8_t *q8, *k8, *vt8;
    const float *q_scale, *k_scale, *v_scale;
    const float *v_mean; // [B, Hkv*d]: V's channel means, subtracted before V's rounding, added to O
    int64_t skv_pad;
};

// Q's prologue on one rotation pair (a, bb) of query token qi of head h, batch b: the across-heads
// RMSNorm (scaled by the pre-pass's inverse RMS) then RoPE, in fp32. One definition, so both
// kernels round Q identically. ld is the token stride (H * D).
__device__ __forceinline__ void att_q_pair(const att_params &p, int64_t b, int64_t h, int64_t qi, int64_t D,
                                           int64_t ld, bool il, const ltx2_rope_pair &pr, float &a, float &bb) {
    if (p.q_inv_rms) {
        const float inv = p.q_inv_rms[b * p.Sq + qi];
        a = a * inv * __bfloat162float(p.q_norm[h * D + pr.c0]);
        bb = bb * inv * __bfloat162float(p.q_norm[h * D + pr.c1]);
    }
    if (p.rope == LTX2_KROPE_SPLIT) {
        const int64_t t = ((b * p.H + h) * p.Sq + qi) * (D / 2) + pr.t0;
        ltx2_rope_rotate(a, bb, p.q_cos[t], p.q_sin[t], p.q_cos[t], p.q_sin[t]);
    } else if (il) {
        const int64_t t = (b * p.Sq + qi) * ld + h * D;
        ltx2_rope_rotate(a, bb, p.q_cos[t + pr.t0], p.q_sin[t + pr.t0], p.q_cos[t + pr.t1], p.q_sin[t + pr.t1]);
    }
}

// The small-head-dim path (attention_small.cu), on the same parameters after the same pre-pass;
// returns a cudaError_t as int.
#define ATT_SMALL_MAX_D LTX2_KATTN_MAX_HEAD_DIM
int att_small_launch(cudaStream_t st, const att_params &p, int64_t B, int64_t head_dim);

// True when the current device can run the wgmma path: compute capability 9.x and this binary
// carries the sm_90a code of the kernel (a build without the 90a architecture has only a stub).
bool att90_available(void);
// True when the wgmma path handles this launch (head_dim, positive scale, TMA coordinate range).
bool att90_shape_ok(const att_params &p, int64_t B, int64_t head_dim);
// Launches the wgmma/TMA kernel; returns a cudaError_t as int.
int att90_launch(cudaStream_t st, const att_params &p, int64_t B, int64_t head_dim);

// The e4m3 pre-pass's workspace parts (bytes, each rounded to LTX2_KATTN_WS_ALIGN) and its launch:
// quantises p's q, k and v (already normalised / rotated when the launch asks for it) into them
// and points p's fp8 fields there.
struct att_f8_ws {
    size_t q8, qs, k8, ks, vt8, vmax, vs, vmean, ksum, vsum, cnt, any, total;
};
att_f8_ws att_f8_ws_of(int64_t B, int64_t Sq, int64_t Skv, int64_t H, int64_t Hkv);
int att_f8_prepass(cudaStream_t st, att_params &p, int64_t B, char *ws, const att_f8_ws &w);

#endif
