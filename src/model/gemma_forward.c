/* Gemma-3 forward (gemma.h) on the weights' backend: one set of ops for the CPU reference and any
 * device. The embedding rows are gathered on the host from the mapped table (no device copy of a
 * 262k x 3840 table for 2 x 1024 rows); each hidden state goes to a sink as it is made, by default
 * back to the host layer-major (model/text_states.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "core/dtype.h"
#include "model/gemma.h"
#include "model/text_states.h"

typedef struct gemma_run {
    ltx2_context *ctx;
    const ltx2_backend *be;
    ltx2_bpool *pool;
    ltx2_dtype dt;
} gemma_run;

static ltx2_status tensor(gemma_run *r, int64_t a, int64_t b, int64_t c, ltx2_tensor *out) {
    int64_t s[3] = {a, b, c};
    return ltx2_bpool_tensor(r->ctx, r->pool, r->dt, 3, s, out);
}

/* y = x W^T, with gelu GELU-tanh applied to it in the GEMM's epilogue (the MLP's gate: one pass
 * over the [rows, ffn] activation fewer; on a device the product is rounded once, after the GELU,
 * instead of before and after it). fp8-stored weights (ltx2_gemma_weights_load_fp8_on) are widened
 * into a scratch weight of the activations' dtype first, one Linear at a time. */
static ltx2_status linear_act(gemma_run *r, const ltx2_linear *L, const ltx2_tensor *x, bool gelu, ltx2_tensor *y) {
    const ltx2_gemm_ex_args ga = {.w_layout = LTX2_B_NK, .gelu = gelu, .x_scale = 1.0f, .w_scale = 1.0f};
    if (L->w.dtype != LTX2_F8_E4M3) return ltx2_backend_gemm_ex(r->be, r->ctx, x, &L->w, &ga, y);
    const size_t mark = ltx2_bpool_mark(r->pool);
    ltx2_tensor wide;
    ltx2_status st = ltx2_bpool_tensor(r->ctx, r->pool, r->dt, 2, L->w.shape, &wide);
    if (st == LTX2_OK) st = ltx2_backend_fp8_convert(r->be, r->ctx, &L->w, L->w_scale, &wide);
    if (st == LTX2_OK) st = ltx2_backend_gemm_ex(r->be, r->ctx, x, &wide, &ga, y);
    ltx2_bpool_release(r->pool, mark);
    return st;
}

static ltx2_status linear(gemma_run *r, const ltx2_linear *L, const ltx2_tensor *x, ltx2_tensor *y) {
    return linear_act(r, L, x, false, y);
}

/* The scale the reference multiplies the embeddings by: sqrt(hidden) rounded to the table's dtype
 * (Gemma3TextScaledWordEmbedding: embed_scale.to(weight.dtype); 62.0 for the 12B in bf16). */
static float embed_scale(const ltx2_gemma_weights *w) {
    const float s = (float)sqrt((double)w->cfg.hidden);
    if (w->embed->dtype == LTX2_BF16) return ltx2_round_bf16(s);
    if (w->embed->dtype == LTX2_F16) return ltx2_f16_to_f32(ltx2_f32_to_f16(s));
    return s;
}

/* One head's RoPE table, cos and sin [S, hd/2]: angle p * inv_freq[i] with torch's fp32
 * inv_freq = 1 / theta^(2i / hd) (divided by the linear factor on global layers), p the token's
 * position: pos[s], or s when pos is NULL. */
static void rope_table(int64_t S, int64_t hd, double theta, double factor, const int64_t *pos, float *c, float *s) {
    const int64_t half = hd / 2;
    /* 2 x 1024 x 128 sines and cosines a forward for the 12B: 1.5 ms on one core (measured here) */
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < half; i++) {
        const float expo = (float)(2 * i) / (float)hd;
        float inv = 1.0f / (float)pow(theta, (double)expo);
        if (factor != 1.0) inv = inv / (float)factor;
        for (int64_t p = 0; p < S; p++) {
            const float ang = (float)(pos ? pos[p] : p) * inv;
            c[p * half + i] = cosf(ang);
            s[p * half + i] = sinf(ang);
        }
    }
}

/* A layer kind's RoPE tables, cos and sin [rows, 1, S, hd/2]: one head's table, which the rope op
 * shares among every query and key head (ltx2_backend_rope), and one row for every sample (rows 1)
 * unless each sample has its own positions (rows B). */
typedef struct rope_set {
    ltx2_tensor c, s;
} rope_set;

static ltx2_status rope_upload(gemma_run *r, const ltx2_gemma_config *c, int64_t B, int64_t S, const int64_t *pos,
                               double theta, double factor, rope_set *out) {
    const int64_t half = c->head_dim / 2, nb = pos ? B : 1, tab = S * half;
    float *buf = malloc((size_t)(2 * nb * tab) * sizeof(float));
    if (!buf) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "Gemma RoPE tables");
    /* cos rows first, then sin rows, as the two tensors hold them */
    for (int64_t b = 0; b < nb; b++)
        rope_table(S, c->head_dim, theta, factor, pos ? pos + b * S : NULL, buf + b * tab, buf + (nb + b) * tab);
    const int64_t shape[4] = {nb, 1, S, half};
    ltx2_status st = ltx2_bpool_tensor(r->ctx, r->pool, LTX2_F32, 4, shape, &out->c);
    if (st == LTX2_OK) st = ltx2_bpool_tensor(r->ctx, r->pool, LTX2_F32, 4, shape, &out->s);
    const size_t bytes = (size_t)(nb * tab) * sizeof(float);
    if (st == LTX2_OK) st = r->be->upload(r->be, r->ctx, out->c.data, buf, bytes);
    if (st == LTX2_OK) st = r->be->upload(r->be, r->ctx, out->s.data, buf + nb * tab, bytes);
    free(buf);
    return st;
}

/* The host sink: sample b's state of layer l into hidden_b[b] + l * S * D (the layer-major layout
 * of model/text_states.h), as each layer is made. An f32 state is downloaded straight into place;
 * any other (a device's bf16) is downloaded as it is (half the bytes) into a one-layer staging kept
 * across layers and widened, exactly, into place. The layer-last layout interleaved every
 * (token, channel) record of L1 floats: on the H200 run2 machine the sink cost 733 ms over the
 * 93 ms of layers, and staging all 49 layers to interleave them once took 645 MB of host memory. */
typedef struct host_sink {
    const ltx2_backend *be;
    void *stage;       /* [B * S', D] in stage_dt, allocated by the first layer that needs it */
    ltx2_dtype stage_dt;
    float *const *out; /* [B]: sample b's states [L1, S, D] */
    int64_t B, per;    /* samples, and (token, channel) records a sample computed: S' * D */
    int64_t stride;    /* records of a sample's layer in out: S * D */
    int64_t head;      /* the skipped positions' records, zero in out: (S - S') * D */
    int64_t L1;
    ltx2_gemma_poll poll;
    void *poll_user;
} host_sink;

static ltx2_status store_layer(void *user, ltx2_context *ctx, const ltx2_tensor *h, int64_t l) {
    host_sink *hs = user;
    const int64_t per = hs->per, plane = hs->B * per;
    const size_t es = ltx2_dtype_size(h->dtype);
    if (ltx2_tensor_numel(h) != plane || !ltx2_tensor_is_contiguous(h))
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "Gemma forward: hidden state %lld is not %lld contiguous values",
                          (long long)l, (long long)plane);
    for (int64_t b = 0; b < hs->B; b++) memset(hs->out[b] + l * hs->stride, 0, (size_t)hs->head * sizeof(float));
    if (h->dtype == LTX2_F32) {
        for (int64_t b = 0; b < hs->B; b++)
            LTX2_TRY(hs->be->download(hs->be, ctx, hs->out[b] + l * hs->stride + hs->head,
                                      (const float *)h->data + b * per, (size_t)per * sizeof(float)));
    } else {
        if (!hs->stage) {
            if (!(hs->stage = malloc((size_t)plane * es)))
                return LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma forward: %lld x %lld staged %s state", (long long)hs->B,
                                  (long long)per, ltx2_dtype_name(h->dtype));
            hs->stage_dt = h->dtype;
        } else if (h->dtype != hs->stage_dt) { /* every layer's state has the forward's one dtype */
            return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "Gemma forward: hidden state %lld is %s, the staging %s",
                              (long long)l, ltx2_dtype_name(h->dtype), ltx2_dtype_name(hs->stage_dt));
        }
        LTX2_TRY(hs->be->download(hs->be, ctx, hs->stage, h->data, (size_t)plane * es));
        for (int64_t b = 0; b < hs->B; b++)
            LTX2_TRY(ltx2_convert(ctx, hs->out[b] + l * hs->stride + hs->head, LTX2_F32,
                                  (const char *)hs->stage + (size_t)(b * per) * es, h->dtype, (size_t)per));
    }
    return hs->poll ? hs->poll(hs->poll_user, ctx, l, hs->L1 - 1) : LTX2_OK;
}

typedef struct layer_bufs {
    ltx2_tensor h, xn, y, q, k, v, o, g, u;
} layer_bufs;

/* Where a layer's keys and values go when generation caches them: the layer's cache rows, the
 * row the first new token takes, and for a decoding step (one query against every cached key) the
 * key masks that replace the causal and windowed ones. */
typedef struct kv_slot {
    const ltx2_tensor *k, *v; /* [1, cap, KV] */
    int64_t at;
    const ltx2_tensor *global_mask, *local_mask; /* [1, at + 1]; NULL when prefilling */
} kv_slot;

/* One decoder layer on b->h, whose input norm b->xn holds already (the previous layer, or the
 * forward for layer 0, made it); on return b->xn is h normalised by next_norm (the next layer's
 * input norm, or the final norm after the last layer): each residual add is fused with the norm of
 * the branch before it and the norm of h after it (add_rms_norm). */
static ltx2_status layer_forward(gemma_run *r, const ltx2_gemma_config *c, const ltx2_gemma_layer_w *L, bool sliding,
                                 const rope_set *rope, const ltx2_tensor *mask, const kv_slot *kv,
                                 const ltx2_tensor *blocks, const ltx2_tensor *next_norm, layer_bufs *b) {
    ltx2_context *ctx = r->ctx;
    const ltx2_backend *be = r->be;
    const float eps = (float)c->eps;
    LTX2_TRY(linear(r, &L->q, &b->xn, &b->q));
    LTX2_TRY(linear(r, &L->k, &b->xn, &b->k));
    LTX2_TRY(linear(r, &L->v, &b->xn, &b->v));
    /* QK-norm per head, then RoPE: one pass over q and one over k */
    LTX2_TRY(ltx2_backend_rms_norm_rope(be, ctx, &b->q, &L->q_norm, eps, c->heads, &rope->c, &rope->s, &b->q));
    LTX2_TRY(ltx2_backend_rms_norm_rope(be, ctx, &b->k, &L->k_norm, eps, c->kv_heads, &rope->c, &rope->s, &b->k));
    ltx2_attn_args aa = {.heads = c->heads, .kv_heads = c->kv_heads,
                         .scale = (float)(1.0 / sqrt(c->query_pre_attn_scalar)), .key_mask = mask,
                         .causal = true, .window = sliding ? c->sliding_window : 0, .empty_zero = true,
                         .blocks = blocks};
    ltx2_tensor keys = b->k, values = b->v;
    if (kv) {
        const size_t row = (size_t)b->k.shape[2] * ltx2_dtype_size(b->k.dtype), n = (size_t)b->k.shape[1] * row;
        LTX2_TRY(be->copy(be, ctx, (char *)kv->k->data + (size_t)kv->at * row, b->k.data, n));
        LTX2_TRY(be->copy(be, ctx, (char *)kv->v->data + (size_t)kv->at * row, b->v.data, n));
        if (kv->global_mask) {
            /* one query, the newest token, against every cached key: nothing lies after it, so the
             * causal mask is moot and the window is a key mask (i - j < window on the rows, padding
             * counted, as the full forward applies it) */
            keys = *kv->k, values = *kv->v;
            keys.shape[1] = values.shape[1] = kv->at + 1;
            aa.causal = false, aa.window = 0, aa.blocks = NULL;
            aa.key_mask = sliding ? kv->local_mask : kv->global_mask;
        }
    }
    LTX2_TRY(ltx2_backend_attention(be, ctx, &b->q, &keys, &values, &aa, &b->o));
    LTX2_TRY(linear(r, &L->o, &b->o, &b->y));
    LTX2_TRY(ltx2_backend_add_rms_norm(be, ctx, &b->h, &b->y, &L->post_attn_norm, &L->pre_ff_norm, eps, &b->xn));
    LTX2_TRY(linear_act(r, &L->gate, &b->xn, true, &b->g));
    LTX2_TRY(linear(r, &L->up, &b->xn, &b->u));
    LTX2_TRY(ltx2_backend_binary(be, ctx, LTX2_OP_MUL, &b->g, &b->u, &b->g));
    LTX2_TRY(linear(r, &L->down, &b->g, &b->y));
    return ltx2_backend_add_rms_norm(be, ctx, &b->h, &b->y, &L->post_ff_norm, next_norm, eps, &b->xn);
}

uint64_t ltx2_gemma_device_bytes(const ltx2_gemma_config *c, int64_t B, int64_t S, bool fp8) {
    const uint64_t D = (uint64_t)c->hidden, Q = (uint64_t)(c->heads * c->head_dim),
                   KV = (uint64_t)(c->kv_heads * c->head_dim), F = (uint64_t)c->ffn, rows = (uint64_t)(B * S);
    const uint64_t linears = D * Q * 2 + 2 * D * KV + 3 * D * F, norms = 4 * D + 2 * (uint64_t)c->head_dim;
    const uint64_t widest = D * F > D * Q ? D * F : D * Q; /* the widened scratch of one fp8 Linear */
    const uint64_t weights = fp8 ? (uint64_t)c->layers * (linears + 2 * norms) + 2 * D + 2 * widest
                                 : 2 * ((uint64_t)c->layers * (linears + norms) + D);
    /* h, xn, y; q, o; k, v; gate, up (2 bytes each) + the u8 mask + two RoPE table sets (f32 cos and
     * sin of one head, one row: the prompts' shared positions; a forward with each sample's own
     * positions holds B rows) */
    const uint64_t acts = 2 * rows * (3 * D + 2 * Q + 2 * KV + 2 * F) + rows;
    const uint64_t rope = 2 * 2 * 4 * (uint64_t)S * (uint64_t)(c->head_dim / 2);
    return weights + acts + rope;
}

ltx2_status ltx2_gemma_forward(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                               const uint8_t *mask, int64_t B, int64_t S, float *hidden) {
    return ltx2_gemma_forward_polled(ctx, w, ids, mask, B, S, hidden, NULL, NULL);
}

ltx2_status ltx2_gemma_forward_polled(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                      const uint8_t *mask, int64_t B, int64_t S, float *hidden, ltx2_gemma_poll poll,
                                      void *poll_user) {
    if (!w || !hidden || B <= 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma forward: NULL argument");
    const int64_t per = S * w->cfg.hidden, L1 = w->cfg.layers + 1;
    /* the layer-major states, then each sample's transposed into the layer-last output */
    float **out = malloc((size_t)B * sizeof *out);
    float *major = malloc((size_t)(B * L1 * per) * sizeof *major);
    ltx2_status st = out && major ? LTX2_OK
                                  : LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma forward: %lld x %lld x %lld hidden states",
                                               (long long)B, (long long)L1, (long long)per);
    for (int64_t b = 0; st == LTX2_OK && b < B; b++) out[b] = major + b * L1 * per;
    if (st == LTX2_OK) st = ltx2_gemma_forward_split(ctx, w, ids, mask, B, S, 0, out, poll, poll_user);
    for (int64_t b = 0; st == LTX2_OK && b < B; b++)
        ltx2_text_states_to_layer_last(out[b], per, L1, hidden + b * per * L1);
    free(major);
    free(out);
    return st;
}

int64_t ltx2_gemma_common_padding(const uint8_t *mask, int64_t B, int64_t S) {
    int64_t pad = S;
    for (int64_t b = 0; b < B; b++) {
        int64_t k = 0;
        while (k < pad && !mask[b * S + k]) k++;
        pad = k;
    }
    return pad;
}

int64_t ltx2_gemma_pipeline_skip(const ltx2_backend *be, const uint8_t *mask, int64_t B, int64_t S) {
    const int64_t pad = ltx2_gemma_common_padding(mask, B, S);
    const int64_t q = be->device == LTX2_DEVICE_CPU ? LTX2_GEMMA_SKIP_QUANTUM_CPU : LTX2_GEMMA_SKIP_QUANTUM_DEVICE;
    return pad - pad % q;
}

/* The forward over positions skip .. S-1 of every sample, each at its own RoPE position, into
 * sink (which places the rows after the skipped ones). */
static ltx2_status forward_from(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                const uint8_t *mask, int64_t B, int64_t S, int64_t skip, ltx2_gemma_sink sink,
                                void *user) {
    if (!ids || !mask) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma forward: NULL argument");
    if (skip == 0) return ltx2_gemma_forward_to(ctx, w, ids, mask, B, S, sink, user);
    const int64_t pad = ltx2_gemma_common_padding(mask, B, S);
    if (skip < 0 || skip > pad || skip >= S)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma forward: %lld leading positions skipped, but %lld of %lld "
                          "are padding in every sample (and one must remain)", (long long)skip, (long long)pad,
                          (long long)S);
    const int64_t n = S - skip;
    int32_t *sub_ids = malloc((size_t)(B * n) * sizeof *sub_ids);
    uint8_t *sub_mask = malloc((size_t)(B * n));
    int64_t *pos = malloc((size_t)(B * n) * sizeof *pos);
    ltx2_status st = sub_ids && sub_mask && pos ? LTX2_OK
                                                : LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma forward: %lld x %lld positions",
                                                             (long long)B, (long long)n);
    for (int64_t b = 0; st == LTX2_OK && b < B; b++) {
        memcpy(sub_ids + b * n, ids + b * S + skip, (size_t)n * sizeof *sub_ids);
        memcpy(sub_mask + b * n, mask + b * S + skip, (size_t)n);
        for (int64_t k = 0; k < n; k++) pos[b * n + k] = skip + k; /* the positions the full forward gives */
    }
    if (st == LTX2_OK) st = ltx2_gemma_forward_pos(ctx, w, sub_ids, sub_mask, pos, B, n, sink, user);
    free(sub_ids), free(sub_mask), free(pos);
    return st;
}

ltx2_status ltx2_gemma_forward_split(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                     const uint8_t *mask, int64_t B, int64_t S, int64_t skip, float *const *hidden_b,
                                     ltx2_gemma_poll poll, void *poll_user) {
    if (!w || !hidden_b || B <= 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma forward: NULL argument");
    for (int64_t b = 0; b < B; b++)
        if (!hidden_b[b]) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma forward: NULL output of sample %lld",
                                            (long long)b);
    const int64_t D = w->cfg.hidden;
    host_sink hs = {.be = w->be, .out = hidden_b, .B = B, .per = (S - skip) * D, .stride = S * D, .head = skip * D,
                    .L1 = w->cfg.layers + 1, .poll = poll, .poll_user = poll_user};
    const ltx2_status st = forward_from(ctx, w, ids, mask, B, S, skip, store_layer, &hs);
    free(hs.stage);
    return st;
}

/* The device sink: sample b's state of layer l copied into out_b[b] at layer l, on the device. */
typedef struct keep_sink {
    const ltx2_backend *be;
    ltx2_tensor *const *out; /* [B]: sample b's states [L1, S, D] */
    int64_t B, per, L1;      /* per: records computed a sample, S' * D */
    int64_t stride, head;    /* as host_sink's */
    void *zeros;             /* head zero values on the device, made by the first layer */
    ltx2_gemma_poll poll;
    void *poll_user;
} keep_sink;

static ltx2_status keep_layer(void *user, ltx2_context *ctx, const ltx2_tensor *h, int64_t l) {
    keep_sink *ks = user;
    const size_t es = ltx2_dtype_size(h->dtype), n = (size_t)ks->per * es;
    if (ltx2_tensor_numel(h) != ks->B * ks->per || !ltx2_tensor_is_contiguous(h))
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "Gemma forward: hidden state %lld is not %lld contiguous values",
                          (long long)l, (long long)(ks->B * ks->per));
    const size_t head = (size_t)ks->head * es;
    if (head && !ks->zeros) {
        void *z = calloc(1, head);
        ltx2_status st = z ? ks->be->alloc(ks->be, ctx, head, &ks->zeros)
                           : LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma forward: %zu bytes of zero rows", head);
        if (st == LTX2_OK) st = ks->be->upload(ks->be, ctx, ks->zeros, z, head);
        free(z);
        LTX2_TRY(st);
    }
    for (int64_t b = 0; b < ks->B; b++) {
        if (ks->out[b]->dtype != h->dtype)
            return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "Gemma forward: states kept in %s, hidden state %lld is %s",
                              ltx2_dtype_name(ks->out[b]->dtype), (long long)l, ltx2_dtype_name(h->dtype));
        char *layer = (char *)ks->out[b]->data + (size_t)(l * ks->stride) * es;
        if (head) LTX2_TRY(ks->be->copy(ks->be, ctx, layer, ks->zeros, head));
        LTX2_TRY(ks->be->copy(ks->be, ctx, layer + head, (const char *)h->data + (size_t)b * n, n));
    }
    return ks->poll ? ks->poll(ks->poll_user, ctx, l, ks->L1 - 1) : LTX2_OK;
}

ltx2_status ltx2_gemma_forward_keep(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                    const uint8_t *mask, int64_t B, int64_t S, int64_t skip, ltx2_tensor *const *out_b,
                                    ltx2_gemma_poll poll, void *poll_user) {
    if (!w || !out_b || B <= 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma forward: NULL argument");
    const int64_t D = w->cfg.hidden, L1 = w->cfg.layers + 1;
    for (int64_t b = 0; b < B; b++) {
        const ltx2_tensor *t = out_b[b];
        if (!t || !t->data || t->device != w->be->device || ltx2_tensor_numel(t) != L1 * S * D ||
            !ltx2_tensor_is_contiguous(t))
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma forward: sample %lld's states must be a contiguous "
                              "[%lld, %lld, %lld] tensor on the weights' device", (long long)b, (long long)L1,
                              (long long)S, (long long)D);
    }
    keep_sink ks = {.be = w->be, .out = out_b, .B = B, .per = (S - skip) * D, .L1 = L1, .stride = S * D,
                    .head = skip * D, .poll = poll, .poll_user = poll_user};
    const ltx2_status st = forward_from(ctx, w, ids, mask, B, S, skip, keep_layer, &ks);
    if (ks.zeros) {
        w->be->sync(w->be, NULL); /* the copies from it may still be queued */
        w->be->free(w->be, ks.zeros);
    }
    return st;
}

ltx2_status ltx2_gemma_forward_to(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                  const uint8_t *mask, int64_t B, int64_t S, ltx2_gemma_sink sink, void *user) {
    return ltx2_gemma_forward_pos(ctx, w, ids, mask, NULL, B, S, sink, user);
}

struct ltx2_gemma_kv {
    int64_t cap, len;
    ltx2_tensor *k, *v; /* [layers] of [1, cap, KV] on the weights' backend */
    uint8_t *mask;      /* [cap] host: the rows' attention mask */
    ltx2_bpool *pool;
    /* the forwards' activations, kept across the decoding steps (one shape after the prompt's):
     * ltx2_bpool_begin_run / end_run, so a step takes no buffer from the device allocator */
    ltx2_bpool *act;
};

ltx2_status ltx2_gemma_kv_create(ltx2_context *ctx, const ltx2_gemma_weights *w, int64_t cap, ltx2_gemma_kv **out) {
    *out = NULL;
    if (!w || cap < 1) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma K/V cache: %lld rows", (long long)cap);
    const ltx2_gemma_config *c = &w->cfg;
    ltx2_gemma_kv *kv = calloc(1, sizeof *kv);
    ltx2_status st = LTX2_OK;
    if (!kv || !(kv->k = calloc((size_t)c->layers, sizeof *kv->k)) ||
        !(kv->v = calloc((size_t)c->layers, sizeof *kv->v)) || !(kv->mask = malloc((size_t)cap)))
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma K/V cache");
    if (st == LTX2_OK) {
        kv->cap = cap;
        st = ltx2_bpool_create(ctx, w->be, &kv->pool);
    }
    const int64_t s[3] = {1, cap, c->kv_heads * c->head_dim};
    for (int64_t l = 0; st == LTX2_OK && l < c->layers; l++) {
        st = ltx2_bpool_tensor(ctx, kv->pool, w->dtype, 3, s, &kv->k[l]);
        if (st == LTX2_OK) st = ltx2_bpool_tensor(ctx, kv->pool, w->dtype, 3, s, &kv->v[l]);
    }
    if (st != LTX2_OK) {
        ltx2_gemma_kv_free(kv);
        return st;
    }
    *out = kv;
    return LTX2_OK;
}

uint64_t ltx2_gemma_kv_bytes(const ltx2_gemma_config *cfg, int64_t cap, size_t elem) {
    return 2 * (uint64_t)cfg->layers * (uint64_t)cap * (uint64_t)(cfg->kv_heads * cfg->head_dim) * elem;
}

int64_t ltx2_gemma_kv_act_allocs(const ltx2_gemma_kv *kv) { return kv && kv->act ? ltx2_bpool_allocs(kv->act) : 0; }

void ltx2_gemma_kv_free(ltx2_gemma_kv *kv) {
    if (!kv) return;
    ltx2_bpool_free(kv->act);
    ltx2_bpool_free(kv->pool);
    free(kv->k), free(kv->v), free(kv->mask);
    free(kv);
}

/* A decoding step's key masks over the cached rows 0 .. len (the new token's row included): the
 * rows' attention mask, and for sliding-window layers also len - j < window. */
static ltx2_status decode_masks(gemma_run *r, const ltx2_gemma_config *c, const ltx2_gemma_kv *kv, ltx2_tensor out[2]) {
    /* buffers of the cache's capacity viewed at n: every step takes the same sizes from the pool */
    const int64_t n = kv->len + 1, s[2] = {1, kv->cap};
    uint8_t *local = malloc((size_t)n);
    if (!local) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "Gemma K/V cache masks");
    for (int64_t j = 0; j < n; j++) local[j] = kv->mask[j] && (c->sliding_window <= 0 || kv->len - j < c->sliding_window);
    ltx2_status st = ltx2_bpool_tensor(r->ctx, r->pool, LTX2_U8, 2, s, &out[0]);
    if (st == LTX2_OK) st = ltx2_bpool_tensor(r->ctx, r->pool, LTX2_U8, 2, s, &out[1]);
    const int64_t v[2] = {1, n};
    for (int i = 0; i < 2 && st == LTX2_OK; i++) {
        void *d = out[i].data;
        out[i] = ltx2_tensor_make(d, LTX2_U8, 2, v);
        out[i].device = r->be->device;
    }
    if (st == LTX2_OK) st = r->be->upload(r->be, r->ctx, out[0].data, kv->mask, (size_t)n);
    if (st == LTX2_OK) st = r->be->upload(r->be, r->ctx, out[1].data, local, (size_t)n);
    free(local);
    return st;
}

/* Whether hidden state 0 is made on the device (embed_device): a device that multiplies in the
 * table's dtype and converts it to the compute dtype. */
static bool embed_on_device(const gemma_run *r, const ltx2_gemma_weights *w) {
    const ltx2_dtype t = w->embed->dtype;
    return r->be->device != LTX2_DEVICE_CPU && ltx2_backend_supports(r->be, LTX2_OP_MUL, t) &&
           (t == r->dt || ltx2_backend_supports(r->be, LTX2_OP_CONVERT, t));
}

/* Hidden state 0 into h [B, S, D] (r->dt) on the device: the embedding rows of ids gathered on the
 * host as stored (a bf16 table: half the bytes of the f32 rows the host path uploads), times
 * embed_scale in the table's dtype there (one rounding of the fp32 product, as the host path's
 * upload rounds it), then converted to r->dt when that differs: the host path's bits. */
static ltx2_status embed_device(gemma_run *r, const ltx2_gemma_weights *w, const int32_t *ids, ltx2_tensor *h) {
    const ltx2_dtype t = w->embed->dtype;
    const int64_t n_rows = h->shape[0] * h->shape[1], D = h->shape[2];
    const size_t row_bytes = (size_t)D * ltx2_dtype_size(t);
    ltx2_tensor raw = *h, sc;
    if (t != r->dt) LTX2_TRY(ltx2_bpool_tensor(r->ctx, r->pool, t, 3, h->shape, &raw));
    uint8_t *rows = malloc((size_t)n_rows * row_bytes);
    if (!rows) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "Gemma forward: %lld embedding rows", (long long)n_rows);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n_rows; i++)
        memcpy(rows + (size_t)i * row_bytes, (const uint8_t *)w->embed->data + (size_t)ids[i] * row_bytes, row_bytes);
    const ltx2_status st = r->be->upload(r->be, r->ctx, raw.data, rows, (size_t)n_rows * row_bytes);
    free(rows);
    LTX2_TRY(st);
    const float scale = embed_scale(w);
    const int64_t one = 1;
    LTX2_TRY(ltx2_bpool_upload_f32(r->ctx, r->pool, &scale, t, 1, &one, &sc)); /* exact: scale is a value of t */
    LTX2_TRY(ltx2_backend_binary(r->be, r->ctx, LTX2_OP_MUL, &raw, &sc, &raw));
    return t == r->dt ? LTX2_OK : ltx2_backend_convert(r->be, r->ctx, &raw, h);
}

/* The image rows into the embeddings tmp [B * S, D] (ids equal to the image token, in order) and
 * their block ids blk [B * S] (each contiguous run of image tokens one block, -1 elsewhere). */
static ltx2_status place_images(ltx2_context *ctx, const ltx2_gemma_images *img, const int32_t *ids, int64_t B,
                                int64_t S, int64_t D, float *tmp, int32_t *blk) {
    int64_t k = 0;
    for (int64_t b = 0; b < B; b++) {
        int32_t next = 0;
        for (int64_t s = 0; s < S; s++) {
            const int64_t t = b * S + s;
            if (ids[t] != img->image_token) {
                blk[t] = -1;
                continue;
            }
            blk[t] = s > 0 && ids[t - 1] == img->image_token ? blk[t - 1] : next++;
            if (k < img->n) memcpy(tmp + t * D, img->features + k * D, (size_t)D * sizeof(float));
            k++;
        }
    }
    if (k != img->n)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "Gemma forward: %lld image tokens (id %d) in the prompt for %lld image "
                          "feature rows", (long long)k, img->image_token, (long long)img->n);
    return LTX2_OK;
}

/* The forward over B x S tokens; with kv (B 1) the keys and values are cached from row kv->len on,
 * and a call after the first (one token) attends to every cached row. img (may be NULL) puts image
 * features in place of image tokens, outside decoding steps. */
static ltx2_status run_tokens(ltx2_context *ctx, const ltx2_gemma_weights *w, ltx2_gemma_kv *kv, const int32_t *ids,
                              const uint8_t *mask, const int64_t *positions, int64_t B, int64_t S,
                              const ltx2_gemma_images *img, ltx2_gemma_sink sink, void *user) {
    if (!w || !ids || !mask || !sink)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma forward: NULL argument");
    const ltx2_gemma_config *c = &w->cfg;
    if (B <= 0 || S <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "Gemma forward: %lld x %lld tokens", (long long)B, (long long)S);
    const bool decode = kv && kv->len > 0;
    if (img && (decode || !img->features || img->n < 0))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma forward: image features go with the prompt, not a "
                          "decoding step");
    if (kv && (B != 1 || (decode && S != 1) || kv->len + S > kv->cap))
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "Gemma K/V cache: %lld x %lld new tokens with %lld of %lld rows used (one sequence; after "
                          "the prompt, one token a call)",
                          (long long)B, (long long)S, (long long)kv->len, (long long)kv->cap);
    for (int64_t i = 0; i < B * S; i++)
        if (ids[i] < 0 || ids[i] >= c->vocab)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                              "Gemma forward: token %lld of row %lld is id %d, outside the %lld-entry embedding table",
                              (long long)(i % S), (long long)(i / S), ids[i], (long long)c->vocab);
    const int64_t D = c->hidden, n_rows = B * S;
    const int64_t Q = c->heads * c->head_dim, KV = c->kv_heads * c->head_dim;
    gemma_run r = {ctx, w->be, NULL, w->dtype};
    if (kv) {
        if (!kv->act) LTX2_TRY(ltx2_bpool_create(ctx, w->be, &kv->act));
        const int64_t key[2] = {B, S};
        ltx2_bpool_begin_run(kv->act, key, 2);
        r.pool = kv->act;
    } else {
        LTX2_TRY(ltx2_bpool_create(ctx, w->be, &r.pool));
    }
    /* the host embeddings only where hidden state 0 is not made on the device */
    const bool dev_embed = !img && embed_on_device(&r, w);
    float *tmp = dev_embed ? NULL : malloc((size_t)(n_rows * D) * sizeof(float));
    int32_t *blk = img ? malloc((size_t)n_rows * sizeof *blk) : NULL;
    ltx2_tensor blocks_t, *blocks = NULL;
    ltx2_status st = LTX2_OK;
#define TRY_(e)                               \
    do {                                      \
        if ((st = (e)) != LTX2_OK) goto done; \
    } while (0)
    if ((!dev_embed && !tmp) || (img && !blk)) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma forward: %lld x %lld host floats", (long long)n_rows, (long long)D);
        goto done;
    }
    layer_bufs b;
    int64_t hs[3] = {B, S, D};
    if (dev_embed) {
        TRY_(tensor(&r, B, S, D, &b.h));
        TRY_(embed_device(&r, w, ids, &b.h));
    } else {
        /* embeddings: gathered and scaled on the host, uploaded in the compute dtype (hidden state 0
         * is that rounded tensor, as the reference's embed * scale in the weights' dtype is) */
        const float scale = embed_scale(w);
        const size_t row_bytes = (size_t)D * ltx2_dtype_size(w->embed->dtype);
        for (int64_t t = 0; t < n_rows && st == LTX2_OK; t++) {
            float *row = tmp + t * D;
            st = ltx2_convert(ctx, row, LTX2_F32, (const uint8_t *)w->embed->data + (size_t)ids[t] * row_bytes,
                              w->embed->dtype, (size_t)D);
            for (int64_t d = 0; d < D; d++) row[d] *= scale;
        }
        if (st != LTX2_OK) goto done;
        /* the image features replace their tokens' embeddings unscaled (Gemma3Model's masked_scatter
         * after the scaled embedding) */
        if (img) TRY_(place_images(ctx, img, ids, B, S, D, tmp, blk));
        TRY_(ltx2_bpool_upload_f32(ctx, r.pool, tmp, r.dt, 3, hs, &b.h));
    }
    TRY_(sink(user, ctx, &b.h, 0));
    TRY_(tensor(&r, B, S, D, &b.xn));
    TRY_(tensor(&r, B, S, D, &b.y));
    TRY_(tensor(&r, B, S, Q, &b.q));
    TRY_(tensor(&r, B, S, KV, &b.k));
    TRY_(tensor(&r, B, S, KV, &b.v));
    TRY_(tensor(&r, B, S, Q, &b.o));
    TRY_(tensor(&r, B, S, c->ffn, &b.g));
    TRY_(tensor(&r, B, S, c->ffn, &b.u));
    int64_t ms[2] = {B, S};
    ltx2_tensor mask_t, key_masks[2];
    TRY_(ltx2_bpool_tensor(ctx, r.pool, LTX2_U8, 2, ms, &mask_t));
    TRY_(r.be->upload(r.be, ctx, mask_t.data, mask, (size_t)n_rows));
    if (kv) memcpy(kv->mask + kv->len, mask, (size_t)S);
    if (decode) TRY_(decode_masks(&r, c, kv, key_masks));
    if (img) {
        TRY_(ltx2_bpool_tensor(ctx, r.pool, LTX2_I32, 2, ms, &blocks_t));
        TRY_(r.be->upload(r.be, ctx, blocks_t.data, blk, (size_t)n_rows * sizeof *blk));
        blocks = &blocks_t;
    }
    rope_set global, local;
    TRY_(rope_upload(&r, c, B, S, positions, c->rope_theta, c->rope_linear_factor, &global));
    TRY_(rope_upload(&r, c, B, S, positions, c->rope_local_theta, 1.0, &local));
    TRY_(ltx2_backend_rms_norm(r.be, ctx, &b.h, &w->layers[0].in_norm, (float)c->eps, &b.xn));
    for (int64_t l = 0; l < c->layers; l++) {
        const kv_slot slot = {kv ? &kv->k[l] : NULL, kv ? &kv->v[l] : NULL, kv ? kv->len : 0,
                              decode ? &key_masks[0] : NULL, decode ? &key_masks[1] : NULL};
        /* after the last layer its output normalised by the final norm: the last hidden state */
        const ltx2_tensor *next_norm = l + 1 < c->layers ? &w->layers[l + 1].in_norm : &w->final_norm;
        TRY_(layer_forward(&r, c, &w->layers[l], c->sliding[l], c->sliding[l] ? &local : &global, &mask_t,
                           kv ? &slot : NULL, blocks, next_norm, &b));
        /* the last layer's raw output is not a hidden state: the final norm's is */
        if (l + 1 < c->layers) TRY_(sink(user, ctx, &b.h, l + 1));
    }
    TRY_(sink(user, ctx, &b.xn, c->layers));
    if (kv) kv->len += S;
#undef TRY_
done:
    if (st != LTX2_OK) w->be->sync(w->be, NULL);
    free(tmp);
    free(blk);
    if (kv) ltx2_bpool_end_run(r.pool, st == LTX2_OK);
    else ltx2_bpool_free(r.pool);
    return st;
}

ltx2_status ltx2_gemma_forward_pos(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                   const uint8_t *mask, const int64_t *positions, int64_t B, int64_t S,
                                   ltx2_gemma_sink sink, void *user) {
    return run_tokens(ctx, w, NULL, ids, mask, positions, B, S, NULL, sink, user);
}

ltx2_status ltx2_gemma_forward_kv(ltx2_context *ctx, const ltx2_gemma_weights *w, ltx2_gemma_kv *kv, const int32_t *ids,
                                  const uint8_t *mask, const int64_t *positions, int64_t S, ltx2_gemma_sink sink,
                                  void *user) {
    return ltx2_gemma_forward_kv_images(ctx, w, kv, ids, mask, positions, S, NULL, sink, user);
}

ltx2_status ltx2_gemma_forward_kv_images(ltx2_context *ctx, const ltx2_gemma_weights *w, ltx2_gemma_kv *kv,
                                         const int32_t *ids, const uint8_t *mask, const int64_t *positions, int64_t S,
                                         const ltx2_gemma_images *img, ltx2_gemma_sink sink, void *user) {
    if (!kv) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma forward: NULL K/V cache");
    return run_tokens(ctx, w, kv, ids, mask, positions, 1, S, img, sink, user);
}
