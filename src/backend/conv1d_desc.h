/* The 1-D ops' descriptors and shape rules, shared by every backend (the CPU references in
 * src/cpu/conv1d.c, the CUDA kernels' launchers in src/backend/backend_kernels.c). Activations are
 * channels-last [n, L, C] (time-major, the layout the vocoders run in). conv1d: stride, dilation,
 * asymmetric zero padding, packed weight [k, c_in][c_out]. conv_transpose1d: torch's
 * ConvTranspose1d with `padding` cropped from both ends, packed weight [c_in][k, c_out]. The FIR
 * resamplers are depthwise (one shared f32 filter for every channel) with replicate padding:
 * BigVGAN-v2's anti-aliased activations and LTX-2.3's bandwidth-extension resampler. */
#ifndef LTX2_BACKEND_CONV1D_DESC_H
#define LTX2_BACKEND_CONV1D_DESC_H

#include <stdint.h>

#include "core/context.h"

typedef struct ltx2_conv1d_desc {
    int64_t c_in, c_out;
    int64_t k;                   /* kernel taps, >= 1 */
    int64_t stride, dilation;    /* >= 1 */
    int64_t pad_left, pad_right; /* zeros, >= 0 */
} ltx2_conv1d_desc;

/* Output length (L + pad_left + pad_right - dilation*(k-1) - 1) / stride + 1; refuses a bad
 * descriptor and inputs shorter than the dilated kernel. */
ltx2_status ltx2_conv1d_out_len(ltx2_context *ctx, const ltx2_conv1d_desc *d, int64_t len, int64_t *out_len);

/* PyTorch Conv1d weight [c_out, c_in, k] -> the GEMM operand [k, c_in][c_out] (k*c_in*c_out floats). */
ltx2_status ltx2_conv1d_pack_weight(ltx2_context *ctx, const ltx2_conv1d_desc *d, const float *w_oik,
                                    float *w_packed);

typedef struct ltx2_convt1d_desc {
    int64_t c_in, c_out;
    int64_t k, stride; /* >= 1 */
    int64_t padding;   /* cropped from both ends of the full output, >= 0 */
} ltx2_convt1d_desc;

/* Output length (len - 1) * stride - 2 * padding + k (must be >= 1). */
ltx2_status ltx2_convt1d_out_len(ltx2_context *ctx, const ltx2_convt1d_desc *d, int64_t len, int64_t *out_len);

/* PyTorch ConvTranspose1d weight [c_in, c_out, k] -> the GEMM operand [c_in][k, c_out]. */
ltx2_status ltx2_convt1d_pack_weight(ltx2_context *ctx, const ltx2_convt1d_desc *d, const float *w_iok,
                                     float *w_packed);

/* A depthwise FIR resampler. Upsampling (BigVGAN UpSample1d, ltx-core's Hann resampler): x
 * replicate-padded by pad_left / pad_right, zero-stuffed by `ratio` and convolved with the filter
 * (conv_transpose1d with stride `ratio`), times `ratio`, then crop_left / crop_right samples
 * dropped: out length (len + pads - 1) * ratio + taps - crops. Downsampling (BigVGAN
 * LowPassFilter1d): y[o] = sum_j xp[o*ratio + j] * filt[j] over the replicate-padded xp: out length
 * (len + pads - taps) / ratio + 1; crops must be 0. */
typedef struct ltx2_fir_desc {
    int64_t taps, ratio;           /* >= 1 */
    int64_t pad_left, pad_right;   /* replicate padding, >= 0 */
    int64_t crop_left, crop_right; /* upsampling only, >= 0 */
} ltx2_fir_desc;

ltx2_status ltx2_fir_upsample_out_len(ltx2_context *ctx, const ltx2_fir_desc *d, int64_t len, int64_t *out_len);
ltx2_status ltx2_fir_downsample_out_len(ltx2_context *ctx, const ltx2_fir_desc *d, int64_t len, int64_t *out_len);

#endif
