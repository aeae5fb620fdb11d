/* Index arithmetic of the DepthToSpaceUpsample kernel (kernels/vae_ops.cu), plain C so that
 * tests/test_layout_vae_ops.c checks it on the CPU against the CPU reference
 * (src/cpu/depth_to_space.c) for every output element.
 *
 * y [n, T, H, W, c] (channel fastest, T = t*s0 - drop, H = h*s1, W = w*s2) takes output channel
 * cc of frame t2, row h2, column w2 from voxel ((t2 + drop)/s0, h2/s1, w2/s2) of
 * x [n, t, h, w, c*s0*s1*s2], channel ((cc*s0 + a)*s1 + b)*s2 + e with a, b, e the remainders
 * of (t2 + drop, h2, w2) by (s0, s1, s2): einops "(c p1 p2 p3)" puts c outermost. The optional
 * residual [n, t, h, w, rc*s0*s1*s2] contributes the same position of channel cc % rc (the
 * residual's channels repeated c/rc times). */
#ifndef LTX2_KERNELS_VAE_OPS_LAYOUT_H
#define LTX2_KERNELS_VAE_OPS_LAYOUT_H

#include <stdint.h>

#include "hostdev.h"

typedef struct ltx2_d2s_geom {
    int64_t t, h, w, c;      /* input frames, rows, columns; output channels */
    int64_t s0, s1, s2;      /* time, height, width factors */
    int64_t drop;            /* 1: the first output frame is dropped */
    int64_t rc;              /* residual channels before the factor product (0: no residual) */
    int64_t T, H, W;         /* output frames, rows, columns */
} ltx2_d2s_geom;

LTX2_HD ltx2_d2s_geom ltx2_d2s_geom_make(int64_t t, int64_t h, int64_t w, int64_t c, int64_t s0, int64_t s1,
                                         int64_t s2, int drop, int64_t rc) {
    ltx2_d2s_geom g;
    g.t = t, g.h = h, g.w = w, g.c = c;
    g.s0 = s0, g.s1 = s1, g.s2 = s2;
    g.drop = drop ? 1 : 0;
    g.rc = rc;
    g.T = t * s0 - g.drop, g.H = h * s1, g.W = w * s2;
    return g;
}

/* Elements of y. */
LTX2_HD int64_t ltx2_d2s_total(ltx2_d2s_geom g, int64_t n) { return n * g.T * g.H * g.W * g.c; }

/* Output element i of y: its source element in x (*x_off) and, when g.rc > 0, in the residual
 * (*res_off; left untouched otherwise). */
LTX2_HD void ltx2_d2s_src(ltx2_d2s_geom g, int64_t i, int64_t *x_off, int64_t *res_off) {
    int64_t r = i;
    const int64_t cc = r % g.c;
    r /= g.c;
    const int64_t w2 = r % g.W;
    r /= g.W;
    const int64_t h2 = r % g.H;
    r /= g.H;
    const int64_t t2 = r % g.T;
    const int64_t bn = r / g.T;
    const int64_t tt = t2 + g.drop;
    const int64_t a = tt % g.s0, b = h2 % g.s1, e = w2 % g.s2;
    const int64_t vox = ((bn * g.t + tt / g.s0) * g.h + h2 / g.s1) * g.w + w2 / g.s2;
    const int64_t prod = g.s0 * g.s1 * g.s2;
    *x_off = vox * g.c * prod + ((cc * g.s0 + a) * g.s1 + b) * g.s2 + e;
    if (g.rc > 0) *res_off = vox * g.rc * prod + (((cc % g.rc) * g.s0 + a) * g.s1 + b) * g.s2 + e;
}

/* SpaceToDepthDownsample (the inverse, src/cpu/cpu_space_to_depth.h): y [n, t/s0, h/s1, w/s2,
 * C = c*s0*s1*s2] takes channel k = ((cc*s0 + a)*s1 + b)*s2 + e of output voxel (t2, h2, w2) from
 * x [n, t, h, w, c] at (t2*s0 + a, h2*s1 + b, w2*s2 + e, cc). The optional residual [n, t, h, w, rc]
 * is rearranged the same way into rc*s0*s1*s2 channels, of which k averages [k*g, (k+1)*g). */
typedef struct ltx2_s2d_geom {
    int64_t t, h, w, c;   /* input frames, rows, columns, channels */
    int64_t s0, s1, s2;   /* time, height, width factors */
    int64_t rc;           /* residual channels (0: no residual) */
    int64_t T, H, W, C;   /* output frames, rows, columns, channels */
    int64_t g;            /* residual channels averaged per output channel (0: no residual) */
} ltx2_s2d_geom;

LTX2_HD ltx2_s2d_geom ltx2_s2d_geom_make(int64_t t, int64_t h, int64_t w, int64_t c, int64_t s0, int64_t s1,
                                         int64_t s2, int64_t rc) {
    ltx2_s2d_geom g;
    g.t = t, g.h = h, g.w = w, g.c = c;
    g.s0 = s0, g.s1 = s1, g.s2 = s2;
    g.rc = rc;
    g.T = t / s0, g.H = h / s1, g.W = w / s2, g.C = c * s0 * s1 * s2;
    g.g = rc > 0 ? rc * s0 * s1 * s2 / g.C : 0;
    return g;
}

/* Elements of y. */
LTX2_HD int64_t ltx2_s2d_total(ltx2_s2d_geom g, int64_t n) { return n * g.T * g.H * g.W * g.C; }

/* Output element i of y: its voxel (batch bn, frame t2, row h2, column w2) and channel k. */
LTX2_HD void ltx2_s2d_split(ltx2_s2d_geom g, int64_t i, int64_t *bn, int64_t *t2, int64_t *h2, int64_t *w2,
                            int64_t *k) {
    int64_t r = i;
    *k = r % g.C;
    r /= g.C;
    *w2 = r % g.W;
    r /= g.W;
    *h2 = r % g.H;
    r /= g.H;
    *t2 = r % g.T;
    *bn = r / g.T;
}

/* Offset in an [n, t, h, w, ch] tensor of rearranged channel k of output voxel (bn, t2, h2, w2). */
LTX2_HD int64_t ltx2_s2d_src(ltx2_s2d_geom g, int64_t ch, int64_t bn, int64_t t2, int64_t h2, int64_t w2,
                             int64_t k) {
    int64_t r = k;
    const int64_t e = r % g.s2;
    r /= g.s2;
    const int64_t b = r % g.s1;
    r /= g.s1;
    const int64_t a = r % g.s0;
    const int64_t cc = r / g.s0;
    return (((bn * g.t + t2 * g.s0 + a) * g.h + h2 * g.s1 + b) * g.w + w2 * g.s2 + e) * ch + cc;
}

#endif
