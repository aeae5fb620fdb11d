/* Prompts to Gemma-3 hidden states, the input the connectors take (what --prompt-embeds files
 * hold): ltx-core's tokenizer rules, every prompt of a run in one batch (positive and negative
 * together, as MaxDiffusion batches them), the encoder resident only inside this call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/finite.h"
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

/* The per-layer poll of the forward: the caller's cancel, and a progress line every
 * LTX2_PIPE_TEXT_PROGRESS_S seconds (a 12B on the CPU is minutes of otherwise silent work). */
typedef struct encode_poll {
    int (*cancel)(void *);
    void *cancel_user;
    double t0, last;
} encode_poll;

static ltx2_status poll_layer(void *user, ltx2_context *ctx, int64_t layer, int64_t layers) {
    encode_poll *ep = user;
    if (ep->cancel && ep->cancel(ep->cancel_user))
        return LTX2_ERROR(ctx, LTX2_ERR_CANCELLED, "text encoder: cancelled after layer %lld of %lld", (long long)layer,
                          (long long)layers);
    const double now = ltx2_timer_now();
    if (layer > 0 && layer < layers && now - ep->last >= LTX2_PIPE_TEXT_PROGRESS_S) {
        const double per = (now - ep->t0) / (double)layer;
        LTX2_LOGI(ctx, "text encoder: layer %lld/%lld, %.1f s, %.1f s/layer, ETA %.0f s", (long long)layer,
                  (long long)layers, now - ep->t0, per, per * (double)(layers - layer));
        ep->last = now;
    }
    return LTX2_OK;
}

ltx2_status ltx2_pipe_gemma_load(ltx2_context *ctx, const char *dir, const ltx2_backend *be, bool fp8,
                                 ltx2_gemma_weights **out) {
    const ltx2_dtype dt = be->device == LTX2_DEVICE_CPU ? LTX2_F32 : LTX2_BF16;
    return fp8 ? ltx2_gemma_weights_load_fp8_on(ctx, be, dt, dir, out) : ltx2_gemma_weights_load_on(ctx, be, dt, dir, out);
}

/* Gemma (shared, or loaded here and freed) over the prompts idx[0..m) of prompts, into out[idx[i]]. */
static ltx2_status encode_with_gemma(ltx2_context *ctx, const char *dir, const ltx2_backend *be, bool fp8,
                                     const ltx2_gemma_weights *shared, const char *const *prompts, const int *idx,
                                     int m, bool keep, int (*cancel)(void *), void *cancel_user, ltx2_pipe_text *out) {
    ltx2_gemma_weights *own = NULL;
    if (!shared) LTX2_TRY(ltx2_pipe_gemma_load(ctx, dir, be, fp8, &own));
    const ltx2_gemma_weights *w = shared ? shared : own;
    const int64_t S = LTX2_GEMMA_MAX_TOKENS, D = w->cfg.hidden, L1 = w->cfg.layers + 1, tok = D * L1;
    int32_t *ids = malloc((size_t)(m * S) * sizeof *ids);
    uint8_t *mask = malloc((size_t)(m * S));
    const char **sub = malloc((size_t)m * sizeof *sub);
    /* each prompt's states straight into its own result (770 MB a prompt for the 12B: no copy),
     * on the host or, kept (keep: be is a device), where they are made (385 MB a prompt in bf16) */
    float **hidden = calloc((size_t)m, sizeof *hidden);
    ltx2_tensor **dev = calloc((size_t)m, sizeof *dev);
    ltx2_status st = LTX2_OK;
    if (!ids || !mask || !sub || !hidden || !dev)
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "text encoder: %d prompts x %lld tokens", m, (long long)S);
    for (int i = 0; st == LTX2_OK && i < m; i++) {
        ltx2_pipe_text *t = &out[idx[i]];
        t->S = S, t->D = D, t->L = L1;
        t->mask = malloc((size_t)S);
        if (keep) {
            const int64_t ds[4] = {1, L1, S, D};
            void *buf = NULL;
            st = be->alloc(be, ctx, (size_t)(S * tok) * ltx2_dtype_size(w->dtype), &buf);
            if (st != LTX2_OK) {
                ltx2_error_prefix(ctx, "text encoder: prompt %d hidden states kept on %s", idx[i] + 1, be->name);
                break;
            }
            t->dev = ltx2_tensor_make(buf, w->dtype, 4, ds);
            t->dev.device = be->device;
            t->dev_be = be;
            dev[i] = &t->dev;
        } else {
            t->hidden = hidden[i] = malloc((size_t)(S * tok) * sizeof(float));
        }
        if ((!keep && !t->hidden) || !t->mask)
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "text encoder: prompt %d hidden states (%lld x %lld x %lld floats)",
                            idx[i] + 1, (long long)S, (long long)D, (long long)L1);
    }
    for (int i = 0; st == LTX2_OK && i < m; i++) sub[i] = prompts[idx[i]];
    if (st == LTX2_OK) st = tokenize_all(ctx, dir, w, sub, m, S, ids, mask);
    if (st == LTX2_OK) {
        /* the padding every prompt has is not computed (nothing LTX reads depends on it) */
        const int64_t skip = ltx2_gemma_pipeline_skip(be, mask, m, S);
        LTX2_LOGI(ctx, "text encoder: Gemma-3 (%lld layers of %lld%s) on %s, %d prompt%s x %lld tokens (the first "
                  "%lld, padding in every prompt, not computed)", (long long)w->cfg.layers, (long long)D,
                  fp8 ? ", fp8-stored Linear weights" : "", be->name, m, m > 1 ? "s" : "", (long long)S,
                  (long long)skip);
        encode_poll ep = {cancel, cancel_user, ltx2_timer_now(), ltx2_timer_now()};
        st = keep ? ltx2_gemma_forward_keep(ctx, w, ids, mask, m, S, skip, dev, poll_layer, &ep)
                  : ltx2_gemma_forward_split(ctx, w, ids, mask, m, S, skip, hidden, poll_layer, &ep);
    }
    for (int i = 0; st == LTX2_OK && i < m; i++) {
        /* kept states are checked where they are used: the connectors' outputs (generate_text.c) */
        const int64_t hs[3] = {L1, S, D};
        if (!keep)
            st = ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, hidden[i], 3, hs,
                                   "text encoder: the hidden states [layer, token, channel]");
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "prompt %d", idx[i] + 1);
        else memcpy(out[idx[i]].mask, mask + i * S, (size_t)S);
    }
    /* on failure the caller frees every result, those begun here included */
    free(ids), free(mask), free(hidden), free(dev), free(sub);
    ltx2_gemma_weights_free(own);
    return st;
}

/* The cache within its bound after a store, this call's prompts kept; what went is logged. */
static void cache_trim(ltx2_context *ctx, const ltx2_text_cache_opts *c,
                       char (*paths)[LTX2_TEXT_CACHE_PATH_CAP + 80], int n) {
    const char *keep[LTX2_PIPE_MAX_PROMPTS];
    for (int i = 0; i < n; i++) keep[i] = paths[i];
    int removed = 0;
    uint64_t freed = 0;
    if (ltx2_text_cache_trim(ctx, c->dir, c->max_bytes, keep, n, &removed, &freed) != LTX2_OK)
        LTX2_LOGW(ctx, "text encoder: the cache was not trimmed: %s", ltx2_last_error(ctx));
    if (removed > 0)
        LTX2_LOGI(ctx, "text encoder: %d least recently used prompt%s (%.0f MB) removed from the cache, which is kept "
                  "within %.1f GiB", removed, removed > 1 ? "s" : "", (double)freed / 1e6,
                  (double)c->max_bytes / (double)(1 << 30));
}

ltx2_status ltx2_pipe_text_encode(ltx2_context *ctx, const char *dir, const ltx2_backend *be, bool fp8,
                                  const ltx2_gemma_weights *shared, const char *const *prompts, int n,
                                  const ltx2_text_cache_opts *cache_opts, bool keep, int (*cancel)(void *),
                                  void *cancel_user, ltx2_pipe_text *out) {
    for (int i = 0; i < n; i++) memset(&out[i], 0, sizeof out[i]);
    if (n < 1 || n > LTX2_PIPE_MAX_PROMPTS)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "text encoder: %d prompts (1..%d)", n, LTX2_PIPE_MAX_PROMPTS);
    const double t0 = ltx2_timer_now();
    ltx2_gemma_config gc;
    LTX2_TRY(ltx2_gemma_config_load(ctx, dir, &gc));
    const int64_t S = LTX2_GEMMA_MAX_TOKENS, text_dim = gc.hidden * (gc.layers + 1);
    const char *cache_dir = cache_opts ? cache_opts->dir : NULL;
    ltx2_text_cache cache;
    char paths[LTX2_PIPE_MAX_PROMPTS][LTX2_TEXT_CACHE_PATH_CAP + 80];
    int miss[LTX2_PIPE_MAX_PROMPTS], n_miss = 0;
    ltx2_status st = LTX2_OK;
    if (cache_dir) st = ltx2_text_cache_open(ctx, cache_dir, dir, fp8 ? "fp8" : NULL, &cache);
    /* states are kept only on a device; a cached prompt goes where the encoder would have kept it */
    keep = keep && be->device != LTX2_DEVICE_CPU;
    for (int i = 0; st == LTX2_OK && i < n; i++) {
        if (cache_dir) {
            ltx2_text_cache_path(&cache, prompts[i], S, paths[i], sizeof paths[i]);
            if (ltx2_path_is_file(paths[i]) &&
                ltx2_pipe_text_load_on(ctx, paths[i], text_dim, keep ? be : NULL, &out[i]) == LTX2_OK) {
                LTX2_LOGI(ctx, "text encoder: prompt %d from the cache (%s)", i + 1, paths[i]);
                ltx2_text_cache_touch(paths[i]); /* used now: the last the bound removes */
                continue;
            }
        }
        miss[n_miss++] = i;
    }
    if (st == LTX2_OK && n_miss > 0)
        st = encode_with_gemma(ctx, dir, be, fp8, shared, prompts, miss, n_miss, keep, cancel,
                               cancel_user, out);
    if (st == LTX2_OK && cache_dir && n_miss > 0) {
        /* a cache that cannot be written costs the next run time, not this one its result */
        ltx2_status cs = ltx2_text_cache_mkdir(ctx, cache_dir);
        for (int k = 0; cs == LTX2_OK && k < n_miss; k++)
            cs = ltx2_pipe_text_save_cache(ctx, &out[miss[k]], paths[miss[k]]);
        if (cs != LTX2_OK) LTX2_LOGW(ctx, "text encoder: not cached: %s", ltx2_last_error(ctx));
        if (cs == LTX2_OK && cache_opts->max_bytes > 0) cache_trim(ctx, cache_opts, paths, n);
    }
    if (st != LTX2_OK) {
        for (int i = 0; i < n; i++) ltx2_pipe_text_free(&out[i]);
        return st;
    }
    if (n_miss > 0)
        LTX2_LOGI(ctx, "text encoder: done in %.2f s%s", ltx2_timer_now() - t0, shared ? "" : " (encoder freed)");
    return LTX2_OK;
}
