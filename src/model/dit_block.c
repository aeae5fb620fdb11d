/* The attention module and the audio-video transformer block of the DiT (ltx-core transformer.py
 * BasicAVTransformerBlock.forward, attention.py Attention.forward) on the backend op table, once
 * for every backend and every parallel layout. Modulation values are table[j] + adaln[j], summed
 * in f32 once per block; the fused ops then compute x * (1 + scale) + shift and x + y * gate in
 * the reference's order of operations, so on the CPU backend this is the fp32 reference itself. With
 * fp8 Linears a modulation writes the fp8 input of each Linear it feeds (dit_act) instead of its
 * output being quantised once per Linear: the same bits, without those passes over it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dit_internal.h"

/* A block's modulation rows: table rows + AdaLN output, f32 [U, nrow * D], and each token's row. */
typedef struct mod_tab {
    ltx2_tensor t;
    int64_t D, nrow;
    const ltx2_tensor *rows; /* i32, one per token (or context token); NULL: every token row 0 */
    int64_t all_rows;        /* the token rows when rows is NULL */
    bool bf16;               /* --precision tpu and a bf16 table in MaxDiffusion (dit_tpu.c) */
} mod_tab;

static ltx2_mod_rows rule_of(const mod_tab *m) {
    ltx2_mod_rows rule = {.row_idx = m->rows, .rows_per_group = m->rows ? 0 : m->all_rows};
    return rule;
}

/* Row j as an f32 [U, D] view whose rows are nrow * D apart. */
static ltx2_tensor mod_row(const mod_tab *m, int64_t j) {
    ltx2_tensor v = m->t;
    v.data = (float *)m->t.data + j * m->D;
    v.ndim = 2;
    v.shape[1] = m->D;
    v.strides[0] = m->nrow * m->D;
    v.strides[1] = 1;
    return v;
}

/* rows [j0, j0 + nrow) of the weight table [*, D] plus ada [U, nrow * D] (the reference adds the
 * table first: table + adaln); bf16_table: MaxDiffusion keeps the table in bf16 (dit_tpu.c). */
static ltx2_status mod_make(dit_run *r, const ltx2_tensor *table, int64_t j0, int64_t nrow, const ltx2_tensor *ada,
                            const ltx2_tensor *rows, bool bf16_table, mod_tab *o) {
    const int64_t D = table->shape[1], U = ada->shape[0];
    ltx2_tensor tv = *table;
    tv.data = (char *)table->data + (size_t)(j0 * D) * ltx2_dtype_size(table->dtype);
    int64_t ts[2] = {1, nrow * D}, os[2] = {U, nrow * D};
    tv = ltx2_tensor_make(tv.data, table->dtype, 2, ts);
    tv.device = table->device;
    ltx2_tensor t32;
    LTX2_TRY(dit_f32(r, &tv, &t32));
    LTX2_TRY(dit_tensor(r, LTX2_F32, 2, os, &o->t));
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_ADD, &t32, ada, &o->t));
    o->D = D;
    o->nrow = nrow;
    o->rows = rows;
    o->bf16 = r->tpu && bf16_table;
    return o->bf16 ? dit_bf16(r, &o->t) : LTX2_OK;
}

/* y = norm(x) * (1 + row js) + row jsh of m (under --precision tpu with a bf16 table, 1 + scale
 * in bf16). */
static ltx2_status modulate(dit_run *r, const ltx2_tensor *x, ltx2_norm_kind norm, const mod_tab *m, int64_t js,
                            int64_t jsh, ltx2_tensor *y) {
    ltx2_tensor sc = mod_row(m, js), sh = mod_row(m, jsh);
    if (m->bf16) LTX2_TRY(dit_tpu_scale_shift(r, &sc, &sh));
    const ltx2_mod_rows rule = rule_of(m);
    const float eps = norm == LTX2_NORM_NONE ? 0.0f : r->w->cfg.norm_eps;
    return ltx2_backend_norm_modulate(r->be, r->ctx, x, norm, eps, &sc, &sh, &rule, y);
}

/* modulate() for the Linears in readers (absent ones skipped) into *out: under r->fp8_fuse, one
 * fp8 copy per distinct input scale of the fp8 readers, and y itself only when some reader is not
 * fp8 (y is then scratch). */
static ltx2_status modulate_for(dit_run *r, const ltx2_tensor *x, ltx2_norm_kind norm, const mod_tab *m, int64_t js,
                                int64_t jsh, ltx2_tensor *y, const ltx2_dit_linear *const *readers, int n_readers,
                                dit_act *out) {
    *out = dit_act_of(y);
    ltx2_fp8_outs q = {0};
    bool need_y = false;
    for (int i = 0; r->fp8_fuse && !m->bf16 && i < n_readers; i++) {
        const ltx2_dit_linear *L = readers[i];
        if (!ltx2_dit_linear_present(L)) continue;
        int k = 0;
        while (k < q.n && q.scale[k] != L->x_scale) k++;
        if (L->w.dtype != LTX2_F8_E4M3 || !(L->x_scale > 0.0f) || (k == q.n && q.n == LTX2_FP8_OUTS_MAX))
            need_y = true;
        else if (k == q.n)
            q.scale[q.n++] = L->x_scale;
    }
    if (q.n == 0) return modulate(r, x, norm, m, js, jsh, y);
    for (int k = 0; k < q.n; k++) {
        LTX2_TRY(dit_tensor(r, LTX2_F8_E4M3, y->ndim, y->shape, &out->q[k]));
        q.q[k] = &out->q[k];
        out->scale[k] = q.scale[k];
    }
    out->n = q.n;
    out->has_x = need_y;
    q.no_y = !need_y;
    const ltx2_tensor sc = mod_row(m, js), sh = mod_row(m, jsh);
    const ltx2_mod_rows rule = rule_of(m);
    const float eps = norm == LTX2_NORM_NONE ? 0.0f : r->w->cfg.norm_eps;
    return ltx2_backend_norm_modulate_fp8(r->be, r->ctx, x, norm, eps, &sc, &sh, &rule, y, &q);
}

/* ---- attention ---- */

typedef struct attn_io {
    const char *name;
    const dit_act *x, *c;                         /* [B, Tq, query_dim], [B, Tk, context_dim] */
    const ltx2_tensor *mask;                      /* [B, Tk] u8, or NULL */
    const ltx2_tensor *qcos, *qsin, *kcos, *ksin; /* NULL: no RoPE (text) */
    const uint8_t *skip; /* [B] self-attention samples whose output is the value projection (STG) */
    bool blend;          /* MaxDiffusion's STG blend for every sample */
    const dit_stream *text; /* text cross-attention: the stream whose cache binding applies */
    int64_t block;
    dit_attn_kind kind;
    ltx2_tensor *out;   /* [B, Tq, query_dim] */
} attn_io;

/* x in place: RMSNorm across every head (this rank's, or all ranks' through the hook). */
static ltx2_status qk_norm(dit_run *r, const ltx2_dit_attn_w *a, ltx2_tensor *x, const ltx2_tensor *w) {
    const float eps = r->w->cfg.norm_eps;
    if (r->hooks && r->hooks->qk_norm)
        return r->hooks->qk_norm(r->hooks->user, r->ctx, x, w, a->heads_total * a->head_dim, eps);
    return ltx2_backend_rms_norm(r->be, r->ctx, x, w, eps, x);
}

/* Broadcast add / mul so every backend rounds it the same way: o - v is o + (-1 * v) exactly. */
ltx2_status dit_stg_blend(dit_run *r, ltx2_tensor *o, const ltx2_tensor *v, const uint8_t *skip) {
    const int64_t B = o->shape[0];
    const float neg = -1.0f;
    float *mh = malloc((size_t)B * sizeof(float));
    if (!mh) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit STG blend: %lld samples", (long long)B);
    for (int64_t b = 0; b < B; b++) mh[b] = skip && skip[b] ? 0.0f : 1.0f;
    int64_t ms[3] = {B, 1, 1}, one = 1;
    ltx2_tensor m, n1, d, e;
    ltx2_status st = ltx2_bpool_upload_f32(r->ctx, r->pool, mh, r->dt, 3, ms, &m);
    free(mh);
    LTX2_TRY(st);
    LTX2_TRY(ltx2_bpool_upload_f32(r->ctx, r->pool, &neg, r->dt, 1, &one, &n1));
    LTX2_TRY(dit_tensor(r, r->dt, 3, o->shape, &d));
    LTX2_TRY(dit_tensor(r, r->dt, 3, o->shape, &e));
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_MUL, v, &n1, &d));
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_ADD, o, &d, &e));
    /* MaxDiffusion in bf16: its per-layer mask array is bf16 (transformer_ltx2.py, jnp.ones(..., dtype=
     * self.dtype)), so each of the three ops rounds (m * d is exact for m in {0, 1}) */
    if (r->tpu) LTX2_TRY(dit_bf16(r, &e));
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_MUL, &e, &m, &d));
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_ADD, v, &d, o));
    return r->tpu ? dit_bf16(r, o) : LTX2_OK;
}

/* Attention.forward. When every sample skips (STG on the whole batch) Q and K are never computed,
 * as in ltx-core (all_perturbed). */
static ltx2_status attn_forward(dit_run *r, const ltx2_dit_attn_w *a, const attn_io *io) {
    const ltx2_backend *be = r->be;
    ltx2_context *ctx = r->ctx;
    /* the text attention's context may be absent when its K/V are all cached (s->text_cached) */
    const int64_t B = io->x->x->shape[0], Tq = io->x->x->shape[1], Tk = io->text ? io->text->S : io->c->x->shape[1];
    const int64_t H = a->heads, d = a->head_dim, inner = H * d;
    char nm[160];
    snprintf(nm, sizeof nm, "%s.in", io->name);
    LTX2_TRY(dit_dump(r, nm, io->x->x));
    if (io->c && io->c->x != io->x->x) {
        snprintf(nm, sizeof nm, "%s.context", io->name);
        LTX2_TRY(dit_dump(r, nm, io->c->x));
    }
    int64_t sq[3] = {B, Tq, inner}, sk[3] = {B, Tk, inner};
    ltx2_tensor q, k, v, o;
    LTX2_TRY(dit_tensor(r, r->dt, 3, sk, &k));
    LTX2_TRY(dit_tensor(r, r->dt, 3, sk, &v));
    LTX2_TRY(dit_tensor(r, r->dt, 3, sq, &o));
    /* text cross-attention with a cache bound: K (normed) and V come from dit_text_kv */
    const bool cached = io->text && r->text_cache && io->text->text_entry;
    if (cached)
        LTX2_TRY(dit_text_kv(r, io->text, io->block, a, io->c ? io->c->x : NULL, &k, &v));
    else
        LTX2_TRY(dit_linear_act(r, &a->v, io->c, false, &v));
    int64_t n_skip = 0;
    for (int64_t b = 0; io->skip && b < B; b++) n_skip += io->skip[b] != 0;
    if (n_skip == B) {
        LTX2_TRY(be->copy(be, ctx, o.data, v.data, ltx2_tensor_nbytes(&o))); /* self-attention: Tq == Tk */
    } else {
        LTX2_TRY(dit_tensor(r, r->dt, 3, sq, &q));
        LTX2_TRY(dit_linear_act(r, &a->q, io->x, false, &q));
        if (!cached) LTX2_TRY(dit_linear_act(r, &a->k, io->c, false, &k));
        const bool seq = io->kind != DIT_ATTN_LOCAL && r->hooks && r->hooks->attend;
        const float scale = (float)(1.0 / sqrt((double)d));
        const bool fp8 = ltx2_dit_attention_fp8(r->attn_fp8, d);
        if (!cached && !seq && !(r->hooks && r->hooks->qk_norm)) {
            /* the fused op: QK RMSNorm and RoPE inside the attention kernel */
            ltx2_attn_args aa = {.heads = H, .scale = scale, .key_mask = io->mask, .q_norm = &a->q_norm,
                                 .k_norm = &a->k_norm, .norm_eps = r->w->cfg.norm_eps,
                                 .rope_type = r->w->cfg.rope_type, .q_cos = io->qcos, .q_sin = io->qsin,
                                 .k_cos = io->kcos, .k_sin = io->ksin, .probs_bf16 = r->tpu, .fp8 = fp8};
            LTX2_TRY(ltx2_backend_attention(be, ctx, &q, &k, &v, &aa, &o));
            if (r->tpu) LTX2_TRY(dit_bf16(r, &o)); /* P V's bf16 result */
        } else {
            LTX2_TRY(qk_norm(r, a, &q, &a->q_norm));
            if (!cached) LTX2_TRY(qk_norm(r, a, &k, &a->k_norm));
            if (io->qcos) {
                LTX2_TRY(ltx2_backend_rope(be, ctx, &q, r->w->cfg.rope_type, H, io->qcos, io->qsin, &q));
                LTX2_TRY(ltx2_backend_rope(be, ctx, &k, r->w->cfg.rope_type, H, io->kcos, io->ksin, &k));
            }
            if (seq) {
                LTX2_TRY(r->hooks->attend(r->hooks->user, ctx, io->kind, &q, &k, &v, H, &o));
            } else {
                ltx2_attn_args aa = {.heads = H, .scale = scale, .key_mask = io->mask, .fp8 = fp8};
                LTX2_TRY(ltx2_backend_attention(be, ctx, &q, &k, &v, &aa, &o));
            }
        }
        if (io->blend) {
            LTX2_TRY(dit_stg_blend(r, &o, &v, io->skip));
        } else {
            const size_t per = ltx2_tensor_nbytes(&o) / (size_t)B;
            for (int64_t b = 0; n_skip && b < B; b++)
                if (io->skip[b]) LTX2_TRY(be->copy(be, ctx, (char *)o.data + b * per, (char *)v.data + b * per, per));
        }
    }
    dit_act oa = dit_act_of(&o);
    if (ltx2_dit_linear_present(&a->gate)) {
        /* per-head gate 2 * sigmoid(x W_g + b_g) from the query-side input */
        int64_t sg[3] = {B, Tq, H};
        ltx2_tensor g;
        LTX2_TRY(dit_tensor(r, r->dt, 3, sg, &g));
        LTX2_TRY(dit_linear_act(r, &a->gate, io->x, false, &g));
        if (r->tpu) {
            LTX2_TRY(dit_tpu_head_gate(r, &o, &g, H));
        } else if (r->fp8_fuse && a->o.w.dtype == LTX2_F8_E4M3 && a->o.x_scale > 0.0f) {
            /* the gate writes the out-projection's fp8 input instead of the gated o (LTX-2.3) */
            LTX2_TRY(dit_tensor(r, LTX2_F8_E4M3, 3, sq, &oa.q[0]));
            ltx2_fp8_outs oq = {.n = 1, .scale = {a->o.x_scale}, .q = {&oa.q[0]}, .no_y = true};
            LTX2_TRY(ltx2_backend_head_gate_fp8(be, ctx, &o, &g, H, &oq));
            oa.n = 1, oa.scale[0] = a->o.x_scale, oa.has_x = false;
        } else {
            LTX2_TRY(ltx2_backend_head_gate(be, ctx, &o, &g, H));
        }
    }
    LTX2_TRY(dit_linear_out_act(r, &a->o, &oa, io->out));
    snprintf(nm, sizeof nm, "%s.out", io->name);
    return dit_dump(r, nm, io->out);
}

/* ---- the block ---- */

/* Per-stream block state: modulation tables and scratch. */
typedef struct blk_stream {
    dit_stream *s;
    const char *pre; /* "" or "audio_" */
    mod_tab ada, cross_ss, gate, prompt;
    ltx2_tensor tmp, y, ctx_mod;
    /* --precision tpu: the audio stream turned f32 by an update with an f32 operand (MaxDiffusion's
     * modality-masked A/V attention), so its later sums stay f32 until the block's bf16 carry */
    bool f32_stream;
} blk_stream;

static ltx2_status blk_stream_make(dit_run *r, const ltx2_dit_block_w *bw, bool audio, dit_stream *s,
                                   blk_stream *o) {
    const ltx2_dit_config *cfg = &r->w->cfg;
    memset(o, 0, sizeof *o);
    o->s = s;
    o->pre = audio ? "audio_" : "";
    const ltx2_tensor *sst = audio ? &bw->audio_sst : &bw->sst;
    const ltx2_tensor *xsst = audio ? &bw->sst_a2v_audio : &bw->sst_a2v_video;
    /* MaxDiffusion keeps only the video `scale_shift_table` in f32 (dit_tpu.c) */
    LTX2_TRY(mod_make(r, sst, 0, cfg->adaln_rows, &s->ada, &s->ada_rows, audio, &o->ada));
    LTX2_TRY(mod_make(r, xsst, 0, 4, &s->cross_ss, &s->cross_ss_rows, true, &o->cross_ss));
    LTX2_TRY(mod_make(r, xsst, 4, 1, &s->cross_gate, &s->cross_gate_rows, true, &o->gate));
    if (cfg->cross_attention_adaln) {
        const ltx2_tensor *psst = audio ? &bw->audio_prompt_sst : &bw->prompt_sst;
        LTX2_TRY(mod_make(r, psst, 0, 2, &s->prompt, &s->prompt_rows, true, &o->prompt));
        int64_t cs[3] = {s->B, s->S, s->D};
        LTX2_TRY(dit_tensor(r, r->dt, 3, cs, &o->ctx_mod));
    }
    int64_t xs[3] = {s->B, s->T, s->D};
    LTX2_TRY(dit_tensor(r, r->dt, 3, xs, &o->tmp));
    return dit_tensor(r, r->dt, 3, xs, &o->y);
}

/* x += y * gate (gate NULL: x += y); under --precision tpu with MaxDiffusion's roundings (the gate
 * from a bf16 table: gate_bf16; the audio stream is bf16). */
static ltx2_status gadd(dit_run *r, const blk_stream *bs, ltx2_tensor *x, const ltx2_tensor *y,
                        const ltx2_tensor *gate, const ltx2_mod_rows *rule, bool gate_bf16) {
    if (!r->tpu) return ltx2_backend_gated_add(r->be, r->ctx, x, y, gate, rule);
    return dit_tpu_gated_add(r, x, y, gate, rule, gate_bf16, bs->pre[0] != 0 && !bs->f32_stream);
}

/* x += y * gate over the samples not in skip (NULL = every sample). y_f32: under --precision tpu, y is
 * an f32 value in MaxDiffusion (its A/V attention output times the f32 modality mask), so the product
 * and the sum are f32 and the stream is f32 from here. */
static ltx2_status gated_add(dit_run *r, blk_stream *bs, const mod_tab *m, int64_t j, const uint8_t *skip,
                             bool y_f32) {
    const bool gate_bf16 = m->bf16 && !y_f32;
    if (y_f32) bs->f32_stream = true;
    dit_stream *s = bs->s;
    const ltx2_tensor gate = mod_row(m, j);
    bool any = false;
    for (int64_t b = 0; skip && b < s->B; b++) any = any || skip[b];
    const ltx2_mod_rows rule = rule_of(m);
    if (!any) return gadd(r, bs, &s->x, &bs->y, &gate, &rule, gate_bf16);
    for (int64_t b = 0; b < s->B; b++) {
        if (skip[b]) continue; /* the reference adds y * gate * 0 */
        ltx2_tensor xb = dit_sample(&s->x, b), yb = dit_sample(&bs->y, b);
        ltx2_tensor rb = *m->rows; /* i32 [B * T]: sample b's T rows */
        rb.data = (int32_t *)m->rows->data + b * s->T;
        rb.shape[0] = s->T;
        ltx2_mod_rows rule_b = {.row_idx = &rb, .rows_per_group = 0};
        LTX2_TRY(gadd(r, bs, &xb, &yb, &gate, &rule_b, gate_bf16));
    }
    return LTX2_OK;
}

/* Whether any sample skips `flag` in any block: MaxDiffusion's "STG is on" for the whole call. */
static bool stg_on(const dit_run *r, int64_t B, uint32_t flag) {
    const int64_t n = B * r->w->cfg.num_layers;
    for (int64_t j = 0; r->perturb && j < n; j++)
        if (r->perturb[j] & flag) return true;
    return false;
}

/* Self-attention + text cross-attention of one stream (steps 1-2 of the block). */
static ltx2_status stream_attn(dit_run *r, int64_t bi, const char *blk, blk_stream *bs, const ltx2_dit_attn_w *a1,
                               const ltx2_dit_attn_w *a2, dit_attn_kind self_kind, const uint8_t *skip_self,
                               uint32_t skip_flag) {
    const ltx2_dit_config *cfg = &r->w->cfg;
    dit_stream *s = bs->s;
    const float eps = cfg->norm_eps;
    char n1[128], n2[128];
    snprintf(n1, sizeof n1, "%s.%sattn1", blk, bs->pre);
    snprintf(n2, sizeof n2, "%s.%sattn2", blk, bs->pre);
    ltx2_mod_rows rule = rule_of(&bs->ada);
    const ltx2_dit_linear *self_readers[] = {&a1->q, &a1->k, &a1->v, &a1->gate};
    dit_act xa;
    LTX2_TRY(modulate_for(r, &s->x, LTX2_NORM_RMS, &bs->ada, 1, 0, &bs->tmp, self_readers, 4, &xa));
    attn_io io = {.name = n1, .x = &xa, .c = &xa, .qcos = &s->pe_cos, .qsin = &s->pe_sin,
                  .kcos = &s->pe_cos, .ksin = &s->pe_sin, .skip = skip_self,
                  .blend = r->stg_blend_every_block && stg_on(r, s->B, skip_flag), .block = bi, .kind = self_kind,
                  .out = &bs->y};
    LTX2_TRY(attn_forward(r, a1, &io));
    LTX2_TRY(gated_add(r, bs, &bs->ada, 2, NULL, false));

    /* the context's K/V projections go through the text cache, which reads a plain tensor */
    dit_act ca = dit_act_of(&s->context);
    xa = dit_act_of(&bs->tmp);
    attn_io io2 = {.name = n2, .x = &xa, .c = s->text_cached ? NULL : &ca, .mask = s->mask.data ? &s->mask : NULL,
                   .text = s, .block = bi, .kind = DIT_ATTN_LOCAL, .out = &bs->y};
    if (!cfg->cross_attention_adaln) {
        if (s->ident_mod.data) {
            const mod_tab id = {.t = s->ident_mod, .D = s->D, .nrow = 2, .all_rows = s->B * s->T};
            const ltx2_dit_linear *q_only[] = {&a2->q};
            LTX2_TRY(modulate_for(r, &s->x, LTX2_NORM_RMS, &id, 0, 1, &bs->tmp, q_only, 1, &xa));
        } else {
            LTX2_TRY(ltx2_backend_rms_norm(r->be, r->ctx, &s->x, NULL, eps, &bs->tmp));
        }
        LTX2_TRY(attn_forward(r, a2, &io2));
        return gadd(r, bs, &s->x, &bs->y, NULL, &rule, false);
    }
    const ltx2_dit_linear *q_readers[] = {&a2->q, &a2->gate};
    LTX2_TRY(modulate_for(r, &s->x, LTX2_NORM_RMS, &bs->ada, 7, 6, &bs->tmp, q_readers, 2, &xa));
    /* prompt AdaLN of the context: row 0 shift, row 1 scale (only the K/V projections read it) */
    if (!s->text_cached) {
        LTX2_TRY(modulate(r, &s->context, LTX2_NORM_NONE, &bs->prompt, 1, 0, &bs->ctx_mod));
        ca = dit_act_of(&bs->ctx_mod);
    }
    LTX2_TRY(attn_forward(r, a2, &io2));
    return gated_add(r, bs, &bs->ada, 8, NULL, false);
}

static ltx2_status stream_ff(dit_run *r, const char *blk, const char *name, blk_stream *bs, const ltx2_dit_ff_w *f) {
    dit_stream *s = bs->s;
    const ltx2_dit_linear *readers[] = {&f->proj_in};
    dit_act xa;
    LTX2_TRY(modulate_for(r, &s->x, LTX2_NORM_RMS, &bs->ada, 4, 3, &bs->tmp, readers, 1, &xa));
    char nm[128];
    snprintf(nm, sizeof nm, "%s.%s.in", blk, name);
    LTX2_TRY(dit_dump(r, nm, &bs->tmp)); /* dumps turn r->fp8_fuse off: tmp holds the value */
    int64_t hs[3] = {s->B, s->T, f->proj_in.out};
    ltx2_tensor h;
    LTX2_TRY(dit_tensor(r, r->dt, 3, hs, &h));
    LTX2_TRY(dit_linear_act(r, &f->proj_in, &xa, true, &h));
    LTX2_TRY(dit_linear_out(r, &f->proj_out, &h, &bs->y));
    snprintf(nm, sizeof nm, "%s.%s.out", blk, name);
    LTX2_TRY(dit_dump(r, nm, &bs->y));
    return gated_add(r, bs, &bs->ada, 5, NULL, false);
}

/* The audio <-> video exchange: all four modulated inputs come from x before either direction
 * updates it (the reference's normalised snapshot). a2v: Q video (rows 0 scale, 1 shift), K/V audio
 * (rows 0, 1); v2a: Q audio (rows 2, 3), K/V video (rows 2, 3); gate row 4. A direction every sample
 * skips (modality isolation) is not run at all. */
static ltx2_status av_exchange(dit_run *r, int64_t i, const char *blk, const ltx2_dit_block_w *bw, blk_stream *bv,
                               blk_stream *ba, const uint8_t *skip_a2v, int64_t n_a2v, const uint8_t *skip_v2a,
                               int64_t n_v2a) {
    dit_stream *v = bv->s, *a = ba->s;
    const int64_t B = v->B;
    /* MaxDiffusion's CFG + STG mode multiplies both directions' outputs by its f32 modality mask
     * (the isolated pass's 0) in every block: under --precision tpu the updates are then f32 */
    const bool md_masked = r->tpu && r->stg_blend_every_block &&
                           stg_on(r, B, LTX2_DIT_SKIP_A2V_CROSS_ATTN | LTX2_DIT_SKIP_V2A_CROSS_ATTN);
    ltx2_tensor vq, vkv, aq, akv;
    dit_act vqa, vkva, aqa, akva;
    int64_t sv[3] = {B, v->T, v->D}, sa[3] = {B, a->T, a->D};
    char nm[128];
    const ltx2_dit_linear *a2v_q[] = {&bw->a2v.q, &bw->a2v.gate}, *a2v_kv[] = {&bw->a2v.k, &bw->a2v.v};
    const ltx2_dit_linear *v2a_q[] = {&bw->v2a.q, &bw->v2a.gate}, *v2a_kv[] = {&bw->v2a.k, &bw->v2a.v};
    if (n_a2v < B) {
        LTX2_TRY(dit_tensor(r, r->dt, 3, sv, &vq));
        LTX2_TRY(modulate_for(r, &v->x, LTX2_NORM_RMS, &bv->cross_ss, 0, 1, &vq, a2v_q, 2, &vqa));
        LTX2_TRY(dit_tensor(r, r->dt, 3, sa, &akv));
        LTX2_TRY(modulate_for(r, &a->x, LTX2_NORM_RMS, &ba->cross_ss, 0, 1, &akv, a2v_kv, 2, &akva));
    }
    if (n_v2a < B) {
        LTX2_TRY(dit_tensor(r, r->dt, 3, sa, &aq));
        LTX2_TRY(modulate_for(r, &a->x, LTX2_NORM_RMS, &ba->cross_ss, 2, 3, &aq, v2a_q, 2, &aqa));
        LTX2_TRY(dit_tensor(r, r->dt, 3, sv, &vkv));
        LTX2_TRY(modulate_for(r, &v->x, LTX2_NORM_RMS, &bv->cross_ss, 2, 3, &vkv, v2a_kv, 2, &vkva));
    }
    if (n_a2v < B) {
        snprintf(nm, sizeof nm, "%s.audio_to_video_attn", blk);
        attn_io io = {.name = nm, .x = &vqa, .c = &akva, .qcos = &v->xpe_cos, .qsin = &v->xpe_sin,
                      .kcos = &a->xpe_cos, .ksin = &a->xpe_sin, .block = i, .kind = DIT_ATTN_LOCAL, .out = &bv->y};
        LTX2_TRY(attn_forward(r, &bw->a2v, &io));
        LTX2_TRY(gated_add(r, bv, &bv->gate, 0, skip_a2v, md_masked));
    }
    if (n_v2a < B) {
        snprintf(nm, sizeof nm, "%s.video_to_audio_attn", blk);
        attn_io io = {.name = nm, .x = &aqa, .c = &vkva, .qcos = &a->xpe_cos, .qsin = &a->xpe_sin,
                      .kcos = &v->xpe_cos, .ksin = &v->xpe_sin, .block = i, .kind = DIT_ATTN_SEQ_KV, .out = &ba->y};
        LTX2_TRY(attn_forward(r, &bw->v2a, &io));
        LTX2_TRY(gated_add(r, ba, &ba->gate, 0, skip_v2a, md_masked));
    }
    return LTX2_OK;
}

static ltx2_status block_run(dit_run *r, int64_t i, const ltx2_dit_block_w *bw, dit_stream *v, dit_stream *a,
                             uint8_t *skips) {
    const int64_t B = v->B;
    char blk[64], nm[128];
    snprintf(blk, sizeof blk, "transformer_blocks.%lld", (long long)i);
    uint8_t *skip_v = skips, *skip_a = skips + B, *skip_a2v = skips + 2 * B, *skip_v2a = skips + 3 * B;
    const int64_t n_v = dit_perturbed(r, i, B, LTX2_DIT_SKIP_VIDEO_SELF_ATTN, skip_v);
    const int64_t n_a = dit_perturbed(r, i, B, LTX2_DIT_SKIP_AUDIO_SELF_ATTN, skip_a);
    const int64_t n_a2v = dit_perturbed(r, i, B, LTX2_DIT_SKIP_A2V_CROSS_ATTN, skip_a2v);
    const int64_t n_v2a = dit_perturbed(r, i, B, LTX2_DIT_SKIP_V2A_CROSS_ATTN, skip_v2a);
    blk_stream bv, ba;
    LTX2_TRY(blk_stream_make(r, bw, false, v, &bv));
    LTX2_TRY(blk_stream_make(r, bw, true, a, &ba));
    LTX2_TRY(stream_attn(r, i, blk, &bv, &bw->attn1, &bw->attn2, DIT_ATTN_SEQ_SELF, n_v ? skip_v : NULL,
                         LTX2_DIT_SKIP_VIDEO_SELF_ATTN));
    LTX2_TRY(stream_attn(r, i, blk, &ba, &bw->audio_attn1, &bw->audio_attn2, DIT_ATTN_LOCAL, n_a ? skip_a : NULL,
                         LTX2_DIT_SKIP_AUDIO_SELF_ATTN));
    LTX2_TRY(av_exchange(r, i, blk, bw, &bv, &ba, n_a2v ? skip_a2v : NULL, n_a2v, n_v2a ? skip_v2a : NULL, n_v2a));
    LTX2_TRY(stream_ff(r, blk, "ff", &bv, &bw->ff));
    LTX2_TRY(stream_ff(r, blk, "audio_ff", &ba, &bw->audio_ff));
    if (r->tpu) { /* MaxDiffusion's scan carry is bf16 */
        LTX2_TRY(dit_bf16(r, &v->x));
        LTX2_TRY(dit_bf16(r, &a->x));
    }
    snprintf(nm, sizeof nm, "%s.out.video", blk);
    LTX2_TRY(dit_dump(r, nm, &v->x));
    snprintf(nm, sizeof nm, "%s.out.audio", blk);
    return dit_dump(r, nm, &a->x);
}

ltx2_status dit_block_forward(dit_run *r, int64_t i, const ltx2_dit_block_w *bw, dit_stream *v, dit_stream *a) {
    uint8_t *skips = malloc((size_t)(4 * v->B)); /* per-sample perturbation masks */
    if (!skips) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit block %lld: masks", (long long)i);
    const size_t mark = ltx2_bpool_mark(r->pool);
    ltx2_status st = block_run(r, i, bw, v, a, skips);
    ltx2_bpool_release(r->pool, mark);
    free(skips);
    return st;
}
