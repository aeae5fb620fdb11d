/* The conv3d op's descriptor and shape rules, shared by every backend (the CPU reference in
 * src/cpu/conv3d.c, the CUDA kernel's launcher in src/backend/backend_kernels.c): NDHWC activations,
 * the padding rules of LTX-2's video VAE (ltx-core CausalConv3d: time padded by replicating edge
 * frames, H/W by zeros or reflection) and audio VAE (CausalConv2d run as a conv3d with time on T:
 * zero frames in front), and the packed weight layout [kt, kh, kw, c_in][c_out]. */
#ifndef LTX2_BACKEND_CONV3D_DESC_H
#define LTX2_BACKEND_CONV3D_DESC_H

#include <stdint.h>

#include "core/context.h"

/* Temporal padding (ltx-core CausalConv3d.forward(causal=...)). */
typedef enum ltx2_conv_tpad {
    LTX2_CONV_TPAD_CAUSAL = 0,    /* kt-1 copies of frame 0 in front, nothing behind (encoder) */
    LTX2_CONV_TPAD_SYMMETRIC = 1, /* (kt-1)/2 copies of frame 0 in front and of the last frame behind */
    LTX2_CONV_TPAD_NONE = 2,      /* no temporal padding (plain valid conv along T) */
    LTX2_CONV_TPAD_CAUSAL_ZEROS = 3, /* kt-1 zero frames in front, nothing behind (audio VAE) */
    LTX2_CONV_TPAD_SYMMETRIC_ZEROS = 4 /* (kt-1)/2 zero frames on each side (torch Conv3d padding=k/2:
                                          the latent upsampler) */
} ltx2_conv_tpad;

/* Spatial padding of kh/2 rows and kw/2 columns (PyTorch padding_mode). */
typedef enum ltx2_conv_spad {
    LTX2_CONV_SPAD_ZEROS = 0,
    LTX2_CONV_SPAD_REFLECT = 1 /* mirror without repeating the edge; needs pad < size, as torch */
} ltx2_conv_spad;

typedef struct ltx2_conv3d_desc {
    int64_t c_in, c_out;
    int64_t kt, kh, kw; /* kernel extent, each >= 1 (kh, kw odd: padding is k/2 per side) */
    int64_t st, sh, sw; /* strides, each >= 1 */
    ltx2_conv_tpad tpad;
    ltx2_conv_spad spad;
} ltx2_conv3d_desc;

/* Frames of temporal padding in front of frame 0 and behind the last one. */
void ltx2_conv3d_tpad_amounts(const ltx2_conv3d_desc *d, int64_t *front, int64_t *back);
/* Whether the padded frames are zeros (else copies of the edge frames). */
static inline int ltx2_conv3d_tpad_zeros(const ltx2_conv3d_desc *d) {
    return d->tpad == LTX2_CONV_TPAD_CAUSAL_ZEROS || d->tpad == LTX2_CONV_TPAD_SYMMETRIC_ZEROS;
}

/* Checks the descriptor (positive sizes, odd spatial kernels, known modes). */
ltx2_status ltx2_conv3d_check(ltx2_context *ctx, const ltx2_conv3d_desc *d);

/* Output extent for an input of t x h x w voxels; refuses inputs too small for the kernel or
 * for reflect padding (pad must be < size, as torch requires). */
ltx2_status ltx2_conv3d_out_shape(ltx2_context *ctx, const ltx2_conv3d_desc *d, int64_t t,
                                      int64_t h, int64_t w, int64_t out_thw[3]);

/* Floats of the packed weight: kt*kh*kw*c_in*c_out. */
int64_t ltx2_conv3d_packed_numel(const ltx2_conv3d_desc *d);

/* Reorders a PyTorch Conv3d weight [c_out, c_in, kt, kh, kw] into the GEMM B operand
 * [kt, kh, kw, c_in][c_out] (K x N, row-major), which is what ltx2_cpu_conv3d reads. */
ltx2_status ltx2_conv3d_pack_weight(ltx2_context *ctx, const ltx2_conv3d_desc *d,
                                        const float *w_oikkk, float *w_packed);

#endif
