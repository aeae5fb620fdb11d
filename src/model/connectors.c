/* Text connectors forward: the feature extractor (ltx-core feature_extractor.py) and its
 * projections, then the Embeddings1DConnector (embeddings_connector.py) for video and audio, all
 * in backend ops on the weights' backend, in the reference's order of operations; the host states
 * go up a chunk of tokens at a time. Batches are handled per sample where ltx-core only supports
 * batch 1 (register replacement), with the same result as running each sample alone. */
#include "model/connectors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "cpu/cpu_rope.h"
#include "model/text_states.h"

/* eps of the feature-extractor norms, the connector RMS norms and the QK RMSNorm (ltx-core 1e-6). */
#define CONN_EPS 1e-6f
/* V1 normalisation: 8 * (x - mean) / (max - min + eps), fixed in _norm_and_concat_padded_batch. */
#define FE_V1_SCALE 8.0f

typedef struct conn_run {
    ltx2_context *ctx;
    const ltx2_backend *be;
    ltx2_bpool *pool;
    ltx2_dtype dt;
    ltx2_dit_dump_fn dump;
    void *user;
    bool rope_xla; /* MaxDiffusion's RoPE under XLA (ltx2_connectors_forward_rope) */
} conn_run;

static void dump_host(conn_run *r, const char *name, const float *d, int64_t a, int64_t b, int64_t c) {
    if (!r->dump) return;
    int64_t s[3] = {a, b, c};
    ltx2_tensor t = ltx2_tensor_make((void *)d, LTX2_F32, 3, s);
    r->dump(name, &t, r->user);
}

static ltx2_status dump(conn_run *r, const char *name, const ltx2_tensor *t) {
    if (!r->dump) return LTX2_OK;
    const int64_t n = ltx2_tensor_numel(t);
    float *h = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!h) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "connectors dump %s", name);
    ltx2_status st = ltx2_backend_to_host_f32(r->ctx, r->be, t, h);
    if (st == LTX2_OK) dump_host(r, name, h, t->shape[0], t->shape[1], t->shape[2]);
    free(h);
    return st;
}

static ltx2_status tensor(conn_run *r, int64_t a, int64_t b, int64_t c, ltx2_tensor *out) {
    int64_t s[3] = {a, b, c};
    return ltx2_bpool_tensor(r->ctx, r->pool, r->dt, 3, s, out);
}

static ltx2_status linear(conn_run *r, const ltx2_dit_linear *L, const ltx2_tensor *x, bool gelu, ltx2_tensor *y) {
    ltx2_gemm_ex_args ga = {.w_layout = LTX2_B_NK, .bias = L->b.data ? &L->b : NULL, .gelu = gelu,
                            .x_scale = 1.0f, .w_scale = 1.0f};
    return ltx2_backend_gemm_ex(r->be, r->ctx, x, &L->w, &ga, y);
}

/* The feature extractor's per-(sample, layer) statistics (V1): the mean and range of x[b, valid, :, l]. */
typedef struct fe_stats {
    float *mean, *range; /* [B, L] */
} fe_stats;

/* Pre-norm self-attention of one connector block (ltx-core Attention.forward, no mask: the
 * registers make every key valid); out = x + attention(x) is left to the caller. */
static ltx2_status conn_attn(conn_run *r, const ltx2_connectors_config *cfg, const ltx2_dit_attn_w *a,
                             const ltx2_tensor *x, const ltx2_tensor *cos_t, const ltx2_tensor *sin_t,
                             ltx2_tensor *out) {
    const int64_t B = x->shape[0], S = x->shape[1], H = a->heads, d = a->head_dim, inner = H * d;
    ltx2_tensor q, k, v, o;
    LTX2_TRY(tensor(r, B, S, inner, &q));
    LTX2_TRY(tensor(r, B, S, inner, &k));
    LTX2_TRY(tensor(r, B, S, inner, &v));
    LTX2_TRY(tensor(r, B, S, inner, &o));
    LTX2_TRY(linear(r, &a->q, x, false, &q));
    LTX2_TRY(linear(r, &a->k, x, false, &k));
    LTX2_TRY(linear(r, &a->v, x, false, &v));
    ltx2_attn_args aa = {.heads = H, .scale = (float)(1.0 / sqrt((double)d)), .q_norm = &a->q_norm,
                         .k_norm = &a->k_norm, .norm_eps = CONN_EPS, .rope_type = cfg->rope_type,
                         .q_cos = cos_t, .q_sin = sin_t, .k_cos = cos_t, .k_sin = sin_t};
    LTX2_TRY(ltx2_backend_attention(r->be, r->ctx, &q, &k, &v, &aa, &o));
    if (ltx2_linear_present(&a->gate)) {
        ltx2_tensor g;
        LTX2_TRY(tensor(r, B, S, H, &g));
        LTX2_TRY(linear(r, &a->gate, x, false, &g));
        LTX2_TRY(ltx2_backend_head_gate(r->be, r->ctx, &o, &g, H));
    }
    return linear(r, &a->o, &o, false, out);
}

/* _replace_padded_with_learnable_registers: valid tokens compacted to the front, then
 * h[p] = flip(mask)[p] ? compacted[p] : registers[p mod R] (for left padding: tokens first). Rows
 * are copied on the backend in runs of consecutive source rows. */
static ltx2_status replace_registers(conn_run *r, const ltx2_connector_w *w, const ltx2_tensor *feat,
                                     const uint8_t *mask, const ltx2_tensor *zero_row, ltx2_tensor *h) {
    const int64_t B = feat->shape[0], S = feat->shape[1], D = feat->shape[2], R = LTX2_CONNECTOR_REGISTERS;
    const size_t row = (size_t)D * ltx2_dtype_size(r->dt);
    int64_t *valid = malloc((size_t)S * sizeof(int64_t));
    if (!valid) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "connectors: register map");
    ltx2_status st = LTX2_OK;
    for (int64_t b = 0; b < B && st == LTX2_OK; b++) {
        const uint8_t *m = mask + b * S;
        int64_t nv = 0;
        for (int64_t t = 0; t < S; t++)
            if (m[t]) valid[nv++] = t;
        /* source of row p: (base, index); runs of consecutive indices from one base copy at once */
        int64_t p = 0;
        while (p < S && st == LTX2_OK) {
            const char *base;
            int64_t idx, step;
            if (m[S - 1 - p] && p < nv) base = (const char *)feat->data + (size_t)(b * S) * row, idx = valid[p], step = 1;
            else if (m[S - 1 - p]) base = zero_row->data, idx = 0, step = 0; /* a compacted row past the tokens */
            else base = w->registers.data, idx = p % R, step = 1;
            int64_t n = 1;
            while (p + n < S && step) {
                const int64_t q = p + n;
                const bool tok = m[S - 1 - q] && q < nv, reg = !m[S - 1 - q];
                const bool same = (base != (const char *)w->registers.data && tok && valid[q] == idx + n) ||
                                  (base == (const char *)w->registers.data && reg && q % R == idx + n);
                if (!same) break;
                n++;
            }
            st = r->be->copy(r->be, r->ctx, (char *)h->data + (size_t)(b * S + p) * row, base + (size_t)idx * row,
                             (size_t)n * row);
            p += n;
        }
    }
    free(valid);
    return st;
}

/* One Embeddings1DConnector over features [B, S, D] -> out [B, S, D] (host f32). */
static ltx2_status connector_run(conn_run *r, const ltx2_connectors_config *cfg, const char *name,
                                 const ltx2_connector_config *cc, const ltx2_connector_w *w, const ltx2_tensor *feat,
                                 const uint8_t *mask, float *out) {
    ltx2_context *ctx = r->ctx;
    const int64_t B = feat->shape[0], S = feat->shape[1], D = cc->inner_dim;
    const bool split = cfg->rope_type == LTX2_ROPE_SPLIT;
    const int64_t tab = split ? S * D / 2 : S * D;
    const size_t mark = ltx2_bpool_mark(r->pool);
    char nm[128];
    ltx2_tensor h, xn, y, ffh, zero, cos_t, sin_t;
    float *pos = malloc((size_t)(S + 2 * B * tab + D) * sizeof(float));
    if (!pos) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s connector: RoPE tables", name);
    float *hc = pos + S, *hs = hc + B * tab, *z = hs + B * tab;
    memset(z, 0, (size_t)D * sizeof(float));
    int64_t zs[3] = {1, 1, D};
    ltx2_status st = LTX2_OK;
#define TRY_(e)                               \
    do {                                      \
        if ((st = (e)) != LTX2_OK) goto done; \
    } while (0)
    TRY_(tensor(r, B, S, D, &h));
    TRY_(tensor(r, B, S, D, &xn));
    TRY_(tensor(r, B, S, D, &y));
    TRY_(tensor(r, B, S, 4 * D, &ffh));
    TRY_(ltx2_bpool_upload_f32(ctx, r->pool, z, r->dt, 3, zs, &zero));
    TRY_(replace_registers(r, w, feat, mask, &zero, &h));
    snprintf(nm, sizeof nm, "%s_connector.registers.out", name);
    TRY_(dump(r, nm, &h));
    /* 1-D RoPE over positions 0..S-1 (no interval midpoint), the same for every sample */
    ltx2_rope_params rp = {.type = cfg->rope_type, .dim = D, .heads = cc->heads, .n_axes = 1,
                           .theta = cfg->rope_theta, .double_precision = cfg->rope_double_precision,
                           .use_middle = false, .xla = r->rope_xla};
    rp.max_pos[0] = cfg->max_pos;
    for (int64_t p = 0; p < S; p++) pos[p] = (float)p;
    TRY_(ltx2_cpu_rope_tables(ctx, &rp, pos, 1, S, 1, hc, hs));
    for (int64_t b = 1; b < B; b++) {
        memcpy(hc + b * tab, hc, (size_t)tab * sizeof(float));
        memcpy(hs + b * tab, hs, (size_t)tab * sizeof(float));
    }
    int64_t ts[4] = {B, cc->heads, S, D / (2 * cc->heads)}, ti[3] = {B, S, D};
    TRY_(ltx2_bpool_upload_f32(ctx, r->pool, hc, LTX2_F32, split ? 4 : 3, split ? ts : ti, &cos_t));
    TRY_(ltx2_bpool_upload_f32(ctx, r->pool, hs, LTX2_F32, split ? 4 : 3, split ? ts : ti, &sin_t));
    for (int64_t j = 0; j < cc->num_layers; j++) {
        const ltx2_connector_block_w *bw = &w->blocks[j];
        const size_t bmark = ltx2_bpool_mark(r->pool);
        TRY_(ltx2_backend_rms_norm(r->be, ctx, &h, NULL, CONN_EPS, &xn));
        TRY_(conn_attn(r, cfg, &bw->attn1, &xn, &cos_t, &sin_t, &y));
        TRY_(ltx2_backend_gated_add(r->be, ctx, &h, &y, NULL, NULL));
        TRY_(ltx2_backend_rms_norm(r->be, ctx, &h, NULL, CONN_EPS, &xn));
        TRY_(linear(r, &bw->ff.proj_in, &xn, true, &ffh));
        TRY_(linear(r, &bw->ff.proj_out, &ffh, false, &y));
        TRY_(ltx2_backend_gated_add(r->be, ctx, &h, &y, NULL, NULL));
        snprintf(nm, sizeof nm, "%s_connector.transformer_1d_blocks.%lld.out", name, (long long)j);
        TRY_(dump(r, nm, &h));
        ltx2_bpool_release(r->pool, bmark);
    }
    TRY_(ltx2_backend_rms_norm(r->be, ctx, &h, NULL, CONN_EPS, &xn));
    snprintf(nm, sizeof nm, "%s.encoding", name);
    TRY_(dump(r, nm, &xn));
    TRY_(ltx2_backend_to_host_f32(ctx, r->be, &xn, out));
#undef TRY_
done:
    free(pos);
    ltx2_bpool_release(r->pool, mark);
    return st;
}

/* Rows [r0, r0 + nr) of the [B, S, n] tensor t, as a [nr, n] view. */
static ltx2_tensor rows_of(const ltx2_tensor *t, int64_t r0, int64_t nr) {
    const int64_t n = t->shape[2], shape[2] = {nr, n};
    ltx2_tensor v = ltx2_tensor_make((char *)t->data + (size_t)(r0 * n) * ltx2_dtype_size(t->dtype), t->dtype, 2,
                                     shape);
    v.device = t->device;
    return v;
}

/* V1: per sample b and layer l, the mean and range of x[b, valid, :, l]: each (layer, token) row's
 * sum, min and max where the states are (row_stats: on the weights' backend for device states, the
 * CPU backend for host ones, so both give the same numbers there), the valid tokens' combined here
 * in double, in token order; torch's mean is sum / (float(n * D) + 1e-6) in fp32. major: the host
 * states layer-major (unused for device states). */
static ltx2_status fe_v1_stats(conn_run *r, const ltx2_text_hidden *in, const float *major, const fe_stats *fs) {
    const int64_t S = in->S, D = in->D, L = in->L, rs[2] = {L * S, D}, ss[2] = {L * S, 3};
    float *h = malloc((size_t)(L * S * 3) * sizeof(float));
    if (!h) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "connectors forward: feature statistics");
    ltx2_status st = LTX2_OK;
    const size_t mark = ltx2_bpool_mark(r->pool);
    for (int64_t b = 0; b < in->B && st == LTX2_OK; b++) {
        if (in->dev) {
            ltx2_tensor x = ltx2_tensor_make((char *)in->dev->data + (size_t)(b * L * S * D) * ltx2_dtype_size(r->dt),
                                             r->dt, 2, rs),
                        t;
            x.device = in->dev->device;
            st = ltx2_bpool_tensor(r->ctx, r->pool, LTX2_F32, 2, ss, &t);
            if (st == LTX2_OK) st = ltx2_backend_row_stats(r->be, r->ctx, &x, &t);
            if (st == LTX2_OK) st = ltx2_backend_to_host_f32(r->ctx, r->be, &t, h);
            ltx2_bpool_release(r->pool, mark);
        } else {
            const ltx2_tensor x = ltx2_tensor_make((void *)(major + b * L * S * D), LTX2_F32, 2, rs);
            ltx2_tensor t = ltx2_tensor_make(h, LTX2_F32, 2, ss);
            st = ltx2_backend_row_stats(ltx2_backend_cpu(), r->ctx, &x, &t);
        }
        const uint8_t *m = in->mask + b * S;
        for (int64_t l = 0; st == LTX2_OK && l < L; l++) {
            double sum = 0.0;
            float lo = INFINITY, hi = -INFINITY;
            int64_t n = 0;
            for (int64_t k = 0; k < S; k++) {
                if (!m[k]) continue;
                const float *row = h + 3 * (l * S + k);
                n++, sum += row[0];
                lo = row[1] < lo ? row[1] : lo;
                hi = row[2] > hi ? row[2] : hi;
            }
            fs->mean[b * L + l] = (float)sum / ((float)(n * D) + CONN_EPS);
            fs->range[b * L + l] = hi - lo;
        }
    }
    free(h);
    return st;
}

/* The feature extractor's normalisation as one modulation (ltx2_backend_norm_modulate) of the rows
 * (layer, token) of [L, n, D]: y = norm(x) * (1 + scale[u]) + shift[u], the row u a token's or a
 * layer's, the last row (scale -1, shift 0) zeroing the padding. V2: RMS over D, then
 * _rescale_norm's factor f as scale f - 1 (1 + (f - 1) gives f back exactly in fp32 for f >= 0.5);
 * V1: no norm, and
 * 8 (x - mean) / (range + eps) as x * a - mean * a with a = 8 / (range + eps). */
typedef struct fe_mod {
    ltx2_tensor scale, shift; /* f32 [U, D] */
    int64_t U;
} fe_mod;

static ltx2_status fe_mod_make(conn_run *r, int64_t D, int64_t U, const float *a, const float *c, fe_mod *out) {
    float *h = malloc((size_t)(2 * U * D) * sizeof(float));
    if (!h) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "connectors forward: feature modulation rows");
    for (int64_t u = 0; u < U; u++)
        for (int64_t d = 0; d < D; d++) h[u * D + d] = a[u], h[(U + u) * D + d] = c[u];
    const int64_t sh[2] = {U, D};
    ltx2_status st = ltx2_bpool_upload_f32(r->ctx, r->pool, h, LTX2_F32, 2, sh, &out->scale);
    if (st == LTX2_OK) st = ltx2_bpool_upload_f32(r->ctx, r->pool, h + U * D, LTX2_F32, 2, sh, &out->shift);
    out->U = U;
    free(h);
    return st;
}

/* The projection input [n, D * L] (layer axis last, as aggregate_embed takes it) of the uploaded
 * states xs [L * n, D]: the modulation, then the rows interleaved by a strided add of zero (exact). */
static ltx2_status fe_features(conn_run *r, const ltx2_text_hidden *in, bool v1, const ltx2_tensor *xs,
                               const fe_mod *mod, const ltx2_tensor *rows, const ltx2_tensor *zero, int64_t n,
                               ltx2_tensor *feat) {
    const int64_t D = in->D, L = in->L;
    ltx2_tensor y;
    const int64_t ys[2] = {L * n, D};
    LTX2_TRY(ltx2_bpool_tensor(r->ctx, r->pool, r->dt, 2, ys, &y));
    const ltx2_mod_rows m = {.row_idx = rows};
    LTX2_TRY(ltx2_backend_norm_modulate(r->be, r->ctx, xs, v1 ? LTX2_NORM_NONE : LTX2_NORM_RMS, CONN_EPS, &mod->scale,
                                        &mod->shift, &m, &y));
    ltx2_tensor yv = y, fv = *feat; /* (token, channel, layer) views of y and of feat */
    yv.ndim = fv.ndim = 3;
    yv.shape[0] = fv.shape[0] = n, yv.shape[1] = fv.shape[1] = D, yv.shape[2] = fv.shape[2] = L;
    yv.strides[0] = D, yv.strides[1] = 1, yv.strides[2] = n * D;
    fv.strides[0] = D * L, fv.strides[1] = L, fv.strides[2] = 1;
    return ltx2_backend_binary(r->be, r->ctx, LTX2_OP_ADD, &yv, zero, &fv);
}

/* The feature extractor and the projections into fv / fa on the weights' backend, in ops: a
 * chunk of LTX2_CONNECTOR_FE_CHUNK tokens of one sample at a time is uploaded layer-major,
 * normalised (fe_features) and projected (the rows are independent: this is the whole-batch
 * computation row by row). V2 projects each after its own _rescale_norm (x * sqrt(out / D),
 * python's double applied in fp32); V1 has one projection for both, and its per-(sample, layer)
 * statistics come first (fe_v1_stats). major: the host states layer-major [B, L, S, D] (NULL for
 * device states). normed_all (NULL: not kept) gets every normalised row, unscaled, for the dump;
 * without it only the rows from a sample's first real token to its last are projected. */
static ltx2_status project(conn_run *r, const ltx2_connectors_weights *w, const ltx2_text_hidden *in,
                           const float *major, float *normed_all, ltx2_tensor *fv, ltx2_tensor *fa) {
    const ltx2_connectors_config *cfg = &w->cfg;
    const int64_t B = in->B, S = in->S, D = in->D, L = in->L, DL = D * L;
    const int64_t Dv = cfg->video.inner_dim, Da = cfg->audio.inner_dim;
    const bool v1 = cfg->fe == LTX2_TEXT_FE_V1;
    LTX2_TRY(tensor(r, B, S, Dv, fv));
    if (v1) *fa = *fv;
    else LTX2_TRY(tensor(r, B, S, Da, fa));
    const int64_t chunk = S < LTX2_CONNECTOR_FE_CHUNK ? S : LTX2_CONNECTOR_FE_CHUNK;
    /* modulation rows: V2 [keep at f (video, audio), keep at 1 (the dump), pad]; V1 [layers, pad] */
    const int64_t U = v1 ? L + 1 : 4, pad = U - 1;
    const float sv = (float)sqrt((double)Dv / (double)D), sa = (float)sqrt((double)Da / (double)D);
    fe_stats fs = {0};
    float *xh = malloc((size_t)(chunk * DL) * sizeof(float)), *a = malloc((size_t)U * sizeof(float));
    float *c = calloc((size_t)U, sizeof(float));
    int64_t *ri = malloc((size_t)(L * chunk) * sizeof(int64_t));
    ltx2_status st = xh && a && c && ri ? LTX2_OK : LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "connectors forward: feature rows");
    if (st == LTX2_OK && v1) {
        fs.mean = malloc((size_t)(B * L) * sizeof(float));
        fs.range = malloc((size_t)(B * L) * sizeof(float));
        if (!fs.mean || !fs.range) st = LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "connectors forward: feature statistics");
        else st = fe_v1_stats(r, in, major, &fs);
    }
    if (st == LTX2_OK && !v1) {
        a[0] = sv - 1.0f, a[1] = sa - 1.0f, a[2] = 0.0f, a[pad] = -1.0f;
    }
    ltx2_tensor zero; /* the interleaving add's other operand */
    const int64_t zs[1] = {1};
    const float z = 0.0f;
    if (st == LTX2_OK) st = ltx2_bpool_upload_f32(r->ctx, r->pool, &z, r->dt, 1, zs, &zero);
    const size_t base = ltx2_bpool_mark(r->pool);
    for (int64_t b = 0; b < B && st == LTX2_OK; b++) {
        ltx2_bpool_release(r->pool, base);
        fe_mod mod;
        if (v1) {
            for (int64_t l = 0; l < L; l++) {
                const float f = FE_V1_SCALE / (fs.range[b * L + l] + CONN_EPS);
                a[l] = f - 1.0f, c[l] = -fs.mean[b * L + l] * f;
            }
            a[pad] = -1.0f, c[pad] = 0.0f;
        }
        if ((st = fe_mod_make(r, D, U, a, c, &mod)) != LTX2_OK) break;
        /* the tokens from the first real one to the last: the registers take the padding's place
         * (replace_registers reads no other row), so its projections are not made, except for a
         * dump, which shows every row as the reference computes it */
        int64_t lo = 0, hi = S;
        while (!normed_all && lo < S && !in->mask[b * S + lo]) lo++;
        while (!normed_all && hi > lo && !in->mask[b * S + hi - 1]) hi--;
        for (int64_t t0 = lo; t0 < hi && st == LTX2_OK; t0 += chunk) {
            const int64_t n = hi - t0 < chunk ? hi - t0 : chunk, xs_shape[2] = {L * n, D}, fs_shape[2] = {n, DL};
            const size_t mark = ltx2_bpool_mark(r->pool);
            const uint8_t *keep = in->mask + b * S + t0;
            ltx2_tensor xs, feat, rows;
            if (in->dev) { /* the chunk's rows of every layer, gathered on the device */
                const size_t es = ltx2_dtype_size(r->dt);
                st = ltx2_bpool_tensor(r->ctx, r->pool, r->dt, 2, xs_shape, &xs);
                if (st == LTX2_OK)
                    st = r->be->copy_2d(r->be, r->ctx, xs.data, (size_t)(n * D) * es,
                                        (const char *)in->dev->data + (size_t)((b * L * S + t0) * D) * es,
                                        (size_t)(S * D) * es, (size_t)(n * D) * es, (size_t)L);
            } else { /* the same rows gathered on the host, then uploaded */
                for (int64_t l = 0; l < L; l++)
                    memcpy(xh + l * n * D, major + ((b * L + l) * S + t0) * D, (size_t)(n * D) * sizeof(float));
                st = ltx2_bpool_upload_f32(r->ctx, r->pool, xh, r->dt, 2, xs_shape, &xs);
            }
            if (st == LTX2_OK) st = ltx2_bpool_tensor(r->ctx, r->pool, r->dt, 2, fs_shape, &feat);
            /* the projections, then (V2, dump only) the unscaled rows */
            const int passes = v1 ? 1 : normed_all ? 3 : 2;
            for (int k = 0; k < passes && st == LTX2_OK; k++) {
                for (int64_t l = 0; l < L; l++)
                    for (int64_t t = 0; t < n; t++) ri[l * n + t] = !keep[t] ? pad : v1 ? l : k;
                st = ltx2_bpool_rows(r->ctx, r->pool, ri, L * n, &rows);
                if (st == LTX2_OK) st = fe_features(r, in, v1, &xs, &mod, &rows, &zero, n, &feat);
                if (st == LTX2_OK && k < 2) {
                    ltx2_tensor y = rows_of(k ? fa : fv, b * S + t0, n);
                    st = linear(r, k ? &w->proj_audio : &w->proj_video, &feat, false, &y);
                }
                if (st == LTX2_OK && normed_all && (v1 || k == 2))
                    st = ltx2_backend_to_host_f32(r->ctx, r->be, &feat, normed_all + (b * S + t0) * DL);
            }
            ltx2_bpool_release(r->pool, mark);
        }
    }
    free(fs.mean), free(fs.range), free(xh), free(a), free(c), free(ri);
    return st;
}

ltx2_status ltx2_connectors_forward(ltx2_context *ctx, const ltx2_connectors_weights *w, const ltx2_text_hidden *in,
                                    ltx2_dit_dump_fn dump_fn, void *dump_user, float *video_out, float *audio_out,
                                    uint8_t *mask_out) {
    return ltx2_connectors_forward_rope(ctx, w, in, false, dump_fn, dump_user, video_out, audio_out, mask_out);
}

ltx2_status ltx2_connectors_forward_rope(ltx2_context *ctx, const ltx2_connectors_weights *w,
                                         const ltx2_text_hidden *in, bool rope_xla, ltx2_dit_dump_fn dump_fn,
                                         void *dump_user, float *video_out, float *audio_out, uint8_t *mask_out) {
    if (!w || !in || (!in->hidden && !in->dev) || !in->mask || !video_out || !audio_out || !mask_out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "connectors forward: NULL argument");
    if (in->dev) {
        const ltx2_tensor *t = in->dev;
        if (t->device != w->be->device || t->dtype != w->dtype || !ltx2_tensor_is_contiguous(t) ||
            ltx2_tensor_numel(t) != in->B * in->L * in->S * in->D)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "connectors forward: device states must be contiguous "
                              "[%lld, %lld, %lld, %lld] %s on the weights' backend", (long long)in->B, (long long)in->L,
                              (long long)in->S, (long long)in->D, ltx2_dtype_name(w->dtype));
    }
    const ltx2_connectors_config *cfg = &w->cfg;
    const int64_t B = in->B, S = in->S, DL = in->D * in->L;
    if (B <= 0 || S <= 0 || in->D <= 0 || in->L <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "connectors forward: hidden states [%lld, %lld, %lld, %lld] must be "
                          "non-empty", (long long)B, (long long)S, (long long)in->D, (long long)in->L);
    if (DL != w->text_dim)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "connectors forward: Gemma hidden size x layers = %lld x %lld = %lld, but the text "
                          "projection expects %lld",
                          (long long)in->D, (long long)in->L, (long long)DL, (long long)w->text_dim);
    if (S % LTX2_CONNECTOR_REGISTERS)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "connectors forward: sequence length %lld must be a multiple of the %d learnable registers "
                          "(pad the prompt; the pipeline pads to 1024)",
                          (long long)S, LTX2_CONNECTOR_REGISTERS);
    conn_run r = {ctx, w->be, NULL, w->dtype, dump_fn, dump_user, rope_xla};
    LTX2_TRY(ltx2_bpool_create(ctx, w->be, &r.pool));
    /* the whole normalised features only for a dump (the forward itself goes by chunks) */
    float *normed = dump_fn ? malloc((size_t)(B * S * DL) * sizeof(float)) : NULL;
    /* host states layer-last (goldens, files given to the API) transposed to the encoder's layout */
    const bool transpose = !in->dev && !in->layer_major;
    float *own = transpose ? malloc((size_t)(B * S * DL) * sizeof(float)) : NULL;
    ltx2_tensor fv, fa;
    ltx2_status st = LTX2_OK;
    if ((dump_fn && !normed) || (transpose && !own)) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "connectors forward: %s",
                        transpose && !own ? "the layer-major states" : "the normalised features for the dump");
        goto done;
    }
    for (int64_t b = 0; transpose && b < B; b++)
        ltx2_text_states_to_layer_major(in->hidden + b * S * DL, S * in->D, in->L, own + b * S * DL);
    if ((st = project(&r, w, in, in->dev ? NULL : transpose ? own : in->hidden, normed, &fv, &fa)) != LTX2_OK)
        goto done;
    if (normed) dump_host(&r, "feature.normed", normed, B, S, DL);
    if ((st = dump(&r, "feature.video", &fv)) != LTX2_OK) goto done;
    if ((st = dump(&r, "feature.audio", &fa)) != LTX2_OK) goto done;
    st = connector_run(&r, cfg, "video", &cfg->video, &w->video, &fv, in->mask, video_out);
    if (st == LTX2_OK) st = connector_run(&r, cfg, "audio", &cfg->audio, &w->audio, &fa, in->mask, audio_out);
    if (st == LTX2_OK) {
        /* the registers make every position valid: the returned mask is all ones (and the video
         * output's multiplication by it is the identity) */
        memset(mask_out, 1, (size_t)(B * S));
        if (dump_fn) {
            float *mf = malloc((size_t)(B * S) * sizeof(float));
            if (mf) {
                for (int64_t i = 0; i < B * S; i++) mf[i] = 1.0f;
                int64_t s2[2] = {B, S};
                ltx2_tensor t = ltx2_tensor_make(mf, LTX2_F32, 2, s2);
                dump_fn("mask", &t, dump_user);
                free(mf);
            }
        }
    }
done:
    if (st != LTX2_OK) w->be->sync(w->be, NULL);
    free(normed);
    free(own);
    ltx2_bpool_free(r.pool);
    return st;
}
