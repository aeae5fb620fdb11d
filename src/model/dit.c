/* DiT forward: inputs onto the weights' backend, preprocessing (patchify projection, caption
 * projection, AdaLN-single timestep embeddings, RoPE tables; ltx-core transformer_args.py), the
 * blocks (dit_block.c), and the output head (model.py _process_output). AdaLN MLPs run once per
 * distinct timestep value and tokens index their row: identical to ltx-core's per-token evaluation
 * (row-wise), without B*T*9*D memory. The sinusoids, the deduplication and the RoPE tables are
 * host work on the inputs; everything else is backend ops. */
#include "model/dit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xla_math.h"
#include "cpu/cpu_rope.h"
#include "model/dit_internal.h"

/* -ln(10000): the sinusoid's max_period exponent, rounded to fp32 as torch does. */
#define DIT_NEG_LN_MAX_PERIOD (-9.210340371976184)

void ltx2_dit_forward_params_init(ltx2_dit_forward_params *p) {
    memset(p, 0, sizeof *p);
    p->av_timestep = LTX2_DIT_AV_TS_CROSS_SIGMA;
}

ltx2_status ltx2_dit_perturb_set(ltx2_context *ctx, uint32_t *perturb, int64_t num_layers, int64_t b, uint32_t flags,
                                 const int64_t *blocks, int64_t n_blocks) {
    if (!perturb || num_layers <= 0 || b < 0 || (!blocks && n_blocks))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit perturbation: bad arguments");
    if (!blocks) {
        for (int64_t i = 0; i < num_layers; i++) perturb[b * num_layers + i] |= flags;
        return LTX2_OK;
    }
    for (int64_t j = 0; j < n_blocks; j++) {
        if (blocks[j] < 0 || blocks[j] >= num_layers)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit perturbation: block %lld out of range [0, %lld)",
                              (long long)blocks[j], (long long)num_layers);
        perturb[b * num_layers + blocks[j]] |= flags;
    }
    return LTX2_OK;
}

/* ---- helpers shared with dit_block.c and dit_text_cache.c ---- */

ltx2_status dit_tensor(dit_run *r, ltx2_dtype dt, int ndim, const int64_t *shape, ltx2_tensor *out) {
    return ltx2_bpool_tensor(r->ctx, r->pool, dt, ndim, shape, out);
}

ltx2_status dit_f32(dit_run *r, const ltx2_tensor *t, ltx2_tensor *out) {
    if (t->dtype == LTX2_F32) {
        *out = *t;
        return LTX2_OK;
    }
    LTX2_TRY(dit_tensor(r, LTX2_F32, t->ndim, t->shape, out));
    return ltx2_backend_convert(r->be, r->ctx, t, out);
}

/* x W^T with the epilogues of *ga. An fp8 weight takes x quantised with its static input scale
 * (ltx-core's FP8Linear) into an fp8 GEMM whose output is the backend's fp8_gemm_out: bf16 on a
 * device, f32 on the CPU, which are the forward's activation dtypes there. */
static ltx2_status linear_gemm(dit_run *r, const ltx2_dit_linear *L, const dit_act *a, ltx2_gemm_ex_args *ga,
                               ltx2_tensor *y) {
    const ltx2_tensor *x = a->x;
    if (L->w.dtype != LTX2_F8_E4M3) {
        if (!a->has_x)
            return LTX2_ERROR(r->ctx, LTX2_ERR_INTERNAL, "dit: linear [%lld, %lld] reads an input that was not kept",
                              (long long)L->out, (long long)L->in);
        return ltx2_backend_gemm_ex(r->be, r->ctx, x, &L->w, ga, y);
    }
    if (!(L->x_scale > 0.0f) || !(L->w_scale > 0.0f))
        return LTX2_ERROR(r->ctx, LTX2_ERR_INVALID_ARG, "dit: fp8 linear [%lld, %lld] without its scales",
                          (long long)L->out, (long long)L->in);
    const ltx2_tensor *q = NULL;
    for (int i = 0; i < a->n && !q; i++)
        if (a->scale[i] == L->x_scale) q = &a->q[i];
    ltx2_tensor own;
    if (!q) {
        if (!a->has_x)
            return LTX2_ERROR(r->ctx, LTX2_ERR_INTERNAL, "dit: fp8 linear [%lld, %lld] (input scale %g) has no copy of "
                              "an input that was not kept", (long long)L->out, (long long)L->in, (double)L->x_scale);
        LTX2_TRY(dit_tensor(r, LTX2_F8_E4M3, x->ndim, x->shape, &own));
        LTX2_TRY(ltx2_backend_fp8_convert(r->be, r->ctx, x, L->x_scale, &own));
        q = &own;
    }
    ga->x_scale = L->x_scale;
    ga->w_scale = L->w_scale;
    return ltx2_backend_gemm_ex(r->be, r->ctx, q, &L->w, ga, y);
}

dit_act dit_act_of(const ltx2_tensor *x) {
    dit_act a = {.x = x, .has_x = true};
    return a;
}

ltx2_status dit_linear_act(dit_run *r, const ltx2_dit_linear *L, const dit_act *a, bool gelu, ltx2_tensor *y) {
    if (r->tpu) return dit_tpu_linear(r, L, a->x, gelu, y);
    ltx2_gemm_ex_args ga = {.w_layout = LTX2_B_NK, .bias = L->b.data ? &L->b : NULL, .gelu = gelu,
                            .x_scale = 1.0f, .w_scale = 1.0f};
    return linear_gemm(r, L, a, &ga, y);
}

ltx2_status dit_linear(dit_run *r, const ltx2_dit_linear *L, const ltx2_tensor *x, bool gelu, ltx2_tensor *y) {
    const dit_act a = dit_act_of(x);
    return dit_linear_act(r, L, &a, gelu, y);
}

ltx2_status dit_linear_out(dit_run *r, const ltx2_dit_linear *L, const ltx2_tensor *x, ltx2_tensor *y) {
    const dit_act a = dit_act_of(x);
    return dit_linear_out_act(r, L, &a, y);
}

ltx2_status dit_linear_out_act(dit_run *r, const ltx2_dit_linear *L, const dit_act *a, ltx2_tensor *y) {
    if (!r->hooks || !r->hooks->reduce) return dit_linear_act(r, L, a, false, y);
    ltx2_gemm_ex_args ga = {.w_layout = LTX2_B_NK, .x_scale = 1.0f, .w_scale = 1.0f};
    LTX2_TRY(linear_gemm(r, L, a, &ga, y));
    LTX2_TRY(r->hooks->reduce(r->hooks->user, r->ctx, y));
    return L->b.data ? ltx2_backend_binary(r->be, r->ctx, LTX2_OP_ADD, y, &L->b, y) : LTX2_OK;
}

void dit_dump_host(dit_run *r, const char *name, const float *data, int ndim, const int64_t *shape) {
    if (!r->dump) return;
    ltx2_tensor t = ltx2_tensor_make((void *)data, LTX2_F32, ndim, shape);
    r->dump(name, &t, r->dump_user);
}

ltx2_status dit_dump(dit_run *r, const char *name, const ltx2_tensor *t) {
    if (!r->dump) return LTX2_OK;
    if (t->device == LTX2_DEVICE_CPU && t->dtype == LTX2_F32 && ltx2_tensor_is_contiguous(t)) {
        r->dump(name, t, r->dump_user);
        return LTX2_OK;
    }
    const int64_t n = ltx2_tensor_numel(t);
    float *h = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!h) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit dump %s: %lld floats", name, (long long)n);
    ltx2_status st = ltx2_backend_to_host_f32(r->ctx, r->be, t, h);
    if (st == LTX2_OK) dit_dump_host(r, name, h, t->ndim, t->shape);
    free(h);
    return st;
}

int64_t dit_perturbed(const dit_run *r, int64_t i, int64_t B, uint32_t flag, uint8_t *skip) {
    int64_t n = 0;
    for (int64_t b = 0; b < B; b++) {
        skip[b] = r->perturb && (r->perturb[b * r->w->cfg.num_layers + i] & flag) ? 1 : 0;
        n += skip[b];
    }
    return n;
}

ltx2_tensor dit_sample(const ltx2_tensor *t, int64_t b) {
    ltx2_tensor v = *t;
    const int64_t per = ltx2_tensor_numel(t) / t->shape[0];
    v.data = (char *)t->data + (size_t)(b * per) * ltx2_dtype_size(t->dtype);
    v.shape[0] = 1;
    return v;
}

/* ---- AdaLayerNormSingle ---- */

/* mod [U, rows * D] and emb [U, D] (f32) for the U distinct values of n timesteps (already x the
 * multiplier); row[i] (host) is value i's row. */
typedef struct adaln_res {
    ltx2_tensor mod, emb;
    int64_t *row;
    int64_t U;
} adaln_res;

static ltx2_status adaln_dump(dit_run *r, const char *name, const float *t, int64_t n, const float *sinus,
                              const adaln_res *res, int64_t D, int64_t W) {
    const int64_t C = LTX2_DIT_TIMESTEP_CHANNELS, U = res->U;
    float *emb = malloc((size_t)(U * D) * sizeof(float)), *mod = malloc((size_t)(U * W) * sizeof(float));
    float *ex = malloc((size_t)n * (size_t)(W > C ? W : C) * sizeof(float));
    ltx2_status st = LTX2_OK;
    if (!emb || !mod || !ex) st = LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit %s: dump buffers", name);
    if (st == LTX2_OK) st = ltx2_backend_to_host_f32(r->ctx, r->be, &res->emb, emb);
    if (st == LTX2_OK) st = ltx2_backend_to_host_f32(r->ctx, r->be, &res->mod, mod);
    if (st == LTX2_OK) {
        /* expanded to the reference's per-token rows */
        char nm[160];
        int64_t s1[1] = {n};
        snprintf(nm, sizeof nm, "%s.in", name);
        dit_dump_host(r, nm, t, 1, s1);
        const struct {
            const char *suffix;
            const float *src;
            int64_t w;
        } parts[3] = {{"emb.time_proj.out", sinus, C}, {"emb.out", emb, D}, {"out", mod, W}};
        for (int p = 0; p < 3; p++) {
            for (int64_t i = 0; i < n; i++)
                memcpy(ex + i * parts[p].w, parts[p].src + res->row[i] * parts[p].w, (size_t)parts[p].w * sizeof(float));
            int64_t s2[2] = {n, parts[p].w};
            snprintf(nm, sizeof nm, "%s.%s", name, parts[p].suffix);
            dit_dump_host(r, nm, ex, 2, s2);
        }
    }
    free(emb);
    free(mod);
    free(ex);
    return st;
}

static ltx2_status adaln_run(dit_run *r, const char *name, const ltx2_dit_adaln_w *a, const float *t, int64_t n,
                             adaln_res *res) {
    ltx2_context *ctx = r->ctx;
    const int64_t D = a->dim, W = a->rows * a->dim, C = LTX2_DIT_TIMESTEP_CHANNELS, half = C / 2;
    memset(res, 0, sizeof *res);
    res->row = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    float *uniq = malloc((size_t)(n ? n : 1) * sizeof(float));
    float *sinus = malloc((size_t)(n ? n : 1) * (size_t)C * sizeof(float));
    ltx2_status st = LTX2_OK;
    if (!res->row || !uniq || !sinus) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit %s: %lld timesteps", name, (long long)n);
        goto done;
    }
    int64_t U = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t j = 0;
        while (j < U && memcmp(&uniq[j], &t[i], sizeof(float)) != 0) j++;
        if (j == U) uniq[U++] = t[i];
        res->row[i] = j;
    }
    res->U = U;
    for (int64_t u = 0; u < U; u++) {
        for (int64_t j = 0; j < half; j++) {
            /* torch: exp(float(-ln 1e4) * j / 128) in fp32, t * f in fp32; cos first (flip).
             * MaxDiffusion (get_sinusoidal_embeddings: j * fl(-ln 1e4 / 128), the same value)
             * under XLA:CPU: its f32 exp and libm's cosf / sinf (timestep_xla). */
            float e = (float)DIT_NEG_LN_MAX_PERIOD * (float)j;
            e = e / (float)half;
            const float f = r->timestep_xla ? ltx2_xla_expf(e) : (float)exp((double)e);
            const float arg = uniq[u] * f;
            sinus[u * C + j] = r->timestep_xla ? cosf(arg) : (float)cos((double)arg);
            sinus[u * C + half + j] = r->timestep_xla ? sinf(arg) : (float)sin((double)arg);
        }
    }
    int64_t ss[2] = {U, C}, hs[2] = {U, D}, ms[2] = {U, W};
    ltx2_tensor sn, h, e, h2, m;
#define TRY_(x)                               \
    do {                                      \
        if ((st = (x)) != LTX2_OK) goto done; \
    } while (0)
    TRY_(ltx2_bpool_upload_f32(ctx, r->pool, sinus, r->dt, 2, ss, &sn));
    if (r->tpu) TRY_(dit_bf16(r, &sn)); /* NNXPixArtAlphaCombinedTimestepSizeEmbeddings' cast to bf16 */
    TRY_(dit_tensor(r, r->dt, 2, hs, &h));
    TRY_(dit_tensor(r, r->dt, 2, hs, &e));
    TRY_(dit_tensor(r, r->dt, 2, hs, &h2));
    TRY_(dit_tensor(r, r->dt, 2, ms, &m));
    TRY_(dit_linear(r, &a->l1, &sn, false, &h));
    TRY_(r->tpu ? dit_tpu_silu(r, &h, &h) : ltx2_backend_unary(r->be, ctx, LTX2_OP_SILU, &h, &h));
    TRY_(dit_linear(r, &a->l2, &h, false, &e));
    TRY_(r->tpu ? dit_tpu_silu(r, &e, &h2) : ltx2_backend_unary(r->be, ctx, LTX2_OP_SILU, &e, &h2));
    TRY_(dit_linear(r, &a->lin, &h2, false, &m));
    TRY_(dit_f32(r, &m, &res->mod));
    TRY_(dit_f32(r, &e, &res->emb));
    if (r->dump && n > 0) TRY_(adaln_dump(r, name, t, n, sinus, res, D, W));
#undef TRY_
done:
    free(uniq);
    free(sinus);
    if (st != LTX2_OK) {
        free(res->row);
        res->row = NULL;
    }
    return st;
}

/* i32 rows of nt tokens: value rows `row` of n_vals values, one per token (n_vals == nt) or one
 * per sample shared by its nt / n_vals tokens. */
static ltx2_status token_rows(dit_run *r, const int64_t *row, int64_t n_vals, int64_t nt, ltx2_tensor *out) {
    int64_t *tr = malloc((size_t)(nt ? nt : 1) * sizeof(int64_t));
    if (!tr) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit forward: %lld token rows", (long long)nt);
    const int64_t per = nt / n_vals;
    for (int64_t i = 0; i < nt; i++) tr[i] = row[i / per];
    ltx2_status st = ltx2_bpool_rows(r->ctx, r->pool, tr, nt, out);
    free(tr);
    return st;
}

/* ---- RoPE tables ---- */

/* This rank's heads of host tables for `heads` heads (split [B, heads, T, d/2], interleaved
 * [B, T, heads * d]) and their shape: on one rank hc, hs themselves, else slices in a new buffer
 * (*owned, the caller frees it). */
static ltx2_status rope_local(dit_run *r, const float *hc, const float *hs, int64_t B, int64_t T, int64_t heads,
                              int64_t dim, const float **c, const float **s, float **owned, int *nd, int64_t shape[4]) {
    const bool split = r->w->cfg.rope_type == LTX2_ROPE_SPLIT;
    const int tp = r->hooks ? r->hooks->tp_size : 1, rank = r->hooks ? r->hooks->tp_rank : 0;
    const int64_t d = dim / heads, Hl = heads / tp, h0 = rank * Hl;
    *nd = split ? 4 : 3;
    const int64_t ss[4] = {B, Hl, T, d / 2}, si[4] = {B, T, Hl * d, 0};
    memcpy(shape, split ? ss : si, sizeof ss);
    *owned = NULL;
    if (tp == 1) {
        *c = hc;
        *s = hs;
        return LTX2_OK;
    }
    const int64_t n = B * T * Hl * d / (split ? 2 : 1);
    float *lc = malloc((size_t)(2 * n) * sizeof(float));
    if (!lc) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit forward: local RoPE tables");
    float *ls = lc + n;
    if (split) {
        const int64_t blk = T * d / 2;
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < Hl; h++) {
                memcpy(lc + (b * Hl + h) * blk, hc + (b * heads + h0 + h) * blk, (size_t)blk * sizeof(float));
                memcpy(ls + (b * Hl + h) * blk, hs + (b * heads + h0 + h) * blk, (size_t)blk * sizeof(float));
            }
    } else {
        const int64_t w = Hl * d, off = h0 * d;
        for (int64_t i = 0; i < B * T; i++) {
            memcpy(lc + i * w, hc + i * heads * d + off, (size_t)w * sizeof(float));
            memcpy(ls + i * w, hs + i * heads * d + off, (size_t)w * sizeof(float));
        }
    }
    *c = lc;
    *s = ls;
    *owned = lc;
    return LTX2_OK;
}

/* Host tables uploaded to the run's pool for this rank's heads. */
static ltx2_status upload_rope(dit_run *r, const float *hc, const float *hs, int64_t B, int64_t T, int64_t heads,
                               int64_t dim, ltx2_tensor *c, ltx2_tensor *s) {
    const float *lc = NULL, *ls = NULL;
    float *owned = NULL;
    int nd = 0;
    int64_t sh[4];
    LTX2_TRY(rope_local(r, hc, hs, B, T, heads, dim, &lc, &ls, &owned, &nd, sh));
    ltx2_status st = ltx2_bpool_upload_f32(r->ctx, r->pool, lc, LTX2_F32, nd, sh, c);
    if (st == LTX2_OK) st = ltx2_bpool_upload_f32(r->ctx, r->pool, ls, LTX2_F32, nd, sh, s);
    free(owned);
    return st;
}

/* One sample's cached table for B samples: itself for one, else B device copies in the pool. */
static ltx2_status rope_for_batch(dit_run *r, const ltx2_tensor *one, int64_t B, ltx2_tensor *out) {
    if (B == 1) {
        *out = *one;
        return LTX2_OK;
    }
    int64_t sh[LTX2_MAX_DIMS];
    memcpy(sh, one->shape, (size_t)one->ndim * sizeof(int64_t));
    sh[0] = B;
    LTX2_TRY(dit_tensor(r, LTX2_F32, one->ndim, sh, out));
    const size_t per = ltx2_tensor_nbytes(one);
    for (int64_t b = 0; b < B; b++) LTX2_TRY(r->be->copy(r->be, r->ctx, (char *)out->data + b * per, one->data, per));
    return LTX2_OK;
}

static ltx2_status rope_from_cache(dit_run *r, const dit_rope_tables *t, int64_t B, dit_stream *s) {
    LTX2_TRY(rope_for_batch(r, &t->cos, B, &s->pe_cos));
    LTX2_TRY(rope_for_batch(r, &t->sin, B, &s->pe_sin));
    LTX2_TRY(rope_for_batch(r, &t->xcos, B, &s->xpe_cos));
    return rope_for_batch(r, &t->xsin, B, &s->xpe_sin);
}

/* One sample's host tables (pc, ps own; xc, xs cross) stored in the cache under key, then used. */
static ltx2_status rope_store(dit_run *r, const dit_rope_key *key, const float *pc, const float *ps, const float *xc,
                              const float *xs, int64_t T, int64_t heads, int64_t D, int64_t xheads, int64_t Dx,
                              int64_t B, dit_stream *s) {
    dit_rope_host h;
    float *own = NULL, *xown = NULL;
    /* both table pairs have the layout's rank (h.nd) */
    ltx2_status st = rope_local(r, pc, ps, 1, T, heads, D, &h.cos, &h.sin, &own, &h.nd, h.shape);
    if (st == LTX2_OK) st = rope_local(r, xc, xs, 1, T, xheads, Dx, &h.xcos, &h.xsin, &xown, &h.nd, h.xshape);
    const dit_rope_tables *t = NULL;
    if (st == LTX2_OK) st = dit_rope_cache_store(r->ctx, r->rope_cache, key, &h, &t);
    free(own);
    free(xown);
    return st == LTX2_OK ? rope_from_cache(r, t, B, s) : st;
}

typedef struct modality_desc {
    const char *name;       /* "video" / "audio" */
    const char *pfx;        /* "" / "audio_" module-name prefix */
    const ltx2_dit_linear *patchify, *cap1, *cap2;
    const ltx2_dit_adaln_w *adaln, *prompt_adaln, *cross_ss_adaln, *cross_gate_adaln;
    int64_t in_ch, D, heads, n_axes;
    const float *max_pos;
} modality_desc;

/* Own positions (all axes) and the A/V cross tables (time axis only), dumped and uploaded. */
static ltx2_status rope_prepare(dit_run *r, const ltx2_dit_forward_params *p, const modality_desc *md,
                                const ltx2_dit_modality *in, dit_stream *s) {
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t B = p->batch, T = in->T, D = md->D, Dx = cfg->audio_cross_attention_dim;
    const int64_t xheads = cfg->audio_heads; /* both A/V directions use the audio heads */
    const bool split = cfg->rope_type == LTX2_ROPE_SPLIT;
    /* the parameters are built in the (zeroed) cache key, so they compare bytewise */
    dit_rope_key key;
    dit_rope_key_init(&key);
    ltx2_rope_params *rp = &key.rp, *xp = &key.xp;
    rp->type = cfg->rope_type;
    rp->dim = D;
    rp->heads = md->heads;
    rp->n_axes = (int)md->n_axes;
    rp->theta = cfg->rope_theta;
    rp->double_precision = cfg->rope_double_precision && !p->rope_xla;
    rp->use_middle = true;
    rp->xla = p->rope_xla;
    for (int64_t a = 0; a < md->n_axes; a++) rp->max_pos[a] = md->max_pos[a];
    memcpy(xp, rp, sizeof *xp);
    xp->dim = Dx;
    xp->heads = xheads;
    xp->n_axes = 1;
    xp->max_pos[0] = cfg->max_pos[0] > cfg->audio_max_pos ? cfg->max_pos[0] : cfg->audio_max_pos;
    /* The passes of a guided step share their positions: samples with byte-identical positions
     * get sample 0's tables copied (each sample's table is computed independently, so this is
     * bitwise what computing it again gives). */
    const int64_t per = md->n_axes * T * 2;
    bool same = true;
    for (int64_t b = 1; b < B && same; b++)
        same = memcmp(in->positions, in->positions + b * per, (size_t)per * sizeof(float)) == 0;
    /* a dump needs the host tables; samples with their own positions are computed each */
    const bool cached = r->rope_cache && same && !r->dump;
    if (cached) {
        key.stream = md->pfx[0] ? 1 : 0;
        key.be = r->be;
        key.tp_rank = r->hooks ? r->hooks->tp_rank : 0;
        key.tp_size = r->hooks ? r->hooks->tp_size : 1;
        key.T = T;
        key.n_pos = per;
        key.pos = in->positions;
        const dit_rope_tables *hit = dit_rope_cache_find(r->rope_cache, &key);
        if (hit) return rope_from_cache(r, hit, B, s);
    }
    /* host samples: the cache stores one; otherwise every sample's tables are uploaded */
    const int64_t Bh = cached ? 1 : B;
    const int64_t tab = (split ? T * D / 2 : T * D) * Bh, xtab = (split ? T * Dx / 2 : T * Dx) * Bh;
    float *pc = malloc((size_t)(2 * tab + 2 * xtab + 2 * Bh * T) * sizeof(float));
    if (!pc) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit forward: %s RoPE tables", md->name);
    float *ps = pc + tab, *xc = ps + tab, *xs = xc + xtab, *xpos = xs + xtab;
    const int64_t Bc = same ? 1 : B;
    ltx2_status st = ltx2_cpu_rope_tables(r->ctx, rp, in->positions, Bc, T, 2, pc, ps);
    for (int64_t b = 0; b < Bc; b++)
        memcpy(xpos + b * T * 2, in->positions + b * per, (size_t)(T * 2) * sizeof(float));
    if (st == LTX2_OK) st = ltx2_cpu_rope_tables(r->ctx, xp, xpos, Bc, T, 2, xc, xs);
    if (cached) {
        if (st == LTX2_OK) st = rope_store(r, &key, pc, ps, xc, xs, T, md->heads, D, xheads, Dx, B, s);
        free(pc);
        return st;
    }
    for (int64_t b = Bc; st == LTX2_OK && b < B; b++) {
        memcpy(pc + b * (tab / B), pc, (size_t)(tab / B) * sizeof(float));
        memcpy(ps + b * (tab / B), ps, (size_t)(tab / B) * sizeof(float));
        memcpy(xc + b * (xtab / B), xc, (size_t)(xtab / B) * sizeof(float));
        memcpy(xs + b * (xtab / B), xs, (size_t)(xtab / B) * sizeof(float));
    }
    if (st == LTX2_OK && r->dump) {
        int64_t sh[4] = {B, md->heads, T, D / (2 * md->heads)}, xsh[4] = {B, xheads, T, Dx / (2 * xheads)};
        int64_t shi[3] = {B, T, D}, xsi[3] = {B, T, Dx};
        char nm[96];
        snprintf(nm, sizeof nm, "%s_args.pe.cos", md->name);
        dit_dump_host(r, nm, pc, split ? 4 : 3, split ? sh : shi);
        snprintf(nm, sizeof nm, "%s_args.pe.sin", md->name);
        dit_dump_host(r, nm, ps, split ? 4 : 3, split ? sh : shi);
        snprintf(nm, sizeof nm, "%s_args.cross_pe.cos", md->name);
        dit_dump_host(r, nm, xc, split ? 4 : 3, split ? xsh : xsi);
        snprintf(nm, sizeof nm, "%s_args.cross_pe.sin", md->name);
        dit_dump_host(r, nm, xs, split ? 4 : 3, split ? xsh : xsi);
    }
    if (st == LTX2_OK) st = upload_rope(r, pc, ps, B, T, md->heads, D, &s->pe_cos, &s->pe_sin);
    if (st == LTX2_OK) st = upload_rope(r, xc, xs, B, T, xheads, Dx, &s->xpe_cos, &s->xpe_sin);
    free(pc);
    return st;
}

/* Host buffers of prepare that outlive it (freed by the forward). */
typedef struct modality_host {
    adaln_res ada, prompt, cross_ss, cross_gate;
    float *prompt_t; /* [B] prompt timesteps (the text cache keys them) */
} modality_host;

static void modality_host_free(modality_host *m) {
    free(m->ada.row);
    free(m->prompt.row);
    free(m->cross_ss.row);
    free(m->cross_gate.row);
    free(m->prompt_t);
}

static ltx2_status prepare(dit_run *r, const ltx2_dit_forward_params *p, const modality_desc *md,
                           const ltx2_dit_modality *in, const ltx2_dit_modality *other, modality_host *m,
                           dit_stream *s) {
    ltx2_context *ctx = r->ctx;
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t B = p->batch, T = in->T, S = in->S, D = md->D;
    char nm[160];
    if (!in->latent || !in->positions || !in->timesteps || !in->sigma || !in->context || T <= 0 || S <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit forward: %s input incomplete (need latent, positions, "
                          "timesteps, sigma, context; T, S > 0)", md->name);
    if ((unsigned)p->av_timestep > (unsigned)LTX2_DIT_AV_TS_OWN)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit forward: unknown av_timestep mode %d", (int)p->av_timestep);
    memset(s, 0, sizeof *s);
    s->B = B;
    s->T = T;
    s->D = D;
    s->S = S;
    int64_t ls[3] = {B, T, md->in_ch}, xs[3] = {B, T, D};
    ltx2_tensor lat;
    LTX2_TRY(ltx2_bpool_upload_f32(ctx, r->pool, in->latent, r->dt, 3, ls, &lat));
    LTX2_TRY(dit_tensor(r, r->dt, 3, xs, &s->x));
    LTX2_TRY(dit_linear(r, md->patchify, &lat, false, &s->x));
    snprintf(nm, sizeof nm, "%spatchify_proj.out", md->pfx);
    LTX2_TRY(dit_dump(r, nm, &s->x));

    /* timestep embeddings */
    const float mult = cfg->timestep_scale_multiplier;
    float *tv = malloc((size_t)(3 * B * T) * sizeof(float));
    m->prompt_t = malloc((size_t)B * sizeof(float));
    if (!tv || !m->prompt_t) {
        free(tv);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit forward: %s timesteps", md->name);
    }
    float *t_scaled = tv, *cross_t = tv + B * T, *gate_t = tv + 2 * B * T;
    ltx2_status st = LTX2_OK;
#define TRY_(x)                               \
    do {                                      \
        if ((st = (x)) != LTX2_OK) goto done; \
    } while (0)
    for (int64_t i = 0; i < B * T; i++) t_scaled[i] = in->timesteps[i] * mult;
    snprintf(nm, sizeof nm, "%sadaln_single", md->pfx);
    TRY_(adaln_run(r, nm, md->adaln, t_scaled, B * T, &m->ada));
    s->ada = m->ada.mod;
    TRY_(token_rows(r, m->ada.row, B * T, B * T, &s->ada_rows));
    for (int64_t b = 0; b < B; b++) m->prompt_t[b] = in->sigma[b] * mult;
    if (cfg->cross_attention_adaln) {
        snprintf(nm, sizeof nm, "%sprompt_adaln_single", md->pfx);
        TRY_(adaln_run(r, nm, md->prompt_adaln, m->prompt_t, B, &m->prompt));
        s->prompt = m->prompt.mod;
        TRY_(token_rows(r, m->prompt.row, B, B * S, &s->prompt_rows));
    }
    /* A/V cross-attention AdaLN: the gate from the other modality's sigma, except in the
     * diffusers use_cross_timestep=False mode (own per-token timesteps for everything) */
    const float av_factor = (float)((double)cfg->av_ca_timestep_scale_multiplier / (double)mult);
    int64_t n_gate, n_cross;
    if (p->av_timestep == LTX2_DIT_AV_TS_OWN) {
        for (int64_t i = 0; i < B * T; i++) gate_t[i] = t_scaled[i] * av_factor;
        n_gate = B * T;
    } else {
        for (int64_t b = 0; b < B; b++) gate_t[b] = (other->sigma[b] * mult) * av_factor;
        n_gate = B;
    }
    if (p->av_timestep == LTX2_DIT_AV_TS_CROSS_SIGMA) {
        for (int64_t b = 0; b < B; b++) cross_t[b] = other->sigma[b] * mult;
        n_cross = B;
    } else {
        memcpy(cross_t, t_scaled, (size_t)(B * T) * sizeof(float));
        n_cross = B * T;
    }
    const char *side = md->pfx[0] ? "audio" : "video";
    snprintf(nm, sizeof nm, "av_ca_%s_scale_shift_adaln_single", side);
    TRY_(adaln_run(r, nm, md->cross_ss_adaln, cross_t, n_cross, &m->cross_ss));
    s->cross_ss = m->cross_ss.mod;
    TRY_(token_rows(r, m->cross_ss.row, n_cross, B * T, &s->cross_ss_rows));
    snprintf(nm, sizeof nm, "av_ca_%s_gate_adaln_single", md->pfx[0] ? "v2a" : "a2v");
    TRY_(adaln_run(r, nm, md->cross_gate_adaln, gate_t, n_gate, &m->cross_gate));
    s->cross_gate = m->cross_gate.mod;
    TRY_(token_rows(r, m->cross_gate.row, n_gate, B * T, &s->cross_gate_rows));

    /* the context itself: stream_context, once the text cache has said whether a block needs it */
    if (in->context_mask) {
        int64_t ms[2] = {B, S};
        TRY_(dit_tensor(r, LTX2_U8, 2, ms, &s->mask));
        TRY_(r->be->upload(r->be, ctx, s->mask.data, in->context_mask, (size_t)(B * S)));
    }
    TRY_(rope_prepare(r, p, md, in, s));
#undef TRY_
done:
    free(tv);
    return st;
}

/* The stream's context on the backend (LTX-2.0: caption projection linear_1 -> GELU-tanh ->
 * linear_2), unless every sample's text K/V are in the cache for every block: then no block reads
 * it, and its upload (2 x 1024 x 3840 f32 converted on the host per stream) and projection are
 * skipped (s->text_cached). */
/* s->ident_mod: scale 0, then shift -0 (x * (1 + 0) + -0 is x for every x, -0 included). */
static ltx2_status ident_mod_make(dit_run *r, dit_stream *s) {
    float *h = calloc((size_t)(2 * s->D), sizeof(float));
    if (!h) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "dit forward: identity modulation");
    for (int64_t c = 0; c < s->D; c++) h[s->D + c] = -0.0f;
    const int64_t sh[2] = {1, 2 * s->D};
    const ltx2_status st = ltx2_bpool_upload_f32(r->ctx, r->pool, h, LTX2_F32, 2, sh, &s->ident_mod);
    free(h);
    return st;
}

static ltx2_status stream_context(dit_run *r, const modality_desc *md, const ltx2_dit_modality *in, dit_stream *s) {
    bool cached = r->text_cache && s->text_entry && !r->dump;
    for (int64_t b = 0; cached && b < s->B; b++) cached = dit_text_cache_complete(r->text_cache, s->text_entry[b]);
    s->text_cached = cached;
    if (cached) {
        dit_text_cache_note_skip(r->text_cache);
        return LTX2_OK;
    }
    const ltx2_dit_config *cfg = &r->w->cfg;
    const int64_t B = s->B, S = s->S, D = s->D, W = cfg->caption_projection ? md->cap1->in : D;
    int64_t cs[3] = {B, S, W}, ds[3] = {B, S, D};
    ltx2_tensor craw;
    char nm[160];
    LTX2_TRY(ltx2_bpool_upload_f32(r->ctx, r->pool, in->context, r->dt, 3, cs, &craw));
    if (cfg->caption_projection) {
        ltx2_tensor h;
        LTX2_TRY(dit_tensor(r, r->dt, 3, ds, &h));
        LTX2_TRY(dit_tensor(r, r->dt, 3, ds, &s->context));
        LTX2_TRY(dit_linear(r, md->cap1, &craw, true, &h));
        LTX2_TRY(dit_linear(r, md->cap2, &h, false, &s->context));
        snprintf(nm, sizeof nm, "%scaption_projection.out", md->pfx);
        LTX2_TRY(dit_dump(r, nm, &s->context));
    } else {
        s->context = craw;
    }
    snprintf(nm, sizeof nm, "%s_args.context", md->name);
    return dit_dump(r, nm, &s->context);
}

/* Output head: LayerNorm (no affine) * (1 + table[1] + e) + (table[0] + e), then proj_out, to host. */
static ltx2_status output_head(dit_run *r, const char *pfx, const ltx2_tensor *sst, const adaln_res *ada,
                               const ltx2_dit_linear *proj, dit_stream *s, float *out) {
    const int64_t B = s->B, T = s->T, D = s->D, U = ada->U;
    char nm[96];
    int64_t xs[3] = {B, T, D}, os[3] = {B, T, proj->out}, ts[3] = {1, 2, D}, es[3] = {U, 1, D}, hs[3] = {U, 2, D};
    ltx2_tensor y, o, tab, tv = *sst, ev = ada->emb, t32;
    LTX2_TRY(dit_tensor(r, r->dt, 3, xs, &y));
    LTX2_TRY(dit_tensor(r, r->dt, 3, os, &o));
    if (r->dump) {
        LTX2_TRY(ltx2_backend_layer_norm(r->be, r->ctx, &s->x, NULL, NULL, r->w->cfg.norm_eps, &y));
        snprintf(nm, sizeof nm, "%snorm_out.out", pfx);
        LTX2_TRY(dit_dump(r, nm, &y));
    }
    /* [U, 2, D] = table [1, 2, D] + e [U, 1, D]: row 0 shift, row 1 scale */
    tv = ltx2_tensor_make(sst->data, sst->dtype, 3, ts);
    tv.device = sst->device;
    ev = ltx2_tensor_make(ada->emb.data, LTX2_F32, 3, es);
    ev.device = ada->emb.device;
    LTX2_TRY(dit_f32(r, &tv, &t32));
    LTX2_TRY(dit_tensor(r, LTX2_F32, 3, hs, &tab));
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_ADD, &t32, &ev, &tab));
    /* --precision tpu: the audio head's table is bf16, the video's (scale_shift_table) f32 */
    const bool bf16_table = r->tpu && pfx[0];
    if (bf16_table) LTX2_TRY(dit_bf16(r, &tab));
    int64_t vs[2] = {U, D};
    ltx2_tensor shift = ltx2_tensor_make(tab.data, LTX2_F32, 2, vs), scale = shift;
    shift.device = scale.device = tab.device;
    shift.strides[0] = scale.strides[0] = 2 * D;
    scale.data = (float *)tab.data + D;
    if (bf16_table) LTX2_TRY(dit_tpu_scale_shift(r, &scale, &shift));
    ltx2_mod_rows rule = {.row_idx = &s->ada_rows, .rows_per_group = 0};
    LTX2_TRY(ltx2_backend_norm_modulate(r->be, r->ctx, &s->x, LTX2_NORM_LAYER, r->w->cfg.norm_eps, &scale, &shift,
                                        &rule, &y));
    LTX2_TRY(dit_linear(r, proj, &y, false, &o));
    snprintf(nm, sizeof nm, "%sproj_out.out", pfx);
    LTX2_TRY(dit_dump(r, nm, &o));
    return ltx2_backend_to_host_f32(r->ctx, r->be, &o, out);
}

ltx2_status ltx2_dit_forward(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_dit_forward_params *p,
                             float *video_out, float *audio_out) {
    return dit_forward_hooked(ctx, w, p, NULL, video_out, audio_out);
}

static ltx2_status run_blocks(dit_run *r, dit_stream *vs, dit_stream *as) {
    const dit_hooks *h = r->hooks;
    for (int64_t i = 0; i < r->w->cfg.num_layers; i++) {
        const ltx2_dit_block_w *bw = &r->w->blocks[i];
        if (h && h->block_begin) {
            ltx2_status st = h->block_begin(h->user, r->ctx, i, &bw);
            if (st == LTX2_OK) st = dit_block_forward(r, i, bw, vs, as);
            if (h->block_end) h->block_end(h->user, i);
            LTX2_TRY(st);
        } else {
            LTX2_TRY(dit_block_forward(r, i, bw, vs, as));
        }
    }
    return LTX2_OK;
}

ltx2_status dit_forward_hooked(ltx2_context *ctx, const ltx2_dit_weights *w, const ltx2_dit_forward_params *p,
                               const dit_hooks *hooks, float *video_out, float *audio_out) {
    if (!w || !p || !video_out || !audio_out)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit forward: NULL argument");
    if (p->batch <= 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit forward: batch must be > 0");
    if (w->layers_skipped && !(hooks && hooks->block_begin))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "dit forward: the weights hold no block layers (loaded for tensor parallelism)");
    const ltx2_dit_config *cfg = &w->cfg;
    dit_run r = {.ctx = ctx, .be = w->be, .dt = w->dtype, .w = w, .hooks = hooks, .dump = p->dump,
                 .dump_user = p->dump_user, .perturb = p->perturb,
                 /* the text K/V cache serves one rank (a rank's K/V are its own shards) */
                 .text_cache = hooks || p->precision_tpu ? NULL : p->text_cache, .rope_cache = p->rope_cache,
                 .stg_blend_every_block = p->stg_blend_every_block, .tpu = p->precision_tpu,
                 .timestep_xla = p->timestep_xla,
                 .fp8_fuse = !p->fp8_separate_quant && !p->precision_tpu && !p->dump,
                 .attn_fp8 = p->attention_fp8};
    if (r.attn_fp8 && p->precision_tpu)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "dit forward: e4m3 attention with --precision tpu: MaxDiffusion's "
                          "bf16 arithmetic has none");
    if (r.tpu && (hooks || w->be->device != LTX2_DEVICE_CPU))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "dit forward: --precision tpu runs on the CPU backend, one rank "
                          "(this run: %s backend, %s)", w->be->name, hooks ? "parallel" : "one rank");
    /* one rank: a parallel forward's ranks hold their own shards' buffers */
    ltx2_dit_act_pool *act = hooks ? NULL : p->act_pool;
    if (act) {
        const int64_t key[DIT_ACT_KEY] = {p->batch, p->video.T, p->audio.T, p->video.S, p->audio.S};
        LTX2_TRY(dit_act_pool_begin(ctx, act, w->be, key, &r.pool));
    } else {
        LTX2_TRY(ltx2_bpool_create(ctx, w->be, &r.pool));
    }
    modality_desc vd = {"video", "", &w->patchify, &w->caption1, &w->caption2, &w->adaln, &w->prompt_adaln,
                        &w->av_video_ss, &w->av_a2v_gate, cfg->in_channels, cfg->inner_dim, cfg->heads, 3,
                        cfg->max_pos};
    modality_desc ad = {"audio", "audio_", &w->audio_patchify, &w->audio_caption1, &w->audio_caption2,
                        &w->audio_adaln, &w->audio_prompt_adaln, &w->av_audio_ss, &w->av_v2a_gate,
                        cfg->audio_in_channels, cfg->audio_inner_dim, cfg->audio_heads, 1, &cfg->audio_max_pos};
    modality_host vm, am;
    memset(&vm, 0, sizeof vm);
    memset(&am, 0, sizeof am);
    dit_stream vs, as;
    int64_t *text_entry = NULL;
    ltx2_status st = prepare(&r, p, &vd, &p->video, &p->audio, &vm, &vs);
    if (st == LTX2_OK) st = prepare(&r, p, &ad, &p->audio, &p->video, &am, &as);
    if (st == LTX2_OK && r.text_cache) {
        const int64_t B = p->batch;
        const int64_t Wv = cfg->caption_projection ? w->caption1.in : cfg->inner_dim;
        const int64_t Wa = cfg->caption_projection ? w->audio_caption1.in : cfg->audio_inner_dim;
        const bool v23 = cfg->cross_attention_adaln;
        text_entry = malloc((size_t)(2 * B) * sizeof(int64_t));
        if (!text_entry) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit forward: text cache binding");
        dit_text_cache_begin(r.text_cache);
        if (st == LTX2_OK)
            st = dit_text_cache_bind(ctx, r.text_cache, w, 0, B, vs.S, Wv, p->video.context, v23 ? vm.prompt_t : NULL,
                                     text_entry);
        if (st == LTX2_OK)
            st = dit_text_cache_bind(ctx, r.text_cache, w, 1, B, as.S, Wa, p->audio.context, v23 ? am.prompt_t : NULL,
                                     text_entry + B);
        if (st == LTX2_OK) {
            vs.text_entry = text_entry;
            vs.text_stream = 0;
            as.text_entry = text_entry + B;
            as.text_stream = 1;
        }
    }
    if (st == LTX2_OK) st = stream_context(&r, &vd, &p->video, &vs);
    if (st == LTX2_OK) st = stream_context(&r, &ad, &p->audio, &as);
    if (st == LTX2_OK && r.fp8_fuse && !cfg->cross_attention_adaln) st = ident_mod_make(&r, &vs);
    if (st == LTX2_OK && r.fp8_fuse && !cfg->cross_attention_adaln) st = ident_mod_make(&r, &as);
    if (st == LTX2_OK) st = run_blocks(&r, &vs, &as);
    if (st == LTX2_OK) st = output_head(&r, "", &w->sst, &vm.ada, &w->proj_out, &vs, video_out);
    if (st == LTX2_OK) st = output_head(&r, "audio_", &w->audio_sst, &am.ada, &w->audio_proj_out, &as, audio_out);
    /* queued device work must finish before its buffers go; a NULL context keeps the message of
     * the op that failed */
    if (st != LTX2_OK) w->be->sync(w->be, NULL);
    free(text_entry);
    modality_host_free(&vm);
    modality_host_free(&am);
    if (act) dit_act_pool_end(act, st);
    else ltx2_bpool_free(r.pool);
    return st;
}
