/* Gemma-3 text generation, the core of --enhance-prompt (issue #13 item 9): the LM head (the last
 * position's final-norm hidden state times the tied embedding table, as Gemma3ForConditionalGeneration's
 * lm_head), transformers' sampling warpers, and a decoding loop that runs the prompt once into a
 * K/V cache and then one token per step. */
#include "model/gemma_generate.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_pool.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "core/timer.h"

ltx2_status ltx2_gemma_keep_last(void *user, ltx2_context *ctx, const ltx2_tensor *h, int64_t layer) {
    ltx2_gemma_last_row *lr = user;
    if (layer != lr->layer) return LTX2_OK;
    int64_t s1[1] = {lr->D};
    ltx2_tensor v = ltx2_tensor_make((char *)h->data + (size_t)((lr->S - 1) * lr->D) * ltx2_dtype_size(h->dtype),
                                     h->dtype, 1, s1);
    v.device = h->device;
    return ltx2_backend_to_host_f32(ctx, lr->be, &v, lr->h);
}

/* The tied table on a device for generation's LM head (the encoder never needs it there): [V, D]
 * in the weights' dtype, filled from the mapped file LM_HEAD_CHUNK rows at a time through host f32. */
#define LM_HEAD_CHUNK 4096

typedef struct lm_table {
    ltx2_bpool *pool;
    ltx2_tensor t; /* data NULL: the CPU's mapped table is used */
} lm_table;

static ltx2_status lm_table_upload(ltx2_context *ctx, const ltx2_gemma_weights *w, lm_table *lt) {
    if (w->be->device == LTX2_DEVICE_CPU) return LTX2_OK;
    const int64_t D = w->cfg.hidden, V = w->cfg.vocab, s[2] = {V, D};
    LTX2_TRY(ltx2_bpool_create(ctx, w->be, &lt->pool));
    LTX2_TRY(ltx2_bpool_tensor(ctx, lt->pool, w->dtype, 2, s, &lt->t));
    float *host = malloc((size_t)(LM_HEAD_CHUNK * D) * sizeof *host);
    if (!host) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma LM head: %d rows", LM_HEAD_CHUNK);
    const size_t src_row = (size_t)D * ltx2_dtype_size(w->embed->dtype), dst_row = (size_t)D * ltx2_dtype_size(w->dtype);
    ltx2_status st = LTX2_OK;
    for (int64_t r0 = 0; st == LTX2_OK && r0 < V; r0 += LM_HEAD_CHUNK) {
        const int64_t n = V - r0 < LM_HEAD_CHUNK ? V - r0 : LM_HEAD_CHUNK, cs[2] = {n, D};
        st = ltx2_convert(ctx, host, LTX2_F32, (const uint8_t *)w->embed->data + (size_t)r0 * src_row, w->embed->dtype,
                          (size_t)(n * D));
        ltx2_tensor rows = ltx2_tensor_make((char *)lt->t.data + (size_t)r0 * dst_row, w->dtype, 2, cs);
        rows.device = lt->t.device;
        if (st == LTX2_OK) st = ltx2_backend_from_host_f32(ctx, w->be, host, &rows);
    }
    free(host);
    return st;
}

/* lm_head: one GEMM, on the CPU backend with the mapped tied table in its own dtype (the CPU GEMM
 * widens bf16 weights exactly), or on the weights' device with lt's copy. h [D] -> logits [V]. */
static ltx2_status lm_head_on(ltx2_context *ctx, const ltx2_gemma_weights *w, const lm_table *lt, float *h,
                              float *logits) {
    const int64_t D = w->cfg.hidden, V = w->cfg.vocab;
    if (lt && lt->t.data) {
        const size_t mark = ltx2_bpool_mark(lt->pool);
        const int64_t hs[2] = {1, D}, ls[2] = {1, V};
        ltx2_tensor x, y;
        ltx2_status st = ltx2_bpool_upload_f32(ctx, lt->pool, h, w->dtype, 2, hs, &x);
        if (st == LTX2_OK) st = ltx2_bpool_tensor(ctx, lt->pool, w->dtype, 2, ls, &y);
        if (st == LTX2_OK) st = ltx2_backend_gemm(w->be, ctx, &x, &lt->t, LTX2_B_NK, NULL, &y);
        if (st == LTX2_OK) st = ltx2_backend_to_host_f32(ctx, w->be, &y, logits);
        ltx2_bpool_release(lt->pool, mark);
        return st;
    }
    int64_t es[2] = {V, D}, hs[2] = {1, D}, ls[2] = {1, V};
    const ltx2_tensor E = ltx2_tensor_make((void *)w->embed->data, w->embed->dtype, 2, es);
    const ltx2_tensor x = ltx2_tensor_make(h, LTX2_F32, 2, hs);
    ltx2_tensor y = ltx2_tensor_make(logits, LTX2_F32, 2, ls);
    return ltx2_backend_gemm(ltx2_backend_cpu(), ctx, &x, &E, LTX2_B_NK, NULL, &y);
}

ltx2_status ltx2_gemma_logits_last(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                   const uint8_t *mask_in, const int64_t *positions, int64_t S, float *logits) {
    if (!w || !ids || !logits || S <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma logits: NULL argument or %lld tokens", (long long)S);
    const int64_t D = w->cfg.hidden;
    uint8_t *mask = malloc((size_t)S);
    float *h = malloc((size_t)D * sizeof(float));
    ltx2_status st = LTX2_OK;
    if (!mask || !h) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma logits: %lld tokens", (long long)S);
    if (st == LTX2_OK) {
        if (mask_in) memcpy(mask, mask_in, (size_t)S);
        else memset(mask, 1, (size_t)S);
        ltx2_gemma_last_row lr = {w->be, w->cfg.layers, S, D, h};
        st = ltx2_gemma_forward_pos(ctx, w, ids, mask, positions, 1, S, ltx2_gemma_keep_last, &lr);
    }
    if (st == LTX2_OK) st = lm_head_on(ctx, w, NULL, h, logits);
    free(mask);
    free(h);
    return st;
}

/* ---- sampling ---------------------------------------------------------------------------------- */

typedef struct scored {
    float s;
    int32_t id;
} scored;

/* Ascending by score, equal scores by id, so the top-p cut among tied tokens is deterministic.
 * torch.sort is not stable on long rows: which of the tokens tied at the cut it keeps follows its
 * sort's internals (they are equally likely; the count kept is the same). */
static int by_score(const void *a, const void *b) {
    const scored *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The k-th largest of x [V] (k <= V), through a min-heap of the k largest seen. */
static float kth_largest(const float *x, int64_t V, int64_t k, float *heap) {
    int64_t n = 0;
    for (int64_t v = 0; v < V; v++) {
        float e = x[v];
        if (n == k) {
            if (!(e > heap[0])) continue;
            heap[0] = e; /* replace the smallest, sift down */
            for (int64_t i = 0;;) {
                int64_t c = 2 * i + 1;
                if (c >= n) break;
                if (c + 1 < n && heap[c + 1] < heap[c]) c++;
                if (!(heap[c] < heap[i])) break;
                const float t = heap[c];
                heap[c] = heap[i], heap[i] = t, i = c;
            }
            continue;
        }
        int64_t i = n++; /* append, sift up */
        heap[i] = e;
        while (i > 0 && heap[(i - 1) / 2] > heap[i]) {
            const float t = heap[(i - 1) / 2];
            heap[(i - 1) / 2] = heap[i], heap[i] = t, i = (i - 1) / 2;
        }
    }
    return heap[0];
}

ltx2_status ltx2_gemma_warp(ltx2_context *ctx, const ltx2_gemma_sampling *s, const float *logits, int64_t V,
                            float *probs) {
    if (!s || !logits || !probs || V < 1 || !(s->temperature > 0.0f) || s->top_k < 0 || !(s->top_p > 0.0f) ||
        s->top_p > 1.0f)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "Gemma sampling: temperature %g must be > 0, top_k %lld >= 0, top_p %g in (0, 1]",
                          s ? (double)s->temperature : 0.0, s ? (long long)s->top_k : 0LL, s ? (double)s->top_p : 0.0);
    const int64_t k = s->top_k < V ? s->top_k : V;
    scored *sv = malloc((size_t)V * sizeof *sv);
    float *heap = malloc((size_t)(k > 0 ? k : 1) * sizeof *heap);
    if (!sv || !heap) {
        free(sv), free(heap);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma sampling: %lld logits", (long long)V);
    }
    /* TemperatureLogitsWarper: scores / temperature in float (skipped at 1, as generate skips it) */
    for (int64_t v = 0; v < V; v++) probs[v] = s->temperature != 1.0f ? logits[v] / s->temperature : logits[v];
    /* TopKLogitsWarper: scores < the k-th largest -> -inf */
    if (k > 0) {
        const float thr = kth_largest(probs, V, k, heap);
        for (int64_t v = 0; v < V; v++)
            if (probs[v] < thr) probs[v] = -INFINITY;
    }
    int64_t n = 0;
    for (int64_t v = 0; v < V; v++)
        if (probs[v] > -INFINITY) sv[n++] = (scored){probs[v], (int32_t)v};
    /* TopPLogitsWarper: ascending, the softmax's cumulative sum (torch accumulates in double and
     * stores float), <= 1 - top_p removed (compared in float), the largest kept */
    if (s->top_p < 1.0f && n > 1) {
        qsort(sv, (size_t)n, sizeof *sv, by_score);
        const float mx = sv[n - 1].s, cut = (float)(1.0 - (double)s->top_p);
        double sum = 0.0, cum = 0.0;
        for (int64_t i = 0; i < n; i++) sum += exp((double)(sv[i].s - mx));
        for (int64_t i = 0; i + 1 < n; i++) {
            cum += (double)(float)(exp((double)(sv[i].s - mx)) / sum);
            if ((float)cum <= cut) probs[sv[i].id] = -INFINITY;
        }
    }
    /* softmax of what is left */
    float mx = -INFINITY;
    for (int64_t v = 0; v < V; v++) mx = probs[v] > mx ? probs[v] : mx;
    double sum = 0.0;
    for (int64_t v = 0; v < V; v++) sum += probs[v] > -INFINITY ? exp((double)(probs[v] - mx)) : 0.0;
    for (int64_t v = 0; v < V; v++) probs[v] = probs[v] > -INFINITY ? (float)(exp((double)(probs[v] - mx)) / sum) : 0.0f;
    free(sv), free(heap);
    return LTX2_OK;
}

ltx2_status ltx2_gemma_next_token(ltx2_context *ctx, const ltx2_gemma_sampling *s, const float *logits, int64_t V,
                                  int64_t step, float *probs, int32_t *tok) {
    if (!s->sample) {
        int32_t best = 0; /* torch.argmax: the first of equal maxima */
        for (int64_t v = 1; v < V; v++)
            if (logits[v] > logits[best]) best = (int32_t)v;
        *tok = best;
        return LTX2_OK;
    }
    LTX2_TRY(ltx2_gemma_warp(ctx, s, logits, V, probs));
    float u;
    ltx2_rng_uniform(s->seed, LTX2_GEMMA_SAMPLE_STREAM, (uint64_t)step, 1, &u);
    double c = 0.0;
    int32_t last = 0;
    for (int64_t v = 0; v < V; v++) {
        if (probs[v] <= 0.0f) continue;
        last = (int32_t)v;
        c += probs[v];
        if ((double)u < c) break;
    }
    *tok = last; /* the walk's token, or the last possible one when rounding left c just under u */
    return LTX2_OK;
}

ltx2_status ltx2_gemma_generate(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *prompt, int64_t n_prompt,
                                const ltx2_gemma_gen_params *p, int32_t *out, int64_t *n_out) {
    if (!w || !prompt || !p || !out || !n_out || n_prompt <= 0 || p->max_new_tokens < 0 || p->align < 0 ||
        (p->n_stop && !p->stop_ids))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma generate: bad arguments");
    *n_out = 0;
    if (p->max_new_tokens == 0) return LTX2_OK;
    const int64_t V = w->cfg.vocab, D = w->cfg.hidden, al = p->align > 1 ? p->align : 1;
    const int64_t pad = (al - n_prompt % al) % al, n0 = pad + n_prompt;
    int32_t *ids = malloc((size_t)n0 * sizeof(int32_t));
    uint8_t *mask = malloc((size_t)n0);
    int64_t *pos = malloc((size_t)n0 * sizeof(int64_t));
    float *logits = malloc((size_t)V * sizeof(float)), *probs = malloc((size_t)V * sizeof(float));
    float *h = malloc((size_t)D * sizeof(float));
    ltx2_gemma_kv *kv = NULL;
    ltx2_status st = LTX2_OK;
    if (!ids || !mask || !pos || !logits || !probs || !h)
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma generate: %lld tokens", (long long)n0);
    for (int64_t i = 0; st == LTX2_OK && i < n0; i++) {
        /* the left padding masked; every real token at its count of real tokens before it
         * (transformers' cumsum(mask) - 1), the padding at 1 as its masked_fill puts it */
        mask[i] = i >= pad;
        pos[i] = i < pad ? 1 : i - pad;
        ids[i] = i < pad ? p->pad_id : prompt[i - pad];
    }
    if (st == LTX2_OK) st = ltx2_gemma_kv_create(ctx, w, n0 + p->max_new_tokens, &kv);
    lm_table lt = {0};
    if (st == LTX2_OK) st = lm_table_upload(ctx, w, &lt);
    ltx2_gemma_last_row lr = {w->be, w->cfg.layers, n0, D, h};
    if (st == LTX2_OK)
        st = ltx2_gemma_forward_kv_images(ctx, w, kv, ids, mask, pos, n0, p->images, ltx2_gemma_keep_last, &lr);
    const double t0 = ltx2_timer_now();
    double last_log = t0;
    for (int64_t t = 0; st == LTX2_OK; t++) {
        int32_t tok = 0;
        st = lm_head_on(ctx, w, &lt, h, logits);
        if (st == LTX2_OK) st = ltx2_gemma_next_token(ctx, &p->sampling, logits, V, t, probs, &tok);
        if (st != LTX2_OK) break;
        out[t] = tok;
        *n_out = t + 1;
        bool stop = t + 1 == p->max_new_tokens;
        for (int64_t s = 0; s < p->n_stop; s++) stop = stop || p->stop_ids[s] == tok;
        if (stop) break;
        if (p->cancel && p->cancel(p->cancel_user)) {
            st = LTX2_ERROR(ctx, LTX2_ERR_CANCELLED, "Gemma generate: cancelled after %lld tokens", (long long)(t + 1));
            break;
        }
        const double now = ltx2_timer_now();
        if (now - last_log >= LTX2_GEMMA_GEN_PROGRESS_S) {
            LTX2_LOGI(ctx, "Gemma generate: %lld of at most %lld tokens, %.1f s, %.2f s/token", (long long)(t + 1),
                      (long long)p->max_new_tokens, now - t0, (now - t0) / (double)(t + 1));
            last_log = now;
        }
        const uint8_t one = 1;
        const int64_t at = n_prompt + t; /* its count of real tokens before it */
        lr.S = 1;
        st = ltx2_gemma_forward_kv(ctx, w, kv, &tok, &one, &at, 1, ltx2_gemma_keep_last, &lr);
    }
    ltx2_gemma_kv_free(kv);
    ltx2_bpool_free(lt.pool);
    free(ids), free(mask), free(pos), free(logits), free(probs), free(h);
    return st;
}
