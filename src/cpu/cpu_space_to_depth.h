/* CPU reference of the video VAE encoder's SpaceToDepthDownsample rearrangement (ltx-core
 * sampling.py): "b c (d p1) (h p2) (w p3) -> b (c p1 p2 p3) d h w" on NDHWC data, plus the
 * skip branch that rearranges the block's input the same way and averages consecutive groups of
 * its channels. The inverse of depth_to_space (cpu_depth_to_space.h). */
#ifndef LTX2_CPU_CPU_SPACE_TO_DEPTH_H
#define LTX2_CPU_CPU_SPACE_TO_DEPTH_H

#include <stdint.h>

#include "core/context.h"

/* x [n, t, h, w, c] -> y [n, t/s0, h/s1, w/s2, c*s0*s1*s2] with output channel
 * k = ((cc*s0 + a)*s1 + b)*s2 + e at voxel (t2, h2, w2) = x[.., t2*s0 + a, h2*s1 + b, w2*s2 + e, cc].
 * residual (NULL or [n, t, h, w, rc]) is rearranged the same way into rc*s0*s1*s2 channels and
 * output channel k adds the mean of its channels [k*g, (k+1)*g), g = rc*s0*s1*s2 / (c*s0*s1*s2)
 * (an integer >= 1), summed in order in fp32 then divided by g. t, h, w must divide by the
 * strides. y must not overlap x or residual. */
ltx2_status ltx2_cpu_space_to_depth(ltx2_context *ctx, const float *x, int64_t n, int64_t t, int64_t h,
                                    int64_t w, int64_t c, const int64_t s[3], const float *residual, int64_t rc,
                                    float *y);

#endif
