/* The DiT forward over data x context x tensor ranks (see dit_parallel.h). The embeddings, AdaLN,
 * RoPE tables and output head run through the model's own forward (dit_forward_blocks) on this
 * rank's batch chunk and video-token chunk; every block runs here, a port of dit_block.c's
 * BasicAVTransformerBlock with the collectives inserted. With one rank per group it performs the
 * same operations in the same order as dit_block.c, so it is bitwise equal to the CPU forward;
 * batch and sequence splits stay bitwise (row-local GEMMs, per-row attention that skips masked
 * keys); only the tensor split's partial sums (row-parallel GEMMs, the QK-norm's sum of squares)
 * change the summation order. Under FSDP (trillium) each block first gathers its weights into the
 * very tensor shards a non-FSDP profile stores, so the block computes exactly as there. */
#include "dist/dit_parallel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "cpu/cpu_attention.h"
#include "cpu/cpu_ops.h"
#include "cpu/cpu_rope.h"
#include "dist/dit_parallel_internal.h"
#include "model/dit_internal.h"

/* One forward's per-rank geometry, handed to the block hook. */
typedef struct par_run {
    ltx2_dit_parallel *dp;
    int64_t Tv, Tl, Tp;  /* real video tokens, tokens per rank, padded total */
    uint8_t *key_mask;   /* [Bl, Tp] 1 = real token; NULL when nothing is padded */
} par_run;

void ltx2_dit_parallel_opts_init(ltx2_dit_parallel_opts *o) {
    memset(o, 0, sizeof *o);
    o->profile = LTX2_PROFILE_GPU;
    o->sp_attention = LTX2_SP_AUTO;
}

/* ---- collectives with per-rank accounting (ring-algorithm bytes a rank sends) ---- */

static ltx2_status c_all_to_all(ltx2_dit_parallel *dp, ltx2_context *ctx, ltx2_comm *c, const float *send,
                                float *recv, size_t count) {
    dp->stats.n_all_to_all++;
    dp->stats.sent_elems += (int64_t)count * (c->size - 1);
    return ltx2_comm_all_to_all(c, ctx, send, recv, count, LTX2_F32);
}

static ltx2_status c_all_gather(ltx2_dit_parallel *dp, ltx2_context *ctx, ltx2_comm *c, const float *send,
                                float *recv, size_t count) {
    dp->stats.n_all_gather++;
    dp->stats.sent_elems += (int64_t)count * (c->size - 1);
    return ltx2_comm_all_gather(c, ctx, send, recv, count, LTX2_F32);
}

static ltx2_status c_all_reduce(ltx2_dit_parallel *dp, ltx2_context *ctx, ltx2_comm *c, float *buf, size_t count) {
    dp->stats.n_all_reduce++;
    dp->stats.sent_elems += 2 * (int64_t)count * (c->size - 1) / c->size;
    return ltx2_comm_all_reduce(c, ctx, buf, buf, count, LTX2_F32);
}

void ltx2_dit_parallel_free(ltx2_dit_parallel *dp) {
    if (!dp) return;
    for (size_t i = 0; i < dp->n_owned; i++) free(dp->owned[i]);
    free(dp->owned);
    free(dp->blocks);
    for (int64_t i = 0; dp->fsdp && i < dp->n_layers; i++) free(dp->fsdp[i].pieces);
    free(dp->fsdp);
    free(dp->wg_piece);
    ltx2_dit_weights_free(dp->owned_full);
    ltx2_comm_free(dp->batch);
    ltx2_comm_free(dp->seq);
    ltx2_comm_free(dp->tp);
    ltx2_comm_free(dp->wg);
    free(dp);
}

ltx2_status dit_par_setup(ltx2_context *ctx, ltx2_comm *world, const ltx2_dit_config *cfg,
                          const ltx2_dit_parallel_opts *opts, ltx2_dit_parallel **out) {
    *out = NULL;
    ltx2_dit_parallel *dp = calloc(1, sizeof *dp);
    if (!dp) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel create");
    if (opts)
        dp->opts = *opts;
    else
        ltx2_dit_parallel_opts_init(&dp->opts);
    dp->world = world;
    ltx2_status st = ltx2_comm_split_axes(world, ctx, LTX2_AXIS_BIT(LTX2_AXIS_DATA) | LTX2_AXIS_BIT(LTX2_AXIS_FSDP),
                                          &dp->batch);
    if (st == LTX2_OK) st = ltx2_comm_split_axes(world, ctx, LTX2_AXIS_BIT(LTX2_AXIS_CONTEXT), &dp->seq);
    if (st == LTX2_OK) st = ltx2_comm_split_axes(world, ctx, LTX2_AXIS_BIT(LTX2_AXIS_TENSOR), &dp->tp);
    /* `embed` maps to (context, fsdp) (ltx2_shard_logical_to_mesh): trillium's FSDP pieces are
     * gathered over this group before each block (dit_fsdp.c). */
    if (st == LTX2_OK)
        st = ltx2_comm_split_axes(world, ctx, LTX2_AXIS_BIT(LTX2_AXIS_CONTEXT) | LTX2_AXIS_BIT(LTX2_AXIS_FSDP),
                                  &dp->wg);
    if (st == LTX2_OK && dp->opts.sp_attention == LTX2_SP_ULYSSES && (cfg->heads / dp->tp->size) % dp->seq->size)
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                        "dit parallel: Ulysses needs the %lld heads per tensor rank to divide by context=%d",
                        (long long)(cfg->heads / dp->tp->size), dp->seq->size);
    if (st == LTX2_OK) {
        dp->blocks = calloc((size_t)cfg->num_layers, sizeof *dp->blocks);
        dp->fsdp = calloc((size_t)cfg->num_layers, sizeof *dp->fsdp);
        dp->n_layers = cfg->num_layers;
        if (!dp->blocks || !dp->fsdp)
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel: %lld blocks", (long long)cfg->num_layers);
    }
    if (st != LTX2_OK) {
        ltx2_dit_parallel_free(dp);
        return st;
    }
    *out = dp;
    return LTX2_OK;
}

void ltx2_dit_parallel_get_stats(const ltx2_dit_parallel *dp, ltx2_dit_parallel_stats *out) { *out = dp->stats; }

/* ---- block pieces: dit_block.c's (modulate, gated add, STG flags: dit_internal.h), with collectives ---- */

/* Row-parallel Linear: partial products over this rank's input slice, summed over tensor, bias once. */
static ltx2_status linear_row(par_run *pr, dit_run *r, const ltx2_dit_linear *L, const float *x, int64_t rows,
                              float *y) {
    ltx2_dit_parallel *dp = pr->dp;
    if (dp->tp->size == 1) return dit_linear(r, L, x, rows, y);
    if (rows == 0) return LTX2_OK;
    LTX2_TRY(ltx2_cpu_gemm(r->ctx, rows, L->out, L->in, 1.0f, x, L->in, L->w, L->in, LTX2_B_NK, 0.0f, y, L->out, NULL));
    LTX2_TRY(c_all_reduce(dp, r->ctx, dp->tp, y, (size_t)(rows * L->out)));
    if (L->b)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t c = 0; c < L->out; c++) y[i * L->out + c] += L->b[c];
    return LTX2_OK;
}

/* RMSNorm across all heads of x[rows, il] (this rank's il columns of the full width). The sum of
 * squares is accumulated in double like the CPU norm and crosses the tensor group as two floats
 * (hi + lo), which keeps about 48 bits of it. */
static ltx2_status qk_norm(par_run *pr, dit_run *r, float *x, int64_t rows, int64_t il, int64_t full,
                           const float *w) {
    ltx2_dit_parallel *dp = pr->dp;
    const float eps = r->w->cfg.norm_eps;
    if (dp->tp->size == 1) return ltx2_cpu_rms_norm(r->ctx, x, x, rows, il, w, eps);
    float *ss = calloc((size_t)(2 * rows), sizeof(float));
    if (!ss) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit parallel: QK norm sums");
    for (int64_t i = 0; i < rows; i++) {
        double s = 0.0;
        for (int64_t c = 0; c < il; c++) s += (double)x[i * il + c] * x[i * il + c];
        ss[2 * i] = (float)s;
        ss[2 * i + 1] = (float)(s - (double)ss[2 * i]);
    }
    ltx2_status st = c_all_reduce(dp, r->ctx, dp->tp, ss, (size_t)(2 * rows));
    if (st == LTX2_OK)
        for (int64_t i = 0; i < rows; i++) {
            double s = (double)ss[2 * i] + (double)ss[2 * i + 1];
            float inv = (float)(1.0 / sqrt(s / (double)full + eps));
            for (int64_t c = 0; c < il; c++) x[i * il + c] = x[i * il + c] * inv * w[c];
        }
    free(ss);
    return st;
}

/* RoPE on this rank's heads: the tables cover every head (split: [B, H, T, d/2]; interleaved:
 * [B, T, H*d]), so the local heads' part is copied out first. */
static ltx2_status rope_local(dit_run *r, const par_attn *pa, float *x, const float *cs, const float *sn, int64_t B,
                              int64_t T) {
    const ltx2_dit_attn_w *a = &pa->w;
    const int64_t Hl = a->heads, d = a->head_dim, Hf = pa->heads_full;
    const bool split = r->w->cfg.rope_type == LTX2_ROPE_SPLIT;
    if (Hl == Hf)
        return split ? ltx2_cpu_rope_apply_split(r->ctx, x, cs, sn, B, T, Hl, d)
                     : ltx2_cpu_rope_apply_interleaved(r->ctx, x, cs, sn, B, T, Hl * d);
    const int64_t n = split ? B * Hl * T * d / 2 : B * T * Hl * d;
    float *lc = malloc((size_t)(2 * n) * sizeof(float));
    if (!lc) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit parallel: local RoPE tables");
    float *ls = lc + n;
    if (split) {
        const int64_t blk = T * d / 2;
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < Hl; h++) {
                memcpy(lc + (b * Hl + h) * blk, cs + (b * Hf + pa->h0 + h) * blk, (size_t)blk * sizeof(float));
                memcpy(ls + (b * Hl + h) * blk, sn + (b * Hf + pa->h0 + h) * blk, (size_t)blk * sizeof(float));
            }
    } else {
        const int64_t w = Hl * d, off = pa->h0 * d;
        for (int64_t i = 0; i < B * T; i++) {
            memcpy(lc + i * w, cs + i * Hf * d + off, (size_t)w * sizeof(float));
            memcpy(ls + i * w, sn + i * Hf * d + off, (size_t)w * sizeof(float));
        }
    }
    ltx2_status st = split ? ltx2_cpu_rope_apply_split(r->ctx, x, lc, ls, B, T, Hl, d)
                           : ltx2_cpu_rope_apply_interleaved(r->ctx, x, lc, ls, B, T, Hl * d);
    free(lc);
    return st;
}

/* Which attention this is, for the sequence split. */
typedef enum att_kind {
    ATT_LOCAL,    /* everything it needs is on this rank (text, audio, a2v) */
    ATT_SEQ_SELF, /* video self-attention: Q, K, V sequence-sharded */
    ATT_SEQ_KV    /* v2a: Q replicated, K/V sequence-sharded */
} att_kind;

/* [Pc][B, Tl, w] blocks (rank-major, as a collective delivers them) -> [B, Pc * Tl, w]. */
static void unblock_seq(float *dst, const float *src, int64_t Pc, int64_t B, int64_t Tl, int64_t w) {
    for (int64_t r = 0; r < Pc; r++)
        for (int64_t b = 0; b < B; b++)
            memcpy(dst + (b * Pc * Tl + r * Tl) * w, src + (r * B + b) * Tl * w, (size_t)(Tl * w) * sizeof(float));
}

/* Ulysses: q, k, v [B, Tl, Hl*d] sequence-sharded -> all-to-all to [B, Tp, Hc*d] (heads
 * j*Hc.. of every token on rank j) -> attention over the whole sequence -> all-to-all back. */
static ltx2_status ulysses(par_run *pr, dit_run *r, const ltx2_dit_attn_w *a, const float *q, const float *k,
                           const float *v, int64_t B, float *o) {
    ltx2_dit_parallel *dp = pr->dp;
    const int64_t Pc = dp->seq->size, Tl = pr->Tl, Tp = pr->Tp, d = a->head_dim, il = a->heads * d;
    const int64_t Hc = a->heads / Pc, w = Hc * d, n = B * Tp * w; /* n == B * Tl * il */
    float *buf = malloc((size_t)(5 * n) * sizeof(float));
    if (!buf) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit parallel: Ulysses buffers (%lld floats)", (long long)(5 * n));
    float *send = buf, *recv = send + n, *full[3] = {recv + n, recv + 2 * n, recv + 3 * n};
    const float *src[3] = {q, k, v};
    ltx2_status st = LTX2_OK;
    for (int s = 0; s < 3 && st == LTX2_OK; s++) {
        for (int64_t j = 0; j < Pc; j++)
            for (int64_t bt = 0; bt < B * Tl; bt++)
                memcpy(send + (j * B * Tl + bt) * w, src[s] + bt * il + j * w, (size_t)w * sizeof(float));
        st = c_all_to_all(dp, r->ctx, dp->seq, send, recv, (size_t)(B * Tl * w));
        if (st == LTX2_OK) unblock_seq(full[s], recv, Pc, B, Tl, w);
    }
    /* attention output reuses send's space */
    if (st == LTX2_OK)
        st = ltx2_cpu_attention(r->ctx, full[0], full[1], full[2], send, B, Tp, Tp, Hc, d, pr->key_mask,
                                (float)(1.0 / sqrt((double)d)));
    if (st == LTX2_OK) {
        float *of = full[0]; /* re-blocked output: [Pc][B, Tl, w] */
        for (int64_t j = 0; j < Pc; j++)
            for (int64_t b = 0; b < B; b++)
                memcpy(of + (j * B + b) * Tl * w, send + (b * Tp + j * Tl) * w, (size_t)(Tl * w) * sizeof(float));
        st = c_all_to_all(dp, r->ctx, dp->seq, of, recv, (size_t)(B * Tl * w));
    }
    if (st == LTX2_OK)
        for (int64_t j = 0; j < Pc; j++)
            for (int64_t bt = 0; bt < B * Tl; bt++)
                memcpy(o + bt * il + j * w, recv + (j * B * Tl + bt) * w, (size_t)w * sizeof(float));
    free(buf);
    return st;
}

/* K and V [B, Tl, il] sequence-sharded -> all-gathered [B, Tp, il], padded keys masked. */
static ltx2_status gather_kv_attention(par_run *pr, dit_run *r, const ltx2_dit_attn_w *a, const float *q, int64_t Tq,
                                       const float *k, const float *v, int64_t B, float *o) {
    ltx2_dit_parallel *dp = pr->dp;
    const int64_t Pc = dp->seq->size, Tl = pr->Tl, Tp = pr->Tp, d = a->head_dim, il = a->heads * d;
    const int64_t n = B * Tp * il;
    float *buf = malloc((size_t)(3 * n) * sizeof(float));
    if (!buf) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit parallel: gathered K/V (%lld floats)", (long long)(3 * n));
    float *recv = buf, *kf = buf + n, *vf = kf + n;
    ltx2_status st = c_all_gather(dp, r->ctx, dp->seq, k, recv, (size_t)(B * Tl * il));
    if (st == LTX2_OK) unblock_seq(kf, recv, Pc, B, Tl, il);
    if (st == LTX2_OK) st = c_all_gather(dp, r->ctx, dp->seq, v, recv, (size_t)(B * Tl * il));
    if (st == LTX2_OK) unblock_seq(vf, recv, Pc, B, Tl, il);
    if (st == LTX2_OK)
        st = ltx2_cpu_attention(r->ctx, q, kf, vf, o, B, Tq, Tp, a->heads, d, pr->key_mask,
                                (float)(1.0 / sqrt((double)d)));
    free(buf);
    return st;
}

/* Attention.forward on this rank's heads (dit_block.c attn_forward with the splits). */
static ltx2_status par_attn_forward(par_run *pr, dit_run *r, const par_attn *pa, att_kind kind, const float *x,
                                    int64_t B, int64_t Tq, const float *c, int64_t Tk, const uint8_t *mask,
                                    const float *qcos, const float *qsin, const float *kcos, const float *ksin,
                                    const uint8_t *skip, float *out) {
    ltx2_dit_parallel *dp = pr->dp;
    const ltx2_dit_attn_w *a = &pa->w;
    const int64_t H = a->heads, d = a->head_dim, inner = H * d, full = pa->heads_full * d;
    if (dp->seq->size == 1) kind = ATT_LOCAL;
    size_t nq = (size_t)(B * Tq * inner), nk = (size_t)(B * Tk * inner);
    float *buf = malloc((2 * nq + 2 * nk + (size_t)(B * Tq * H)) * sizeof(float));
    if (!buf) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit parallel: attention buffers");
    float *q = buf, *k = q + nq, *v = k + nk, *o = v + nk, *g = o + nq;
    ltx2_status st = LTX2_OK;
#define TRY_(e)                               \
    do {                                      \
        if ((st = (e)) != LTX2_OK) goto done; \
    } while (0)
    TRY_(dit_linear(r, &a->v, c, B * Tk, v));
    int64_t n_skip = 0;
    for (int64_t b = 0; skip && b < B; b++) n_skip += skip[b] != 0;
    if (n_skip == B) { /* the whole batch chunk skips: same on every rank of the sequence group */
        memcpy(o, v, nq * sizeof(float));
        goto gate;
    }
    TRY_(dit_linear(r, &a->q, x, B * Tq, q));
    TRY_(dit_linear(r, &a->k, c, B * Tk, k));
    TRY_(qk_norm(pr, r, q, B * Tq, inner, full, a->q_norm));
    TRY_(qk_norm(pr, r, k, B * Tk, inner, full, a->k_norm));
    if (qcos) {
        TRY_(rope_local(r, pa, q, qcos, qsin, B, Tq));
        TRY_(rope_local(r, pa, k, kcos, ksin, B, Tk));
    }
    if (kind == ATT_SEQ_SELF && dp->opts.sp_attention != LTX2_SP_ALLGATHER_KV && H % dp->seq->size == 0)
        TRY_(ulysses(pr, r, a, q, k, v, B, o));
    else if (kind != ATT_LOCAL)
        TRY_(gather_kv_attention(pr, r, a, q, Tq, k, v, B, o));
    else
        TRY_(ltx2_cpu_attention(r->ctx, q, k, v, o, B, Tq, Tk, H, d, mask, (float)(1.0 / sqrt((double)d))));
    for (int64_t b = 0; n_skip && b < B; b++)
        if (skip[b]) memcpy(o + b * Tq * inner, v + b * Tk * inner, (size_t)(Tq * inner) * sizeof(float));
gate:
    if (a->gate.w) {
        TRY_(dit_linear(r, &a->gate, x, B * Tq, g));
#pragma omp parallel for schedule(static)
        for (int64_t rr = 0; rr < B * Tq; rr++)
            for (int64_t h = 0; h < H; h++) {
                float gv = 2.0f * (float)(1.0 / (1.0 + exp(-(double)g[rr * H + h])));
                float *oh = o + rr * inner + h * d;
                for (int64_t j = 0; j < d; j++) oh[j] = oh[j] * gv;
            }
    }
    TRY_(linear_row(pr, r, &a->o, o, B * Tq, out));
#undef TRY_
done:
    free(buf);
    return st;
}

static ltx2_status par_ff(par_run *pr, dit_run *r, const ltx2_dit_ff_w *f, const float *x, int64_t rows, float *out) {
    float *h = malloc((size_t)(rows * f->proj_in.out) * sizeof(float));
    if (!h) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit parallel: FFN hidden");
    ltx2_status st = dit_linear(r, &f->proj_in, x, rows, h);
    if (st == LTX2_OK) st = ltx2_cpu_gelu_tanh(r->ctx, h, h, rows * f->proj_in.out);
    if (st == LTX2_OK) st = linear_row(pr, r, &f->proj_out, h, rows, out);
    free(h);
    return st;
}

/* Self-attention + text cross-attention of one stream. */
static ltx2_status stream_attn(par_run *pr, dit_run *r, dit_stream *s, att_kind self_kind, const float *sst,
                               const float *prompt_sst, const par_attn *a1, const par_attn *a2,
                               const uint8_t *skip_self, float *xn, float *tmp, float *y, float *ctx_mod) {
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t B = s->B, T = s->T, D = s->D, n = B * T * D;
    dit_ada_src src = {sst, s->mod, cfg->adaln_rows * D, s->row_mod};
    LTX2_TRY(ltx2_cpu_rms_norm(r->ctx, s->x, xn, B * T, D, NULL, cfg->norm_eps));
    dit_modulate(tmp, xn, B, T, D, &src, 1, 0);
    LTX2_TRY(par_attn_forward(pr, r, a1, self_kind, tmp, B, T, tmp, T, NULL, s->pe_cos, s->pe_sin, s->pe_cos,
                              s->pe_sin, skip_self, y));
    dit_gated_add(s->x, y, B, T, D, &src, 2);
    LTX2_TRY(ltx2_cpu_rms_norm(r->ctx, s->x, xn, B * T, D, NULL, cfg->norm_eps));
    if (!cfg->cross_attention_adaln) {
        LTX2_TRY(par_attn_forward(pr, r, a2, ATT_LOCAL, xn, B, T, s->context, s->S, s->ctx_mask, NULL, NULL, NULL,
                                  NULL, NULL, y));
        for (int64_t i = 0; i < n; i++) s->x[i] = s->x[i] + y[i];
        return LTX2_OK;
    }
    dit_modulate(tmp, xn, B, T, D, &src, 7, 6);
    dit_prompt_modulate(ctx_mod, s, prompt_sst, B, D);
    LTX2_TRY(par_attn_forward(pr, r, a2, ATT_LOCAL, tmp, B, T, ctx_mod, s->S, s->ctx_mask, NULL, NULL, NULL, NULL,
                              NULL, y));
    dit_gated_add(s->x, y, B, T, D, &src, 8);
    return LTX2_OK;
}

static ltx2_status stream_ff(par_run *pr, dit_run *r, dit_stream *s, const float *sst, const ltx2_dit_ff_w *f,
                             float *xn, float *tmp, float *y) {
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t B = s->B, T = s->T, D = s->D;
    dit_ada_src src = {sst, s->mod, cfg->adaln_rows * D, s->row_mod};
    LTX2_TRY(ltx2_cpu_rms_norm(r->ctx, s->x, xn, B * T, D, NULL, cfg->norm_eps));
    dit_modulate(tmp, xn, B, T, D, &src, 4, 3);
    LTX2_TRY(par_ff(pr, r, f, tmp, B * T, y));
    dit_gated_add(s->x, y, B, T, D, &src, 5);
    return LTX2_OK;
}

/* The block hook: v holds this rank's video tokens, a the whole audio stream. */
static ltx2_status par_block_forward(dit_run *r, int64_t i, dit_stream *v, dit_stream *a, void *user) {
    par_run *pr = user;
    ltx2_dit_parallel *dp = pr->dp;
    if (dp->opts.on_block) LTX2_TRY(dp->opts.on_block(r->ctx, dp->world->rank, i, dp->opts.on_block_user));
    /* FSDP: this block's split weights become whole tensor shards until the block ends */
    float *wscratch = NULL;
    ltx2_status st = dit_par_fsdp_gather(r->ctx, dp, i, &wscratch);
    if (st != LTX2_OK) {
        dit_par_fsdp_release(dp, i, wscratch);
        return st;
    }
    const ltx2_dit_block_w *bw = &r->w->blocks[i];
    const par_block *pb = &dp->blocks[i];
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t B = v->B, nv = B * v->T * v->D, na = B * a->T * a->D;
    size_t total = (size_t)(5 * nv + 5 * na + B * v->S * v->D + B * a->S * a->D);
    float *buf = malloc(total * sizeof(float));
    uint8_t *skips = malloc((size_t)(4 * B));
    if (!buf || !skips) {
        free(buf);
        free(skips);
        dit_par_fsdp_release(dp, i, wscratch);
        return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit parallel block %lld: %zu floats", (long long)i, total);
    }
    float *vxn = buf, *vtmp = vxn + nv, *vy = vtmp + nv, *vn3 = vy + nv, *vsc = vn3 + nv;
    float *axn = vsc + nv, *atmp = axn + na, *ay = atmp + na, *an3 = ay + na, *asc = an3 + na;
    float *vctx = asc + na, *actx = vctx + B * v->S * v->D;
#define TRY_(e)                               \
    do {                                      \
        if ((st = (e)) != LTX2_OK) goto done; \
    } while (0)
    uint8_t *skip_v = skips, *skip_a = skips + B, *skip_a2v = skips + 2 * B, *skip_v2a = skips + 3 * B;
    dit_perturbed(r, i, B, LTX2_DIT_SKIP_VIDEO_SELF_ATTN, skip_v);
    dit_perturbed(r, i, B, LTX2_DIT_SKIP_AUDIO_SELF_ATTN, skip_a);
    const int64_t n_a2v = dit_perturbed(r, i, B, LTX2_DIT_SKIP_A2V_CROSS_ATTN, skip_a2v);
    const int64_t n_v2a = dit_perturbed(r, i, B, LTX2_DIT_SKIP_V2A_CROSS_ATTN, skip_v2a);
    TRY_(stream_attn(pr, r, v, ATT_SEQ_SELF, bw->sst, bw->prompt_sst, &pb->att[PA_ATTN1], &pb->att[PA_ATTN2], skip_v,
                     vxn, vtmp, vy, vctx));
    TRY_(stream_attn(pr, r, a, ATT_LOCAL, bw->audio_sst, bw->audio_prompt_sst, &pb->att[PA_AUDIO1],
                     &pb->att[PA_AUDIO2], skip_a, axn, atmp, ay, actx));
    TRY_(ltx2_cpu_rms_norm(r->ctx, v->x, vn3, B * v->T, v->D, NULL, cfg->norm_eps));
    TRY_(ltx2_cpu_rms_norm(r->ctx, a->x, an3, B * a->T, a->D, NULL, cfg->norm_eps));
    dit_ada_src vss = {bw->sst_a2v_video, v->cross_ss, 4 * v->D, v->row_cross_ss};
    dit_ada_src ass = {bw->sst_a2v_audio, a->cross_ss, 4 * a->D, a->row_cross_ss};
    dit_ada_src vgate = {bw->sst_a2v_video + 4 * v->D, v->cross_gate, v->D, NULL};
    dit_ada_src agate = {bw->sst_a2v_audio + 4 * a->D, a->cross_gate, a->D, NULL};
    if (n_a2v < B) {
        dit_modulate(vsc, vn3, B, v->T, v->D, &vss, 0, 1);
        dit_modulate(asc, an3, B, a->T, a->D, &ass, 0, 1);
        TRY_(par_attn_forward(pr, r, &pb->att[PA_A2V], ATT_LOCAL, vsc, B, v->T, asc, a->T, NULL, v->xpe_cos,
                              v->xpe_sin, a->xpe_cos, a->xpe_sin, NULL, vy));
        for (int64_t b = 0; b < B; b++)
            if (skip_a2v[b]) memset(vy + b * v->T * v->D, 0, (size_t)(v->T * v->D) * sizeof(float));
        dit_gated_add(v->x, vy, B, v->T, v->D, &vgate, 0);
    }
    if (n_v2a < B) {
        dit_modulate(asc, an3, B, a->T, a->D, &ass, 2, 3);
        dit_modulate(vsc, vn3, B, v->T, v->D, &vss, 2, 3);
        TRY_(par_attn_forward(pr, r, &pb->att[PA_V2A], ATT_SEQ_KV, asc, B, a->T, vsc, v->T, NULL, a->xpe_cos,
                              a->xpe_sin, v->xpe_cos, v->xpe_sin, NULL, ay));
        for (int64_t b = 0; b < B; b++)
            if (skip_v2a[b]) memset(ay + b * a->T * a->D, 0, (size_t)(a->T * a->D) * sizeof(float));
        dit_gated_add(a->x, ay, B, a->T, a->D, &agate, 0);
    }
    TRY_(stream_ff(pr, r, v, bw->sst, &pb->ff, vxn, vtmp, vy));
    TRY_(stream_ff(pr, r, a, bw->audio_sst, &pb->audio_ff, axn, atmp, ay));
#undef TRY_
done:
    free(buf);
    free(skips);
    dit_par_fsdp_release(dp, i, wscratch);
    return st;
}

/* ---- the forward: slice inputs, run, gather ---- */

/* This rank's inputs: batch rows [b0, b0 + Bl) (past B: copies of the last sample, dropped at the
 * end) and video tokens [t0, t0 + Tl) (past Tv: zero latents with the last token's position and
 * timestep, so every table stays finite; they are masked as keys and dropped). */
typedef struct local_inputs {
    float *v_lat, *v_pos, *v_ts, *v_sig, *v_ctx, *a_lat, *a_pos, *a_ts, *a_sig, *a_ctx;
    uint8_t *v_mask, *a_mask;
    uint32_t *perturb;
} local_inputs;

static void local_inputs_free(local_inputs *l) {
    free(l->v_lat), free(l->v_pos), free(l->v_ts), free(l->v_sig), free(l->v_ctx);
    free(l->a_lat), free(l->a_pos), free(l->a_ts), free(l->a_sig), free(l->a_ctx);
    free(l->v_mask), free(l->a_mask), free(l->perturb);
}

static float *rows_of(const float *src, int64_t B, int64_t b0, int64_t Bl, int64_t per) {
    float *d = malloc((size_t)(Bl * per) * sizeof(float));
    if (!d) return NULL;
    for (int64_t lb = 0; lb < Bl; lb++) {
        int64_t gb = b0 + lb < B ? b0 + lb : B - 1;
        memcpy(d + lb * per, src + gb * per, (size_t)per * sizeof(float));
    }
    return d;
}

static ltx2_status make_local(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_dit_forward_params *p,
                              int64_t b0, int64_t Bl, int64_t t0, int64_t Tl, local_inputs *l,
                              ltx2_dit_forward_params *lp) {
    const ltx2_dit_config *cfg = &w->cfg;
    const int64_t B = p->batch, Tv = p->video.T, Cv = cfg->in_channels, Ta = p->audio.T;
    const int64_t Ca = cfg->audio_in_channels, Sv = p->video.S, Sa = p->audio.S, L = cfg->num_layers;
    const int64_t Wv = cfg->caption_projection ? cfg->caption_channels : cfg->inner_dim;
    const int64_t Wa = cfg->caption_projection ? cfg->caption_channels : cfg->audio_inner_dim;
    const ltx2_dit_modality *pv = &p->video, *pa = &p->audio;
    if (!pv->latent || !pv->positions || !pv->timesteps || !pv->sigma || !pv->context || !pa->latent ||
        !pa->positions || !pa->timesteps || !pa->sigma || !pa->context || Tv <= 0 || Ta <= 0 || Sv <= 0 || Sa <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit parallel forward: incomplete inputs");
    l->v_lat = malloc((size_t)(Bl * Tl * Cv) * sizeof(float));
    l->v_pos = malloc((size_t)(Bl * 3 * Tl * 2) * sizeof(float));
    l->v_ts = malloc((size_t)(Bl * Tl) * sizeof(float));
    l->v_sig = rows_of(pv->sigma, B, b0, Bl, 1);
    l->v_ctx = rows_of(pv->context, B, b0, Bl, Sv * Wv);
    l->a_lat = rows_of(pa->latent, B, b0, Bl, Ta * Ca);
    l->a_pos = rows_of(pa->positions, B, b0, Bl, Ta * 2);
    l->a_ts = rows_of(pa->timesteps, B, b0, Bl, Ta);
    l->a_sig = rows_of(pa->sigma, B, b0, Bl, 1);
    l->a_ctx = rows_of(pa->context, B, b0, Bl, Sa * Wa);
    if (!l->v_lat || !l->v_pos || !l->v_ts || !l->v_sig || !l->v_ctx || !l->a_lat || !l->a_pos || !l->a_ts ||
        !l->a_sig || !l->a_ctx)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel forward: local inputs");
    for (int64_t lb = 0; lb < Bl; lb++) {
        const int64_t gb = b0 + lb < B ? b0 + lb : B - 1;
        for (int64_t t = 0; t < Tl; t++) {
            const int64_t g = t0 + t, gs = g < Tv ? g : Tv - 1;
            float *dl = l->v_lat + (lb * Tl + t) * Cv;
            if (g < Tv)
                memcpy(dl, pv->latent + (gb * Tv + g) * Cv, (size_t)Cv * sizeof(float));
            else
                memset(dl, 0, (size_t)Cv * sizeof(float));
            l->v_ts[lb * Tl + t] = pv->timesteps[gb * Tv + gs];
            for (int64_t ax = 0; ax < 3; ax++)
                memcpy(l->v_pos + ((lb * 3 + ax) * Tl + t) * 2, pv->positions + ((gb * 3 + ax) * Tv + gs) * 2,
                       2 * sizeof(float));
        }
    }
    if (pv->context_mask || pa->context_mask) {
        l->v_mask = malloc((size_t)(Bl * Sv));
        l->a_mask = malloc((size_t)(Bl * Sa));
        if (!l->v_mask || !l->a_mask) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel forward: masks");
        for (int64_t lb = 0; lb < Bl; lb++) {
            const int64_t gb = b0 + lb < B ? b0 + lb : B - 1;
            for (int64_t s = 0; s < Sv; s++) l->v_mask[lb * Sv + s] = pv->context_mask ? pv->context_mask[gb * Sv + s] : 1;
            for (int64_t s = 0; s < Sa; s++) l->a_mask[lb * Sa + s] = pa->context_mask ? pa->context_mask[gb * Sa + s] : 1;
        }
    }
    if (p->perturb) {
        l->perturb = malloc((size_t)(Bl * L) * sizeof(uint32_t));
        if (!l->perturb) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel forward: perturbations");
        for (int64_t lb = 0; lb < Bl; lb++) {
            const int64_t gb = b0 + lb < B ? b0 + lb : B - 1;
            memcpy(l->perturb + lb * L, p->perturb + gb * L, (size_t)L * sizeof(uint32_t));
        }
    }
    ltx2_dit_forward_params_init(lp);
    lp->batch = Bl;
    lp->av_timestep = p->av_timestep;
    lp->rope_ladder_f32 = p->rope_ladder_f32; /* RoPE tables come from the model's own prepare */
    lp->perturb = l->perturb;
    lp->video = (ltx2_dit_modality){l->v_lat, l->v_pos, l->v_ts, l->v_sig, l->v_ctx, l->v_mask, Tl, Sv};
    lp->audio = (ltx2_dit_modality){l->a_lat, l->a_pos, l->a_ts, l->a_sig, l->a_ctx, l->a_mask, Ta, Sa};
    return LTX2_OK;
}

ltx2_status ltx2_dit_parallel_forward(ltx2_context *ctx, ltx2_dit_parallel *dp, const ltx2_dit_forward_params *p,
                                      float *video_out, float *audio_out) {
    if (!dp || !p || !video_out || !audio_out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit parallel forward: NULL argument");
    memset(&dp->stats, 0, sizeof dp->stats);
    const ltx2_dit_config *cfg = &dp->full->cfg;
    const int64_t B = p->batch, Tv = p->video.T, Ta = p->audio.T;
    const int64_t Pb = dp->batch->size, Pc = dp->seq->size;
    const int64_t Co = cfg->out_channels, Cao = cfg->audio_out_channels;
    local_inputs l;
    memset(&l, 0, sizeof l);
    float *vl = NULL, *al = NULL, *g1 = NULL, *vb = NULL, *g2 = NULL;
    par_run pr = {dp, Tv, 0, 0, NULL};
    ltx2_status st = LTX2_OK;
    if (B <= 0 || Tv <= 0 || Ta <= 0)
        st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit parallel forward: batch %lld, Tv %lld, Ta %lld must be > 0",
                        (long long)B, (long long)Tv, (long long)Ta);
    else if (p->dump)
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "dit parallel forward: dump callbacks are not supported");
    else if (p->stg_blend_every_block)
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "dit parallel forward: MaxDiffusion's STG blend is not supported");
    const int64_t Bl = (B + Pb - 1) / Pb, Tl = (Tv + Pc - 1) / Pc, Tp = Tl * Pc;
    pr.Tl = Tl;
    pr.Tp = Tp;
    ltx2_dit_forward_params lp;
    if (st == LTX2_OK)
        st = make_local(ctx, dp->full, p, (int64_t)dp->batch->rank * Bl, Bl, (int64_t)dp->seq->rank * Tl, Tl, &l, &lp);
    if (st == LTX2_OK && Tp > Tv) {
        pr.key_mask = malloc((size_t)(Bl * Tp));
        if (!pr.key_mask) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel forward: key mask");
        for (int64_t i = 0; st == LTX2_OK && i < Bl * Tp; i++) pr.key_mask[i] = (i % Tp) < Tv;
    }
    if (st == LTX2_OK) {
        vl = malloc((size_t)(Bl * Tl * Co) * sizeof(float));
        al = malloc((size_t)(Bl * Ta * Cao) * sizeof(float));
        g1 = malloc((size_t)(Bl * Tp * Co) * sizeof(float));
        vb = malloc((size_t)(Bl * Tv * Co) * sizeof(float));
        const int64_t big = Bl * (Tv * Co > Ta * Cao ? Tv * Co : Ta * Cao);
        g2 = malloc((size_t)(Pb * big) * sizeof(float));
        if (!vl || !al || !g1 || !vb || !g2) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel forward: outputs");
    }
    if (st == LTX2_OK) st = dit_forward_blocks(ctx, dp->full, &lp, par_block_forward, &pr, vl, al);
    /* video: gather the token chunks over context, drop padding; then the batch chunks */
    if (st == LTX2_OK) st = c_all_gather(dp, ctx, dp->seq, vl, g1, (size_t)(Bl * Tl * Co));
    if (st == LTX2_OK) {
        float *tmp = malloc((size_t)(Bl * Tp * Co) * sizeof(float));
        if (!tmp) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel forward: gather buffer");
        else {
            unblock_seq(tmp, g1, Pc, Bl, Tl, Co);
            for (int64_t b = 0; b < Bl; b++)
                memcpy(vb + b * Tv * Co, tmp + b * Tp * Co, (size_t)(Tv * Co) * sizeof(float));
            free(tmp);
        }
    }
    if (st == LTX2_OK) st = c_all_gather(dp, ctx, dp->batch, vb, g2, (size_t)(Bl * Tv * Co));
    if (st == LTX2_OK) memcpy(video_out, g2, (size_t)(B * Tv * Co) * sizeof(float));
    /* audio is replicated over context: only the batch chunks move */
    if (st == LTX2_OK) st = c_all_gather(dp, ctx, dp->batch, al, g2, (size_t)(Bl * Ta * Cao));
    if (st == LTX2_OK) memcpy(audio_out, g2, (size_t)(B * Ta * Cao) * sizeof(float));
    if (st != LTX2_OK) {
        char reason[300];
        snprintf(reason, sizeof reason, "rank %d: %s", dp->world->rank, ltx2_last_error(ctx));
        ltx2_comm_abort(dp->world, reason);
    }
    local_inputs_free(&l);
    free(pr.key_mask);
    free(vl), free(al), free(g1), free(vb), free(g2);
    return st;
}
