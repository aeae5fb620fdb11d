/* The latent upsampler's one forward (ltx-core LatentUpsampler.forward) on the backend op table:
 * the CPU reference (ltx2_upsampler_forward runs it on the CPU backend), CUDA and the kernel
 * emulator. conv (zero frames on both sides for the 3-D convs) -> GroupNorm + SiLU -> res blocks
 * -> upsampler conv + depth_to_space (spatial: (1, r, r); temporal: (2, 1, 1) dropping the first
 * frame; the rational resampler then blur_downsample by its denominator) -> res blocks -> conv. A
 * res block is silu(gn2(conv2(silu(gn1(conv1(x))))) + x): the add is a plain gated add. The
 * activations of one forward live in one vae_run table (vae_run.h). */
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "core/dtype.h"
#include "model/upsampler.h"
#include "model/upsampler_internal.h"
#include "model/vae_run.h"

typedef struct dev_res {
    vae_dev_conv c1, c2;
    ltx2_tensor n1w, n1b, n2w, n2b;
} dev_res;

/* The weights on one backend for one forward (views of the host arrays on the CPU in f32). */
typedef struct ups_dev {
    const ltx2_backend *be;
    ltx2_dtype dt;
    vae_dev_conv initial, up, final;
    ltx2_tensor inw, inb;
    dev_res *pre, *post;
    int64_t nb;
} ups_dev;

static ltx2_status conv_place(ltx2_context *ctx, const ups_dev *d, const ups_conv *c, vae_dev_conv *o) {
    return vae_dev_conv_upload(ctx, d->be, d->dt, &c->desc, c->w, c->b, 1, 1, o);
}

static ltx2_status res_place(ltx2_context *ctx, ups_dev *d, const ups_res *r, int64_t m, dev_res *o) {
    LTX2_TRY(conv_place(ctx, d, &r->c1, &o->c1));
    LTX2_TRY(conv_place(ctx, d, &r->c2, &o->c2));
    LTX2_TRY(vae_dev_vec_upload(ctx, d->be, d->dt, r->n1w, m, &o->n1w));
    LTX2_TRY(vae_dev_vec_upload(ctx, d->be, d->dt, r->n1b, m, &o->n1b));
    LTX2_TRY(vae_dev_vec_upload(ctx, d->be, d->dt, r->n2w, m, &o->n2w));
    return vae_dev_vec_upload(ctx, d->be, d->dt, r->n2b, m, &o->n2b);
}

static void res_release(const ups_dev *d, dev_res *r) {
    vae_dev_conv_release(d->be, &r->c1);
    vae_dev_conv_release(d->be, &r->c2);
    vae_dev_vec_release(d->be, &r->n1w), vae_dev_vec_release(d->be, &r->n1b), vae_dev_vec_release(d->be, &r->n2w), vae_dev_vec_release(d->be, &r->n2b);
}

static void dev_release(ups_dev *d) {
    vae_dev_conv_release(d->be, &d->initial);
    vae_dev_conv_release(d->be, &d->up);
    vae_dev_conv_release(d->be, &d->final);
    vae_dev_vec_release(d->be, &d->inw), vae_dev_vec_release(d->be, &d->inb);
    for (int64_t i = 0; i < d->nb; i++) {
        if (d->pre) res_release(d, &d->pre[i]);
        if (d->post) res_release(d, &d->post[i]);
    }
    free(d->pre);
    free(d->post);
}

static ltx2_status dev_place(ltx2_context *ctx, const ltx2_upsampler *u, ups_dev *d) {
    const int64_t M = u->cfg.mid_channels, nb = u->cfg.num_blocks_per_stage;
    d->nb = nb;
    d->pre = calloc((size_t)(nb ? nb : 1), sizeof(dev_res));
    d->post = calloc((size_t)(nb ? nb : 1), sizeof(dev_res));
    if (!d->pre || !d->post) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: res block weights");
    LTX2_TRY(conv_place(ctx, d, &u->initial, &d->initial));
    LTX2_TRY(conv_place(ctx, d, &u->up, &d->up));
    LTX2_TRY(conv_place(ctx, d, &u->final, &d->final));
    LTX2_TRY(vae_dev_vec_upload(ctx, d->be, d->dt, u->init_nw, M, &d->inw));
    LTX2_TRY(vae_dev_vec_upload(ctx, d->be, d->dt, u->init_nb, M, &d->inb));
    for (int64_t i = 0; i < nb; i++) {
        LTX2_TRY(res_place(ctx, d, &u->pre[i], M, &d->pre[i]));
        LTX2_TRY(res_place(ctx, d, &u->post[i], M, &d->post[i]));
    }
    return LTX2_OK;
}

/* y = GroupNorm(32)(x) (+ SiLU), in place. */
static ltx2_status gn(vae_run *r, ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *b, bool silu) {
    return ltx2_backend_group_norm(r->be, r->ctx, x, UPS_GN_GROUPS, (float)UPS_GN_EPS, w, b, silu, x);
}

/* *h = silu(gn2(conv2(silu(gn1(conv1(h))))) + h) */
static ltx2_status res_block(vae_run *r, const dev_res *b, ltx2_tensor *h) {
    ltx2_tensor t1, t2;
    LTX2_TRY(vae_run_conv3d(r, &b->c1, h, &t1));
    LTX2_TRY(gn(r, &t1, &b->n1w, &b->n1b, true));
    LTX2_TRY(vae_run_conv3d(r, &b->c2, &t1, &t2));
    vae_run_retire(r, &t1);
    LTX2_TRY(gn(r, &t2, &b->n2w, &b->n2b, false));
    LTX2_TRY(ltx2_backend_gated_add(r->be, r->ctx, &t2, h, NULL, NULL));
    LTX2_TRY(ltx2_backend_unary(r->be, r->ctx, LTX2_OP_SILU, &t2, &t2));
    vae_run_retire(r, h);
    *h = t2;
    return vae_run_flush(r);
}

/* conv, then the channel -> space/time shuffle (+ the rational resampler's blur-downsample). */
static ltx2_status upsample(vae_run *r, const ltx2_upsampler *u, const ups_dev *d, ltx2_tensor *h) {
    ltx2_tensor y, o;
    LTX2_TRY(vae_run_conv3d(r, &d->up, h, &y));
    vae_run_retire(r, h);
    const int64_t M = u->cfg.mid_channels, N = y.shape[0], T = y.shape[1], H = y.shape[2], W = y.shape[3];
    const bool tmp = u->cfg.temporal_upsample;
    const ltx2_d2s_args a = {.stride = {tmp ? 2 : 1, tmp ? 1 : u->num, tmp ? 1 : u->num}, .drop_first = tmp};
    const int64_t os[5] = {N, tmp ? 2 * T - 1 : T, tmp ? H : H * u->num, tmp ? W : W * u->num, M};
    LTX2_TRY(vae_run_new(r, 5, os, &o));
    LTX2_TRY(ltx2_backend_depth_to_space(r->be, r->ctx, &y, &a, NULL, &o));
    vae_run_retire(r, &y);
    if (u->den > 1) {
        ltx2_tensor z;
        const int64_t zs[5] = {N, os[1], (os[2] - 1) / u->den + 1, (os[3] - 1) / u->den + 1, M};
        LTX2_TRY(vae_run_new(r, 5, zs, &z));
        LTX2_TRY(ltx2_backend_blur_downsample(r->be, r->ctx, &o, u->den, &z));
        vae_run_retire(r, &o);
        o = z;
    }
    *h = o;
    return vae_run_flush(r);
}

ltx2_status ltx2_upsampler_forward_on(ltx2_context *ctx, const ltx2_upsampler *u, const ltx2_backend *be,
                                      const float *x, const int64_t in[5], float *y) {
    if (!u || !be || !x || !in || !y) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: NULL argument");
    int64_t out[5];
    LTX2_TRY(ltx2_upsampler_out_shape(ctx, u, in, out));
    const ltx2_op need[] = {LTX2_OP_CONV3D, LTX2_OP_GROUP_NORM, LTX2_OP_DEPTH_TO_SPACE, LTX2_OP_BLUR_DOWNSAMPLE,
                            LTX2_OP_GATED_ADD, LTX2_OP_SILU};
    ups_dev d = {.be = be};
    LTX2_TRY(vae_run_pick_dtype(ctx, be, "latent upsampler", need, sizeof(need) / sizeof(need[0]), &d.dt));
    ltx2_status st = dev_place(ctx, u, &d);
    vae_run r;
    vae_run_init(&r, ctx, be, d.dt);
    ltx2_tensor a, h;
    if (st == LTX2_OK) st = vae_run_upload(&r, x, d.dt, 5, in, &a);
    if (st == LTX2_OK) st = vae_run_conv3d(&r, &d.initial, &a, &h);
    if (st == LTX2_OK) {
        vae_run_retire(&r, &a);
        st = gn(&r, &h, &d.inw, &d.inb, true);
    }
    for (int64_t i = 0; i < d.nb && st == LTX2_OK; i++) st = res_block(&r, &d.pre[i], &h);
    if (st == LTX2_OK) st = upsample(&r, u, &d, &h);
    for (int64_t i = 0; i < d.nb && st == LTX2_OK; i++) st = res_block(&r, &d.post[i], &h);
    ltx2_tensor o;
    if (st == LTX2_OK) st = vae_run_conv3d(&r, &d.final, &h, &o);
    if (st == LTX2_OK) st = vae_dev_to_host(ctx, be, &o, y);
    if (st == LTX2_OK) st = be->sync(be, ctx);
    vae_run_end(&r, st);
    dev_release(&d);
    return st;
}

ltx2_status ltx2_upsampler_forward(ltx2_context *ctx, const ltx2_upsampler *u, const ltx2_tensor *x, ltx2_tensor *y) {
    if (!u || !vae_host_f32(x, 5) || !vae_host_f32(y, 5))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: need a model and contiguous f32 CPU NDHWC tensors");
    int64_t want[5];
    LTX2_TRY(ltx2_upsampler_out_shape(ctx, u, x->shape, want));
    for (int i = 0; i < 5; i++)
        if (y->shape[i] != want[i]) {
            char a[96], b[96];
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "upsampler: output is %s, expected %s",
                              ltx2_shape_str(y->shape, 5, a, 96), ltx2_shape_str(want, 5, b, 96));
        }
    return ltx2_upsampler_forward_on(ctx, u, ltx2_backend_cpu(), x->data, x->shape, y->data);
}

ltx2_status ltx2_upsampler_upsample_latent_on(ltx2_context *ctx, const ltx2_upsampler *u, const ltx2_backend *be,
                                              const float *mean_of_means, const float *std_of_means,
                                              const ltx2_tensor *x, ltx2_tensor *y) {
    if (!mean_of_means || !std_of_means || !u || !be || !vae_host_f32(x, 5) || !vae_host_f32(y, 5))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: NULL statistics, model or backend, or a latent that "
                                                     "is not contiguous f32 CPU NDHWC");
    const int64_t C = u->cfg.in_channels, n = ltx2_tensor_numel(x);
    if (x->shape[4] != C)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "upsampler: latent has %lld channels, expected %lld",
                          (long long)x->shape[4], (long long)C);
    int64_t want[5];
    LTX2_TRY(ltx2_upsampler_out_shape(ctx, u, x->shape, want));
    for (int i = 0; i < 5; i++)
        if (y->shape[i] != want[i]) return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "upsampler: output shape");
    float *un = malloc((size_t)n * sizeof(float));
    if (!un) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: latent copy");
    const float *xd = x->data;
    for (int64_t i = 0; i < n; i++) un[i] = xd[i] * std_of_means[i % C] + mean_of_means[i % C];
    ltx2_status st = ltx2_upsampler_forward_on(ctx, u, be, un, x->shape, y->data);
    free(un);
    if (st != LTX2_OK) return st;
    float *yd = y->data;
    const int64_t m = ltx2_tensor_numel(y);
    for (int64_t i = 0; i < m; i++) yd[i] = (yd[i] - mean_of_means[i % C]) / std_of_means[i % C];
    return LTX2_OK;
}

ltx2_status ltx2_upsampler_upsample_latent(ltx2_context *ctx, const ltx2_upsampler *u, const float *mean_of_means,
                                           const float *std_of_means, const ltx2_tensor *x, ltx2_tensor *y) {
    return ltx2_upsampler_upsample_latent_on(ctx, u, ltx2_backend_cpu(), mean_of_means, std_of_means, x, y);
}
