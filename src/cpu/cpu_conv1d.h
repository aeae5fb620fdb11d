/* CPU reference 1-D ops over channels-last fp32 activations [n, L, C] (the vocoders' layout; the
 * descriptors and shape rules are the backend's, src/backend/conv1d_desc.h): a dense conv1d and a
 * transposed conv1d, both as GEMMs against a packed weight, and the depthwise FIR resamplers. */
#ifndef LTX2_CPU_CPU_CONV1D_H
#define LTX2_CPU_CPU_CONV1D_H

#include <stdint.h>

#include "backend/conv1d_desc.h"
#include "core/context.h"

/* y[n, out_len, c_out] = bias + conv(x[n, len, c_in]) with the packed weight [k, c_in][c_out];
 * bias may be NULL; x and y must not overlap. */
ltx2_status ltx2_cpu_conv1d(ltx2_context *ctx, const ltx2_conv1d_desc *d, const float *x, int64_t n,
                            int64_t len, const float *w_packed, const float *bias, float *y);

/* y[n, t*stride - padding + j, :] accumulates x[n, t, :] @ W[:, j, :] (packed [c_in][k, c_out]),
 * plus bias (may be NULL). */
ltx2_status ltx2_cpu_conv_transpose1d(ltx2_context *ctx, const ltx2_convt1d_desc *d, const float *x, int64_t n,
                                      int64_t len, const float *w_packed, const float *bias, float *y);

/* The FIR resamplers of ltx2_fir_desc: x [n, len, c] -> y [n, out_len, c] (out_len from
 * ltx2_fir_upsample_out_len / ltx2_fir_downsample_out_len); filt [taps] f32. Upsampling sums
 * the taps over padded inputs i descending, then multiplies by ratio; downsampling sums taps
 * j ascending. */
ltx2_status ltx2_cpu_fir_upsample(ltx2_context *ctx, const ltx2_fir_desc *d, const float *x, int64_t n, int64_t len,
                                  int64_t c, const float *filt, float *y);
ltx2_status ltx2_cpu_fir_downsample(ltx2_context *ctx, const ltx2_fir_desc *d, const float *x, int64_t n,
                                    int64_t len, int64_t c, const float *filt, float *y);

#endif
