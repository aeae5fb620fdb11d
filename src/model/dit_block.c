/* The attention module and the audio-video transformer block of the DiT (ltx-core
 * transformer.py BasicAVTransformerBlock.forward and attention.py Attention.forward), in fp32.
 * Modulation values are table[j] + adaln[j] added first, then x * (1 + scale) + shift, in the
 * reference's order of operations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_attention.h"
#include "cpu/cpu_ops.h"
#include "cpu/cpu_rope.h"
#include "model/dit_internal.h"

static inline int64_t ada_row(const dit_ada_src *s, int64_t b, int64_t t, int64_t T) {
    return s->row_tok ? s->row_tok[b * T + t] : b;
}

/* out = xn * (1 + (table[js] + mod[js])) + (table[jh] + mod[jh]) */
void dit_modulate(float *out, const float *xn, int64_t B, int64_t T, int64_t D, const dit_ada_src *s, int64_t js,
                  int64_t jh) {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < T; t++) {
            const float *m = s->mod + ada_row(s, b, t, T) * s->W;
            const float *xr = xn + (b * T + t) * D;
            float *o = out + (b * T + t) * D;
            for (int64_t c = 0; c < D; c++) {
                float scale = s->table[js * D + c] + m[js * D + c];
                float shift = s->table[jh * D + c] + m[jh * D + c];
                o[c] = xr[c] * (1.0f + scale) + shift;
            }
        }
}

/* x += y * (table[jg] + mod[jg]) */
void dit_gated_add(float *x, const float *y, int64_t B, int64_t T, int64_t D, const dit_ada_src *s, int64_t jg) {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < T; t++) {
            const float *m = s->mod + ada_row(s, b, t, T) * s->W;
            float *xr = x + (b * T + t) * D;
            const float *yr = y + (b * T + t) * D;
            for (int64_t c = 0; c < D; c++) xr[c] = xr[c] + yr[c] * (s->table[jg * D + c] + m[jg * D + c]);
        }
}

static void add_inplace(float *x, const float *y, int64_t n) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) x[i] = x[i] + y[i];
}

/* prompt AdaLN: context * (1 + scale_kv) + shift_kv, per sample (row 0 shift, row 1 scale) */
void dit_prompt_modulate(float *ctx_mod, const dit_stream *s, const float *prompt_sst, int64_t B, int64_t D) {
    for (int64_t b = 0; b < B; b++) {
        const float *pm = s->prompt_mod + b * 2 * D;
        for (int64_t t = 0; t < s->S; t++) {
            const float *cr = s->context + (b * s->S + t) * D;
            float *o = ctx_mod + (b * s->S + t) * D;
            for (int64_t c = 0; c < D; c++) {
                float shift = prompt_sst[c] + pm[c];
                float scale = prompt_sst[D + c] + pm[D + c];
                o[c] = cr[c] * (1.0f + scale) + shift;
            }
        }
    }
}

/* skip[b] = 1 when sample b has `flag` in block i; returns how many samples do. */
int64_t dit_perturbed(const dit_run *r, int64_t i, int64_t B, uint32_t flag, uint8_t *skip) {
    int64_t n = 0;
    for (int64_t b = 0; b < B; b++) {
        skip[b] = r->perturb && (r->perturb[b * r->w->cfg.num_layers + i] & flag) ? 1 : 0;
        n += skip[b];
    }
    return n;
}

/* Zeroes the rows of skipped samples: x + 0 * gate == x, what ltx-core's `* mask` gives. */
static void zero_skipped(float *y, int64_t B, int64_t per_sample, const uint8_t *skip) {
    for (int64_t b = 0; b < B; b++)
        if (skip[b]) memset(y + b * per_sample, 0, (size_t)per_sample * sizeof(float));
}

void dit_stg_blend(float *o, const float *v, int64_t n, float m) {
    for (int64_t j = 0; j < n; j++) o[j] = v[j] + m * (o[j] - v[j]);
}

/* Whether any sample skips `flag` in any block: MaxDiffusion's "STG is on" for the whole call. */
static bool stg_on(const dit_run *r, int64_t B, uint32_t flag) {
    const int64_t n = B * r->w->cfg.num_layers;
    for (int64_t j = 0; r->perturb && j < n; j++)
        if (r->perturb[j] & flag) return true;
    return false;
}

/* Attention.forward: x [B,Tq,query_dim], c [B,Tk,context_dim] -> out [B,Tq,query_dim]. Tables are
 * NULL for no RoPE (text cross-attention). skip (NULL = none) [B], self-attention only: samples
 * whose attention output is replaced by the value projection (STG); when all are, Q/K are never
 * computed, as in ltx-core (all_perturbed). */
static ltx2_status attn_forward(dit_run *r, const char *name, const ltx2_dit_attn_w *a, const float *x, int64_t B,
                                int64_t Tq, const float *c, int64_t Tk, const uint8_t *mask, const float *qcos,
                                const float *qsin, const float *kcos, const float *ksin, const uint8_t *skip,
                                const dit_stream *text, int64_t block, bool blend, float *out) {
    ltx2_context *ctx = r->ctx;
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t H = a->heads, d = a->head_dim, inner = H * d;
    char nm[160];
    snprintf(nm, sizeof nm, "%s.in", name);
    dit_dump3(r, nm, x, B, Tq, a->query_dim);
    if (c != x) {
        snprintf(nm, sizeof nm, "%s.context", name);
        dit_dump3(r, nm, c, B, Tk, a->context_dim);
    }
    size_t nq = (size_t)(B * Tq * inner), nk = (size_t)(B * Tk * inner);
    float *buf = malloc((2 * nq + 2 * nk + (size_t)(B * Tq * H)) * sizeof(float));
    if (!buf) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit %s: attention buffers", name);
    float *q = buf, *k = q + nq, *v = k + nk, *o = v + nk, *g = o + nq;
    ltx2_status st = LTX2_OK;
#define TRY_(e)                         \
    do {                                \
        if ((st = (e)) != LTX2_OK) goto done; \
    } while (0)
    /* text cross-attention with a cache bound: K (normed) and V come from dit_text_kv */
    const bool cached = text && r->text_cache && text->text_entry;
    if (cached)
        TRY_(dit_text_kv(r, text, block, a, c, k, v));
    else
        TRY_(dit_linear(r, &a->v, c, B * Tk, v));
    int64_t n_skip = 0;
    for (int64_t b = 0; skip && b < B; b++) n_skip += skip[b] != 0;
    if (n_skip == B) {
        memcpy(o, v, nq * sizeof(float)); /* self-attention: Tq == Tk */
        goto gate;
    }
    TRY_(dit_linear(r, &a->q, x, B * Tq, q));
    TRY_(ltx2_cpu_rms_norm(ctx, q, q, B * Tq, inner, a->q_norm, cfg->norm_eps));
    if (!cached) {
        TRY_(dit_linear(r, &a->k, c, B * Tk, k));
        TRY_(ltx2_cpu_rms_norm(ctx, k, k, B * Tk, inner, a->k_norm, cfg->norm_eps));
    }
    if (qcos) {
        if (cfg->rope_type == LTX2_ROPE_SPLIT) {
            TRY_(ltx2_cpu_rope_apply_split(ctx, q, qcos, qsin, B, Tq, H, d));
            TRY_(ltx2_cpu_rope_apply_split(ctx, k, kcos, ksin, B, Tk, H, d));
        } else {
            TRY_(ltx2_cpu_rope_apply_interleaved(ctx, q, qcos, qsin, B, Tq, inner));
            TRY_(ltx2_cpu_rope_apply_interleaved(ctx, k, kcos, ksin, B, Tk, inner));
        }
    }
    TRY_(ltx2_cpu_attention(ctx, q, k, v, o, B, Tq, Tk, H, d, mask, (float)(1.0 / sqrt((double)d))));
    if (blend) {
        for (int64_t b = 0; b < B; b++)
            dit_stg_blend(o + b * Tq * inner, v + b * Tk * inner, Tq * inner, skip && skip[b] ? 0.0f : 1.0f);
    } else {
        for (int64_t b = 0; n_skip && b < B; b++)
            if (skip[b]) memcpy(o + b * Tq * inner, v + b * Tk * inner, (size_t)(Tq * inner) * sizeof(float));
    }
gate:
    if (a->gate.w) {
        /* per-head gate 2 * sigmoid(x W_g + b_g) from the query-side input */
        TRY_(dit_linear(r, &a->gate, x, B * Tq, g));
#pragma omp parallel for schedule(static)
        for (int64_t rr = 0; rr < B * Tq; rr++)
            for (int64_t h = 0; h < H; h++) {
                float gv = 2.0f * (float)(1.0 / (1.0 + exp(-(double)g[rr * H + h])));
                float *oh = o + rr * inner + h * d;
                for (int64_t j = 0; j < d; j++) oh[j] = oh[j] * gv;
            }
    }
    TRY_(dit_linear(r, &a->o, o, B * Tq, out));
    snprintf(nm, sizeof nm, "%s.out", name);
    dit_dump3(r, nm, out, B, Tq, a->query_dim);
#undef TRY_
done:
    free(buf);
    return st;
}

static ltx2_status ff_forward(dit_run *r, const char *name, const ltx2_dit_ff_w *f, const float *x, int64_t B,
                              int64_t T, int64_t D, float *out) {
    const int64_t rows = B * T;
    char nm[160];
    snprintf(nm, sizeof nm, "%s.in", name);
    dit_dump3(r, nm, x, B, T, D);
    float *h = malloc((size_t)(rows * f->proj_in.out) * sizeof(float));
    if (!h) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit %s: FFN hidden", name);
    ltx2_status st = dit_linear(r, &f->proj_in, x, rows, h);
    if (st == LTX2_OK) st = ltx2_cpu_gelu_tanh(r->ctx, h, h, rows * f->proj_in.out);
    if (st == LTX2_OK) st = dit_linear(r, &f->proj_out, h, rows, out);
    free(h);
    snprintf(nm, sizeof nm, "%s.out", name);
    if (st == LTX2_OK) dit_dump3(r, nm, out, B, T, D);
    return st;
}

/* Self-attention + text cross-attention of one stream (steps 1-2 of the block). */
static ltx2_status stream_attn(dit_run *r, int64_t bi, const char *blk, const char *pre, dit_stream *s, const float *sst,
                               const float *prompt_sst, const ltx2_dit_attn_w *a1, const ltx2_dit_attn_w *a2,
                               const uint8_t *skip_self, uint32_t skip_flag, float *xn, float *tmp, float *y,
                               float *ctx_mod) {
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t B = s->B, T = s->T, D = s->D, n = B * T * D;
    dit_ada_src src = {sst, s->mod, cfg->adaln_rows * D, s->row_mod};
    char nm[128];
    LTX2_TRY(ltx2_cpu_rms_norm(r->ctx, s->x, xn, B * T, D, NULL, cfg->norm_eps));
    dit_modulate(tmp, xn, B, T, D, &src, 1, 0);
    snprintf(nm, sizeof nm, "%s.%sattn1", blk, pre);
    LTX2_TRY(attn_forward(r, nm, a1, tmp, B, T, tmp, T, NULL, s->pe_cos, s->pe_sin, s->pe_cos, s->pe_sin, skip_self,
                          NULL, bi, r->stg_blend_every_block && stg_on(r, B, skip_flag), y));
    dit_gated_add(s->x, y, B, T, D, &src, 2);

    snprintf(nm, sizeof nm, "%s.%sattn2", blk, pre);
    LTX2_TRY(ltx2_cpu_rms_norm(r->ctx, s->x, xn, B * T, D, NULL, cfg->norm_eps));
    if (!cfg->cross_attention_adaln) {
        LTX2_TRY(attn_forward(r, nm, a2, xn, B, T, s->context, s->S, s->ctx_mask, NULL, NULL, NULL, NULL, NULL, s, bi,
                              false, y));
        add_inplace(s->x, y, n);
        return LTX2_OK;
    }
    dit_modulate(tmp, xn, B, T, D, &src, 7, 6);
    dit_prompt_modulate(ctx_mod, s, prompt_sst, B, D);
    LTX2_TRY(attn_forward(r, nm, a2, tmp, B, T, ctx_mod, s->S, s->ctx_mask, NULL, NULL, NULL, NULL, NULL, s, bi, false, y));
    dit_gated_add(s->x, y, B, T, D, &src, 8);
    return LTX2_OK;
}

static ltx2_status stream_ff(dit_run *r, const char *blk, const char *name, dit_stream *s, const float *sst,
                             const ltx2_dit_ff_w *f, float *xn, float *tmp, float *y) {
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t B = s->B, T = s->T, D = s->D;
    dit_ada_src src = {sst, s->mod, cfg->adaln_rows * D, s->row_mod};
    char nm[128];
    LTX2_TRY(ltx2_cpu_rms_norm(r->ctx, s->x, xn, B * T, D, NULL, cfg->norm_eps));
    dit_modulate(tmp, xn, B, T, D, &src, 4, 3);
    snprintf(nm, sizeof nm, "%s.%s", blk, name);
    LTX2_TRY(ff_forward(r, nm, f, tmp, B, T, D, y));
    dit_gated_add(s->x, y, B, T, D, &src, 5);
    return LTX2_OK;
}

ltx2_status dit_block_forward(dit_run *r, int64_t i, dit_stream *v, dit_stream *a) {
    const ltx2_dit_block_w *bw = &r->w->blocks[i];
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t B = v->B, nv = B * v->T * v->D, na = B * a->T * a->D;
    const int64_t Sv = v->S, Sa = a->S;
    /* video: xn, tmp, y, norm3, scaled (5 nv); audio likewise; modulated contexts */
    size_t total = (size_t)(5 * nv + 5 * na + B * Sv * v->D + B * Sa * a->D);
    float *buf = malloc(total * sizeof(float));
    uint8_t *skips = malloc((size_t)(4 * B)); /* per-sample perturbation masks */
    if (!buf || !skips) {
        free(buf);
        free(skips);
        return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit block %lld: %zu floats", (long long)i, total);
    }
    float *vxn = buf, *vtmp = vxn + nv, *vy = vtmp + nv, *vn3 = vy + nv, *vsc = vn3 + nv;
    float *axn = vsc + nv, *atmp = axn + na, *ay = atmp + na, *an3 = ay + na, *asc = an3 + na;
    float *vctx = asc + na, *actx = vctx + B * Sv * v->D;
    char blk[64], nm[128];
    snprintf(blk, sizeof blk, "transformer_blocks.%lld", (long long)i);
    ltx2_status st = LTX2_OK;
#define TRY_(e)                         \
    do {                                \
        if ((st = (e)) != LTX2_OK) goto done; \
    } while (0)
    uint8_t *skip_v = skips, *skip_a = skips + B, *skip_a2v = skips + 2 * B, *skip_v2a = skips + 3 * B;
    dit_perturbed(r, i, B, LTX2_DIT_SKIP_VIDEO_SELF_ATTN, skip_v);
    dit_perturbed(r, i, B, LTX2_DIT_SKIP_AUDIO_SELF_ATTN, skip_a);
    const int64_t n_a2v = dit_perturbed(r, i, B, LTX2_DIT_SKIP_A2V_CROSS_ATTN, skip_a2v);
    const int64_t n_v2a = dit_perturbed(r, i, B, LTX2_DIT_SKIP_V2A_CROSS_ATTN, skip_v2a);
    TRY_(stream_attn(r, i, blk, "", v, bw->sst, bw->prompt_sst, &bw->attn1, &bw->attn2, skip_v,
                     LTX2_DIT_SKIP_VIDEO_SELF_ATTN, vxn, vtmp, vy, vctx));
    TRY_(stream_attn(r, i, blk, "audio_", a, bw->audio_sst, bw->audio_prompt_sst, &bw->audio_attn1, &bw->audio_attn2,
                     skip_a, LTX2_DIT_SKIP_AUDIO_SELF_ATTN, axn, atmp, ay, actx));

    /* Audio <-> video exchange: both directions read the normalised snapshot taken here. */
    TRY_(ltx2_cpu_rms_norm(r->ctx, v->x, vn3, B * v->T, v->D, NULL, cfg->norm_eps));
    TRY_(ltx2_cpu_rms_norm(r->ctx, a->x, an3, B * a->T, a->D, NULL, cfg->norm_eps));
    dit_ada_src vss = {bw->sst_a2v_video, v->cross_ss, 4 * v->D, v->row_cross_ss};
    dit_ada_src ass = {bw->sst_a2v_audio, a->cross_ss, 4 * a->D, a->row_cross_ss};
    dit_ada_src vgate = {bw->sst_a2v_video + 4 * v->D, v->cross_gate, v->D, v->row_cross_gate};
    dit_ada_src agate = {bw->sst_a2v_audio + 4 * a->D, a->cross_gate, a->D, a->row_cross_gate};
    /* a2v: Q video (rows 0 scale, 1 shift), K/V audio (rows 0, 1), gate row 4; not run at all when
     * every sample skips it (modality isolation) */
    if (n_a2v < B) {
        dit_modulate(vsc, vn3, B, v->T, v->D, &vss, 0, 1);
        dit_modulate(asc, an3, B, a->T, a->D, &ass, 0, 1);
        snprintf(nm, sizeof nm, "%s.audio_to_video_attn", blk);
        TRY_(attn_forward(r, nm, &bw->a2v, vsc, B, v->T, asc, a->T, NULL, v->xpe_cos, v->xpe_sin, a->xpe_cos,
                          a->xpe_sin, NULL, NULL, i, false, vy));
        zero_skipped(vy, B, v->T * v->D, skip_a2v);
        dit_gated_add(v->x, vy, B, v->T, v->D, &vgate, 0);
    }
    /* v2a: Q audio (rows 2 scale, 3 shift), K/V video (rows 2, 3), gate row 4 */
    if (n_v2a < B) {
        dit_modulate(asc, an3, B, a->T, a->D, &ass, 2, 3);
        dit_modulate(vsc, vn3, B, v->T, v->D, &vss, 2, 3);
        snprintf(nm, sizeof nm, "%s.video_to_audio_attn", blk);
        TRY_(attn_forward(r, nm, &bw->v2a, asc, B, a->T, vsc, v->T, NULL, a->xpe_cos, a->xpe_sin, v->xpe_cos,
                          v->xpe_sin, NULL, NULL, i, false, ay));
        zero_skipped(ay, B, a->T * a->D, skip_v2a);
        dit_gated_add(a->x, ay, B, a->T, a->D, &agate, 0);
    }

    TRY_(stream_ff(r, blk, "ff", v, bw->sst, &bw->ff, vxn, vtmp, vy));
    TRY_(stream_ff(r, blk, "audio_ff", a, bw->audio_sst, &bw->audio_ff, axn, atmp, ay));
    snprintf(nm, sizeof nm, "%s.out.video", blk);
    dit_dump3(r, nm, v->x, B, v->T, v->D);
    snprintf(nm, sizeof nm, "%s.out.audio", blk);
    dit_dump3(r, nm, a->x, B, a->T, a->D);
#undef TRY_
done:
    free(buf);
    free(skips);
    return st;
}
