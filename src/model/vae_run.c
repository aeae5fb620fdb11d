/* Conv-net plumbing on a backend: weights, transfers and one run's buffer table (vae_run.h). */
#include "model/vae_run.h"

#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "backend/conv3d_desc.h"

ltx2_tensor vae_dev_view(void *data, ltx2_dtype dt, ltx2_device dev, int ndim, const int64_t *shape) {
    ltx2_tensor t = ltx2_tensor_make(data, dt, ndim, shape);
    t.device = dev;
    return t;
}

bool vae_host_f32(const ltx2_tensor *t, int ndim) {
    return t && t->data && t->dtype == LTX2_F32 && t->device == LTX2_DEVICE_CPU && t->ndim == ndim &&
           ltx2_tensor_is_contiguous(t);
}

ltx2_status vae_run_pick_dtype(ltx2_context *ctx, const ltx2_backend *be, const char *model, const ltx2_op *need,
                               size_t n, ltx2_dtype *out) {
    const ltx2_dtype dt = ltx2_backend_supports(be, LTX2_OP_CONV3D, LTX2_BF16) ? LTX2_BF16 : LTX2_F32;
    for (size_t k = 0; k < n; k++)
        if (!ltx2_backend_supports(be, need[k], dt))
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: backend %s has no %s %s op", model, be->name,
                              ltx2_dtype_name(dt), ltx2_op_name(need[k]));
    *out = dt;
    return LTX2_OK;
}

/* Host f32 -> a new device tensor of dtype dt (f32 or bf16); *out is untouched on failure. */
static ltx2_status host_to_dev(ltx2_context *ctx, const ltx2_backend *be, const float *host, ltx2_dtype dt, int ndim,
                               const int64_t *shape, ltx2_tensor *out) {
    ltx2_tensor t = vae_dev_view(NULL, dt, be->device, ndim, shape);
    const size_t n = (size_t)ltx2_tensor_numel(&t), nbytes = ltx2_tensor_nbytes(&t);
    void *p = NULL;
    LTX2_TRY(be->alloc(be, ctx, nbytes, &p));
    ltx2_status st = LTX2_OK;
    if (dt == LTX2_F32) {
        st = be->upload(be, ctx, p, host, nbytes);
    } else {
        void *tmp = malloc(nbytes ? nbytes : 1);
        st = tmp ? ltx2_convert(ctx, tmp, dt, host, LTX2_F32, n)
                 : LTX2_ERROR(ctx, LTX2_ERR_OOM, "staging %zu bytes for the device", nbytes);
        if (st == LTX2_OK) st = be->upload(be, ctx, p, tmp, nbytes);
        free(tmp);
    }
    if (st != LTX2_OK) {
        be->free(be, p);
        return st;
    }
    t.data = p;
    *out = t;
    return LTX2_OK;
}

ltx2_status vae_dev_to_host(ltx2_context *ctx, const ltx2_backend *be, const ltx2_tensor *t, float *host) {
    const size_t n = (size_t)ltx2_tensor_numel(t), nbytes = ltx2_tensor_nbytes(t);
    if (t->dtype == LTX2_F32) return be->download(be, ctx, host, t->data, nbytes);
    void *tmp = malloc(nbytes ? nbytes : 1);
    if (!tmp) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "download staging %zu bytes", nbytes);
    ltx2_status st = be->download(be, ctx, tmp, t->data, nbytes);
    if (st == LTX2_OK) st = ltx2_convert(ctx, host, LTX2_F32, tmp, t->dtype, n);
    free(tmp);
    return st;
}

/* ---- weights ---- */

ltx2_status vae_dev_vec_upload(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dt, const float *host, int64_t n,
                               ltx2_tensor *out) {
    if (be->device == LTX2_DEVICE_CPU && dt == LTX2_F32) {
        *out = vae_dev_view((float *)host, LTX2_F32, LTX2_DEVICE_CPU, 1, &n);
        return LTX2_OK;
    }
    return host_to_dev(ctx, be, host, dt, 1, &n, out);
}

void vae_dev_vec_release(const ltx2_backend *be, ltx2_tensor *t) {
    if (t->data && !(t->device == LTX2_DEVICE_CPU && t->dtype == LTX2_F32)) be->free(be, t->data);
    t->data = NULL;
}

void vae_dev_conv_release(const ltx2_backend *be, vae_dev_conv *c) {
    if (c->owned && c->w.data) be->free(be, c->w.data);
    if (c->owned && c->b.data) be->free(be, c->b.data);
    c->w.data = c->b.data = NULL;
}

static int64_t round_up(int64_t v, int64_t align) { return align > 1 ? (v + align - 1) / align * align : v; }

ltx2_status vae_dev_conv_upload(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dt, const ltx2_conv3d_desc *d,
                                const float *weight, const float *bias, int64_t c_in_align, int64_t c_out_align,
                                vae_dev_conv *o) {
    o->desc = *d;
    const int64_t taps = d->kt * d->kh * d->kw, Ci = d->c_in, N = d->c_out;
    if (be->device == LTX2_DEVICE_CPU && dt == LTX2_F32) {
        const int64_t ws[2] = {taps * Ci, N};
        o->w = vae_dev_view((float *)weight, LTX2_F32, LTX2_DEVICE_CPU, 2, ws);
        o->b = vae_dev_view((float *)bias, LTX2_F32, LTX2_DEVICE_CPU, 1, &d->c_out);
        o->owned = false;
        return LTX2_OK;
    }
    o->owned = true;
    const int64_t Cip = round_up(Ci, c_in_align), Np = round_up(N, c_out_align);
    if (Cip == Ci && Np == N) {
        const int64_t ws[2] = {taps * Ci, N};
        LTX2_TRY(host_to_dev(ctx, be, weight, dt, 2, ws, &o->w));
        return host_to_dev(ctx, be, bias, dt, 1, &N, &o->b);
    }
    /* row (tap, ci) of [taps * Ci, N] goes to row (tap, ci) of [taps * Cip, Np]; the rest is zero */
    float *wp = calloc((size_t)(taps * Cip * Np + Np), sizeof(float));
    if (!wp)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "conv weight widened to %lld inputs x %lld outputs", (long long)Cip,
                          (long long)Np);
    float *bp = wp + taps * Cip * Np;
    for (int64_t t = 0; t < taps; t++)
        for (int64_t i = 0; i < Ci; i++)
            memcpy(wp + (t * Cip + i) * Np, weight + (t * Ci + i) * N, (size_t)N * sizeof(float));
    memcpy(bp, bias, (size_t)N * sizeof(float));
    o->desc.c_in = Cip;
    o->desc.c_out = Np;
    const int64_t wps[2] = {taps * Cip, Np};
    ltx2_status st = host_to_dev(ctx, be, wp, dt, 2, wps, &o->w);
    if (st == LTX2_OK) st = host_to_dev(ctx, be, bp, dt, 1, &Np, &o->b);
    free(wp);
    return st;
}

ltx2_status vae_dev_conv_upload_exact(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dt, const ltx2_vae_conv *c,
                                      vae_dev_conv *o) {
    return vae_dev_conv_upload(ctx, be, dt, &c->desc, c->weight, c->bias, 1, 1, o);
}

/* ---- one run's buffers ---- */

void vae_run_init(vae_run *r, ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dt) {
    memset(r, 0, sizeof(*r));
    r->ctx = ctx;
    r->be = be;
    r->dt = dt;
}

static ltx2_status track(vae_run *r, const ltx2_tensor *t) {
    if (r->nbufs >= VAE_RUN_MAX_BUFS) {
        r->be->free(r->be, t->data);
        return LTX2_ERROR(r->ctx, LTX2_ERR_INTERNAL, "more than %d live device buffers in one VAE run",
                          VAE_RUN_MAX_BUFS);
    }
    r->retired[r->nbufs] = false;
    r->bufs[r->nbufs++] = t->data;
    return LTX2_OK;
}

ltx2_status vae_run_new(vae_run *r, int ndim, const int64_t *shape, ltx2_tensor *out) {
    ltx2_tensor t = vae_dev_view(NULL, r->dt, r->be->device, ndim, shape);
    void *p = NULL;
    LTX2_TRY(r->be->alloc(r->be, r->ctx, ltx2_tensor_nbytes(&t), &p));
    t.data = p;
    LTX2_TRY(track(r, &t));
    *out = t;
    return LTX2_OK;
}

ltx2_status vae_run_upload(vae_run *r, const float *host, ltx2_dtype dt, int ndim, const int64_t *shape,
                           ltx2_tensor *out) {
    ltx2_tensor t;
    LTX2_TRY(host_to_dev(r->ctx, r->be, host, dt, ndim, shape, &t));
    LTX2_TRY(track(r, &t));
    *out = t;
    return LTX2_OK;
}

void vae_run_retire(vae_run *r, ltx2_tensor *t) {
    for (int k = 0; k < r->nbufs; k++)
        if (r->bufs[k] == t->data) r->retired[k] = true;
    t->data = NULL;
}

ltx2_status vae_run_flush(vae_run *r) {
    bool any = false;
    for (int k = 0; k < r->nbufs && !any; k++) any = r->retired[k];
    if (!any) return LTX2_OK;
    LTX2_TRY(r->be->sync(r->be, r->ctx));
    int m = 0;
    for (int k = 0; k < r->nbufs; k++) {
        if (r->retired[k]) {
            r->be->free(r->be, r->bufs[k]);
        } else {
            r->bufs[m] = r->bufs[k];
            r->retired[m++] = false;
        }
    }
    r->nbufs = m;
    return LTX2_OK;
}

/* NULL context for the sync after a failure: the same sticky device error must not overwrite the
 * message naming the failed stage. */
void vae_run_end(vae_run *r, ltx2_status st) {
    if (st != LTX2_OK) r->be->sync(r->be, NULL);
    for (int k = 0; k < r->nbufs; k++) r->be->free(r->be, r->bufs[k]);
    r->nbufs = 0;
}

ltx2_status vae_run_dump(vae_run *r, ltx2_vae_dump_fn dump, void *user, const char *name, const ltx2_tensor *x) {
    if (!dump) return LTX2_OK;
    float *h = malloc((size_t)ltx2_tensor_numel(x) * sizeof(float));
    if (!h) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "VAE dump %s", name);
    ltx2_status st = vae_dev_to_host(r->ctx, r->be, x, h);
    if (st == LTX2_OK) {
        ltx2_tensor v = ltx2_tensor_make(h, LTX2_F32, x->ndim, x->shape);
        dump(name, &v, user);
    }
    free(h);
    return st;
}

ltx2_status vae_run_conv3d(vae_run *r, const vae_dev_conv *c, const ltx2_tensor *x, ltx2_tensor *y) {
    int64_t o[3];
    LTX2_TRY(ltx2_conv3d_out_shape(r->ctx, &c->desc, x->shape[1], x->shape[2], x->shape[3], o));
    const int64_t ys[5] = {x->shape[0], o[0], o[1], o[2], c->desc.c_out};
    LTX2_TRY(vae_run_new(r, 5, ys, y));
    return ltx2_backend_conv3d(r->be, r->ctx, &c->desc, x, &c->w, &c->b, false, y);
}
