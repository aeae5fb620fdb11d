/* The decode blend of tiling.c's stream: each block of the frame (cut at every tile edge) is
 * accumulated from its first covering tile to its last in plan order, then finished for its
 * temporal group (previous group's carry added as prev + cur, divided by the weights, emitted or
 * carried on). Reference: ltx-core 1.0.0 model/video_vae/video_vae.py tiled_decode and
 * _accumulate_temporal_group_into_buffer. */
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "pipeline/tiling_internal.h"

float *tile_meter_alloc(mem_meter *m, int64_t n_floats, bool zero) {
    float *p = zero ? calloc((size_t)n_floats, sizeof(float)) : malloc((size_t)n_floats * sizeof(float));
    if (p && m) {
        m->cur += n_floats * (int64_t)sizeof(float);
        if (m->cur > m->peak) m->peak = m->cur;
    }
    return p;
}

void tile_meter_free(mem_meter *m, float *p, int64_t n_floats) {
    if (p && m) m->cur -= n_floats * (int64_t)sizeof(float);
    free(p);
}

void tile_seg_axis_free(seg_axis *s) {
    free(s->edge);
    free(s->first);
    free(s->last);
    memset(s, 0, sizeof(*s));
}

/* Segments of output axis a (1 rows, 2 columns) from the plan's group-0 tiles. */
ltx2_status tile_seg_axis_build(ltx2_context *ctx, const plan *p, int a, seg_axis *s) {
    memset(s, 0, sizeof(*s));
    const int n_iv = p->ax[a].n;
    const int64_t stride = a == 1 ? p->ax[2].n : 1;
    s->edge = malloc((size_t)(2 * n_iv) * sizeof(int64_t));
    s->first = malloc((size_t)(2 * n_iv) * sizeof(int));
    s->last = malloc((size_t)(2 * n_iv) * sizeof(int));
    if (!s->edge || !s->first || !s->last) {
        tile_seg_axis_free(s);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiling: %d block edges", 2 * n_iv);
    }
    int ne = 0;
    for (int i = 0; i < n_iv; i++) {
        const tile *t = &p->tiles[i * stride];
        const int64_t e2[2] = {t->out0[a], t->out1[a]};
        for (int j = 0; j < 2; j++) { /* insertion into the sorted, duplicate-free edge list */
            int at = 0;
            while (at < ne && s->edge[at] < e2[j]) at++;
            if (at < ne && s->edge[at] == e2[j]) continue;
            memmove(s->edge + at + 1, s->edge + at, (size_t)(ne - at) * sizeof(int64_t));
            s->edge[at] = e2[j];
            ne++;
        }
    }
    s->n = ne - 1;
    for (int k = 0; k < s->n; k++) {
        s->first[k] = -1;
        for (int i = 0; i < n_iv; i++) {
            const tile *t = &p->tiles[i * stride];
            if (t->out0[a] <= s->edge[k] && t->out1[a] >= s->edge[k + 1]) {
                if (s->first[k] < 0) s->first[k] = i;
                s->last[k] = i;
            }
        }
        if (s->first[k] < 0) {
            const int64_t e0 = s->edge[k], e1 = s->edge[k + 1];
            tile_seg_axis_free(s);
            return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "VAE tiled decode: %s [%lld, %lld) is covered by no tile",
                              a == 1 ? "rows" : "columns", (long long)e0, (long long)e1);
        }
    }
    return LTX2_OK;
}




/* block += decoded * mask, weights += mask, mask = (m_t * m_h) * m_w: per pixel, tiles arrive in
 * plan order, so every sum is formed in the order of ltx-core's full-frame blend. */
static void blend_block(const group_ctx *g, const tile *tl, const float *res, int r, int c, block_acc *b) {
    const int64_t B = g->vs[0], C = g->vs[4], F = g->F, rows = tile_seg_len(g->rows, r), cols = tile_seg_len(g->cols, c);
    const int64_t th = tl->out1[1] - tl->out0[1], tw = tl->out1[2] - tl->out0[2];
    const int64_t ho = g->rows->edge[r] - tl->out0[1], wo = g->cols->edge[c] - tl->out0[2];
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t t = 0; t < F; t++)
            for (int64_t h = 0; h < rows; h++) {
                const float mth = tl->mask[0][t] * tl->mask[1][ho + h];
                float *s = b->sum + ((bi * F + t) * rows + h) * cols * C;
                float *wt = b->w + (t * rows + h) * cols;
                const float *src = res + (((bi * F + t) * th + ho + h) * tw + wo) * C;
                for (int64_t x = 0; x < cols; x++) {
                    const float m = mth * tl->mask[2][wo + x];
                    for (int64_t ch = 0; ch < C; ch++) s[x * C + ch] += src[x * C + ch] * m;
                    if (bi == 0) wt[x] += m;
                }
            }
}

/* The block is final for this group: add the previous group's carry (prev + cur, as ltx-core
 * merges groups); frames before head_end are divided by their weights into `out`
 * [B, head_end - f0, rows, cols, C], later frames go to the next carry. */
static void finish_block(const group_ctx *g, int r, int c, const block_acc *b, const carry_buf *prev,
                         carry_buf *next, float *out) {
    const int64_t B = g->vs[0], H = g->vs[2], W = g->vs[3], C = g->vs[4], F = g->F;
    const int64_t rows = tile_seg_len(g->rows, r), cols = tile_seg_len(g->cols, c), r0 = g->rows->edge[r], c0 = g->cols->edge[c];
    const int64_t nh = g->head_end - g->f0, PF = prev->f1 - prev->f0, NF = next->f1 - next->f0;
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t f = 0; f < F; f++) {
            const int64_t fa = g->f0 + f;
            const bool merge = fa >= prev->f0 && fa < prev->f1;
            for (int64_t y = 0; y < rows; y++) {
                const int64_t brow = (f * rows + y) * cols, grow = r0 + y;
                const float *s = b->sum + (bi * F * rows * cols + brow) * C;
                const float *ps = merge ? prev->sum + (((bi * PF + fa - prev->f0) * H + grow) * W + c0) * C : NULL;
                const float *pw = merge ? prev->w + ((fa - prev->f0) * H + grow) * W + c0 : NULL;
                for (int64_t x = 0; x < cols; x++) {
                    const float wt = merge ? pw[x] + b->w[brow + x] : b->w[brow + x];
                    if (f < nh) {
                        const float d = wt < TILE_WEIGHT_EPS ? TILE_WEIGHT_EPS : wt;
                        float *o = out + (((bi * nh + f) * rows + y) * cols + x) * C;
                        for (int64_t ch = 0; ch < C; ch++)
                            o[ch] = (merge ? ps[x * C + ch] + s[x * C + ch] : s[x * C + ch]) / d;
                    } else {
                        const int64_t nf = fa - next->f0;
                        float *ns = next->sum + (((bi * NF + nf) * H + grow) * W + c0) * C;
                        for (int64_t ch = 0; ch < C; ch++)
                            ns[x * C + ch] = merge ? ps[x * C + ch] + s[x * C + ch] : s[x * C + ch];
                        if (bi == 0) next->w[(nf * H + grow) * W + c0 + x] = wt;
                    }
                }
            }
        }
}

/* Blends tile (ih, iw) of the group into every block it covers, then finalises (and emits) the
 * blocks whose last tile it is. */
ltx2_status tile_blend_and_finish(ltx2_context *ctx, group_ctx *g, const tile *tl, const float *res, int ih, int iw,
                                  const carry_buf *prev, carry_buf *next, ltx2_vae_block_fn emit, void *user) {
    const int64_t B = g->vs[0], C = g->vs[4], F = g->F, nh = g->head_end - g->f0;
    const int nr = g->rows->n, nc = g->cols->n;
    for (int r = 0; r < nr; r++) {
        if (ih < g->rows->first[r] || ih > g->rows->last[r]) continue;
        for (int c = 0; c < nc; c++) {
            if (iw < g->cols->first[c] || iw > g->cols->last[c]) continue;
            block_acc *b = &g->blocks[r * nc + c];
            const int64_t px = tile_seg_len(g->rows, r) * tile_seg_len(g->cols, c);
            if (!b->sum) {
                b->sum = tile_meter_alloc(g->mem, B * F * px * C, true);
                b->w = tile_meter_alloc(g->mem, F * px, true);
                if (!b->sum || !b->w)
                    return LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiled decode: block of %lld frames x %lld px",
                                      (long long)F, (long long)px);
            }
            blend_block(g, tl, res, r, c, b);
            if (ih != g->rows->last[r] || iw != g->cols->last[c]) continue;
            float *out = nh ? tile_meter_alloc(g->mem, B * nh * px * C, false) : NULL;
            if (nh && !out) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "VAE tiled decode: output block");
            finish_block(g, r, c, b, prev, next, out);
            tile_meter_free(g->mem, b->sum, B * F * px * C);
            tile_meter_free(g->mem, b->w, F * px);
            b->sum = b->w = NULL;
            g->n_done++;
            ltx2_status st = LTX2_OK;
            if (nh) {
                const int64_t shape[5] = {B, nh, tile_seg_len(g->rows, r), tile_seg_len(g->cols, c), C};
                ltx2_tensor t = ltx2_tensor_make(out, LTX2_F32, 5, shape);
                const ltx2_vae_block_pos pos = {.first_frame = g->f0, .first_row = g->rows->edge[r],
                                                .first_col = g->cols->edge[c], .range_done = g->n_done == (int64_t)nr * nc};
                st = emit(ctx, &t, &pos, user);
            }
            tile_meter_free(g->mem, out, B * nh * px * C);
            if (st != LTX2_OK) return st;
        }
    }
    return LTX2_OK;
}
