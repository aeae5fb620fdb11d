/* CPU reference of the video VAE's DepthToSpaceUpsample rearrangement (ltx-core sampling.py):
 * "b (c p1 p2 p3) d h w -> b c (d p1) (h p2) (w p3)" on NDHWC data, optional first-frame drop and
 * the channel-repeated residual. The same arithmetic as upsample_block in src/model/video_vae.c,
 * as a standalone op the backends share. */
#ifndef LTX2_CPU_CPU_DEPTH_TO_SPACE_H
#define LTX2_CPU_CPU_DEPTH_TO_SPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/context.h"

/* x [n, t, h, w, c*s0*s1*s2] -> y [n, t*s0 - drop, h*s1, w*s2, c] with output channel cc at
 * (frame t2, row h2, col w2) = x[.., (t2+drop)/s0, h2/s1, w2/s2, ((cc*s0 + a)*s1 + b)*s2 + e]
 * (a, b, e the remainders). residual (NULL or [n, t, h, w, rc*s0*s1*s2], c % rc == 0) adds its
 * channel ((cc % rc)*s0 + a)*s1 + b)*s2 + e. y must not overlap x or residual. */
ltx2_status ltx2_cpu_depth_to_space(ltx2_context *ctx, const float *x, int64_t n, int64_t t, int64_t h,
                                    int64_t w, int64_t c, const int64_t s[3], bool drop_first,
                                    const float *residual, int64_t rc, float *y);

#endif
