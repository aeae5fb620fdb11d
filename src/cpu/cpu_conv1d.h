/* CPU reference 1-D convolutions over channels-last fp32 activations [n, L, C] (time-major, the
 * layout the vocoders run in): a dense conv1d (stride, dilation, asymmetric zero padding) and a
 * transposed conv1d, both as GEMMs against a packed weight; and the depthwise FIR resamplers of
 * BigVGAN-v2's anti-aliased activations and of LTX-2.3's bandwidth extension (replicate padding,
 * one shared filter for every channel). */
#ifndef LTX2_CPU_CPU_CONV1D_H
#define LTX2_CPU_CPU_CONV1D_H

#include <stdint.h>

#include "core/context.h"

typedef struct ltx2_conv1d_desc {
    int64_t c_in, c_out;
    int64_t k;                   /* kernel taps, >= 1 */
    int64_t stride, dilation;    /* >= 1 */
    int64_t pad_left, pad_right; /* zeros, >= 0 */
} ltx2_conv1d_desc;

/* Output length (L + pad_left + pad_right - dilation*(k-1) - 1) / stride + 1; refuses inputs
 * shorter than the dilated kernel. */
ltx2_status ltx2_cpu_conv1d_out_len(ltx2_context *ctx, const ltx2_conv1d_desc *d, int64_t len,
                                    int64_t *out_len);

/* PyTorch Conv1d weight [c_out, c_in, k] -> GEMM operand [k, c_in][c_out] (k*c_in*c_out floats). */
ltx2_status ltx2_cpu_conv1d_pack_weight(ltx2_context *ctx, const ltx2_conv1d_desc *d, const float *w_oik,
                                        float *w_packed);

/* y[n, out_len, c_out] = bias + conv(x[n, len, c_in]); bias may be NULL; x and y must not overlap. */
ltx2_status ltx2_cpu_conv1d(ltx2_context *ctx, const ltx2_conv1d_desc *d, const float *x, int64_t n,
                            int64_t len, const float *w_packed, const float *bias, float *y);

typedef struct ltx2_convt1d_desc {
    int64_t c_in, c_out;
    int64_t k, stride; /* >= 1 */
    int64_t padding;   /* cropped from both ends of the full output, >= 0 */
} ltx2_convt1d_desc;

/* Output length (len - 1) * stride - 2 * padding + k (must be >= 1). */
ltx2_status ltx2_cpu_convt1d_out_len(ltx2_context *ctx, const ltx2_convt1d_desc *d, int64_t len,
                                     int64_t *out_len);

/* PyTorch ConvTranspose1d weight [c_in, c_out, k] -> GEMM operand [c_in][k, c_out]. */
ltx2_status ltx2_cpu_convt1d_pack_weight(ltx2_context *ctx, const ltx2_convt1d_desc *d, const float *w_iok,
                                         float *w_packed);

/* y[n, t*stride - padding + j, :] accumulates x[n, t, :] @ W[:, j, :], plus bias (may be NULL). */
ltx2_status ltx2_cpu_convt1d(ltx2_context *ctx, const ltx2_convt1d_desc *d, const float *x, int64_t n,
                             int64_t len, const float *w_packed, const float *bias, float *y);

/* Depthwise FIR upsampler (BigVGAN UpSample1d / ltx-core's Hann resampler): x replicate-padded by
 * `pad` on both sides, conv_transpose1d with `filt` (taps) at `ratio`, scaled by `ratio`, then
 * `crop_left` / `crop_right` samples dropped. Output length (len + 2 pad - 1) * ratio + taps -
 * crop_left - crop_right (must be >= 1). x [n, len, c] -> y [n, out_len, c]. */
ltx2_status ltx2_cpu_fir_upsample(ltx2_context *ctx, const float *x, int64_t n, int64_t len, int64_t c,
                                  const float *filt, int64_t taps, int64_t ratio, int64_t pad,
                                  int64_t crop_left, int64_t crop_right, float *y, int64_t *out_len);

/* Depthwise FIR downsampler (BigVGAN LowPassFilter1d): replicate-pad pad_left / pad_right, then
 * y[o] = sum_j xp[o*ratio + j] * filt[j]. Output length (len + pads - taps) / ratio + 1. */
ltx2_status ltx2_cpu_fir_downsample(ltx2_context *ctx, const float *x, int64_t n, int64_t len, int64_t c,
                                    const float *filt, int64_t taps, int64_t ratio, int64_t pad_left,
                                    int64_t pad_right, float *y, int64_t *out_len);

#endif
