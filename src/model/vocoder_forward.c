/* The vocoders' one forward (ltx-core 1.0.0 model/audio_vae/vocoder.py) on the backend op table:
 * the CPU reference (ltx2_vocoder_run on an unplaced vocoder runs it on the CPU backend over the
 * host weights in place), CUDA and the kernel emulator. Activations are channels-last [B, L, C]
 * in one vae_run table (vae_run.h). HiFi-GAN's LeakyReLU, BigVGAN's Activation1d (x2 FIR up,
 * SnakeBeta, x2 FIR down), the resblocks' residual adds and their mean, the final tanh / clamp and
 * the bandwidth extension (a causal STFT as one conv1d, its magnitude, the mel projection as a
 * GEMM, the log floor, the second generator, the Hann resampler's skip) are all ops. The host
 * work is the input's [B, 2, T, F] -> [B, T, 2F] reorder, the output's reorder to planar stereo
 * (with the BWE's crop), and reordering dumps to the reference's layouts. */
#include "model/vocoder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/vae_run.h"

/* HiFi-GAN LeakyReLU slope inside the network (ltx-core resnet.py LRELU_SLOPE) and the slope of
 * the final nn.LeakyReLU() act_post, which is torch's default, not LRELU_SLOPE. */
#define VOC_LRELU_SLOPE 0.1f
#define VOC_LRELU_POST_SLOPE 0.01f
/* Log-mel floor of MelSTFT.mel_spectrogram (torch.clamp(min=1e-5) before the log). */
#define VOC_MEL_FLOOR 1e-5f

/* ---------------------------------------------------------------------------------------------
 * Placement: every weight and activation in f32 on every backend (views of the host arrays on the
 * CPU backend). bf16 storage, as the VAEs use, costs the waveform 2.2e-2 rel-L2 on the tiny LTX-2.3
 * vocoder (two generators of SnakeBeta resblocks; measured in the emulator), about -33 dB of noise
 * under the signal, while the vocoder's weights (0.1 / 0.24 GiB in bf16) and compute are small
 * beside the DiT's: f32 keeps the device's audio the reference's.
 * ------------------------------------------------------------------------------------------- */

typedef struct dev_conv {
    ltx2_conv1d_desc desc;
    ltx2_tensor w, b; /* [k*c_in, c_out], [c_out] (b.data NULL: no bias) */
} dev_conv;

typedef struct dev_convt {
    ltx2_convt1d_desc desc;
    ltx2_tensor w, b; /* [c_in, k*c_out], [c_out] */
} dev_convt;

typedef struct dev_act {
    ltx2_tensor alpha, inv_beta, up, down; /* f32 [c], [c], [taps], [taps] */
} dev_act;

typedef struct dev_resblock {
    dev_conv c1[LTX2_VOCODER_DILATIONS], c2[LTX2_VOCODER_DILATIONS];
    dev_act a1[LTX2_VOCODER_DILATIONS], a2[LTX2_VOCODER_DILATIONS]; /* AMP only */
} dev_resblock;

typedef struct dev_gen {
    const ltx2_voc_gen *g;
    dev_conv pre, post;
    dev_convt ups[LTX2_VOCODER_MAX_UPS];
    dev_resblock *rb; /* n_ups * n_kernels */
    dev_act act_post;
} dev_gen;

struct ltx2_vocoder_device {
    const ltx2_backend *be;
    ltx2_dtype dt;
    const ltx2_vocoder *voc;
    dev_gen main, bwe;
    dev_conv stft;                   /* BWE only */
    ltx2_tensor mel_basis, resampler; /* [mels, n_fft/2 + 1] in dt, f32 [taps] */
};

/* A host f32 array as a [rows, cols] (or [rows] when cols is 0) tensor on the backend. */
static ltx2_status place(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dt, const float *host, int64_t rows,
                         int64_t cols, ltx2_tensor *out) {
    memset(out, 0, sizeof(*out));
    if (!host) return LTX2_OK;
    LTX2_TRY(vae_dev_vec_upload(ctx, be, dt, host, cols ? rows * cols : rows, out));
    if (cols) {
        const int64_t s[2] = {rows, cols};
        *out = vae_dev_view(out->data, out->dtype, out->device, 2, s);
    }
    return LTX2_OK;
}

static ltx2_status place_conv(ltx2_context *ctx, const ltx2_vocoder_device *dv, const ltx2_voc_conv *c, dev_conv *o) {
    o->desc = c->desc;
    LTX2_TRY(place(ctx, dv->be, dv->dt, c->weight, c->desc.k * c->desc.c_in, c->desc.c_out, &o->w));
    return place(ctx, dv->be, dv->dt, c->bias, c->desc.c_out, 0, &o->b);
}

static ltx2_status place_act(ltx2_context *ctx, const ltx2_vocoder_device *dv, const ltx2_voc_act *a, dev_act *o) {
    if (!a->alpha_exp) return LTX2_OK; /* HiFi-GAN: no SnakeBeta */
    LTX2_TRY(place(ctx, dv->be, LTX2_F32, a->alpha_exp, a->c, 0, &o->alpha));
    LTX2_TRY(place(ctx, dv->be, LTX2_F32, a->inv_beta, a->c, 0, &o->inv_beta));
    LTX2_TRY(place(ctx, dv->be, LTX2_F32, a->up_filter, LTX2_VOCODER_AA_TAPS, 0, &o->up));
    return place(ctx, dv->be, LTX2_F32, a->down_filter, LTX2_VOCODER_AA_TAPS, 0, &o->down);
}

static ltx2_status place_gen(ltx2_context *ctx, const ltx2_vocoder_device *dv, const ltx2_voc_gen *g, dev_gen *o) {
    o->g = g;
    LTX2_TRY(place_conv(ctx, dv, &g->conv_pre, &o->pre));
    LTX2_TRY(place_conv(ctx, dv, &g->conv_post, &o->post));
    const int nrb = g->cfg.n_ups * g->cfg.n_kernels;
    o->rb = calloc((size_t)nrb, sizeof(*o->rb));
    if (!o->rb) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "vocoder: placed resblocks");
    for (int i = 0; i < g->cfg.n_ups; i++) {
        const ltx2_voc_convt *u = &g->ups[i];
        o->ups[i].desc = u->desc;
        LTX2_TRY(place(ctx, dv->be, dv->dt, u->weight, u->desc.c_in, u->desc.k * u->desc.c_out, &o->ups[i].w));
        LTX2_TRY(place(ctx, dv->be, dv->dt, u->bias, u->desc.c_out, 0, &o->ups[i].b));
    }
    for (int r = 0; r < nrb; r++)
        for (int m = 0; m < LTX2_VOCODER_DILATIONS; m++) {
            LTX2_TRY(place_conv(ctx, dv, &g->resblocks[r].convs1[m], &o->rb[r].c1[m]));
            LTX2_TRY(place_conv(ctx, dv, &g->resblocks[r].convs2[m], &o->rb[r].c2[m]));
            LTX2_TRY(place_act(ctx, dv, &g->resblocks[r].acts1[m], &o->rb[r].a1[m]));
            LTX2_TRY(place_act(ctx, dv, &g->resblocks[r].acts2[m], &o->rb[r].a2[m]));
        }
    return place_act(ctx, dv, &g->act_post, &o->act_post);
}

static void release_act(const ltx2_backend *be, dev_act *a) {
    vae_dev_vec_release(be, &a->alpha);
    vae_dev_vec_release(be, &a->inv_beta);
    vae_dev_vec_release(be, &a->up);
    vae_dev_vec_release(be, &a->down);
}

static void release_conv(const ltx2_backend *be, dev_conv *c) {
    vae_dev_vec_release(be, &c->w);
    vae_dev_vec_release(be, &c->b);
}

static void release_gen(const ltx2_backend *be, dev_gen *o) {
    if (!o->g) return;
    release_conv(be, &o->pre);
    release_conv(be, &o->post);
    for (int i = 0; i < LTX2_VOCODER_MAX_UPS; i++) {
        vae_dev_vec_release(be, &o->ups[i].w);
        vae_dev_vec_release(be, &o->ups[i].b);
    }
    for (int r = 0; o->rb && r < o->g->cfg.n_ups * o->g->cfg.n_kernels; r++)
        for (int m = 0; m < LTX2_VOCODER_DILATIONS; m++) {
            release_conv(be, &o->rb[r].c1[m]);
            release_conv(be, &o->rb[r].c2[m]);
            release_act(be, &o->rb[r].a1[m]);
            release_act(be, &o->rb[r].a2[m]);
        }
    free(o->rb);
    release_act(be, &o->act_post);
}

void ltx2_vocoder_device_free(ltx2_vocoder_device *dv) {
    if (!dv) return;
    release_gen(dv->be, &dv->main);
    release_gen(dv->be, &dv->bwe);
    release_conv(dv->be, &dv->stft);
    vae_dev_vec_release(dv->be, &dv->mel_basis);
    vae_dev_vec_release(dv->be, &dv->resampler);
    free(dv);
}

ltx2_status ltx2_vocoder_device_create(ltx2_context *ctx, const ltx2_backend *be, const ltx2_vocoder *voc,
                                      ltx2_vocoder_device **out) {
    if (!be || !voc || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder: NULL argument");
    *out = NULL;
    const ltx2_op need[] = {LTX2_OP_CONV1D,       LTX2_OP_CONV_TRANSPOSE1D, LTX2_OP_LEAKY_RELU,  LTX2_OP_ADD,
                            LTX2_OP_DIV_SCALAR,   LTX2_OP_TANH,             LTX2_OP_HARDTANH,    LTX2_OP_FIR_UPSAMPLE,
                            LTX2_OP_FIR_DOWNSAMPLE, LTX2_OP_SNAKE,          LTX2_OP_COMPLEX_ABS, LTX2_OP_GEMM,
                            LTX2_OP_LOG_FLOOR};
    const ltx2_dtype dt = LTX2_F32;
    for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++)
        if (!ltx2_backend_supports(be, need[k], dt))
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "vocoder: backend %s has no f32 %s op", be->name,
                              ltx2_op_name(need[k]));
    ltx2_vocoder_device *dv = calloc(1, sizeof(*dv));
    if (!dv) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "vocoder: device state");
    dv->be = be;
    dv->dt = dt;
    dv->voc = voc;
    ltx2_status st = place_gen(ctx, dv, &voc->main, &dv->main);
    if (st == LTX2_OK && voc->cfg.bwe) {
        st = place_gen(ctx, dv, &voc->bwe, &dv->bwe);
        if (st == LTX2_OK) st = place_conv(ctx, dv, &voc->stft, &dv->stft);
        if (st == LTX2_OK)
            st = place(ctx, be, dt, voc->mel_basis, voc->cfg.bwe_mels, voc->cfg.bwe_n_fft / 2 + 1, &dv->mel_basis);
        if (st == LTX2_OK) st = place(ctx, be, LTX2_F32, voc->resample_filter, voc->resample_taps, 0, &dv->resampler);
    }
    if (st != LTX2_OK) {
        ltx2_error_prefix(ctx, "vocoder: placing the weights on %s", be->name);
        ltx2_vocoder_device_free(dv);
        return st;
    }
    *out = dv;
    return LTX2_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Forward
 * ------------------------------------------------------------------------------------------- */

typedef struct voc_run {
    vae_run r;
    const ltx2_vocoder_device *dv;
    ltx2_audio_dump_fn dump;
    void *user;
} voc_run;

/* Dumps [n, l, c] as the reference's [n, c, l]. */
static ltx2_status dump_seq(voc_run *v, const char *prefix, const char *name, const ltx2_tensor *x) {
    if (!v->dump) return LTX2_OK;
    const int64_t n = x->shape[0], l = x->shape[1], c = x->shape[2];
    float *h = malloc((size_t)(2 * n * l * c) * sizeof(float));
    if (!h) return LTX2_ERROR(v->r.ctx, LTX2_ERR_OOM, "vocoder: dump %s.%s", prefix, name);
    float *t = h + n * l * c;
    ltx2_status st = vae_dev_to_host(v->r.ctx, v->r.be, x, h);
    if (st == LTX2_OK) {
        for (int64_t b = 0; b < n; b++)
            for (int64_t i = 0; i < l; i++)
                for (int64_t ch = 0; ch < c; ch++) t[(b * c + ch) * l + i] = h[(b * l + i) * c + ch];
        const int64_t shape[3] = {n, c, l};
        ltx2_tensor view = ltx2_tensor_make(t, LTX2_F32, 3, shape);
        char full[160];
        snprintf(full, sizeof(full), "%s.%s", prefix, name);
        v->dump(full, &view, v->user);
    }
    free(h);
    return st;
}

static ltx2_status run_conv(voc_run *v, const dev_conv *c, const ltx2_tensor *x, ltx2_tensor *y) {
    int64_t ol;
    LTX2_TRY(ltx2_conv1d_out_len(v->r.ctx, &c->desc, x->shape[1], &ol));
    const int64_t ys[3] = {x->shape[0], ol, c->desc.c_out};
    LTX2_TRY(vae_run_new(&v->r, 3, ys, y));
    return ltx2_backend_conv1d(v->r.be, v->r.ctx, &c->desc, x, &c->w, c->b.data ? &c->b : NULL, y);
}

/* Replaces *x by y, freeing *x's buffer once the queued ops are done with it. The generator
 * flushes at every such step (a sync a stage: cheap against the convs), so what a step holds is
 * only what it computes with, as memory_plan.c counts it. */
static ltx2_status replace(voc_run *v, ltx2_tensor *x, ltx2_tensor *y) {
    vae_run_retire(&v->r, x);
    *x = *y;
    return vae_run_flush(&v->r);
}

/* Activation1d (BigVGAN padding: replicate; up: pad taps/2-1, crop 15 + 15 for 12 taps; down: pad
 * taps/2-1 left, taps/2 right) or HiFi-GAN's LeakyReLU; y is a new activation like x. */
static ltx2_status act(voc_run *v, bool amp, const dev_act *a, float slope, const ltx2_tensor *x, ltx2_tensor *y) {
    ltx2_context *ctx = v->r.ctx;
    if (!amp) {
        LTX2_TRY(vae_run_new(&v->r, 3, x->shape, y));
        return ltx2_backend_unary_a(v->r.be, ctx, LTX2_OP_LEAKY_RELU, slope, x, y);
    }
    const int64_t r = LTX2_VOCODER_AA_RATIO, k = LTX2_VOCODER_AA_TAPS, pad = k / r - 1;
    const ltx2_fir_desc up = {.taps = k, .ratio = r, .pad_left = pad, .pad_right = pad,
                              .crop_left = pad * r + (k - r) / 2, .crop_right = pad * r + (k - r + 1) / 2};
    const ltx2_fir_desc down = {.taps = k, .ratio = r, .pad_left = k / 2 - 1, .pad_right = k / 2};
    const int64_t us[3] = {x->shape[0], x->shape[1] * r, x->shape[2]};
    ltx2_tensor u;
    LTX2_TRY(vae_run_new(&v->r, 3, us, &u));
    LTX2_TRY(ltx2_backend_fir_upsample(v->r.be, ctx, &up, x, &a->up, &u));
    LTX2_TRY(ltx2_backend_snake(v->r.be, ctx, &u, &a->alpha, &a->inv_beta, &u));
    LTX2_TRY(vae_run_new(&v->r, 3, x->shape, y));
    LTX2_TRY(ltx2_backend_fir_downsample(v->r.be, ctx, &down, &u, &a->down, y));
    vae_run_retire(&v->r, &u);
    return LTX2_OK;
}

/* ResBlock1 (HiFi-GAN) / AMPBlock1 (BigVGAN): for each dilation, x += conv2(act(conv1_d(act(x))));
 * *out is a new activation, x is left as it is (every resblock of a stage reads it). */
static ltx2_status resblock(voc_run *v, const dev_gen *o, const dev_resblock *rb, const ltx2_tensor *x,
                            ltx2_tensor *out) {
    const bool amp = o->g->cfg.amp;
    const ltx2_tensor *cur = x;
    for (int m = 0; m < LTX2_VOCODER_DILATIONS; m++) {
        ltx2_tensor a, b, s;
        LTX2_TRY(act(v, amp, &rb->a1[m], VOC_LRELU_SLOPE, cur, &a));
        LTX2_TRY(run_conv(v, &rb->c1[m], &a, &b));
        vae_run_retire(&v->r, &a);
        LTX2_TRY(act(v, amp, &rb->a2[m], VOC_LRELU_SLOPE, &b, &a));
        vae_run_retire(&v->r, &b);
        LTX2_TRY(run_conv(v, &rb->c2[m], &a, &b));
        vae_run_retire(&v->r, &a);
        if (m == 0) { /* the first sum starts the block's own activation */
            LTX2_TRY(vae_run_new(&v->r, 3, x->shape, &s));
            LTX2_TRY(ltx2_backend_binary(v->r.be, v->r.ctx, LTX2_OP_ADD, &b, x, &s));
            *out = s;
            cur = out;
        } else {
            LTX2_TRY(ltx2_backend_binary(v->r.be, v->r.ctx, LTX2_OP_ADD, &b, out, out));
        }
        vae_run_retire(&v->r, &b);
        LTX2_TRY(vae_run_flush(&v->r));
    }
    return LTX2_OK;
}

/* One generator: x [n, T, 128] -> [n, T * prod(rates), 2]; replaces *x. */
static ltx2_status run_gen(voc_run *v, const dev_gen *o, ltx2_tensor *x, const char *name) {
    const ltx2_vocoder_gen_config *cfg = &o->g->cfg;
    const ltx2_backend *be = v->r.be;
    ltx2_context *ctx = v->r.ctx;
    char nm[64];
    ltx2_tensor y;
    LTX2_TRY(run_conv(v, &o->pre, x, &y));
    LTX2_TRY(replace(v, x, &y));
    LTX2_TRY(dump_seq(v, name, "conv_pre.out", x));
    for (int i = 0; i < cfg->n_ups; i++) {
        if (!cfg->amp) LTX2_TRY(ltx2_backend_unary_a(be, ctx, LTX2_OP_LEAKY_RELU, VOC_LRELU_SLOPE, x, x));
        const dev_convt *u = &o->ups[i];
        int64_t ol;
        LTX2_TRY(ltx2_convt1d_out_len(ctx, &u->desc, x->shape[1], &ol));
        const int64_t ys[3] = {x->shape[0], ol, u->desc.c_out};
        LTX2_TRY(vae_run_new(&v->r, 3, ys, &y));
        LTX2_TRY(ltx2_backend_conv_transpose1d(be, ctx, &u->desc, x, &u->w, u->b.data ? &u->b : NULL, &y));
        LTX2_TRY(replace(v, x, &y));
        snprintf(nm, sizeof(nm), "ups.%d.out", i);
        LTX2_TRY(dump_seq(v, name, nm, x));
        /* the mean of the stage's resblocks, each fed the same input (torch.stack(...).mean(0)) */
        ltx2_tensor acc = {0};
        for (int j = 0; j < cfg->n_kernels; j++) {
            const int r = i * cfg->n_kernels + j;
            LTX2_TRY(resblock(v, o, &o->rb[r], x, &y));
            snprintf(nm, sizeof(nm), "resblocks.%d.out", r);
            LTX2_TRY(dump_seq(v, name, nm, &y));
            if (j == 0) {
                acc = y;
            } else {
                LTX2_TRY(ltx2_backend_binary(be, ctx, LTX2_OP_ADD, &acc, &y, &acc));
                vae_run_retire(&v->r, &y);
                LTX2_TRY(vae_run_flush(&v->r));
            }
        }
        LTX2_TRY(ltx2_backend_unary_a(be, ctx, LTX2_OP_DIV_SCALAR, (float)cfg->n_kernels, &acc, &acc));
        LTX2_TRY(replace(v, x, &acc));
    }
    if (cfg->amp) {
        LTX2_TRY(act(v, true, &o->act_post, 0.0f, x, &y));
        LTX2_TRY(replace(v, x, &y));
    } else {
        LTX2_TRY(ltx2_backend_unary_a(be, ctx, LTX2_OP_LEAKY_RELU, VOC_LRELU_POST_SLOPE, x, x));
    }
    LTX2_TRY(dump_seq(v, name, "act_post.out", x));
    LTX2_TRY(run_conv(v, &o->post, x, &y));
    LTX2_TRY(replace(v, x, &y));
    LTX2_TRY(dump_seq(v, name, "conv_post.out", x));
    if (cfg->final_activation)
        LTX2_TRY(ltx2_backend_unary_a(be, ctx, cfg->tanh_at_final ? LTX2_OP_TANH : LTX2_OP_HARDTANH, 0.0f, x, x));
    LTX2_TRY(dump_seq(v, name, "out", x));
    return vae_run_flush(&v->r);
}

/* Dumps the STFT magnitude [n, tm, 2, nf] as the reference's [n*2, nf, tm] and the log-mel
 * [n, tm, 2*mels] as its [n, 2, tm, mels]. */
static ltx2_status dump_mel(voc_run *v, const ltx2_tensor *mag, const ltx2_tensor *mel) {
    if (!v->dump) return LTX2_OK;
    const int64_t n = mel->shape[0], tm = mel->shape[1], nf = mag->shape[3], nm = mel->shape[2] / 2;
    const int64_t big = nf > nm ? nf : nm;
    float *h = malloc((size_t)(2 * n * tm * 2 * big) * sizeof(float));
    if (!h) return LTX2_ERROR(v->r.ctx, LTX2_ERR_OOM, "vocoder: dumping the BWE log-mel");
    float *t = h + n * tm * 2 * big;
    ltx2_status st = vae_dev_to_host(v->r.ctx, v->r.be, mag, h);
    if (st == LTX2_OK) {
        for (int64_t b = 0; b < n; b++)
            for (int64_t i = 0; i < tm; i++)
                for (int64_t s = 0; s < 2; s++)
                    for (int64_t f = 0; f < nf; f++) t[((b * 2 + s) * nf + f) * tm + i] = h[((b * tm + i) * 2 + s) * nf + f];
        const int64_t shape[3] = {n * 2, nf, tm};
        ltx2_tensor view = ltx2_tensor_make(t, LTX2_F32, 3, shape);
        v->dump("vocoder.mel_stft.magnitude", &view, v->user);
        st = vae_dev_to_host(v->r.ctx, v->r.be, mel, h);
    }
    if (st == LTX2_OK) {
        for (int64_t b = 0; b < n; b++)
            for (int64_t i = 0; i < tm; i++)
                for (int64_t s = 0; s < 2; s++)
                    for (int64_t m = 0; m < nm; m++) t[((b * 2 + s) * tm + i) * nm + m] = h[(b * tm + i) * 2 * nm + s * nm + m];
        const int64_t shape[4] = {n, 2, tm, nm};
        ltx2_tensor view = ltx2_tensor_make(t, LTX2_F32, 4, shape);
        v->dump("vocoder.bwe_generator.in", &view, v->user);
    }
    free(h);
    return st;
}

/* The causal log-mel of each stereo channel of xp [n, L, 2] (L a multiple of hop) -> the BWE
 * generator's input [n, L/hop, 2*mels] (channel s*mels + m), as MelSTFT.mel_spectrogram. */
static ltx2_status bwe_mel(voc_run *v, const ltx2_tensor *xp, ltx2_tensor *mel) {
    const ltx2_vocoder_device *dv = v->dv;
    const ltx2_backend *be = v->r.be;
    ltx2_context *ctx = v->r.ctx;
    ltx2_tensor spec, mag;
    LTX2_TRY(run_conv(v, &dv->stft, xp, &spec)); /* [n, tm, 2 * (re[nf], im[nf])] */
    const int64_t n = spec.shape[0], tm = spec.shape[1], nf = spec.shape[2] / 4, nm = dv->voc->cfg.bwe_mels;
    const int64_t ss[4] = {n, tm, 2, 2 * nf}, ms[4] = {n, tm, 2, nf}, ls[3] = {n, tm, 2 * nm};
    ltx2_tensor spec4 = vae_dev_view(spec.data, spec.dtype, spec.device, 4, ss);
    LTX2_TRY(vae_run_new(&v->r, 4, ms, &mag));
    LTX2_TRY(ltx2_backend_complex_abs(be, ctx, &spec4, &mag));
    vae_run_retire(&v->r, &spec);
    LTX2_TRY(vae_run_new(&v->r, 3, ls, mel));
    /* [n*tm*2, nf] x mel_basis[nm, nf]^T = [n*tm*2, nm], i.e. [n, tm, 2*nm] */
    const int64_t m2[2] = {n * tm * 2, nf}, o2[2] = {n * tm * 2, nm};
    ltx2_tensor mag2 = vae_dev_view(mag.data, mag.dtype, mag.device, 2, m2);
    ltx2_tensor mel2 = vae_dev_view(mel->data, mel->dtype, mel->device, 2, o2);
    LTX2_TRY(ltx2_backend_gemm(be, ctx, &mag2, &dv->mel_basis, LTX2_B_NK, NULL, &mel2));
    LTX2_TRY(ltx2_backend_unary_a(be, ctx, LTX2_OP_LOG_FLOOR, VOC_MEL_FLOOR, mel, mel));
    LTX2_TRY(dump_mel(v, &mag, mel));
    vae_run_retire(&v->r, &mag);
    return vae_run_flush(&v->r);
}

/* Bandwidth extension: x [n, L, 2] at the main rate -> [n, Lp * ratio, 2] with Lp = L rounded up to
 * the hop (the caller crops to L * ratio); replaces *x. */
static ltx2_status run_bwe(voc_run *v, ltx2_tensor *x) {
    const ltx2_vocoder_device *dv = v->dv;
    const ltx2_vocoder *voc = dv->voc;
    const ltx2_backend *be = v->r.be;
    ltx2_context *ctx = v->r.ctx;
    const int64_t hop = voc->cfg.bwe_hop, n = x->shape[0], len = x->shape[1], c = x->shape[2];
    const int64_t lpad = (len + hop - 1) / hop * hop;
    ltx2_tensor xp = *x;
    if (lpad != len) { /* zero samples appended (F.pad in VocoderWithBWE.forward) */
        const int64_t ps[3] = {n, lpad, c};
        float *zeros = calloc((size_t)(n * lpad * c), sizeof(float));
        if (!zeros) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "vocoder: BWE padding");
        const ltx2_status st = vae_run_upload(&v->r, zeros, v->r.dt, 3, ps, &xp);
        free(zeros);
        LTX2_TRY(st);
        const size_t es = ltx2_dtype_size(v->r.dt);
        LTX2_TRY(be->copy_2d(be, ctx, xp.data, (size_t)(lpad * c) * es, x->data, (size_t)(len * c) * es,
                             (size_t)(len * c) * es, (size_t)n));
        vae_run_retire(&v->r, x);
    }
    ltx2_tensor mel, skip;
    LTX2_TRY(bwe_mel(v, &xp, &mel));
    LTX2_TRY(run_gen(v, &dv->bwe, &mel, "vocoder.bwe_generator"));
    const int64_t r = voc->resample_ratio, w = voc->resample_width;
    const ltx2_fir_desc rd = {.taps = voc->resample_taps, .ratio = r, .pad_left = w, .pad_right = w,
                              .crop_left = 2 * w * r, .crop_right = voc->resample_taps - r};
    const int64_t ss[3] = {n, lpad * r, c};
    LTX2_TRY(vae_run_new(&v->r, 3, ss, &skip));
    LTX2_TRY(ltx2_backend_fir_upsample(be, ctx, &rd, &xp, &dv->resampler, &skip));
    if (mel.shape[1] != skip.shape[1])
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "vocoder: BWE residual %lld vs skip %lld samples",
                          (long long)mel.shape[1], (long long)skip.shape[1]);
    LTX2_TRY(dump_seq(v, "vocoder", "resampler.out", &skip));
    LTX2_TRY(ltx2_backend_binary(be, ctx, LTX2_OP_ADD, &mel, &skip, &skip));
    LTX2_TRY(ltx2_backend_unary_a(be, ctx, LTX2_OP_HARDTANH, 0.0f, &skip, &skip));
    vae_run_retire(&v->r, &mel);
    vae_run_retire(&v->r, &xp);
    *x = skip;
    return vae_run_flush(&v->r);
}

ltx2_status ltx2_vocoder_device_run(ltx2_context *ctx, const ltx2_vocoder_device *dv, const ltx2_tensor *mel,
                                   ltx2_tensor *wav, ltx2_audio_dump_fn dump, void *user) {
    if (!dv || !mel || !wav) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder: NULL argument");
    const ltx2_vocoder *voc = dv->voc;
    if (!vae_host_f32(mel, 4))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder: mel must be a contiguous f32 CPU [B, 2, T, mels] tensor");
    int64_t ws[3];
    LTX2_TRY(ltx2_vocoder_out_shape(ctx, voc, mel->shape, ws));
    bool ok = vae_host_f32(wav, 3);
    for (int i = 0; ok && i < 3; i++) ok = wav->shape[i] == ws[i];
    char a[96], b[96];
    if (!ok)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "vocoder: waveform output is %s, expected a contiguous f32 CPU %s",
                          ltx2_shape_str(wav->shape, wav->ndim, a, sizeof(a)), ltx2_shape_str(ws, 3, b, sizeof(b)));
    const int64_t B = mel->shape[0], T = mel->shape[2], F = mel->shape[3];
    float *h = malloc((size_t)(B * T * 2 * F) * sizeof(float));
    if (!h) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "vocoder: input [%lld, %lld, %lld]", (long long)B, (long long)T,
                              (long long)(2 * F));
    const float *m = mel->data;
    for (int64_t bb = 0; bb < B; bb++)
        for (int64_t s = 0; s < 2; s++)
            for (int64_t t = 0; t < T; t++)
                for (int64_t f = 0; f < F; f++) h[(bb * T + t) * 2 * F + s * F + f] = m[((bb * 2 + s) * T + t) * F + f];
    voc_run v = {.dv = dv, .dump = dump, .user = user};
    vae_run_init(&v.r, ctx, dv->be, dv->dt);
    const int64_t xs[3] = {B, T, 2 * F};
    ltx2_tensor x;
    ltx2_status st = vae_run_upload(&v.r, h, dv->dt, 3, xs, &x);
    free(h);
    if (st == LTX2_OK) st = run_gen(&v, &dv->main, &x, voc->cfg.bwe ? "vocoder.vocoder" : "vocoder");
    if (st == LTX2_OK && voc->cfg.bwe) st = run_bwe(&v, &x);
    float *hy = NULL;
    if (st == LTX2_OK && (x.shape[1] < ws[2] || x.shape[2] != 2))
        st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "vocoder: produced [%lld, %lld] samples x channels, expected %lld x 2",
                        (long long)x.shape[1], (long long)x.shape[2], (long long)ws[2]);
    if (st == LTX2_OK) {
        hy = malloc((size_t)ltx2_tensor_numel(&x) * sizeof(float));
        st = hy ? vae_dev_to_host(ctx, v.r.be, &x, hy) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "vocoder: output");
    }
    if (st == LTX2_OK) st = v.r.be->sync(v.r.be, ctx);
    if (st == LTX2_OK) { /* [B, L, 2] -> planar [B, 2, N], the BWE's padding cropped */
        const int64_t L = x.shape[1], N = ws[2];
        float *o = wav->data;
        for (int64_t bb = 0; bb < B; bb++)
            for (int64_t c = 0; c < 2; c++)
                for (int64_t t = 0; t < N; t++) o[(bb * 2 + c) * N + t] = hy[(bb * L + t) * 2 + c];
        if (dump && voc->cfg.bwe) dump("vocoder.out", wav, user);
    }
    free(hy);
    if (st != LTX2_OK) ltx2_error_prefix(ctx, "vocoder (on %s)", dv->be->name);
    vae_run_end(&v.r, st);
    return st;
}
