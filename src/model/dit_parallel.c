/* The DiT over data x context x tensor ranks (see dit_parallel.h): the model's one forward
 * (model/dit.c, dit_block.c) on this rank's batch chunk and video-token chunk, its weights this
 * rank's shards, with the collectives entering through the forward's hooks (dit_internal.h):
 * block weights (FSDP gathers), the row-parallel linears' sums, the across-heads QK RMSNorm, and
 * the sequence-sharded attentions (Ulysses all-to-all, or all-gathered K/V). With one rank per
 * group no hook is set and it is the single-rank forward; batch and sequence splits stay bitwise
 * (row-local GEMMs, per-row attention that skips masked keys); only the tensor split's partial sums
 * (row-parallel GEMMs, the QK norm's sum of squares) change the summation order. Under FSDP
 * (trillium) each block first gathers its weights into the very tensor shards a non-FSDP profile
 * stores, so the block computes exactly as there. */
#include "model/dit_parallel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/dit_internal.h"
#include "model/dit_parallel_internal.h"

/* One forward's per-rank geometry and state, handed to the hooks. */
typedef struct par_run {
    ltx2_dit_parallel *dp;
    const ltx2_backend *be;
    int64_t Tv, Tl, Tp;   /* real video tokens, tokens per rank, padded total */
    uint8_t *key_mask;    /* [Bl, Tp] 1 = real token; NULL when nothing is padded */
    void *key_mask_dev;   /* the same on the backend */
    void *wscratch;       /* FSDP: the running block's gathered weights */
    bool attn_fp8;        /* ltx2_dit_forward_params.attention_fp8 */
} par_run;

void ltx2_dit_parallel_opts_init(ltx2_dit_parallel_opts *o) {
    memset(o, 0, sizeof *o);
    o->profile = LTX2_PROFILE_GPU;
    o->sp_attention = LTX2_SP_AUTO;
}

/* ---- collectives with per-rank accounting (ring-algorithm bytes a rank sends) ---- */

static ltx2_status run_collective(dit_par_coll k, ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                                  size_t count, ltx2_dtype dt) {
    switch (k) {
    case DIT_PAR_ALL_REDUCE: return ltx2_comm_all_reduce(c, ctx, send, recv, count, dt);
    case DIT_PAR_ALL_TO_ALL: return ltx2_comm_all_to_all(c, ctx, send, recv, count, dt);
    case DIT_PAR_ALL_GATHER:
    case DIT_PAR_WEIGHT_GATHER: break;
    }
    return ltx2_comm_all_gather(c, ctx, send, recv, count, dt);
}

ltx2_status dit_par_collective(ltx2_dit_parallel *dp, ltx2_context *ctx, dit_par_coll k, ltx2_comm *c,
                               const ltx2_backend *mem, const void *send, void *recv, size_t count, ltx2_dtype dt) {
    const int64_t P = c->size, n = (int64_t)count;
    ltx2_dit_parallel_stats *s = &dp->stats;
    switch (k) {
    case DIT_PAR_ALL_GATHER: s->n_all_gather++, s->sent_elems += n * (P - 1); break;
    case DIT_PAR_ALL_TO_ALL: s->n_all_to_all++, s->sent_elems += n * (P - 1); break;
    case DIT_PAR_ALL_REDUCE: s->n_all_reduce++, s->sent_elems += 2 * n * (P - 1) / P; break;
    case DIT_PAR_WEIGHT_GATHER:
        s->n_weight_gather++, s->weight_sent_elems += n * (P - 1), s->sent_elems += n * (P - 1);
        break;
    }
    if (mem->device == LTX2_DEVICE_CPU || ltx2_comm_takes_device(c))
        return run_collective(k, c, ctx, send, recv, count, dt);
    const size_t es = ltx2_dtype_size(dt);
    const size_t sn = (k == DIT_PAR_ALL_TO_ALL ? (size_t)P : 1) * count * es;
    const size_t rn = (k == DIT_PAR_ALL_REDUCE ? 1 : (size_t)P) * count * es;
    void *hs = malloc(sn ? sn : 1), *hr = malloc(rn ? rn : 1);
    ltx2_status st = hs && hr ? LTX2_OK
                              : LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel: host copies of a %s collective (%zu bytes)",
                                           c->label, sn + rn);
    if (st == LTX2_OK) st = mem->download(mem, ctx, hs, send, sn);
    if (st == LTX2_OK) st = run_collective(k, c, ctx, hs, hr, count, dt);
    if (st == LTX2_OK) st = mem->upload(mem, ctx, recv, hr, rn);
    free(hs);
    free(hr);
    return st;
}

void ltx2_dit_parallel_free(ltx2_dit_parallel *dp) {
    if (!dp) return;
    for (size_t i = 0; i < dp->n_owned; i++) dp->be->free(dp->be, dp->owned[i]);
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

/* ---- the hooks through which the ranks enter the one forward (model/dit_internal.h) ---- */

/* Block i runs on this rank's shards; under FSDP they are gathered first. */
static ltx2_status hook_block_begin(void *user, ltx2_context *ctx, int64_t i, const ltx2_dit_block_w **bw) {
    par_run *pr = user;
    ltx2_dit_parallel *dp = pr->dp;
    if (dp->opts.on_block) LTX2_TRY(dp->opts.on_block(ctx, dp->world->rank, i, dp->opts.on_block_user));
    LTX2_TRY(dit_par_fsdp_gather(ctx, dp, i, &pr->wscratch));
    *bw = &dp->blocks[i];
    return LTX2_OK;
}

static void hook_block_end(void *user, int64_t i) {
    par_run *pr = user;
    dit_par_fsdp_release(pr->dp, i, pr->wscratch);
    pr->wscratch = NULL;
}

/* Row-parallel Linear: the partial products over this rank's input slice, summed over tensor. */
static ltx2_status hook_reduce(void *user, ltx2_context *ctx, ltx2_tensor *y) {
    par_run *pr = user;
    return dit_par_collective(pr->dp, ctx, DIT_PAR_ALL_REDUCE, pr->dp->tp, pr->be, y->data, y->data,
                              (size_t)ltx2_tensor_numel(y), y->dtype);
}

/* RMSNorm across all heads of x [.., il] (this rank's il columns of the full width): the rows' sums
 * of squares cross the tensor group, then each rank normalises its columns. */
static ltx2_status hook_qk_norm(void *user, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *w, int64_t full,
                                float eps) {
    par_run *pr = user;
    const ltx2_backend *be = pr->be;
    const int64_t rows = ltx2_tensor_numel(x) / x->shape[x->ndim - 1];
    ltx2_tensor ss;
    void *buf = NULL;
    LTX2_TRY(be->alloc(be, ctx, (size_t)(rows ? rows : 1) * sizeof(float), &buf));
    ss = ltx2_tensor_make(buf, LTX2_F32, 1, &rows);
    ss.device = be->device;
    ltx2_status st = ltx2_backend_row_sumsq(be, ctx, x, &ss);
    if (st == LTX2_OK)
        st = dit_par_collective(pr->dp, ctx, DIT_PAR_ALL_REDUCE, pr->dp->tp, be, ss.data, ss.data, (size_t)rows,
                                LTX2_F32);
    if (st == LTX2_OK) st = ltx2_backend_rms_apply(be, ctx, x, &ss, full, w, eps, x);
    if (st == LTX2_OK) st = be->sync(be, ctx);
    be->free(be, buf);
    return st;
}

/* [Pc][B, Tl, w] blocks (rank-major, as a collective delivers them) -> [B, Pc * Tl, w]. */
static ltx2_status unblock_seq(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src, int64_t Pc,
                               int64_t B, int64_t Tl, int64_t w, size_t es) {
    const size_t blk = (size_t)(Tl * w) * es;
    for (int64_t r = 0; r < Pc; r++)
        LTX2_TRY(be->copy_2d(be, ctx, (char *)dst + r * blk, (size_t)Pc * blk, (const char *)src + (size_t)(r * B) * blk,
                             blk, blk, (size_t)B));
    return LTX2_OK;
}

/* Scratch of the attention hooks, freed together. */
typedef struct scratch {
    const ltx2_backend *be;
    void *p[8];
    int n;
} scratch;

static ltx2_status scratch_get(scratch *sc, ltx2_context *ctx, size_t nbytes, void **out) {
    LTX2_TRY(sc->be->alloc(sc->be, ctx, nbytes ? nbytes : 1, out));
    sc->p[sc->n++] = *out;
    return LTX2_OK;
}

static void scratch_free(scratch *sc) {
    for (int i = 0; i < sc->n; i++) sc->be->free(sc->be, sc->p[i]);
}

static ltx2_status local_attention(par_run *pr, ltx2_context *ctx, void *q, void *k, void *v, int64_t B, int64_t Tq,
                                   int64_t Tk, int64_t heads, int64_t inner, ltx2_dtype dt, void *o) {
    int64_t sq[3] = {B, Tq, inner}, sk[3] = {B, Tk, inner}, sm[2] = {B, Tk};
    ltx2_tensor tq = ltx2_tensor_make(q, dt, 3, sq), tk = ltx2_tensor_make(k, dt, 3, sk);
    ltx2_tensor tv = ltx2_tensor_make(v, dt, 3, sk), to = ltx2_tensor_make(o, dt, 3, sq);
    ltx2_tensor tm = ltx2_tensor_make(pr->key_mask_dev, LTX2_U8, 2, sm);
    tq.device = tk.device = tv.device = to.device = tm.device = pr->be->device;
    /* e4m3 attention as the one-rank forward applies it (dit_block.c); its statistics leave the
     * padded keys out, so a rank's codes are the one-rank forward's */
    ltx2_attn_args aa = {.heads = heads, .scale = (float)(1.0 / sqrt((double)(inner / heads))),
                         .key_mask = pr->key_mask_dev ? &tm : NULL,
                         .fp8 = ltx2_dit_attention_fp8(pr->attn_fp8, inner / heads)};
    return ltx2_backend_attention(pr->be, ctx, &tq, &tk, &tv, &aa, &to);
}

/* Ulysses: q, k, v [B, Tl, Hl*d] sequence-sharded -> all-to-all to [B, Tp, Hc*d] (heads j*Hc.. of
 * every token on rank j) -> attention over the whole sequence -> all-to-all back. */
static ltx2_status ulysses(par_run *pr, ltx2_context *ctx, const ltx2_tensor *q, const ltx2_tensor *k,
                           const ltx2_tensor *v, int64_t heads, ltx2_tensor *o) {
    ltx2_dit_parallel *dp = pr->dp;
    const ltx2_backend *be = pr->be;
    const int64_t B = q->shape[0], Pc = dp->seq->size, Tl = pr->Tl, Tp = pr->Tp, il = q->shape[2];
    const int64_t d = il / heads, Hc = heads / Pc, w = Hc * d, n = B * Tp * w; /* n == B * Tl * il */
    const size_t es = ltx2_dtype_size(q->dtype), wb = (size_t)w * es, ib = (size_t)il * es;
    scratch sc = {be, {0}, 0};
    void *send, *recv, *full[3];
    ltx2_status st = scratch_get(&sc, ctx, (size_t)n * es, &send);
    if (st == LTX2_OK) st = scratch_get(&sc, ctx, (size_t)n * es, &recv);
    for (int s = 0; s < 3 && st == LTX2_OK; s++) st = scratch_get(&sc, ctx, (size_t)n * es, &full[s]);
    const ltx2_tensor *src[3] = {q, k, v};
    for (int s = 0; s < 3 && st == LTX2_OK; s++) {
        /* send block j: heads j*Hc.. of every local token */
        for (int64_t j = 0; j < Pc && st == LTX2_OK; j++)
            st = be->copy_2d(be, ctx, (char *)send + (size_t)(j * B * Tl) * wb, wb, (const char *)src[s]->data + j * wb,
                             ib, wb, (size_t)(B * Tl));
        if (st == LTX2_OK)
            st = dit_par_collective(dp, ctx, DIT_PAR_ALL_TO_ALL, dp->seq, be, send, recv, (size_t)(B * Tl * w), q->dtype);
        if (st == LTX2_OK) st = unblock_seq(be, ctx, full[s], recv, Pc, B, Tl, w, es);
    }
    /* attention output reuses send's space */
    if (st == LTX2_OK) st = local_attention(pr, ctx, full[0], full[1], full[2], B, Tp, Tp, Hc, w, q->dtype, send);
    if (st == LTX2_OK) {
        void *of = full[0]; /* re-blocked output: [Pc][B, Tl, w] */
        const size_t tb = (size_t)(Tl * w) * es;
        for (int64_t j = 0; j < Pc && st == LTX2_OK; j++)
            st = be->copy_2d(be, ctx, (char *)of + (size_t)(j * B) * tb, tb, (const char *)send + (size_t)j * tb,
                             (size_t)Pc * tb, tb, (size_t)B);
        if (st == LTX2_OK)
            st = dit_par_collective(dp, ctx, DIT_PAR_ALL_TO_ALL, dp->seq, be, of, recv, (size_t)(B * Tl * w), q->dtype);
    }
    for (int64_t j = 0; j < Pc && st == LTX2_OK; j++)
        st = be->copy_2d(be, ctx, (char *)o->data + j * wb, ib, (const char *)recv + (size_t)(j * B * Tl) * wb, wb, wb,
                         (size_t)(B * Tl));
    if (st == LTX2_OK) st = be->sync(be, ctx);
    scratch_free(&sc);
    return st;
}

/* K and V [B, Tl, il] sequence-sharded -> all-gathered [B, Tp, il], padded keys masked. */
static ltx2_status gather_kv_attention(par_run *pr, ltx2_context *ctx, const ltx2_tensor *q, const ltx2_tensor *k,
                                       const ltx2_tensor *v, int64_t heads, ltx2_tensor *o) {
    ltx2_dit_parallel *dp = pr->dp;
    const ltx2_backend *be = pr->be;
    const int64_t B = q->shape[0], Pc = dp->seq->size, Tl = pr->Tl, Tp = pr->Tp, il = q->shape[2];
    const size_t es = ltx2_dtype_size(q->dtype), n = (size_t)(B * Tp * il) * es;
    scratch sc = {be, {0}, 0};
    void *recv, *kf, *vf;
    ltx2_status st = scratch_get(&sc, ctx, n, &recv);
    if (st == LTX2_OK) st = scratch_get(&sc, ctx, n, &kf);
    if (st == LTX2_OK) st = scratch_get(&sc, ctx, n, &vf);
    if (st == LTX2_OK)
        st = dit_par_collective(dp, ctx, DIT_PAR_ALL_GATHER, dp->seq, be, k->data, recv, (size_t)(B * Tl * il), k->dtype);
    if (st == LTX2_OK) st = unblock_seq(be, ctx, kf, recv, Pc, B, Tl, il, es);
    if (st == LTX2_OK)
        st = dit_par_collective(dp, ctx, DIT_PAR_ALL_GATHER, dp->seq, be, v->data, recv, (size_t)(B * Tl * il), v->dtype);
    if (st == LTX2_OK) st = unblock_seq(be, ctx, vf, recv, Pc, B, Tl, il, es);
    if (st == LTX2_OK) st = local_attention(pr, ctx, q->data, kf, vf, B, q->shape[1], Tp, heads, il, q->dtype, o->data);
    if (st == LTX2_OK) st = be->sync(be, ctx);
    scratch_free(&sc);
    return st;
}

static ltx2_status hook_attend(void *user, ltx2_context *ctx, dit_attn_kind kind, const ltx2_tensor *q,
                               const ltx2_tensor *k, const ltx2_tensor *v, int64_t heads, ltx2_tensor *out) {
    par_run *pr = user;
    ltx2_dit_parallel *dp = pr->dp;
    if (kind == DIT_ATTN_SEQ_SELF && dp->opts.sp_attention != LTX2_SP_ALLGATHER_KV && heads % dp->seq->size == 0)
        return ulysses(pr, ctx, q, k, v, heads, out);
    return gather_kv_attention(pr, ctx, q, k, v, heads, out);
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
    lp->rope_xla = p->rope_xla; /* RoPE tables come from the model's own prepare */
    lp->timestep_xla = p->timestep_xla;
    lp->attention_fp8 = p->attention_fp8;
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
    par_run pr = {.dp = dp, .be = dp->be, .Tv = Tv, .attn_fp8 = p->attention_fp8};
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
        if (st == LTX2_OK) st = pr.be->alloc(pr.be, ctx, (size_t)(Bl * Tp), &pr.key_mask_dev);
        if (st == LTX2_OK) st = pr.be->upload(pr.be, ctx, pr.key_mask_dev, pr.key_mask, (size_t)(Bl * Tp));
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
    const bool tp = dp->tp->size > 1;
    const dit_hooks hooks = {.user = &pr, .tp_rank = dp->tp->rank, .tp_size = dp->tp->size,
                             .block_begin = hook_block_begin, .block_end = hook_block_end,
                             .reduce = tp ? hook_reduce : NULL, .qk_norm = tp ? hook_qk_norm : NULL,
                             .attend = Pc > 1 ? hook_attend : NULL};
    if (st == LTX2_OK) st = dit_forward_hooked(ctx, dp->full, &lp, &hooks, vl, al);
    /* video: gather the token chunks over context, drop padding; then the batch chunks */
    const ltx2_backend *host = ltx2_backend_cpu(); /* the forward's outputs are host f32 */
    if (st == LTX2_OK)
        st = dit_par_collective(dp, ctx, DIT_PAR_ALL_GATHER, dp->seq, host, vl, g1, (size_t)(Bl * Tl * Co), LTX2_F32);
    if (st == LTX2_OK) {
        float *tmp = malloc((size_t)(Bl * Tp * Co) * sizeof(float));
        if (!tmp) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel forward: gather buffer");
        else {
            st = unblock_seq(host, ctx, tmp, g1, Pc, Bl, Tl, Co, sizeof(float));
            for (int64_t b = 0; b < Bl; b++)
                memcpy(vb + b * Tv * Co, tmp + b * Tp * Co, (size_t)(Tv * Co) * sizeof(float));
            free(tmp);
        }
    }
    if (st == LTX2_OK)
        st = dit_par_collective(dp, ctx, DIT_PAR_ALL_GATHER, dp->batch, host, vb, g2, (size_t)(Bl * Tv * Co), LTX2_F32);
    if (st == LTX2_OK) memcpy(video_out, g2, (size_t)(B * Tv * Co) * sizeof(float));
    /* audio is replicated over context: only the batch chunks move */
    if (st == LTX2_OK)
        st = dit_par_collective(dp, ctx, DIT_PAR_ALL_GATHER, dp->batch, host, al, g2, (size_t)(Bl * Ta * Cao), LTX2_F32);
    if (st == LTX2_OK) memcpy(audio_out, g2, (size_t)(B * Ta * Cao) * sizeof(float));
    if (st != LTX2_OK) {
        char reason[300];
        snprintf(reason, sizeof reason, "rank %d: %s", dp->world->rank, ltx2_last_error(ctx));
        ltx2_comm_abort(dp->world, reason);
    }
    local_inputs_free(&l);
    free(pr.key_mask);
    if (pr.key_mask_dev) pr.be->free(pr.be, pr.key_mask_dev);
    free(vl), free(al), free(g1), free(vb), free(g2);
    return st;
}
