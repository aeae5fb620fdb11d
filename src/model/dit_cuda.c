/* The transformer block on a device backend (see dit_cuda.h): dit_block_forward's steps mapped
 * onto backend ops, with the fused ones where they exist: RMSNorm + AdaLN modulate in one pass,
 * the gated residual add in one pass, bias / GELU-tanh / residual as GEMM epilogues. */
#include "model/dit_cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "cpu/cpu_attention.h"

/* Device buffers one block call allocates (weights, tables, activations), freed together. */
#define DEV_MAX_BUFS 320

typedef struct dev_run {
    ltx2_context *ctx;
    const ltx2_backend *be;
    const ltx2_dit_config *cfg;
    void *bufs[DEV_MAX_BUFS];
    int nbufs;
} dev_run;

static ltx2_status dev_alloc(dev_run *d, ltx2_dtype dt, int ndim, const int64_t *shape, ltx2_tensor *out) {
    if (d->nbufs >= DEV_MAX_BUFS)
        return LTX2_ERROR(d->ctx, LTX2_ERR_OOM, "dit device block: more than %d device buffers", DEV_MAX_BUFS);
    ltx2_tensor t = ltx2_tensor_make(NULL, dt, ndim, shape);
    void *p = NULL;
    LTX2_TRY(d->be->alloc(d->be, d->ctx, ltx2_tensor_nbytes(&t), &p));
    d->bufs[d->nbufs++] = p;
    t.data = p;
    t.device = d->be->device;
    *out = t;
    return LTX2_OK;
}

/* Host f32 -> a new device tensor of dtype dt (f32, bf16 or i32 from int64 rows). */
static ltx2_status dev_upload(dev_run *d, const float *host, ltx2_dtype dt, int ndim, const int64_t *shape,
                              ltx2_tensor *out) {
    LTX2_TRY(dev_alloc(d, dt, ndim, shape, out));
    const int64_t n = ltx2_tensor_numel(out);
    if (dt == LTX2_F32) return d->be->upload(d->be, d->ctx, out->data, host, (size_t)n * sizeof(float));
    void *tmp = malloc((size_t)(n ? n : 1) * ltx2_dtype_size(dt));
    if (!tmp) return LTX2_ERROR(d->ctx, LTX2_ERR_OOM, "dit device block: staging %lld elements", (long long)n);
    ltx2_status st = ltx2_convert(d->ctx, tmp, dt, host, LTX2_F32, (size_t)n);
    if (st == LTX2_OK) st = d->be->upload(d->be, d->ctx, out->data, tmp, ltx2_tensor_nbytes(out));
    free(tmp);
    return st;
}

static ltx2_status dev_upload_rows(dev_run *d, const int64_t *rows, int64_t n, ltx2_tensor *out) {
    LTX2_TRY(dev_alloc(d, LTX2_I32, 1, &n, out));
    int32_t *tmp = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!tmp) return LTX2_ERROR(d->ctx, LTX2_ERR_OOM, "dit device block: row map");
    for (int64_t i = 0; i < n; i++) tmp[i] = (int32_t)rows[i];
    ltx2_status st = d->be->upload(d->be, d->ctx, out->data, tmp, (size_t)n * sizeof(int32_t));
    free(tmp);
    return st;
}

static ltx2_tensor tview(void *data, ltx2_dtype dt, ltx2_device dev, int ndim, const int64_t *shape) {
    ltx2_tensor t = ltx2_tensor_make(data, dt, ndim, shape);
    t.device = dev;
    return t;
}

/* ---- weights ---- */

typedef struct dev_linear {
    ltx2_tensor w, b;
    bool present;
} dev_linear;

typedef struct dev_attn {
    dev_linear q, k, v, o, gate;
    ltx2_tensor q_norm, k_norm;
    const ltx2_dit_attn_w *h; /* host weights: shapes */
} dev_attn;

static ltx2_status up_linear(dev_run *d, const ltx2_dit_linear *L, dev_linear *o) {
    memset(o, 0, sizeof *o);
    if (!L->w) return LTX2_OK;
    int64_t ws[2] = {L->out, L->in};
    LTX2_TRY(dev_upload(d, L->w, LTX2_BF16, 2, ws, &o->w));
    if (L->b) LTX2_TRY(dev_upload(d, L->b, LTX2_BF16, 1, &L->out, &o->b));
    o->present = true;
    return LTX2_OK;
}

static ltx2_status up_attn(dev_run *d, const ltx2_dit_attn_w *a, dev_attn *o) {
    memset(o, 0, sizeof *o);
    o->h = a;
    LTX2_TRY(up_linear(d, &a->q, &o->q));
    LTX2_TRY(up_linear(d, &a->k, &o->k));
    LTX2_TRY(up_linear(d, &a->v, &o->v));
    LTX2_TRY(up_linear(d, &a->o, &o->o));
    LTX2_TRY(up_linear(d, &a->gate, &o->gate));
    const int64_t inner = a->heads * a->head_dim;
    LTX2_TRY(dev_upload(d, a->q_norm, LTX2_BF16, 1, &inner, &o->q_norm));
    return dev_upload(d, a->k_norm, LTX2_BF16, 1, &inner, &o->k_norm);
}

/* y [rows, L.out] = x [rows, L.in] W^T + b (then GELU, or + residual) */
static ltx2_status linear(dev_run *d, const dev_linear *L, const ltx2_tensor *x, bool gelu,
                          const ltx2_tensor *residual, ltx2_tensor *y) {
    ltx2_gemm_ex_args ga = {.w_layout = LTX2_B_NK, .bias = L->b.data ? &L->b : NULL, .gelu = gelu,
                            .residual = residual, .x_scale = 1.0f, .w_scale = 1.0f};
    return ltx2_backend_gemm_ex(d->be, d->ctx, x, &L->w, &ga, y);
}

/* ---- modulation tables ---- */

/* table[rows, D] + mod[U, rows*D] summed on the host: one f32 [U, nrow*D] device table holding
 * rows j0 .. j0+nrow-1; views pick a row j. */
typedef struct mod_table {
    ltx2_tensor t;
    int64_t D, nrow;
    ltx2_mod_rows rule;
    ltx2_tensor row_idx;
} mod_table;

static int64_t rows_used(const int64_t *row_tok, int64_t n, int64_t fallback) {
    if (!row_tok) return fallback;
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++) u = row_tok[i] + 1 > u ? row_tok[i] + 1 : u;
    return u;
}

static ltx2_status mod_table_make(dev_run *d, const float *table, int64_t j0, int64_t nrow, const float *mod,
                                  int64_t W, const int64_t *row_tok, int64_t B, int64_t T, int64_t D, mod_table *o) {
    const int64_t U = rows_used(row_tok, B * T, B);
    float *h = malloc((size_t)(U * nrow * D) * sizeof(float));
    if (!h) return LTX2_ERROR(d->ctx, LTX2_ERR_OOM, "dit device block: AdaLN table");
    for (int64_t u = 0; u < U; u++)
        for (int64_t j = 0; j < nrow; j++)
            for (int64_t c = 0; c < D; c++)
                h[(u * nrow + j) * D + c] = table[(j0 + j) * D + c] + mod[u * W + (j0 + j) * D + c];
    int64_t sh[2] = {U, nrow * D};
    ltx2_status st = dev_upload(d, h, LTX2_F32, 2, sh, &o->t);
    free(h);
    LTX2_TRY(st);
    o->D = D;
    o->nrow = nrow;
    memset(&o->rule, 0, sizeof o->rule);
    if (row_tok) {
        LTX2_TRY(dev_upload_rows(d, row_tok, B * T, &o->row_idx));
        o->rule.row_idx = &o->row_idx;
    } else {
        o->rule.rows_per_group = T;
    }
    return LTX2_OK;
}

/* View of row j (relative to j0) as f32 [U, D] with rows nrow*D apart. */
static ltx2_tensor mod_row(const mod_table *m, int64_t j) {
    ltx2_tensor v = m->t;
    v.data = (float *)m->t.data + j * m->D;
    v.shape[1] = m->D;
    v.strides[0] = m->nrow * m->D;
    v.strides[1] = 1;
    return v;
}

/* ---- attention ---- */

typedef struct attn_io {
    const ltx2_tensor *x, *c; /* [B, Tq, qdim], [B, Tk, cdim] */
    const ltx2_tensor *mask;  /* [B, Tk] u8 or NULL */
    const ltx2_tensor *qcos, *qsin, *kcos, *ksin; /* NULL: no RoPE */
    const uint8_t *skip;      /* [B] self-attention STG, or NULL */
    const ltx2_tensor *residual; /* add the output onto this (in place) instead of writing out */
    ltx2_tensor *out;
} attn_io;

/* SDPA core on the host in fp32 for head dims the device kernel does not have. */
static ltx2_status sdpa_host(dev_run *d, const ltx2_tensor *q, const ltx2_tensor *k, const ltx2_tensor *v,
                             const ltx2_tensor *mask_host, int64_t H, int64_t hd, ltx2_tensor *o) {
    const int64_t B = q->shape[0], Tq = q->shape[1], Tk = k->shape[1], inner = q->shape[2];
    const size_t nq = (size_t)(B * Tq * inner), nk = (size_t)(B * Tk * inner);
    float *buf = malloc((2 * nq + 2 * nk) * sizeof(float));
    uint16_t *raw = malloc((nq > nk ? nq : nk) * sizeof(uint16_t));
    ltx2_status st = LTX2_OK;
    if (!buf || !raw) {
        st = LTX2_ERROR(d->ctx, LTX2_ERR_OOM, "dit device block: host attention buffers");
        goto done;
    }
    float *hq = buf, *hk = hq + nq, *hv = hk + nk, *ho = hv + nk;
    const ltx2_tensor *src[3] = {q, k, v};
    float *dst[3] = {hq, hk, hv};
    size_t cnt[3] = {nq, nk, nk};
    for (int i = 0; i < 3; i++) {
        if ((st = d->be->download(d->be, d->ctx, raw, src[i]->data, cnt[i] * 2)) != LTX2_OK) goto done;
        if ((st = ltx2_convert(d->ctx, dst[i], LTX2_F32, raw, LTX2_BF16, cnt[i])) != LTX2_OK) goto done;
    }
    st = ltx2_cpu_attention(d->ctx, hq, hk, hv, ho, B, Tq, Tk, H, hd, mask_host ? mask_host->data : NULL,
                            (float)(1.0 / sqrt((double)hd)));
    if (st == LTX2_OK) st = ltx2_convert(d->ctx, raw, LTX2_BF16, ho, LTX2_F32, nq);
    if (st == LTX2_OK) st = d->be->upload(d->be, d->ctx, o->data, raw, nq * 2);
done:
    free(buf);
    free(raw);
    return st;
}

static ltx2_status attn_dev(dev_run *d, const dev_attn *aw, const attn_io *io, const ltx2_tensor *mask_host) {
    const ltx2_dit_attn_w *h = aw->h;
    const int64_t B = io->x->shape[0], Tq = io->x->shape[1], Tk = io->c->shape[1];
    const int64_t H = h->heads, hd = h->head_dim, inner = H * hd;
    const ltx2_device dev = d->be->device;
    int64_t sq[3] = {B, Tq, inner}, sk[3] = {B, Tk, inner}, sg[3] = {B, Tq, H};
    ltx2_tensor q, k, v, o, g;
    LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, sk, &v));
    LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, sq, &o));
    LTX2_TRY(linear(d, &aw->v, io->c, false, NULL, &v));
    int64_t n_skip = 0;
    for (int64_t b = 0; io->skip && b < B; b++) n_skip += io->skip[b] != 0;
    const size_t tok_bytes = (size_t)(Tq * inner) * 2;
    if (n_skip == B) {
        LTX2_TRY(d->be->copy(d->be, d->ctx, o.data, v.data, (size_t)B * tok_bytes)); /* self-attention: Tq == Tk */
    } else {
        LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, sq, &q));
        LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, sk, &k));
        LTX2_TRY(linear(d, &aw->q, io->x, false, NULL, &q));
        LTX2_TRY(linear(d, &aw->k, io->c, false, NULL, &k));
        if (hd == 64 || hd == 128) {
            ltx2_attn_args aa = {.heads = H, .scale = (float)(1.0 / sqrt((double)hd)), .key_mask = io->mask,
                                 .q_norm = &aw->q_norm, .k_norm = &aw->k_norm, .norm_eps = d->cfg->norm_eps,
                                 .rope_type = d->cfg->rope_type, .q_cos = io->qcos, .q_sin = io->qsin,
                                 .k_cos = io->kcos, .k_sin = io->ksin};
            LTX2_TRY(ltx2_backend_attention(d->be, d->ctx, &q, &k, &v, &aa, &o));
        } else {
            LTX2_TRY(ltx2_backend_rms_norm(d->be, d->ctx, &q, &aw->q_norm, d->cfg->norm_eps, &q));
            LTX2_TRY(ltx2_backend_rms_norm(d->be, d->ctx, &k, &aw->k_norm, d->cfg->norm_eps, &k));
            if (io->qcos) {
                LTX2_TRY(ltx2_backend_rope(d->be, d->ctx, &q, d->cfg->rope_type, H, io->qcos, io->qsin, &q));
                LTX2_TRY(ltx2_backend_rope(d->be, d->ctx, &k, d->cfg->rope_type, H, io->kcos, io->ksin, &k));
            }
            LTX2_TRY(sdpa_host(d, &q, &k, &v, mask_host, H, hd, &o));
        }
        for (int64_t b = 0; n_skip && b < B; b++)
            if (io->skip[b])
                LTX2_TRY(d->be->copy(d->be, d->ctx, (char *)o.data + b * tok_bytes, (char *)v.data + b * tok_bytes,
                                     tok_bytes));
    }
    if (aw->gate.present) {
        LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, sg, &g));
        LTX2_TRY(linear(d, &aw->gate, io->x, false, NULL, &g));
        LTX2_TRY(ltx2_backend_head_gate(d->be, d->ctx, &o, &g, H));
    }
    (void)dev;
    return linear(d, &aw->o, &o, false, io->residual, io->out);
}

/* ---- the block ---- */

/* Per-stream device state. */
typedef struct dev_stream {
    dit_stream *s;
    ltx2_tensor x, ctx, mask, mask_host, pe_cos, pe_sin, xpe_cos, xpe_sin;
    ltx2_tensor tmp, y, big;
    mod_table ada, prompt, cross_ss, cross_gate;
    bool has_mask;
} dev_stream;

static ltx2_status stream_up(dev_run *d, dit_stream *s, const ltx2_dit_block_w *bw, bool audio, int64_t heads,
                             int64_t xheads, int64_t Dx, int64_t ffn, dev_stream *o) {
    const ltx2_dit_config *cfg = d->cfg;
    const int64_t B = s->B, T = s->T, D = s->D, S = s->S;
    const bool split = cfg->rope_type == LTX2_ROPE_SPLIT;
    memset(o, 0, sizeof *o);
    o->s = s;
    int64_t sx[3] = {B, T, D}, sc[3] = {B, S, D}, sm[2] = {B, S}, sh[3] = {B, T, ffn};
    LTX2_TRY(dev_upload(d, s->x, LTX2_BF16, 3, sx, &o->x));
    LTX2_TRY(dev_upload(d, s->context, LTX2_BF16, 3, sc, &o->ctx));
    LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, sx, &o->tmp));
    LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, sx, &o->y));
    LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, sh, &o->big));
    if (s->ctx_mask) {
        LTX2_TRY(dev_alloc(d, LTX2_U8, 2, sm, &o->mask));
        LTX2_TRY(d->be->upload(d->be, d->ctx, o->mask.data, s->ctx_mask, (size_t)(B * S)));
        o->mask_host = ltx2_tensor_make((void *)s->ctx_mask, LTX2_U8, 2, sm);
        o->has_mask = true;
    }
    const int64_t hd = D / heads, xhd = Dx / xheads;
    int64_t ps[4] = {B, heads, T, hd / 2}, pi[3] = {B, T, D}, xs[4] = {B, xheads, T, xhd / 2}, xi[3] = {B, T, Dx};
    LTX2_TRY(dev_upload(d, s->pe_cos, LTX2_F32, split ? 4 : 3, split ? ps : pi, &o->pe_cos));
    LTX2_TRY(dev_upload(d, s->pe_sin, LTX2_F32, split ? 4 : 3, split ? ps : pi, &o->pe_sin));
    LTX2_TRY(dev_upload(d, s->xpe_cos, LTX2_F32, split ? 4 : 3, split ? xs : xi, &o->xpe_cos));
    LTX2_TRY(dev_upload(d, s->xpe_sin, LTX2_F32, split ? 4 : 3, split ? xs : xi, &o->xpe_sin));
    const float *sst = audio ? bw->audio_sst : bw->sst;
    LTX2_TRY(mod_table_make(d, sst, 0, cfg->adaln_rows, s->mod, cfg->adaln_rows * D, s->row_mod, B, T, D, &o->ada));
    const float *xsst = audio ? bw->sst_a2v_audio : bw->sst_a2v_video;
    LTX2_TRY(mod_table_make(d, xsst, 0, 4, s->cross_ss, 4 * D, s->row_cross_ss, B, T, D, &o->cross_ss));
    LTX2_TRY(mod_table_make(d, xsst + 4 * D, 0, 1, s->cross_gate, D, s->row_cross_gate, B, T, D, &o->cross_gate));
    if (cfg->cross_attention_adaln) {
        /* prompt rows per sample over the S context tokens: row 0 shift, row 1 scale */
        const float *psst = audio ? bw->audio_prompt_sst : bw->prompt_sst;
        LTX2_TRY(mod_table_make(d, psst, 0, 2, s->prompt_mod, 2 * D, NULL, B, S, D, &o->prompt));
    }
    return LTX2_OK;
}

/* x += y * gate over the samples not in skip (NULL = all). */
static ltx2_status gated_add_samples(dev_run *d, dev_stream *ds, const ltx2_tensor *y, const mod_table *m, int64_t j,
                                     const uint8_t *skip) {
    const int64_t B = ds->s->B, T = ds->s->T, D = ds->s->D;
    ltx2_tensor gate = mod_row(m, j);
    bool any = false;
    for (int64_t b = 0; skip && b < B; b++) any = any || skip[b];
    if (!any) return ltx2_backend_gated_add(d->be, d->ctx, &ds->x, y, &gate, &m->rule);
    const ltx2_device dev = d->be->device;
    int64_t s1[3] = {1, T, D};
    for (int64_t b = 0; b < B; b++) {
        if (skip[b]) continue;
        ltx2_tensor xb = tview((uint16_t *)ds->x.data + b * T * D, LTX2_BF16, dev, 3, s1);
        ltx2_tensor yb = tview((uint16_t *)y->data + b * T * D, LTX2_BF16, dev, 3, s1);
        ltx2_tensor gb = gate, rb;
        ltx2_mod_rows rule = m->rule;
        if (rule.row_idx) {
            rb = tview((int32_t *)rule.row_idx->data + b * T, LTX2_I32, dev, 1, &T);
            rule.row_idx = &rb;
        } else {
            gb.data = (float *)gate.data + b * gate.strides[0];
            gb.shape[0] = 1;
        }
        LTX2_TRY(ltx2_backend_gated_add(d->be, d->ctx, &xb, &yb, &gb, &rule));
    }
    return LTX2_OK;
}

static ltx2_status stream_attn(dev_run *d, dev_stream *ds, const dev_attn *a1, const dev_attn *a2,
                               const uint8_t *skip_self) {
    const ltx2_dit_config *cfg = d->cfg;
    dit_stream *s = ds->s;
    ltx2_tensor sc = mod_row(&ds->ada, 1), sh = mod_row(&ds->ada, 0);
    LTX2_TRY(ltx2_backend_norm_modulate(d->be, d->ctx, &ds->x, LTX2_NORM_RMS, cfg->norm_eps, &sc, &sh, &ds->ada.rule,
                                        &ds->tmp));
    attn_io io = {.x = &ds->tmp, .c = &ds->tmp, .qcos = &ds->pe_cos, .qsin = &ds->pe_sin, .kcos = &ds->pe_cos,
                  .ksin = &ds->pe_sin, .skip = skip_self, .out = &ds->y};
    LTX2_TRY(attn_dev(d, a1, &io, NULL));
    LTX2_TRY(gated_add_samples(d, ds, &ds->y, &ds->ada, 2, NULL));

    attn_io io2 = {.x = &ds->tmp, .c = &ds->ctx, .mask = ds->has_mask ? &ds->mask : NULL, .out = &ds->y};
    const ltx2_tensor *mh = ds->has_mask ? &ds->mask_host : NULL;
    if (!cfg->cross_attention_adaln) {
        /* plain residual: the output projection adds onto x in its epilogue */
        LTX2_TRY(ltx2_backend_rms_norm(d->be, d->ctx, &ds->x, NULL, cfg->norm_eps, &ds->tmp));
        io2.residual = &ds->x;
        io2.out = &ds->x;
        return attn_dev(d, a2, &io2, mh);
    }
    sc = mod_row(&ds->ada, 7), sh = mod_row(&ds->ada, 6);
    LTX2_TRY(ltx2_backend_norm_modulate(d->be, d->ctx, &ds->x, LTX2_NORM_RMS, cfg->norm_eps, &sc, &sh, &ds->ada.rule,
                                        &ds->tmp));
    int64_t scs[3] = {s->B, s->S, s->D};
    ltx2_tensor cm;
    LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, scs, &cm));
    ltx2_tensor psc = mod_row(&ds->prompt, 1), psh = mod_row(&ds->prompt, 0);
    LTX2_TRY(ltx2_backend_norm_modulate(d->be, d->ctx, &ds->ctx, LTX2_NORM_NONE, 0.0f, &psc, &psh, &ds->prompt.rule,
                                        &cm));
    io2.c = &cm;
    LTX2_TRY(attn_dev(d, a2, &io2, mh));
    return gated_add_samples(d, ds, &ds->y, &ds->ada, 8, NULL);
}

static ltx2_status stream_ff(dev_run *d, dev_stream *ds, const dev_linear *fin, const dev_linear *fout) {
    ltx2_tensor sc = mod_row(&ds->ada, 4), sh = mod_row(&ds->ada, 3);
    LTX2_TRY(ltx2_backend_norm_modulate(d->be, d->ctx, &ds->x, LTX2_NORM_RMS, d->cfg->norm_eps, &sc, &sh,
                                        &ds->ada.rule, &ds->tmp));
    LTX2_TRY(linear(d, fin, &ds->tmp, true, NULL, &ds->big));
    LTX2_TRY(linear(d, fout, &ds->big, false, NULL, &ds->y));
    return gated_add_samples(d, ds, &ds->y, &ds->ada, 5, NULL);
}

static void flags_of(const uint32_t *perturb, int64_t L, int64_t i, int64_t B, uint32_t flag, uint8_t *skip,
                     int64_t *n) {
    *n = 0;
    for (int64_t b = 0; b < B; b++) {
        skip[b] = perturb && (perturb[b * L + i] & flag) ? 1 : 0;
        *n += skip[b];
    }
}

static ltx2_status block_run(dev_run *d, const ltx2_dit_weights *w, int64_t i, const uint32_t *perturb,
                             dit_stream *v, dit_stream *a, uint8_t *skips) {
    const ltx2_dit_block_w *bw = &w->blocks[i];
    const ltx2_dit_config *cfg = d->cfg;
    const int64_t B = v->B, L = cfg->num_layers;
    dev_attn at[6];
    const ltx2_dit_attn_w *hw[6] = {&bw->attn1, &bw->attn2, &bw->audio_attn1, &bw->audio_attn2, &bw->a2v, &bw->v2a};
    for (int k = 0; k < 6; k++) LTX2_TRY(up_attn(d, hw[k], &at[k]));
    dev_linear ff[4];
    LTX2_TRY(up_linear(d, &bw->ff.proj_in, &ff[0]));
    LTX2_TRY(up_linear(d, &bw->ff.proj_out, &ff[1]));
    LTX2_TRY(up_linear(d, &bw->audio_ff.proj_in, &ff[2]));
    LTX2_TRY(up_linear(d, &bw->audio_ff.proj_out, &ff[3]));
    dev_stream dv, da;
    LTX2_TRY(stream_up(d, v, bw, false, bw->attn1.heads, bw->a2v.heads, bw->a2v.heads * bw->a2v.head_dim,
                       bw->ff.proj_in.out, &dv));
    LTX2_TRY(stream_up(d, a, bw, true, bw->audio_attn1.heads, bw->v2a.heads, bw->v2a.heads * bw->v2a.head_dim,
                       bw->audio_ff.proj_in.out, &da));

    uint8_t *skip_v = skips, *skip_a = skips + B, *skip_a2v = skips + 2 * B, *skip_v2a = skips + 3 * B;
    int64_t n_v, n_a, n_a2v, n_v2a;
    flags_of(perturb, L, i, B, LTX2_DIT_SKIP_VIDEO_SELF_ATTN, skip_v, &n_v);
    flags_of(perturb, L, i, B, LTX2_DIT_SKIP_AUDIO_SELF_ATTN, skip_a, &n_a);
    flags_of(perturb, L, i, B, LTX2_DIT_SKIP_A2V_CROSS_ATTN, skip_a2v, &n_a2v);
    flags_of(perturb, L, i, B, LTX2_DIT_SKIP_V2A_CROSS_ATTN, skip_v2a, &n_v2a);
    LTX2_TRY(stream_attn(d, &dv, &at[0], &at[1], n_v ? skip_v : NULL));
    LTX2_TRY(stream_attn(d, &da, &at[2], &at[3], n_a ? skip_a : NULL));

    /* A/V exchange: all four modulated inputs come from x before either direction updates it
     * (the reference's normalised snapshot) */
    ltx2_tensor vq, vkv, aq, akv;
    int64_t svx[3] = {B, v->T, v->D}, sax[3] = {B, a->T, a->D};
    LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, svx, &vq));
    LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, svx, &vkv));
    LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, sax, &aq));
    LTX2_TRY(dev_alloc(d, LTX2_BF16, 3, sax, &akv));
    const float eps = cfg->norm_eps;
    ltx2_tensor r0 = mod_row(&dv.cross_ss, 0), r1 = mod_row(&dv.cross_ss, 1), r2 = mod_row(&dv.cross_ss, 2),
                r3 = mod_row(&dv.cross_ss, 3);
    LTX2_TRY(ltx2_backend_norm_modulate(d->be, d->ctx, &dv.x, LTX2_NORM_RMS, eps, &r0, &r1, &dv.cross_ss.rule, &vq));
    LTX2_TRY(ltx2_backend_norm_modulate(d->be, d->ctx, &dv.x, LTX2_NORM_RMS, eps, &r2, &r3, &dv.cross_ss.rule, &vkv));
    r0 = mod_row(&da.cross_ss, 0), r1 = mod_row(&da.cross_ss, 1), r2 = mod_row(&da.cross_ss, 2),
    r3 = mod_row(&da.cross_ss, 3);
    LTX2_TRY(ltx2_backend_norm_modulate(d->be, d->ctx, &da.x, LTX2_NORM_RMS, eps, &r0, &r1, &da.cross_ss.rule, &akv));
    LTX2_TRY(ltx2_backend_norm_modulate(d->be, d->ctx, &da.x, LTX2_NORM_RMS, eps, &r2, &r3, &da.cross_ss.rule, &aq));
    if (n_a2v < B) {
        attn_io io = {.x = &vq, .c = &akv, .qcos = &dv.xpe_cos, .qsin = &dv.xpe_sin, .kcos = &da.xpe_cos,
                      .ksin = &da.xpe_sin, .out = &dv.y};
        LTX2_TRY(attn_dev(d, &at[4], &io, NULL));
        LTX2_TRY(gated_add_samples(d, &dv, &dv.y, &dv.cross_gate, 0, n_a2v ? skip_a2v : NULL));
    }
    if (n_v2a < B) {
        attn_io io = {.x = &aq, .c = &vkv, .qcos = &da.xpe_cos, .qsin = &da.xpe_sin, .kcos = &dv.xpe_cos,
                      .ksin = &dv.xpe_sin, .out = &da.y};
        LTX2_TRY(attn_dev(d, &at[5], &io, NULL));
        LTX2_TRY(gated_add_samples(d, &da, &da.y, &da.cross_gate, 0, n_v2a ? skip_v2a : NULL));
    }
    LTX2_TRY(stream_ff(d, &dv, &ff[0], &ff[1]));
    LTX2_TRY(stream_ff(d, &da, &ff[2], &ff[3]));

    /* back to the host residual streams */
    dev_stream *both[2] = {&dv, &da};
    for (int k = 0; k < 2; k++) {
        dit_stream *s = both[k]->s;
        const int64_t n = s->B * s->T * s->D;
        uint16_t *raw = malloc((size_t)n * sizeof(uint16_t));
        if (!raw) return LTX2_ERROR(d->ctx, LTX2_ERR_OOM, "dit device block: download");
        ltx2_status st = d->be->download(d->be, d->ctx, raw, both[k]->x.data, (size_t)n * 2);
        if (st == LTX2_OK) st = ltx2_convert(d->ctx, s->x, LTX2_F32, raw, LTX2_BF16, (size_t)n);
        free(raw);
        LTX2_TRY(st);
    }
    return d->be->sync(d->be, d->ctx);
}

ltx2_status ltx2_dit_block_device(ltx2_context *ctx, const ltx2_backend *be, const ltx2_dit_weights *w, int64_t i,
                                  const uint32_t *perturb, dit_stream *v, dit_stream *a) {
    if (!be || !w || !v || !a || i < 0 || i >= w->cfg.num_layers)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit device block %lld: bad arguments", (long long)i);
    if (!ltx2_backend_supports(be, LTX2_OP_GEMM_EX, LTX2_BF16) || !ltx2_backend_supports(be, LTX2_OP_NORM_MODULATE, LTX2_BF16))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "dit device block: backend %s has no bf16 GEMM / fused norms",
                          be->name);
    dev_run *d = calloc(1, sizeof *d);
    uint8_t *skips = malloc((size_t)(4 * v->B));
    if (!d || !skips) {
        free(d);
        free(skips);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit device block: host state");
    }
    d->ctx = ctx;
    d->be = be;
    d->cfg = &w->cfg;
    ltx2_status st = block_run(d, w, i, perturb, v, a, skips);
    /* let queued work finish before its buffers go; NULL context: a failing sync (the same sticky
     * device error) must not overwrite the message that says which op failed */
    if (st != LTX2_OK) be->sync(be, NULL);
    for (int k = 0; k < d->nbufs; k++) be->free(be, d->bufs[k]);
    free(d);
    free(skips);
    return st;
}
