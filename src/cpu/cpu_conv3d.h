/* CPU reference of the conv3d op (descriptor and shape rules: backend/conv3d_desc.h) over
 * channels-last (NDHWC) fp32 activations. Implemented as an implicit GEMM: the input patches are
 * packed straight into the GEMM A panels (no im2col buffer), register-tiled FMA kernel, OpenMP. */
#ifndef LTX2_CPU_CPU_CONV3D_H
#define LTX2_CPU_CPU_CONV3D_H

#include <stdint.h>

#include "backend/conv3d_desc.h"
#include "core/context.h"

/* y[n, to, ho, wo, c_out] = bias + sum over taps of x[n, t, h, w, c_in] * w, with x of shape
 * [n, t, h, w, c_in] (contiguous NDHWC) and y of the shape ltx2_conv3d_out_shape gives.
 * bias may be NULL. x and y must not overlap. */
ltx2_status ltx2_cpu_conv3d(ltx2_context *ctx, const ltx2_conv3d_desc *d, const float *x,
                            int64_t n, int64_t t, int64_t h, int64_t w, const float *w_packed,
                            const float *bias, float *y);

#endif
