/* The latent upsampler's weights as upsampler.c loads them and upsampler_forward.c runs them (not a
 * public interface). Reference: ltx-core 1.0.0 model/upsampler. */
#ifndef LTX2_MODEL_UPSAMPLER_INTERNAL_H
#define LTX2_MODEL_UPSAMPLER_INTERNAL_H

#include "backend/conv3d_desc.h"
#include "backend/op_desc.h"
#include "model/upsampler.h"

/* torch.nn.GroupNorm(32, C) defaults: 32 groups, eps 1e-5. */
#define UPS_GN_GROUPS 32
#define UPS_GN_EPS 1e-5

/* A conv's packed weights [kt*kh*kw*c_in, c_out] and bias, host f32. The 3-D convs pad one zero
 * frame on each side (LTX2_CONV_TPAD_SYMMETRIC_ZEROS); the per-frame Conv2d has kt = 1. */
typedef struct ups_conv {
    ltx2_conv3d_desc desc;
    float *w, *b;
} ups_conv;

typedef struct ups_res {
    ups_conv c1, c2;
    float *n1w, *n1b, *n2w, *n2b;
} ups_res;

struct ltx2_upsampler {
    ltx2_upsampler_config cfg;
    ups_conv initial, up, final;
    float *init_nw, *init_nb;
    ups_res *pre, *post;
    int64_t num, den; /* rational resampler; plain spatial x2: 2 / 1; temporal: 1 / 1 */
};

#endif
