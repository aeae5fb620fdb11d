/* Gemma-3 text generation, the core of --enhance-prompt (issue #13 item 9): the LM head (the last
 * position's final-norm hidden state times the tied embedding table, as Gemma3ForConditionalGeneration's
 * lm_head) and a greedy decoding loop over ltx2_gemma_forward_to. No K/V cache yet: each new token
 * reruns the forward over prompt + generated tokens (quadratic in the length; fine for the tiny
 * model and a device, slow for the 12B on a CPU). */
#include "model/gemma_generate.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_pool.h"
#include "core/dtype.h"

/* What the sink keeps: the last position of the last hidden state (layer index `layers`). */
typedef struct last_row {
    const ltx2_backend *be;
    int64_t layer, S, D;
    float *h; /* [D] host */
} last_row;

static ltx2_status keep_last(void *user, ltx2_context *ctx, const ltx2_tensor *h, int64_t layer) {
    last_row *lr = user;
    if (layer != lr->layer) return LTX2_OK;
    int64_t s1[1] = {lr->D};
    ltx2_tensor v = ltx2_tensor_make((char *)h->data + (size_t)((lr->S - 1) * lr->D) * ltx2_dtype_size(h->dtype),
                                     h->dtype, 1, s1);
    v.device = h->device;
    return ltx2_backend_to_host_f32(ctx, lr->be, &v, lr->h);
}

ltx2_status ltx2_gemma_logits_last(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                   const uint8_t *mask_in, const int64_t *positions, int64_t S, float *logits) {
    if (!w || !ids || !logits || S <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma logits: NULL argument or %lld tokens", (long long)S);
    const int64_t D = w->cfg.hidden, V = w->cfg.vocab;
    uint8_t *mask = malloc((size_t)S);
    float *h = malloc((size_t)D * sizeof(float));
    ltx2_status st = LTX2_OK;
    if (!mask || !h) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma logits: %lld tokens", (long long)S);
    if (st == LTX2_OK) {
        if (mask_in) memcpy(mask, mask_in, (size_t)S);
        else memset(mask, 1, (size_t)S);
        last_row lr = {w->be, w->cfg.layers, S, D, h};
        st = ltx2_gemma_forward_pos(ctx, w, ids, mask, positions, 1, S, keep_last, &lr);
    }
    /* lm_head: one GEMM on the CPU backend, where the tied table lives (mapped, in its own dtype; the
     * CPU GEMM widens bf16 weights exactly while packing) */
    if (st == LTX2_OK) {
        int64_t es[2] = {V, D}, hs[2] = {1, D}, ls[2] = {1, V};
        const ltx2_tensor E = ltx2_tensor_make((void *)w->embed->data, w->embed->dtype, 2, es);
        const ltx2_tensor x = ltx2_tensor_make(h, LTX2_F32, 2, hs);
        ltx2_tensor y = ltx2_tensor_make(logits, LTX2_F32, 2, ls);
        st = ltx2_backend_gemm(ltx2_backend_cpu(), ctx, &x, &E, LTX2_B_NK, NULL, &y);
    }
    free(mask);
    free(h);
    return st;
}

ltx2_status ltx2_gemma_generate_greedy(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *prompt,
                                       int64_t n_prompt, const ltx2_gemma_gen_params *p, int32_t *out,
                                       int64_t *n_out) {
    if (!w || !prompt || !p || !out || !n_out || n_prompt <= 0 || p->max_new_tokens < 0 || p->align < 0 ||
        (p->n_stop && !p->stop_ids))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "Gemma generate: bad arguments");
    *n_out = 0;
    const int64_t V = w->cfg.vocab, al = p->align > 1 ? p->align : 1;
    const int64_t pad = (al - n_prompt % al) % al, n0 = pad + n_prompt, cap = n0 + p->max_new_tokens;
    int32_t *ids = malloc((size_t)cap * sizeof(int32_t));
    uint8_t *mask = malloc((size_t)cap);
    int64_t *pos = malloc((size_t)cap * sizeof(int64_t));
    float *logits = malloc((size_t)V * sizeof(float));
    ltx2_status st = LTX2_OK;
    if (!ids || !mask || !pos || !logits)
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma generate: %lld tokens", (long long)cap);
    for (int64_t i = 0; st == LTX2_OK && i < cap; i++) {
        /* the left padding masked; every real token at its count of real tokens before it
         * (transformers' cumsum(mask) - 1), the padding at 1 as its masked_fill puts it */
        mask[i] = i >= pad;
        pos[i] = i < pad ? 1 : i - pad;
        ids[i] = i < pad ? p->pad_id : i < n0 ? prompt[i - pad] : 0;
    }
    for (int64_t t = 0; st == LTX2_OK && t < p->max_new_tokens; t++) {
        st = ltx2_gemma_logits_last(ctx, w, ids, mask, pos, n0 + t, logits);
        if (st != LTX2_OK) break;
        int32_t best = 0; /* torch.argmax: the first of equal maxima */
        for (int64_t v = 1; v < V; v++)
            if (logits[v] > logits[best]) best = (int32_t)v;
        ids[n0 + t] = out[t] = best;
        *n_out = t + 1;
        bool stop = false;
        for (int64_t s = 0; s < p->n_stop; s++) stop = stop || p->stop_ids[s] == best;
        if (stop) break;
    }
    free(ids);
    free(mask);
    free(pos);
    free(logits);
    return st;
}
