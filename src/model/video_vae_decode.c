/* The video VAE decoder's one forward (ltx-core video_vae.py Decoder.forward) on the backend op
 * table: the CPU reference (ltx2_video_decoder_decode_ex runs it on the CPU backend), CUDA and the
 * kernel emulator. PixelNorm + SiLU is one fused op; the conditioned norm is the fused norm +
 * modulate op followed by SiLU; a res block's residual is a plain gated add; the compress_*
 * upsamplers are conv3d then depth-to-space with the residual folded into the rearrangement. The
 * per-channel un-normalisation, the latent noise mix, the timestep MLPs (a few hundred values) and
 * the unpatchify are host work on the host input and output. The device buffers of a decode live
 * in one vae_run table (vae_run.h). */
#include "model/video_vae.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "model/vae_run.h"
#include "model/video_vae_internal.h"

typedef struct dev_block {
    vae_dev_conv *res; /* res_x: 2 * n_layers (conv1, conv2 per layer) */
    vae_dev_conv up;   /* compress_*: the conv before depth-to-space */
} dev_block;

struct ltx2_vae_device {
    const ltx2_backend *be;
    const ltx2_video_decoder *dec;
    ltx2_dtype dt;
    vae_dev_conv conv_in, conv_out;
    dev_block *blocks;
};

void ltx2_vae_device_free(ltx2_vae_device *dv) {
    if (!dv) return;
    const ltx2_backend *be = dv->be;
    vae_dev_conv_release(be, &dv->conv_in);
    vae_dev_conv_release(be, &dv->conv_out);
    for (int i = 0; dv->blocks && i < dv->dec->n_blocks; i++) {
        dev_block *db = &dv->blocks[i];
        for (int j = 0; db->res && j < 2 * dv->dec->blocks[i].n_layers; j++) vae_dev_conv_release(be, &db->res[j]);
        free(db->res);
        vae_dev_conv_release(be, &db->up);
    }
    free(dv->blocks);
    free(dv);
}

ltx2_dtype ltx2_vae_device_dtype(const ltx2_vae_device *dv) { return dv ? dv->dt : LTX2_F32; }

ltx2_status ltx2_vae_device_create(ltx2_context *ctx, const ltx2_backend *be, const ltx2_video_decoder *dec,
                                   ltx2_vae_device **out) {
    if (!be || !dec || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE: NULL argument");
    *out = NULL;
    /* every op the decoder runs, in the storage dtype (the modulation tables are f32 rows of the
     * norm + modulate op, which every backend takes) */
    const ltx2_op need[] = {LTX2_OP_CONV3D,      LTX2_OP_PIXEL_NORM, LTX2_OP_DEPTH_TO_SPACE, LTX2_OP_NORM_MODULATE,
                            LTX2_OP_GATED_ADD,   LTX2_OP_SILU,       LTX2_OP_ADD};
    ltx2_dtype dt;
    LTX2_TRY(vae_run_pick_dtype(ctx, be, "video VAE decoder", need, sizeof(need) / sizeof(need[0]), &dt));
    ltx2_vae_device *dv = calloc(1, sizeof(*dv));
    if (!dv) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: state");
    dv->be = be;
    dv->dec = dec;
    dv->dt = dt;
    dv->blocks = calloc((size_t)(dec->n_blocks ? dec->n_blocks : 1), sizeof(*dv->blocks));
    ltx2_status st = dv->blocks ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: blocks");
    if (st == LTX2_OK) st = vae_dev_conv_upload_exact(ctx, be, dt, &dec->conv_in, &dv->conv_in);
    if (st == LTX2_OK) st = vae_dev_conv_upload_exact(ctx, be, dt, &dec->conv_out, &dv->conv_out);
    for (int i = 0; i < dec->n_blocks && st == LTX2_OK; i++) {
        const ltx2_vae_dec_block *b = &dec->blocks[i];
        dev_block *db = &dv->blocks[i];
        if (b->kind == LTX2_VAE_RES_X) {
            db->res = calloc((size_t)(2 * b->n_layers), sizeof(*db->res));
            if (!db->res) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: res convs");
            for (int j = 0; j < 2 * b->n_layers && st == LTX2_OK; j++)
                st = vae_dev_conv_upload_exact(ctx, be, dt, &b->res[j], &db->res[j]);
        } else {
            st = vae_dev_conv_upload_exact(ctx, be, dt, &b->up, &db->up);
        }
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "video VAE: uploading decoder.up_blocks.%d", i);
    }
    if (st != LTX2_OK) {
        ltx2_vae_device_free(dv);
        return st;
    }
    *out = dv;
    return LTX2_OK;
}

/* ---- one decode ---- */

typedef struct vrun {
    vae_run run; /* the device buffers */
    ltx2_context *ctx;
    const ltx2_vae_device *dv;
    const ltx2_backend *be;
    vae_noise_src ns;
    float t_scaled; /* timestep * timestep_scale_multiplier, as the CPU decoder rounds it */
} vrun;

/* y = SiLU(PixelNorm(x)), or with tbl (device f32 [k, C] rows) SiLU(PixelNorm(x) * (1 + tbl[row + 1])
 * + tbl[row]); y may be x. */
static ltx2_status norm_act(vrun *r, const ltx2_tensor *x, const ltx2_tensor *tbl, int64_t row, ltx2_tensor *y) {
    if (!tbl) return ltx2_backend_pixel_norm(r->be, r->ctx, x, VAE_PIXEL_NORM_EPS, true, y);
    const int64_t C = x->shape[x->ndim - 1], rs[2] = {1, C};
    ltx2_tensor shift = vae_dev_view((float *)tbl->data + row * C, LTX2_F32, r->be->device, 2, rs);
    ltx2_tensor scale = vae_dev_view((float *)tbl->data + (row + 1) * C, LTX2_F32, r->be->device, 2, rs);
    const ltx2_mod_rows m = {.rows_per_group = ltx2_tensor_numel(x) / C}; /* one row for every voxel */
    LTX2_TRY(ltx2_backend_norm_modulate(r->be, r->ctx, x, LTX2_NORM_RMS, VAE_PIXEL_NORM_EPS, &scale, &shift, &m, y));
    return ltx2_backend_unary(r->be, r->ctx, LTX2_OP_SILU, y, y);
}

/* x[n, t, h, w, c] += noise[h, w] * scale[c] (the CPU decoder's feed_spatial_noise): the [H, W, C]
 * term is formed on the host in fp32 and broadcast over batch and frames on the device. */
static ltx2_status add_noise(vrun *r, const char *name, ltx2_tensor *x, const float *scale) {
    const int64_t NT = x->shape[0] * x->shape[1], H = x->shape[2], W = x->shape[3], C = x->shape[4];
    float *noise = malloc((size_t)(H * W + H * W * C) * sizeof(float));
    if (!noise) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "video VAE: noise %s", name);
    float *term = noise + H * W;
    const int64_t ns[2] = {H, W};
    ltx2_status st = vae_draw_noise(r->ctx, &r->ns, name, 2, ns, noise);
    for (int64_t p = 0; st == LTX2_OK && p < H * W; p++)
        for (int64_t c = 0; c < C; c++) term[p * C + c] = noise[p] * scale[c];
    const int64_t ts[4] = {1, H, W, C}, xs[4] = {NT, H, W, C};
    ltx2_tensor dterm = {0};
    if (st == LTX2_OK) st = vae_run_upload(&r->run, term, r->dv->dt, 4, ts, &dterm);
    free(noise);
    LTX2_TRY(st);
    ltx2_tensor xv = vae_dev_view(x->data, x->dtype, r->be->device, 4, xs);
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_ADD, &xv, &dterm, &xv));
    vae_run_retire(&r->run, &dterm);
    return LTX2_OK;
}

/* Layer j of res_x block bi (dec_res_block): emb is the block's host timestep embedding [4C] or
 * NULL; x is updated in place. */
static ltx2_status res_layer(vrun *r, int bi, int j, const float *emb, ltx2_tensor *x) {
    const ltx2_vae_dec_block *b = &r->dv->dec->blocks[bi];
    const dev_block *db = &r->dv->blocks[bi];
    const int64_t C = x->shape[4];
    ltx2_tensor tbl = {0}, h, h1, h2;
    if (emb) {
        /* rows shift1, scale1, shift2, scale2 = scale_shift_table + embedding, summed in fp32 */
        float *ada = malloc((size_t)(4 * C) * sizeof(float));
        if (!ada) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "video VAE: ada values");
        for (int64_t k = 0; k < 4 * C; k++) ada[k] = b->scale_shift[j][k] + emb[k];
        const int64_t ts[2] = {4, C};
        ltx2_status st = vae_run_upload(&r->run, ada, LTX2_F32, 2, ts, &tbl);
        free(ada);
        LTX2_TRY(st);
    }
    const ltx2_tensor *t = emb ? &tbl : NULL;
    char name[VAE_KEY_CAP];
    LTX2_TRY(vae_run_new(&r->run, 5, x->shape, &h));
    LTX2_TRY(norm_act(r, x, t, 0, &h));
    ltx2_status st = vae_run_conv3d(&r->run, &db->res[2 * j], &h, &h1);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "res_blocks.%d.conv1", j);
    vae_run_retire(&r->run, &h);
    if (b->inject_noise) {
        snprintf(name, sizeof(name), "decoder.up_blocks.%d.res_blocks.%d.noise1", bi, j);
        LTX2_TRY(add_noise(r, name, &h1, b->noise_scale[2 * j]));
    }
    LTX2_TRY(norm_act(r, &h1, t, 2, &h1));
    st = vae_run_conv3d(&r->run, &db->res[2 * j + 1], &h1, &h2);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "res_blocks.%d.conv2", j);
    vae_run_retire(&r->run, &h1);
    if (b->inject_noise) {
        snprintf(name, sizeof(name), "decoder.up_blocks.%d.res_blocks.%d.noise2", bi, j);
        LTX2_TRY(add_noise(r, name, &h2, b->noise_scale[2 * j + 1]));
    }
    const ltx2_mod_rows plain = {.rows_per_group = 1}; /* unused without a gate */
    LTX2_TRY(ltx2_backend_gated_add(r->be, r->ctx, x, &h2, NULL, &plain));
    vae_run_retire(&r->run, &h2);
    if (emb) vae_run_retire(&r->run, &tbl);
    return vae_run_flush(&r->run);
}

/* compress_* block bi (upsample_block): conv, then depth-to-space (+ the rearranged input). */
static ltx2_status upsample(vrun *r, int bi, ltx2_tensor *x) {
    const ltx2_vae_dec_block *b = &r->dv->dec->blocks[bi];
    const int64_t s0 = b->stride[0], s1 = b->stride[1], s2 = b->stride[2];
    const int64_t drop = s0 == 2 ? 1 : 0; /* the reference drops the first frame of a time upsample */
    ltx2_tensor y, out;
    ltx2_status st = vae_run_conv3d(&r->run, &r->dv->blocks[bi].up, x, &y);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "conv");
    const int64_t os[5] = {x->shape[0], x->shape[1] * s0 - drop, x->shape[2] * s1, x->shape[3] * s2, b->c_out};
    LTX2_TRY(vae_run_new(&r->run, 5, os, &out));
    const ltx2_d2s_args a = {.stride = {s0, s1, s2}, .drop_first = drop != 0};
    st = ltx2_backend_depth_to_space(r->be, r->ctx, &y, &a, b->residual ? x : NULL, &out);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "depth-to-space");
    vae_run_retire(&r->run, &y);
    vae_run_retire(&r->run, x);
    *x = out;
    return vae_run_flush(&r->run);
}

static ltx2_status run_block(vrun *r, int i, ltx2_tensor *x, ltx2_vae_dump_fn dump, void *user) {
    const ltx2_video_decoder *dec = r->dv->dec;
    const ltx2_vae_dec_block *b = &dec->blocks[i];
    ltx2_status st = LTX2_OK;
    if (b->kind == LTX2_VAE_RES_X) {
        float *emb = NULL;
        if (dec->timestep_conditioning) {
            emb = malloc((size_t)b->temb.dim * sizeof(float));
            st = emb ? vae_time_embed(r->ctx, &b->temb, r->t_scaled, emb)
                     : LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "video VAE: block embedding");
        }
        char name[VAE_KEY_CAP];
        for (int j = 0; j < b->n_layers && st == LTX2_OK; j++) {
            st = res_layer(r, i, j, emb, x);
            if (st == LTX2_OK && b->n_layers > 1) {
                snprintf(name, sizeof(name), "decoder.up_blocks.%d.res_blocks.%d.out", i, j);
                st = vae_run_dump(&r->run, dump, user, name, x);
            }
        }
        free(emb);
    } else {
        st = upsample(r, i, x);
    }
    if (st != LTX2_OK) ltx2_error_prefix(r->ctx, "decoder.up_blocks.%d (%s)", i, ltx2_vae_block_name(b->kind));
    return st;
}

/* Noise draws a full decode makes before it reaches block i. */
static uint64_t draws_before(const ltx2_video_decoder *dec, int i) {
    uint64_t k = dec->timestep_conditioning ? 1 : 0; /* "decoder.noise" */
    for (int j = 0; j < i; j++)
        if (dec->blocks[j].kind == LTX2_VAE_RES_X && dec->blocks[j].inject_noise)
            k += 2 * (uint64_t)dec->blocks[j].n_layers;
    return k;
}

static void run_init(vrun *r, ltx2_context *ctx, const ltx2_vae_device *dv, const ltx2_vae_decode_opts *opts) {
    memset(r, 0, sizeof(*r));
    vae_run_init(&r->run, ctx, dv->be, dv->dt);
    r->ctx = ctx;
    r->dv = dv;
    r->be = dv->be;
    r->ns.o = opts;
    /* ltx-core: scaled_timestep = timestep * timestep_scale_multiplier (fp32) */
    r->t_scaled = (float)opts->timestep * dv->dec->timestep_scale_multiplier;
}

static bool shape_is(const ltx2_tensor *t, const int64_t *want) {
    for (int k = 0; k < 5; k++)
        if (t->shape[k] != want[k]) return false;
    return true;
}

/* ---- entry points ---- */

ltx2_status ltx2_vae_device_run_block(ltx2_context *ctx, const ltx2_vae_device *dv, int i,
                                      const ltx2_vae_decode_opts *opts, const ltx2_tensor *x, ltx2_tensor *y) {
    if (!dv || i < 0 || i >= dv->dec->n_blocks)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE block %d: no such block", i);
    const ltx2_video_decoder *dec = dv->dec;
    const ltx2_vae_dec_block *b = &dec->blocks[i];
    const ltx2_vae_decode_opts defaults = ltx2_vae_decode_opts_default();
    if (!opts) opts = &defaults;
    if (!vae_host_f32(x, 5) || !vae_host_f32(y, 5) || x->shape[4] != b->c_in)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "video VAE block %d: x and y must be contiguous f32 CPU NDHWC tensors, x with %lld "
                          "channels",
                          i, (long long)b->c_in);
    const int64_t drop = b->kind != LTX2_VAE_RES_X && b->stride[0] == 2 ? 1 : 0;
    const int64_t want[5] = {x->shape[0], x->shape[1] * b->stride[0] - drop, x->shape[2] * b->stride[1],
                             x->shape[3] * b->stride[2], b->c_out};
    if (!shape_is(y, want)) {
        char got[96], exp[96];
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "video VAE block %d: y is %s, expected %s", i,
                          ltx2_shape_str(y->shape, 5, got, sizeof(got)), ltx2_shape_str(want, 5, exp, sizeof(exp)));
    }
    vrun r;
    run_init(&r, ctx, dv, opts);
    r.ns.k = draws_before(dec, i);
    ltx2_tensor dx;
    ltx2_status st = vae_run_upload(&r.run, x->data, dv->dt, 5, x->shape, &dx);
    if (st == LTX2_OK) st = run_block(&r, i, &dx, NULL, NULL);
    if (st == LTX2_OK) st = vae_dev_to_host(ctx, r.be, &dx, y->data);
    if (st == LTX2_OK) st = r.be->sync(r.be, ctx);
    if (st != LTX2_OK) ltx2_error_prefix(ctx, "video VAE (on %s)", r.be->name);
    vae_run_end(&r.run, st);
    return st;
}

ltx2_status ltx2_vae_device_decode(ltx2_context *ctx, const ltx2_vae_device *dv, const ltx2_tensor *latent,
                                   ltx2_tensor *video, const ltx2_vae_decode_opts *opts, ltx2_vae_dump_fn dump,
                                   void *user) {
    if (!dv) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE decode: NULL decoder");
    const ltx2_video_decoder *dec = dv->dec;
    const ltx2_vae_decode_opts defaults = ltx2_vae_decode_opts_default();
    if (!opts) opts = &defaults;
    if (!vae_host_f32(latent, 5) || !vae_host_f32(video, 5))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "video VAE decode: latent and video must be contiguous f32 CPU NDHWC tensors");
    int64_t want[5];
    LTX2_TRY(ltx2_video_decoder_out_shape(ctx, dec, latent->shape, want));
    if (!shape_is(video, want)) {
        char got[96], exp[96];
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "video VAE decode: video buffer is %s, expected %s",
                          ltx2_shape_str(video->shape, 5, got, sizeof(got)), ltx2_shape_str(want, 5, exp, sizeof(exp)));
    }
    if (dec->timestep_conditioning && (!(opts->noise_scale >= 0.0 && opts->noise_scale <= 1.0) ||
                                       !isfinite(opts->timestep)))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "video VAE decode: decode_noise_scale %g must be in [0, 1] and decode_timestep (%g) "
                          "finite",
                          opts->noise_scale, opts->timestep);

    vrun r;
    run_init(&r, ctx, dv, opts);
    const int64_t n_lat = ltx2_tensor_numel(latent), C = latent->shape[4];
    float *hx = malloc((size_t)n_lat * sizeof(float) * (dec->timestep_conditioning ? 2 : 1));
    if (!hx) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE decode: latent copy");
    memcpy(hx, latent->data, (size_t)n_lat * sizeof(float));
    ltx2_tensor hv = ltx2_tensor_make(hx, LTX2_F32, 5, latent->shape);
    if (dump) dump("decoder.in", &hv, user);
    ltx2_status st = LTX2_OK;
    if (dec->timestep_conditioning) {
        /* sample = noise * s + (1 - s) * sample on the host, exactly as the CPU decoder */
        float *noise = hx + n_lat;
        st = vae_draw_noise(ctx, &r.ns, "decoder.noise", 5, latent->shape, noise);
        const float s = (float)opts->noise_scale, keep = (float)(1.0 - opts->noise_scale);
        for (int64_t k = 0; st == LTX2_OK && k < n_lat; k++) hx[k] = noise[k] * s + keep * hx[k];
    }
    for (int64_t k = 0; st == LTX2_OK && k < n_lat; k++)
        hx[k] = hx[k] * dec->std_of_means[k % C] + dec->mean_of_means[k % C];
    if (st == LTX2_OK && dump) dump("decoder.un_normalize.out", &hv, user);

    ltx2_tensor x, y;
    if (st == LTX2_OK) st = vae_run_upload(&r.run, hx, dv->dt, 5, latent->shape, &x);
    free(hx);
    if (st == LTX2_OK) {
        st = vae_run_conv3d(&r.run, &dv->conv_in, &x, &y);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "decoder.conv_in");
    }
    if (st == LTX2_OK) {
        vae_run_retire(&r.run, &x);
        x = y;
        st = vae_run_flush(&r.run);
    }
    if (st == LTX2_OK) st = vae_run_dump(&r.run, dump, user, "decoder.conv_in.out", &x);
    char name[VAE_KEY_CAP];
    for (int i = 0; i < dec->n_blocks && st == LTX2_OK; i++) {
        st = run_block(&r, i, &x, dump, user);
        snprintf(name, sizeof(name), "decoder.up_blocks.%d.out", i);
        if (st == LTX2_OK) st = vae_run_dump(&r.run, dump, user, name, &x);
    }
    if (st == LTX2_OK) {
        ltx2_tensor tbl = {0};
        if (dec->timestep_conditioning) {
            /* rows shift, scale = last_scale_shift_table + last_time_embedder(t) */
            const int64_t Cl = x.shape[4], ts[2] = {2, Cl};
            float *emb = malloc((size_t)(2 * Cl) * sizeof(float));
            st = emb ? vae_time_embed(ctx, &dec->last_temb, r.t_scaled, emb)
                     : LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE decode: last embedding");
            for (int64_t k = 0; st == LTX2_OK && k < 2 * Cl; k++) emb[k] += dec->last_scale_shift[k];
            if (st == LTX2_OK) st = vae_run_upload(&r.run, emb, LTX2_F32, 2, ts, &tbl);
            free(emb);
        }
        if (st == LTX2_OK && dump) {
            /* the norm alone, for the dump (the decode fuses it with what follows) */
            ltx2_tensor n;
            st = vae_run_new(&r.run, 5, x.shape, &n);
            if (st == LTX2_OK) st = ltx2_backend_pixel_norm(r.be, ctx, &x, VAE_PIXEL_NORM_EPS, false, &n);
            if (st == LTX2_OK) st = vae_run_dump(&r.run, dump, user, "decoder.conv_norm_out.out", &n);
            if (st == LTX2_OK) vae_run_retire(&r.run, &n);
        }
        if (st == LTX2_OK) st = norm_act(&r, &x, dec->timestep_conditioning ? &tbl : NULL, 0, &x);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "decoder.conv_norm_out");
    }
    if (st == LTX2_OK) {
        st = vae_run_conv3d(&r.run, &dv->conv_out, &x, &y);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "decoder.conv_out");
    }
    float *hy = NULL;
    if (st == LTX2_OK) {
        hy = malloc((size_t)ltx2_tensor_numel(&y) * sizeof(float));
        st = hy ? vae_dev_to_host(ctx, r.be, &y, hy) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE decode: output");
    }
    if (st == LTX2_OK) st = r.be->sync(r.be, ctx);
    if (st == LTX2_OK) {
        /* unpatchify "b (c p r q) f h w -> b c (f p) (h q) (w r)": channel c*P*P + w_off*P + h_off */
        const int64_t P = dec->cfg.patch_size, OC = dec->cfg.out_channels;
        const int64_t T = want[1], H = want[2], W = want[3], yc = y.shape[4], yh = y.shape[2], yw = y.shape[3];
        float *vd = video->data;
        for (int64_t bn = 0; bn < want[0]; bn++)
            for (int64_t t = 0; t < T; t++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++) {
                        const float *src = hy + (((bn * T + t) * yh + h / P) * yw + w / P) * yc;
                        float *dst = vd + (((bn * T + t) * H + h) * W + w) * OC;
                        for (int64_t c = 0; c < OC; c++) dst[c] = src[(c * P + w % P) * P + h % P];
                    }
        if (dump) dump("decoder.out", video, user);
    }
    free(hy);
    if (st != LTX2_OK) ltx2_error_prefix(ctx, "video VAE decode (on %s)", r.be->name);
    vae_run_end(&r.run, st);
    return st;
}
