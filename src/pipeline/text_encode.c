/* Prompts to Gemma-3 hidden states, the input the connectors take (what --prompt-embeds files
 * hold): ltx-core's tokenizer rules, every prompt of a run in one batch (positive and negative
 * together, as MaxDiffusion batches them), the encoder resident only inside this call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"
#include "io/file.h"
#include "model/gemma.h"
#include "pipeline/pipeline.h"
#include "text/gemma_tokenizer.h"

/* The prompts as ids [n, S] and masks, with a warning per truncated prompt. */
static ltx2_status tokenize_all(ltx2_context *ctx, const char *dir, const ltx2_gemma_weights *w,
                                const char *const *prompts, int n, int64_t S, int32_t *ids, uint8_t *mask) {
    char *path = ltx2_path_join(dir, "tokenizer.model");
    if (!path) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "tokenizer path");
    ltx2_gemma_tokenizer *tok = NULL;
    ltx2_status st = ltx2_gemma_tokenizer_load(ctx, path, &tok);
    if (st == LTX2_OK && tok->vocab > w->cfg.vocab)
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                        "%s has %lld pieces but the Gemma checkpoint's embedding table only %lld rows: the tokenizer "
                        "and the model do not belong together",
                        path, (long long)tok->vocab, (long long)w->cfg.vocab);
    for (int i = 0; st == LTX2_OK && i < n; i++) {
        ltx2_gemma_tokens info;
        st = ltx2_gemma_tokenize(ctx, tok, prompts[i], S, ids + i * S, mask + i * S, &info);
        if (st != LTX2_OK) {
            ltx2_error_prefix(ctx, "prompt %d", i + 1);
            break;
        }
        if (info.n_dropped > 0)
            LTX2_LOGW(ctx, "prompt %d: %lld tokens, truncated to %lld as the reference truncates (the last %lld "
                      "are dropped)", i + 1, (long long)(info.n_real + info.n_dropped), (long long)S,
                      (long long)info.n_dropped);
    }
    ltx2_gemma_tokenizer_free(tok);
    free(path);
    return st;
}

ltx2_status ltx2_pipe_text_encode(ltx2_context *ctx, const char *dir, const ltx2_backend *be,
                                  const char *const *prompts, int n, ltx2_pipe_text *out) {
    for (int i = 0; i < n; i++) memset(&out[i], 0, sizeof out[i]);
    if (n < 1) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "text encoder: no prompt");
    const double t0 = ltx2_timer_now();
    ltx2_gemma_weights *w = NULL;
    LTX2_TRY(ltx2_gemma_weights_load_on(ctx, be, be->device == LTX2_DEVICE_CPU ? LTX2_F32 : LTX2_BF16, dir, &w));
    const int64_t S = LTX2_GEMMA_MAX_TOKENS, D = w->cfg.hidden, L1 = w->cfg.layers + 1, tok = D * L1;
    int32_t *ids = malloc((size_t)(n * S) * sizeof *ids);
    uint8_t *mask = malloc((size_t)(n * S));
    float *hidden = malloc((size_t)(n * S * tok) * sizeof(float));
    ltx2_status st = LTX2_OK;
    if (!ids || !mask || !hidden)
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "text encoder: %d x %lld tokens x %lld x %lld floats", n, (long long)S,
                        (long long)D, (long long)L1);
    if (st == LTX2_OK) st = tokenize_all(ctx, dir, w, prompts, n, S, ids, mask);
    if (st == LTX2_OK) {
        LTX2_LOGI(ctx, "text encoder: Gemma-3 (%lld layers of %lld) on %s, %d prompt%s x %lld tokens",
                  (long long)w->cfg.layers, (long long)D, be->name, n, n > 1 ? "s" : "", (long long)S);
        st = ltx2_gemma_forward(ctx, w, ids, mask, n, S, hidden);
    }
    for (int i = 0; st == LTX2_OK && i < n; i++) {
        out[i].S = S, out[i].D = D, out[i].L = L1;
        out[i].hidden = malloc((size_t)(S * tok) * sizeof(float));
        out[i].mask = malloc((size_t)S);
        if (!out[i].hidden || !out[i].mask) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "text encoder: prompt %d hidden states", i + 1);
            break;
        }
        memcpy(out[i].hidden, hidden + i * S * tok, (size_t)(S * tok) * sizeof(float));
        memcpy(out[i].mask, mask + i * S, (size_t)S);
    }
    free(ids), free(mask), free(hidden);
    ltx2_gemma_weights_free(w);
    if (st != LTX2_OK) {
        for (int i = 0; i < n; i++) ltx2_pipe_text_free(&out[i]);
        return st;
    }
    LTX2_LOGI(ctx, "text encoder: done in %.2f s (encoder freed)", ltx2_timer_now() - t0);
    return LTX2_OK;
}

ltx2_status ltx2_pipe_text_save(ltx2_context *ctx, const ltx2_pipe_text *t, const char *path) {
    int64_t *mask = malloc((size_t)t->S * sizeof *mask);
    if (!mask) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt embeds mask");
    for (int64_t s = 0; s < t->S; s++) mask[s] = t->mask[s];
    const int64_t hs[4] = {1, t->S, t->D, t->L}, ms[2] = {1, t->S};
    const ltx2_tensor h = ltx2_tensor_make(t->hidden, LTX2_F32, 4, hs), m = ltx2_tensor_make(mask, LTX2_I64, 2, ms);
    ltx2_st_writer *wr = NULL;
    ltx2_status st = ltx2_st_writer_create(ctx, &wr);
    if (st == LTX2_OK) st = ltx2_st_writer_add(ctx, wr, "hidden_states", &h);
    if (st == LTX2_OK) st = ltx2_st_writer_add(ctx, wr, "attention_mask", &m);
    if (st == LTX2_OK)
        st = ltx2_st_writer_set_meta(ctx, wr, "layout",
                                     "hidden_states [B, S, D, L] (layer axis last), attention_mask [B, S] left-padded");
    if (st == LTX2_OK) st = ltx2_st_writer_write(ctx, wr, path);
    ltx2_st_writer_free(wr);
    free(mask);
    return st;
}
