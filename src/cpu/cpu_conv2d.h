/* CPU reference 2-D convolution over channels-last fp32 activations [n, h, w, c] with explicit,
 * possibly asymmetric zero padding and a stride: what the audio VAE's causal convs (time padded
 * only in front) and its Downsample (pad then stride-2 valid conv) need, which the symmetric
 * padding of ltx2_cpu_conv3d cannot express. An im2col of a bounded tile of output pixels, then
 * ltx2_cpu_gemm against the packed weight. */
#ifndef LTX2_CPU_CPU_CONV2D_H
#define LTX2_CPU_CPU_CONV2D_H

#include <stdint.h>

#include "core/context.h"

typedef struct ltx2_conv2d_desc {
    int64_t c_in, c_out;
    int64_t kh, kw;                       /* >= 1 */
    int64_t sh, sw;                       /* strides, >= 1 */
    int64_t pad_top, pad_bottom;          /* zeros, >= 0 */
    int64_t pad_left, pad_right;          /* zeros, >= 0 */
} ltx2_conv2d_desc;

/* Output extent (h + pads - kh) / sh + 1 (likewise w); refuses inputs smaller than the kernel. */
ltx2_status ltx2_cpu_conv2d_out_shape(ltx2_context *ctx, const ltx2_conv2d_desc *d, int64_t h, int64_t w,
                                      int64_t out_hw[2]);

/* PyTorch Conv2d weight [c_out, c_in, kh, kw] -> GEMM operand [kh, kw, c_in][c_out]. */
ltx2_status ltx2_cpu_conv2d_pack_weight(ltx2_context *ctx, const ltx2_conv2d_desc *d, const float *w_oikk,
                                        float *w_packed);

/* y[n, ho, wo, c_out] = bias + conv(x[n, h, w, c_in]); bias may be NULL; x and y must not overlap. */
ltx2_status ltx2_cpu_conv2d(ltx2_context *ctx, const ltx2_conv2d_desc *d, const float *x, int64_t n, int64_t h,
                            int64_t w, const float *w_packed, const float *bias, float *y);

#endif
