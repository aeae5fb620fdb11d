/* Tiled / tile-batched video-VAE decode and encode (see tiling.h): tile plans, masks, tile
 * batching, the decode stream (its blend is tiling_blend.c) and the encode. Reference: ltx-core
 * 1.0.0 model/video_vae/video_vae.py (VideoDecoder._prepare_tiles / tiled_decode,
 * VideoEncoder.tiled_encode, prepare_tiles_for_encoding, split_* and map_* helpers) and
 * model/video_vae/tiling.py (mask builders, tile product order). */
#include "pipeline/tiling.h"
#include "pipeline/tiling_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"

/* Spatial tiles and decode temporal tiles must span at least this many latents (ltx-core:
 * tile_size_in_pixels >= 64, tile_size_in_frames >= 16 for 32x / 8x factors). */
#define TILE_MIN_LATENTS 2
/* Encode overlaps below this many latents are raised by ltx-core (64 px, 16 frames); refused here. */
#define ENCODE_MIN_OVERLAP_LATENTS 2

static void plan_free(plan *p) {
    for (int64_t i = 0; i < p->n_tiles; i++) {
        for (int a = 0; a < 3; a++) free(p->tiles[i].mask[a]);
        free(p->tiles[i].result);
    }
    free(p->tiles);
    for (int a = 0; a < 3; a++) free(p->ax[a].iv);
    memset(p, 0, sizeof(*p));
}

/* split_with_symmetric_overlaps(size, overlap)(L); size <= 0 means "one interval". */
static ltx2_status split_symmetric(ltx2_context *ctx, int64_t L, int64_t size, int64_t ov, axis_plan *out) {
    int64_t amount = 1;
    if (size > 0 && L > size) amount = (L + size - 2 * ov - 1) / (size - ov);
    out->iv = calloc((size_t)amount, sizeof(interval));
    if (!out->iv) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiling: %lld intervals", (long long)amount);
    out->n = (int)amount;
    if (amount == 1) {
        out->iv[0] = (interval){0, L, 0, 0};
        return LTX2_OK;
    }
    for (int64_t i = 0; i < amount; i++) {
        interval *v = &out->iv[i];
        v->s = i * (size - ov);
        v->e = i == amount - 1 ? L : v->s + size;
        v->lr = i == 0 ? 0 : ov;
        v->rr = i == amount - 1 ? 0 : ov;
    }
    return LTX2_OK;
}

/* torch.linspace(a, b, steps)[i] in float32 (the CPU kernel's two-sided formula). */
static float linspace_at(float a, float b, int64_t steps, int64_t i) {
    if (steps == 1) return a;
    const float step = (b - a) / (float)(steps - 1);
    return i < steps / 2 ? a + step * (float)i : b - step * (float)(steps - i - 1);
}

/* compute_trapezoidal_mask_1d(len, left, right, left_starts_from_0). */
static float *trapezoid(int64_t len, int64_t left, int64_t right, bool from0) {
    float *m = malloc((size_t)len * sizeof(float));
    if (!m) return NULL;
    left = left < 0 ? 0 : (left > len ? len : left);
    right = right < 0 ? 0 : (right > len ? len : right);
    for (int64_t i = 0; i < len; i++) m[i] = 1.0f;
    if (left > 0) {
        const int64_t steps = from0 ? left + 1 : left + 2, off = from0 ? 0 : 1;
        for (int64_t i = 0; i < left; i++) m[i] *= linspace_at(0.0f, 1.0f, steps, i + off);
    }
    if (right > 0)
        for (int64_t i = 0; i < right; i++) m[len - right + i] *= linspace_at(1.0f, 0.0f, right + 2, i + 1);
    for (int64_t i = 0; i < len; i++) m[i] = m[i] < 0.0f ? 0.0f : (m[i] > 1.0f ? 1.0f : m[i]);
    return m;
}

/* compute_rectangular_mask_1d(len, left zeros, right zeros). */
static float *rectangle(int64_t len, int64_t left, int64_t right) {
    float *m = malloc((size_t)len * sizeof(float));
    if (!m) return NULL;
    for (int64_t i = 0; i < len; i++) m[i] = (i < left || i >= len - right) ? 0.0f : 1.0f;
    return m;
}

/* Tiles in itertools.product order (T slowest, then H, then W). */
static ltx2_status make_tiles(ltx2_context *ctx, plan *p) {
    p->n_tiles = (int64_t)p->ax[0].n * p->ax[1].n * p->ax[2].n;
    p->tiles = calloc((size_t)p->n_tiles, sizeof(tile));
    if (!p->tiles) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiling: %lld tiles", (long long)p->n_tiles);
    int64_t k = 0;
    for (int a = 0; a < p->ax[0].n; a++)
        for (int b = 0; b < p->ax[1].n; b++)
            for (int c = 0; c < p->ax[2].n; c++, k++) {
                const interval *v[3] = {&p->ax[0].iv[a], &p->ax[1].iv[b], &p->ax[2].iv[c]};
                for (int d = 0; d < 3; d++) {
                    p->tiles[k].in0[d] = v[d]->s;
                    p->tiles[k].in1[d] = v[d]->e;
                }
                p->tiles[k].group = a;
            }
    return LTX2_OK;
}

static ltx2_status check_axis(ltx2_context *ctx, const char *what, const char *unit, int64_t size, int64_t ov,
                              int64_t factor, int64_t min_ov_latents) {
    if (size == 0 && ov == 0) return LTX2_OK;
    if (size < 0 || ov < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiling: %s tile %lld / overlap %lld %s must not be negative",
                          what, (long long)size, (long long)ov, unit);
    if (size == 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiling: %s overlap %lld %s given without a tile size", what,
                          (long long)ov, unit);
    if (size % factor != 0 || ov % factor != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "VAE tiling: %s tile %lld and overlap %lld %s must be multiples of %lld (one latent)", what,
                          (long long)size, (long long)ov, unit, (long long)factor);
    if (size < TILE_MIN_LATENTS * factor)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiling: %s tile %lld %s is below the minimum %lld", what,
                          (long long)size, unit, (long long)(TILE_MIN_LATENTS * factor));
    if (ov >= size)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiling: %s overlap %lld must be smaller than the tile %lld %s",
                          what, (long long)ov, (long long)size, unit);
    if (ov < min_ov_latents * factor)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "VAE tiling: %s overlap %lld %s is below the encode minimum %lld (ltx-core would silently "
                          "raise it)",
                          what, (long long)ov, unit, (long long)(min_ov_latents * factor));
    return LTX2_OK;
}

static ltx2_status check_batch(ltx2_context *ctx, const ltx2_vae_tiling *t) {
    if (!t) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiling: NULL tiling settings");
    if (t->tile_batch < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiling: tile batch %d must be >= 1", t->tile_batch);
    return LTX2_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Decode plan
 * ------------------------------------------------------------------------------------------- */

static ltx2_status decode_plan(ltx2_context *ctx, const ltx2_video_decoder *dec, const int64_t ls[5],
                               const ltx2_vae_tiling *t, plan *p) {
    memset(p, 0, sizeof(*p));
    LTX2_TRY(check_batch(ctx, t));
    int64_t vs[5];
    LTX2_TRY(ltx2_video_decoder_out_shape(ctx, dec, ls, vs));
    const int64_t sf = dec->space_factor, tf = dec->time_factor;
    LTX2_TRY(check_axis(ctx, "spatial", "px", t->tile_px, t->overlap_px, sf, 0));
    LTX2_TRY(check_axis(ctx, "temporal", "frames", t->tile_frames, t->overlap_frames, tf, 0));
    ltx2_status st = LTX2_OK;
    /* Temporal: split_temporal_latents (later tiles start one latent early, left ramp + 1). */
    const int64_t tsz = t->tile_frames / tf, tov = t->overlap_frames / tf;
    st = split_symmetric(ctx, ls[1], tsz, tov, &p->ax[0]);
    if (st == LTX2_OK && p->ax[0].n > 1)
        for (int i = 1; i < p->ax[0].n; i++) {
            p->ax[0].iv[i].s -= 1;
            p->ax[0].iv[i].lr += 1;
        }
    /* Spatial: the tile size per axis follows the aspect ratio of the latent (Python round, i.e.
     * half to even, of a correctly rounded quotient), at least max(2, overlap + 1). */
    const int64_t ssz = t->tile_px / sf, sov = t->overlap_px / sf;
    const int64_t long_side = ls[2] > ls[3] ? ls[2] : ls[3];
    for (int a = 1; a < 3 && st == LTX2_OK; a++) {
        int64_t size = 0;
        if (ssz > 0) {
            const int64_t lower = sov + 1 > TILE_MIN_LATENTS ? sov + 1 : TILE_MIN_LATENTS;
            const int64_t scaled = (int64_t)nearbyint((double)(ssz * ls[a + 1]) / (double)long_side);
            size = scaled > lower ? scaled : lower;
        }
        st = split_symmetric(ctx, ls[a + 1], size, sov, &p->ax[a]);
    }
    if (st == LTX2_OK) st = make_tiles(ctx, p);
    const bool reflect = dec->cfg.decoder_padding == LTX2_VAE_PAD_REFLECT;
    for (int64_t k = 0; k < p->n_tiles && st == LTX2_OK; k++) {
        tile *tl = &p->tiles[k];
        const interval *v[3] = {&p->ax[0].iv[tl->group], NULL, NULL};
        const int64_t ih = (k / p->ax[2].n) % p->ax[1].n, iw = k % p->ax[2].n;
        v[1] = &p->ax[1].iv[ih];
        v[2] = &p->ax[2].iv[iw];
        if (reflect && (tl->in1[1] - tl->in0[1] < 2 || tl->in1[2] - tl->in0[2] < 2)) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                            "VAE tiling: tile %lld is %lldx%lld latents (HxW); the decoder's reflect padding needs "
                            ">= 2 per side: choose another tile size / overlap",
                            (long long)k, (long long)(tl->in1[1] - tl->in0[1]), (long long)(tl->in1[2] - tl->in0[2]));
            break;
        }
        /* map_temporal_interval_to_frame / map_spatial_interval_to_pixel */
        tl->out0[0] = v[0]->s * tf;
        tl->out1[0] = 1 + (v[0]->e - 1) * tf;
        tl->mask[0] = trapezoid(tl->out1[0] - tl->out0[0], v[0]->lr ? 1 + (v[0]->lr - 1) * tf : 0, v[0]->rr * tf,
                                true);
        for (int d = 1; d < 3; d++) {
            tl->out0[d] = v[d]->s * sf;
            tl->out1[d] = v[d]->e * sf;
            tl->mask[d] = trapezoid(tl->out1[d] - tl->out0[d], v[d]->lr * sf, v[d]->rr * sf, false);
        }
        if (!tl->mask[0] || !tl->mask[1] || !tl->mask[2]) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiling: masks");
    }
    if (st != LTX2_OK) plan_free(p);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Batched tile execution (shared by decode and encode)
 * ------------------------------------------------------------------------------------------- */

typedef struct runner {
    const ltx2_video_decoder *dec; /* exactly one of dec / enc */
    const ltx2_video_encoder *enc;
    const ltx2_tensor *input;      /* full NDHWC input */
    const ltx2_vae_decode_opts *opts; /* decode options (never NULL for decode) */
    int batch;
    int64_t calls;
    mem_meter *mem; /* may be NULL */
} runner;

static bool same_shape(const tile *a, const tile *b) {
    for (int d = 0; d < 3; d++)
        if (a->in1[d] - a->in0[d] != b->in1[d] - b->in0[d]) return false;
    return true;
}

/* Makes sure tiles[k] has its result: if not, runs it together with the next up to batch-1
 * not-yet-run tiles of the same shape among tiles[k+1 .. end). Output per tile: NDHWC
 * [B, out_t, out_h, out_w, C] as the VAE produces it for the tile's input. */
static ltx2_status ensure_result(ltx2_context *ctx, runner *r, tile *tiles, int64_t k, int64_t end) {
    if (tiles[k].result) return LTX2_OK;
    int64_t *members = malloc((size_t)r->batch * sizeof(int64_t));
    if (!members) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiling: batch list");
    int n = 0;
    members[n++] = k;
    for (int64_t j = k + 1; j < end && n < r->batch; j++)
        if (!tiles[j].result && same_shape(&tiles[k], &tiles[j])) members[n++] = j;

    const ltx2_tensor *x = r->input;
    const int64_t B = x->shape[0], C = x->shape[4], XT = x->shape[1], XH = x->shape[2], XW = x->shape[3];
    const tile *t0 = &tiles[k];
    const int64_t tl = t0->in1[0] - t0->in0[0], hl = t0->in1[1] - t0->in0[1], wl = t0->in1[2] - t0->in0[2];
    int64_t ins[5] = {n * B, tl, hl, wl, C}, outs[5];
    ltx2_status st = r->dec ? ltx2_video_decoder_out_shape(ctx, r->dec, ins, outs)
                            : ltx2_video_encoder_out_shape(ctx, r->enc, ins, outs);
    if (st != LTX2_OK) {
        free(members);
        return st;
    }
    const int64_t in_per = B * tl * hl * wl * C, out_per = B * outs[1] * outs[2] * outs[3] * outs[4];
    float *in = tile_meter_alloc(r->mem, n * in_per, false);
    float *out = tile_meter_alloc(r->mem, n * out_per, false);
    if (!in || !out) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiling: batch of %d tiles", n);
    if (st == LTX2_OK) {
        const float *xd = x->data;
        for (int m = 0; m < n; m++) {
            const tile *tt = &tiles[members[m]];
            for (int64_t b = 0; b < B; b++)
                for (int64_t t = 0; t < tl; t++)
                    for (int64_t h = 0; h < hl; h++) {
                        const float *src =
                            xd + (((b * XT + tt->in0[0] + t) * XH + tt->in0[1] + h) * XW + tt->in0[2]) * C;
                        float *dst = in + m * in_per + ((b * tl + t) * hl + h) * wl * C;
                        memcpy(dst, src, (size_t)(wl * C) * sizeof(float));
                    }
        }
        ltx2_tensor ti = ltx2_tensor_make(in, LTX2_F32, 5, ins), to = ltx2_tensor_make(out, LTX2_F32, 5, outs);
        if (r->dec) {
            ltx2_vae_decode_opts o = *r->opts;
            if (!o.noise) o.stream_base += (uint64_t)r->calls * LTX2_VAE_TILE_STREAMS;
            st = ltx2_video_decoder_decode_ex(ctx, r->dec, &ti, &to, &o, NULL, NULL);
        } else {
            st = ltx2_video_encoder_encode(ctx, r->enc, &ti, &to, NULL, NULL);
        }
        r->calls++;
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "VAE tiling: tile %lld (batch of %d)", (long long)k, n);
    }
    tile_meter_free(r->mem, in, n * in_per);
    for (int m = 0; m < n && st == LTX2_OK; m++) {
        float *res = tile_meter_alloc(r->mem, out_per, false);
        if (!res) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiling: tile result");
            break;
        }
        memcpy(res, out + m * out_per, (size_t)out_per * sizeof(float));
        tiles[members[m]].result = res;
        tiles[members[m]].result_n = out_per;
    }
    tile_meter_free(r->mem, out, n * out_per);
    free(members);
    return st;
}

static int64_t count_shapes(const tile *tiles, int64_t n) {
    int64_t shapes = 0;
    for (int64_t i = 0; i < n; i++) {
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++) seen = same_shape(&tiles[i], &tiles[j]);
        if (!seen) shapes++;
    }
    return shapes;
}

static bool is_f32_ndhwc(const ltx2_tensor *t) {
    return t && t->data && t->dtype == LTX2_F32 && t->device == LTX2_DEVICE_CPU && t->ndim == 5 &&
           ltx2_tensor_is_contiguous(t);
}

/* ---------------------------------------------------------------------------------------------
 * Decode
 * ------------------------------------------------------------------------------------------- */

ltx2_status ltx2_vae_tiled_decode_plan(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                       const int64_t latent_ndhwc[5], const ltx2_vae_tiling *tiling,
                                       ltx2_vae_tiling_stats *stats) {
    if (!dec || !latent_ndhwc) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiling: NULL argument");
    plan p;
    LTX2_TRY(decode_plan(ctx, dec, latent_ndhwc, tiling, &p));
    if (stats) {
        stats->n_tiles = p.n_tiles;
        stats->n_shapes = count_shapes(p.tiles, p.n_tiles);
        stats->n_temporal = p.ax[0].n;
        /* calls: per temporal group, per shape, ceil(count / batch) */
        int64_t calls = 0, per_group = p.ax[1].n * p.ax[2].n;
        const int64_t batch = dec->needs_noise ? 1 : tiling->tile_batch; /* as the stream runs it */
        for (int g = 0; g < p.ax[0].n; g++) {
            const tile *gt = p.tiles + g * per_group;
            for (int64_t i = 0; i < per_group; i++) {
                bool seen = false;
                int64_t cnt = 0;
                for (int64_t j = 0; j < i && !seen; j++) seen = same_shape(&gt[i], &gt[j]);
                if (seen) continue;
                for (int64_t j = i; j < per_group; j++) cnt += same_shape(&gt[i], &gt[j]);
                calls += (cnt + batch - 1) / batch;
            }
        }
        stats->n_vae_calls = calls;
    }
    plan_free(&p);
    return LTX2_OK;
}

/* Fills info from a plan's tile k for a latent of shape ls. */
static ltx2_status tile_info(ltx2_context *ctx, const ltx2_video_decoder *dec, const int64_t ls[5], const tile *tl,
                             int64_t k, ltx2_vae_tile_info *info) {
    info->index = k;
    for (int d = 0; d < 3; d++) {
        info->in0[d] = tl->in0[d];
        info->in1[d] = tl->in1[d];
    }
    const int64_t ins[5] = {ls[0], tl->in1[0] - tl->in0[0], tl->in1[1] - tl->in0[1], tl->in1[2] - tl->in0[2], ls[4]};
    return ltx2_video_decoder_out_shape(ctx, dec, ins, info->out_shape);
}

/* Gets tile k of group gt ready in gt[k].result: from `source`, or by running the decoder. */
static ltx2_status tile_result(ltx2_context *ctx, const ltx2_video_decoder *dec, const int64_t ls[5], runner *r,
                               tile *gt, int64_t k, int64_t per_group, int64_t index, ltx2_vae_tile_source_fn source,
                               void *source_user, mem_meter *mem) {
    if (!source) return ensure_result(ctx, r, gt, k, per_group);
    ltx2_vae_tile_info info;
    LTX2_TRY(tile_info(ctx, dec, ls, &gt[k], index, &info));
    const int64_t *os = info.out_shape;
    gt[k].result_n = os[0] * os[1] * os[2] * os[3] * os[4];
    if (!(gt[k].result = tile_meter_alloc(mem, gt[k].result_n, false)))
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiled decode: tile %lld result", (long long)index);
    return source(ctx, &info, gt[k].result, source_user);
}

/* The stream behind the decode_stream / decode_blocks entry points (source NULL: run the decoder
 * on `latent`; else tiles come from `source` and latent is unused). `mem` also meters the
 * caller's frame assembly, if any. */
static ltx2_status decode_stream(ltx2_context *ctx, const ltx2_video_decoder *dec, const ltx2_tensor *latent,
                                 const int64_t ls[5], const ltx2_vae_tiling *tiling, ltx2_vae_tile_source_fn source,
                                 void *source_user, ltx2_vae_block_fn emit, void *user, mem_meter *mem,
                                 ltx2_vae_tiling_stats *stats) {
    plan p;
    LTX2_TRY(decode_plan(ctx, dec, ls, tiling, &p));
    group_ctx g = {.mem = mem};
    seg_axis rows = {0}, cols = {0};
    ltx2_status st = ltx2_video_decoder_out_shape(ctx, dec, ls, g.vs);
    if (st == LTX2_OK) st = tile_seg_axis_build(ctx, &p, 1, &rows);
    if (st == LTX2_OK) st = tile_seg_axis_build(ctx, &p, 2, &cols);
    g.rows = &rows;
    g.cols = &cols;
    if (st == LTX2_OK && !(g.blocks = calloc((size_t)rows.n * (size_t)cols.n, sizeof(block_acc))))
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiled decode: %d x %d blocks", rows.n, cols.n);
    const ltx2_vae_decode_opts def_opts = ltx2_vae_decode_opts_default();
    runner r = {.dec = dec, .input = latent, .opts = tiling->decode_opts ? tiling->decode_opts : &def_opts,
                .batch = dec->needs_noise ? 1 : tiling->tile_batch, .mem = mem};
    const int64_t n_h = p.ax[1].n, n_w = p.ax[2].n, per_group = n_h * n_w;
    const int64_t B = g.vs[0], H = g.vs[2], W = g.vs[3], C = g.vs[4], n_blocks = (int64_t)rows.n * cols.n;
    carry_buf prev = {0};
    for (int gi = 0; gi < p.ax[0].n && st == LTX2_OK; gi++) {
        tile *gt = p.tiles + gi * per_group;
        const bool last = gi + 1 == p.ax[0].n;
        g.f0 = gt[0].out0[0];
        g.F = gt[0].out1[0] - gt[0].out0[0];
        g.head_end = last ? gt[0].out1[0] : gt[per_group].out0[0];
        g.n_done = 0;
        carry_buf next = {.f0 = g.head_end, .f1 = last ? g.head_end : gt[0].out1[0]};
        const int64_t NF = next.f1 - next.f0, PF = prev.f1 - prev.f0, n_head = g.head_end - g.f0;
        if ((prev.sum && (prev.f0 != g.f0 || prev.f1 > g.f0 + g.F)) || n_head < 0 || n_head > g.F) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "VAE tiled decode: temporal group %d frames [%lld, %lld) do not "
                            "follow the previous group's overlap [%lld, %lld)", gi, (long long)g.f0,
                            (long long)(g.f0 + g.F), (long long)prev.f0, (long long)prev.f1);
            break;
        }
        next.sum = NF ? tile_meter_alloc(mem, B * NF * H * W * C, false) : NULL;
        next.w = NF ? tile_meter_alloc(mem, NF * H * W, false) : NULL;
        if (NF && (!next.sum || !next.w))
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiled decode: temporal carry of %lld frames", (long long)NF);
        for (int64_t k = 0; k < per_group && st == LTX2_OK; k++) {
            st = tile_result(ctx, dec, ls, &r, gt, k, per_group, gi * per_group + k, source, source_user, mem);
            if (st == LTX2_OK)
                st = tile_blend_and_finish(ctx, &g, &gt[k], gt[k].result, (int)(k / n_w), (int)(k % n_w), &prev,
                                           &next, emit, user);
            tile_meter_free(mem, gt[k].result, gt[k].result_n);
            gt[k].result = NULL;
        }
        if (st == LTX2_OK && g.n_done != n_blocks)
            st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "VAE tiled decode: group %d finished %lld of %lld blocks", gi,
                            (long long)g.n_done, (long long)n_blocks);
        for (int64_t i = 0; i < n_blocks; i++) { /* left over only after an error */
            const int64_t px = tile_seg_len(&rows, (int)(i / cols.n)) * tile_seg_len(&cols, (int)(i % cols.n));
            tile_meter_free(mem, g.blocks[i].sum, B * g.F * px * C);
            tile_meter_free(mem, g.blocks[i].w, g.F * px);
            g.blocks[i].sum = g.blocks[i].w = NULL;
        }
        tile_meter_free(mem, prev.sum, B * PF * H * W * C);
        tile_meter_free(mem, prev.w, PF * H * W);
        prev = next;
    }
    tile_meter_free(mem, prev.sum, B * (prev.f1 - prev.f0) * H * W * C);
    tile_meter_free(mem, prev.w, (prev.f1 - prev.f0) * H * W);
    if (st == LTX2_OK && stats) {
        stats->n_tiles = p.n_tiles;
        stats->n_shapes = count_shapes(p.tiles, p.n_tiles);
        stats->n_temporal = p.ax[0].n;
        stats->n_vae_calls = r.calls;
        stats->peak_bytes = mem ? mem->peak : 0;
    }
    free(g.blocks);
    tile_seg_axis_free(&rows);
    tile_seg_axis_free(&cols);
    plan_free(&p);
    return st;
}

/* Assembles blocks into full frames for a ltx2_vae_frames_fn. */
typedef struct frame_asm {
    ltx2_vae_frames_fn emit;
    void *user;
    mem_meter *mem;
    int64_t vs[5];
    float *buf;
    int64_t buf_n; /* floats in buf */
} frame_asm;

static ltx2_status assemble_block(ltx2_context *ctx, const ltx2_tensor *blk, const ltx2_vae_block_pos *pos,
                                  void *user) {
    frame_asm *a = user;
    const int64_t B = blk->shape[0], n = blk->shape[1], rows = blk->shape[2], cols = blk->shape[3];
    const int64_t H = a->vs[2], W = a->vs[3], C = a->vs[4], need = B * n * H * W * C;
    if (need > a->buf_n) {
        tile_meter_free(a->mem, a->buf, a->buf_n);
        a->buf_n = 0;
        if (!(a->buf = tile_meter_alloc(a->mem, need, false)))
            return LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiled decode: %lld output frames", (long long)n);
        a->buf_n = need;
    }
    for (int64_t bf = 0; bf < B * n; bf++)
        for (int64_t y = 0; y < rows; y++)
            memcpy(a->buf + ((bf * H + pos->first_row + y) * W + pos->first_col) * C,
                   (const float *)blk->data + (bf * rows + y) * cols * C, (size_t)(cols * C) * sizeof(float));
    if (!pos->range_done) return LTX2_OK;
    const int64_t shape[5] = {B, n, H, W, C};
    ltx2_tensor t = ltx2_tensor_make(a->buf, LTX2_F32, 5, shape);
    return a->emit(ctx, &t, pos->first_frame, a->user);
}

static ltx2_status decode_frames(ltx2_context *ctx, const ltx2_video_decoder *dec, const ltx2_tensor *latent,
                                 const int64_t ls[5], const ltx2_vae_tiling *tiling, ltx2_vae_tile_source_fn source,
                                 void *source_user, ltx2_vae_frames_fn emit, void *user, ltx2_vae_tiling_stats *stats) {
    mem_meter mem = {0};
    frame_asm a = {.emit = emit, .user = user, .mem = &mem};
    ltx2_status st = ltx2_video_decoder_out_shape(ctx, dec, ls, a.vs);
    if (st == LTX2_OK)
        st = decode_stream(ctx, dec, latent, ls, tiling, source, source_user, assemble_block, &a, &mem, stats);
    tile_meter_free(&mem, a.buf, a.buf_n);
    return st;
}

ltx2_status ltx2_vae_tiled_decode_stream(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                         const ltx2_tensor *latent, const ltx2_vae_tiling *tiling,
                                         ltx2_vae_frames_fn emit, void *user, ltx2_vae_tiling_stats *stats) {
    if (!dec || !emit) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiled decode: NULL decoder or callback");
    if (!is_f32_ndhwc(latent))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "VAE tiled decode: latent must be a contiguous f32 CPU tensor [B, F', H', W', C]");
    return decode_frames(ctx, dec, latent, latent->shape, tiling, NULL, NULL, emit, user, stats);
}

ltx2_status ltx2_vae_tiled_decode_stream_from(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                              const int64_t latent_ndhwc[5], const ltx2_vae_tiling *tiling,
                                              ltx2_vae_tile_source_fn source, void *source_user,
                                              ltx2_vae_frames_fn emit, void *user, ltx2_vae_tiling_stats *stats) {
    if (!dec || !latent_ndhwc || !source || !emit)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiled decode: NULL decoder, shape, source or callback");
    return decode_frames(ctx, dec, NULL, latent_ndhwc, tiling, source, source_user, emit, user, stats);
}

ltx2_status ltx2_vae_tiled_decode_blocks(ltx2_context *ctx, const ltx2_video_decoder *dec, const ltx2_tensor *latent,
                                         const ltx2_vae_tiling *tiling, ltx2_vae_block_fn emit, void *user,
                                         ltx2_vae_tiling_stats *stats) {
    if (!dec || !emit) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiled decode: NULL decoder or callback");
    if (!is_f32_ndhwc(latent))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "VAE tiled decode: latent must be a contiguous f32 CPU tensor [B, F', H', W', C]");
    mem_meter mem = {0};
    return decode_stream(ctx, dec, latent, latent->shape, tiling, NULL, NULL, emit, user, &mem, stats);
}

ltx2_status ltx2_vae_tiled_decode_blocks_from(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                              const int64_t latent_ndhwc[5], const ltx2_vae_tiling *tiling,
                                              ltx2_vae_tile_source_fn source, void *source_user, ltx2_vae_block_fn emit,
                                              void *user, ltx2_vae_tiling_stats *stats) {
    if (!dec || !latent_ndhwc || !source || !emit)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiled decode: NULL decoder, shape, source or callback");
    mem_meter mem = {0};
    return decode_stream(ctx, dec, NULL, latent_ndhwc, tiling, source, source_user, emit, user, &mem, stats);
}

ltx2_status ltx2_vae_tiled_decode_tiles(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                        const int64_t latent_ndhwc[5], const ltx2_vae_tiling *tiling,
                                        ltx2_vae_tile_info **tiles, int64_t *n_tiles) {
    if (!dec || !latent_ndhwc || !tiles || !n_tiles)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiling: NULL argument");
    *tiles = NULL;
    *n_tiles = 0;
    plan p;
    LTX2_TRY(decode_plan(ctx, dec, latent_ndhwc, tiling, &p));
    ltx2_vae_tile_info *out = malloc((size_t)p.n_tiles * sizeof(*out));
    ltx2_status st = out ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiling: %lld tiles", (long long)p.n_tiles);
    for (int64_t k = 0; k < p.n_tiles && st == LTX2_OK; k++) st = tile_info(ctx, dec, latent_ndhwc, &p.tiles[k], k, &out[k]);
    if (st == LTX2_OK) {
        *tiles = out;
        *n_tiles = p.n_tiles;
    } else {
        free(out);
    }
    plan_free(&p);
    return st;
}

ltx2_status ltx2_vae_tiled_decode_one(ltx2_context *ctx, const ltx2_video_decoder *dec, const ltx2_tensor *latent,
                                      const ltx2_vae_tiling *tiling, const ltx2_vae_tile_info *info, float *out) {
    if (!dec || !info || !out || !tiling)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiled decode: NULL decoder, tiling, tile or output");
    if (!is_f32_ndhwc(latent))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "VAE tiled decode: latent must be a contiguous f32 CPU tensor [B, F', H', W', C]");
    tile t;
    memset(&t, 0, sizeof t);
    for (int d = 0; d < 3; d++) {
        t.in0[d] = info->in0[d];
        t.in1[d] = info->in1[d];
        if (t.in0[d] < 0 || t.in1[d] <= t.in0[d] || t.in1[d] > latent->shape[d + 1])
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "VAE tiled decode: tile %lld slice [%lld, %lld) outside axis %d "
                              "of %lld latents", (long long)info->index, (long long)t.in0[d], (long long)t.in1[d], d,
                              (long long)latent->shape[d + 1]);
    }
    const ltx2_vae_decode_opts def_opts = ltx2_vae_decode_opts_default();
    /* The stream runs noise decoders one tile per call, so call k is tile k: same streams here. */
    runner r = {.dec = dec, .input = latent, .opts = tiling->decode_opts ? tiling->decode_opts : &def_opts,
                .batch = 1, .calls = info->index};
    ltx2_status st = ensure_result(ctx, &r, &t, 0, 1);
    if (st == LTX2_OK) {
        const int64_t *os = info->out_shape;
        memcpy(out, t.result, (size_t)(os[0] * os[1] * os[2] * os[3] * os[4]) * sizeof(float));
    }
    free(t.result);
    return st;
}

typedef struct copy_sink {
    ltx2_tensor *video;
} copy_sink;

static ltx2_status copy_frames(ltx2_context *ctx, const ltx2_tensor *frames, int64_t first, void *user) {
    (void)ctx;
    ltx2_tensor *v = ((copy_sink *)user)->video;
    const int64_t B = frames->shape[0], n = frames->shape[1], fs = v->shape[2] * v->shape[3] * v->shape[4];
    for (int64_t b = 0; b < B; b++)
        memcpy((float *)v->data + (b * v->shape[1] + first) * fs, (const float *)frames->data + b * n * fs,
               (size_t)(n * fs) * sizeof(float));
    return LTX2_OK;
}

ltx2_status ltx2_vae_tiled_decode(ltx2_context *ctx, const ltx2_video_decoder *dec, const ltx2_tensor *latent,
                                  const ltx2_vae_tiling *tiling, ltx2_tensor *video, ltx2_vae_tiling_stats *stats) {
    if (!dec || !is_f32_ndhwc(latent) || !is_f32_ndhwc(video))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "VAE tiled decode: decoder, latent and video must be given (contiguous f32 CPU NDHWC)");
    int64_t want[5];
    LTX2_TRY(ltx2_video_decoder_out_shape(ctx, dec, latent->shape, want));
    for (int i = 0; i < 5; i++)
        if (video->shape[i] != want[i]) {
            char a[96], b[96];
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "VAE tiled decode: video buffer is %s, expected %s",
                              ltx2_shape_str(video->shape, 5, a, sizeof(a)), ltx2_shape_str(want, 5, b, sizeof(b)));
        }
    copy_sink s = {video};
    return ltx2_vae_tiled_decode_stream(ctx, dec, latent, tiling, copy_frames, &s, stats);
}

/* ---------------------------------------------------------------------------------------------
 * Encode
 * ------------------------------------------------------------------------------------------- */

static ltx2_status encode_plan(ltx2_context *ctx, const ltx2_video_encoder *enc, const int64_t vs[5],
                               const ltx2_vae_tiling *t, plan *p) {
    memset(p, 0, sizeof(*p));
    LTX2_TRY(check_batch(ctx, t));
    int64_t ls[5];
    LTX2_TRY(ltx2_video_encoder_out_shape(ctx, enc, vs, ls));
    const int64_t sf = enc->space_factor, tf = enc->time_factor;
    LTX2_TRY(check_axis(ctx, "spatial", "px", t->tile_px, t->overlap_px, sf, ENCODE_MIN_OVERLAP_LATENTS));
    LTX2_TRY(check_axis(ctx, "temporal", "frames", t->tile_frames, t->overlap_frames, tf, ENCODE_MIN_OVERLAP_LATENTS));
    /* Temporal: split_temporal_frames (every tile but the last gets one more frame, no right ramp). */
    ltx2_status st = split_symmetric(ctx, vs[1], t->tile_frames, t->overlap_frames, &p->ax[0]);
    if (st == LTX2_OK && p->ax[0].n > 1)
        for (int i = 0; i < p->ax[0].n; i++) {
            if (i < p->ax[0].n - 1) p->ax[0].iv[i].e += 1;
            p->ax[0].iv[i].rr = 0;
        }
    for (int a = 1; a < 3 && st == LTX2_OK; a++) st = split_symmetric(ctx, vs[a + 1], t->tile_px, t->overlap_px, &p->ax[a]);
    if (st == LTX2_OK) st = make_tiles(ctx, p);
    for (int64_t k = 0; k < p->n_tiles && st == LTX2_OK; k++) {
        tile *tl = &p->tiles[k];
        const int64_t ih = (k / p->ax[2].n) % p->ax[1].n, iw = k % p->ax[2].n;
        const interval *v[3] = {&p->ax[0].iv[tl->group], &p->ax[1].iv[ih], &p->ax[2].iv[iw]};
        int64_t tin[5] = {vs[0], tl->in1[0] - tl->in0[0], tl->in1[1] - tl->in0[1], tl->in1[2] - tl->in0[2], vs[4]}, tout[5];
        st = ltx2_video_encoder_out_shape(ctx, enc, tin, tout);
        if (st != LTX2_OK) {
            ltx2_error_prefix(ctx, "VAE tiled encode: tile %lld", (long long)k);
            break;
        }
        /* map_temporal_interval_to_latent / map_spatial_interval_to_latent */
        tl->out0[0] = v[0]->s / tf;
        tl->out1[0] = (v[0]->e - 1) / tf + 1;
        tl->mask[0] = rectangle(tl->out1[0] - tl->out0[0], v[0]->lr ? 1 + (v[0]->lr - 1) / tf : 0, 0);
        for (int d = 1; d < 3; d++) {
            tl->out0[d] = v[d]->s / sf;
            tl->out1[d] = v[d]->e / sf;
            const int64_t left = v[d]->lr / sf - 1;
            tl->mask[d] = rectangle(tl->out1[d] - tl->out0[d], left > 0 ? left : 0, v[d]->rr ? 1 : 0);
        }
        if (!tl->mask[0] || !tl->mask[1] || !tl->mask[2]) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiling: masks");
    }
    if (st != LTX2_OK) plan_free(p);
    return st;
}

ltx2_status ltx2_vae_tiled_encode(ltx2_context *ctx, const ltx2_video_encoder *enc, const ltx2_tensor *video,
                                  const ltx2_vae_tiling *tiling, ltx2_tensor *latent, ltx2_vae_tiling_stats *stats) {
    if (!enc || !is_f32_ndhwc(video) || !is_f32_ndhwc(latent))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "VAE tiled encode: encoder, video and latent must be given (contiguous f32 CPU NDHWC)");
    int64_t ls[5];
    LTX2_TRY(ltx2_video_encoder_out_shape(ctx, enc, video->shape, ls));
    for (int i = 0; i < 5; i++)
        if (latent->shape[i] != ls[i]) {
            char a[96], b[96];
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "VAE tiled encode: latent buffer is %s, expected %s",
                              ltx2_shape_str(latent->shape, 5, a, sizeof(a)), ltx2_shape_str(ls, 5, b, sizeof(b)));
        }
    plan p;
    LTX2_TRY(encode_plan(ctx, enc, video->shape, tiling, &p));
    const int64_t B = ls[0], T = ls[1], H = ls[2], W = ls[3], C = ls[4];
    float *w = calloc((size_t)(T * H * W), sizeof(float));
    float *sum = calloc((size_t)(B * T * H * W * C), sizeof(float));
    ltx2_status st = w && sum ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiled encode: accumulators");
    runner r = {.enc = enc, .input = video, .batch = tiling->tile_batch};
    for (int64_t k = 0; k < p.n_tiles && st == LTX2_OK; k++) {
        st = ensure_result(ctx, &r, p.tiles, k, p.n_tiles);
        if (st != LTX2_OK) break;
        tile *tl = &p.tiles[k];
        const int64_t tt = tl->out1[0] - tl->out0[0], th = tl->out1[1] - tl->out0[1], tw = tl->out1[2] - tl->out0[2];
        for (int64_t b = 0; b < B; b++)
            for (int64_t t = 0; t < tt; t++)
                for (int64_t h = 0; h < th; h++)
                    for (int64_t x = 0; x < tw; x++) {
                        const float m = tl->mask[0][t] * tl->mask[1][h] * tl->mask[2][x];
                        const int64_t vox = ((tl->out0[0] + t) * H + tl->out0[1] + h) * W + tl->out0[2] + x;
                        const float *src = tl->result + (((b * tt + t) * th + h) * tw + x) * C;
                        float *dst = sum + (b * T * H * W + vox) * C;
                        for (int64_t c = 0; c < C; c++) dst[c] += src[c] * m;
                        if (b == 0) w[vox] += m;
                    }
        free(tl->result);
        tl->result = NULL;
    }
    if (st == LTX2_OK) {
        float *ld = latent->data;
        for (int64_t b = 0; b < B; b++)
            for (int64_t v = 0; v < T * H * W; v++) {
                const float wt = w[v] < TILE_WEIGHT_EPS ? TILE_WEIGHT_EPS : w[v];
                for (int64_t c = 0; c < C; c++) ld[(b * T * H * W + v) * C + c] = sum[(b * T * H * W + v) * C + c] / wt;
            }
        if (stats) {
            stats->n_tiles = p.n_tiles;
            stats->n_shapes = count_shapes(p.tiles, p.n_tiles);
            stats->n_temporal = p.ax[0].n;
            stats->n_vae_calls = r.calls;
        }
    }
    free(w);
    free(sum);
    plan_free(&p);
    return st;
}
