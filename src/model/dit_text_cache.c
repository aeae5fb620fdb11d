/* The DiT's per-generation text K/V cache (see ltx2_dit_text_cache in model/dit.h): the text
 * cross-attention's K (after k_norm) and V depend only on the context (and, for LTX-2.3, the
 * prompt-AdaLN row of the sample's sigma), so every guidance pass and step with the same key can
 * reuse them. Entries are keyed by the exact bytes of the host inputs they are a function of (the
 * raw context rows, and the prompt timestep for LTX-2.3), so a hit is exact by construction; the
 * K/V live on the weights' backend. */
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/dit_internal.h"

typedef struct text_entry {
    int used;
    int stream;           /* 0 video, 1 audio */
    int64_t S, W;         /* context rows and raw width */
    int64_t P;            /* prompt key values (1 for LTX-2.3: the prompt timestep, else 0) */
    float *key;           /* [S*W + P] the context rows, then the prompt timestep */
    const ltx2_backend *be;
    void *k, *v;          /* [num_layers, S, inner] on be, the weights' dtype */
    uint8_t *filled;      /* [num_layers] */
    int64_t num_layers, inner;
    const ltx2_dit_weights *w; /* the weights the K/V came from */
    uint64_t last_use;    /* forward stamp, for LRU eviction */
} text_entry;

struct ltx2_dit_text_cache {
    text_entry *e;
    int64_t n;
    uint64_t stamp; /* current forward */
    int64_t projections, hits, contexts_skipped;
};

ltx2_status ltx2_dit_text_cache_create(ltx2_context *ctx, int64_t max_entries, ltx2_dit_text_cache **out) {
    if (!out || max_entries <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit text cache: max_entries must be > 0, got %lld",
                          (long long)max_entries);
    ltx2_dit_text_cache *c = calloc(1, sizeof *c);
    if (c) c->e = calloc((size_t)max_entries, sizeof *c->e);
    if (!c || !c->e) {
        free(c);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit text cache: %lld entries", (long long)max_entries);
    }
    c->n = max_entries;
    *out = c;
    return LTX2_OK;
}

static void entry_clear(text_entry *t) {
    free(t->key);
    if (t->be) {
        t->be->free(t->be, t->k);
        t->be->free(t->be, t->v);
    }
    free(t->filled);
    memset(t, 0, sizeof *t);
}

void ltx2_dit_text_cache_invalidate(ltx2_dit_text_cache *c) {
    if (!c) return;
    for (int64_t i = 0; i < c->n; i++) entry_clear(&c->e[i]);
}

void ltx2_dit_text_cache_free(ltx2_dit_text_cache *c) {
    if (!c) return;
    ltx2_dit_text_cache_invalidate(c);
    free(c->e);
    free(c);
}

void ltx2_dit_text_cache_get_stats(const ltx2_dit_text_cache *c, ltx2_dit_text_cache_stats *out) {
    memset(out, 0, sizeof *out);
    if (!c) return;
    out->projections = c->projections;
    out->hits = c->hits;
    out->contexts_skipped = c->contexts_skipped;
    for (int64_t i = 0; i < c->n; i++) out->entries += c->e[i].used;
}

void dit_text_cache_begin(ltx2_dit_text_cache *c) {
    if (c) c->stamp++;
}

static bool entry_matches(const text_entry *t, const ltx2_dit_weights *w, int stream, int64_t S, int64_t W,
                          int64_t P, const float *ctx_rows, const float *prow) {
    return t->used && t->w == w && t->stream == stream && t->S == S && t->W == W && t->P == P &&
           memcmp(t->key, ctx_rows, (size_t)(S * W) * sizeof(float)) == 0 &&
           (P == 0 || memcmp(t->key + S * W, prow, (size_t)P * sizeof(float)) == 0);
}

/* A fresh entry for the key (the slot is cleared first). */
static ltx2_status entry_fill(ltx2_context *ctx, text_entry *t, const ltx2_dit_weights *w, int stream, int64_t S,
                              int64_t W, int64_t P, const float *rows, const float *prow, int64_t inner) {
    const int64_t L = w->cfg.num_layers;
    const size_t kv = (size_t)(L * S * inner) * ltx2_dtype_size(w->dtype);
    entry_clear(t);
    t->key = malloc((size_t)(S * W + P) * sizeof(float));
    t->filled = calloc((size_t)L, 1);
    if (!t->key || !t->filled) {
        entry_clear(t);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit text cache: entry key of %lld floats", (long long)(S * W + P));
    }
    t->be = w->be;
    ltx2_status st = w->be->alloc(w->be, ctx, kv, &t->k);
    if (st == LTX2_OK) st = w->be->alloc(w->be, ctx, kv, &t->v);
    if (st != LTX2_OK) {
        entry_clear(t);
        return st;
    }
    memcpy(t->key, rows, (size_t)(S * W) * sizeof(float));
    if (P) memcpy(t->key + S * W, prow, (size_t)P * sizeof(float));
    t->used = 1;
    t->stream = stream;
    t->S = S;
    t->W = W;
    t->P = P;
    t->num_layers = L;
    t->inner = inner;
    t->w = w;
    return LTX2_OK;
}

ltx2_status dit_text_cache_bind(ltx2_context *ctx, ltx2_dit_text_cache *c, const ltx2_dit_weights *w, int stream,
                                int64_t B, int64_t S, int64_t W, const float *ctx_rows, const float *prompt_t,
                                int64_t *entry_out) {
    const int64_t P = prompt_t ? 1 : 0;
    const ltx2_dit_attn_w *a = stream ? &w->blocks[0].audio_attn2 : &w->blocks[0].attn2;
    const int64_t inner = a->heads * a->head_dim;
    for (int64_t b = 0; b < B; b++) {
        const float *rows = ctx_rows + b * S * W, *prow = P ? prompt_t + b : NULL;
        int64_t hit = -1, victim = -1;
        for (int64_t i = 0; i < c->n && hit < 0; i++)
            if (entry_matches(&c->e[i], w, stream, S, W, P, rows, prow)) hit = i;
        if (hit < 0) {
            /* an empty slot, else the least recently used one not bound in this forward */
            for (int64_t i = 0; i < c->n; i++) {
                const text_entry *t = &c->e[i];
                if (t->used && t->last_use == c->stamp) continue;
                if (victim < 0 || !t->used || (c->e[victim].used && t->last_use < c->e[victim].last_use)) victim = i;
                if (!t->used) break;
            }
            if (victim >= 0) {
                LTX2_TRY(entry_fill(ctx, &c->e[victim], w, stream, S, W, P, rows, prow, inner));
                hit = victim;
            }
        }
        if (hit >= 0) c->e[hit].last_use = c->stamp;
        entry_out[b] = hit;
    }
    return LTX2_OK;
}

/* K and V of one sample's S context rows, exactly as Attention.forward computes them (to_k, k_norm
 * over all heads; to_v); rows are independent, so this equals the batched projection. */
static ltx2_status project(dit_run *r, const ltx2_dit_attn_w *a, const ltx2_tensor *c, ltx2_tensor *k,
                           ltx2_tensor *v) {
    LTX2_TRY(dit_linear(r, &a->k, c, false, k));
    LTX2_TRY(ltx2_backend_rms_norm(r->be, r->ctx, k, &a->k_norm, r->w->cfg.norm_eps, k));
    return dit_linear(r, &a->v, c, false, v);
}

void dit_text_cache_note_skip(ltx2_dit_text_cache *c) {
    if (c) c->contexts_skipped++;
}

bool dit_text_cache_complete(const ltx2_dit_text_cache *c, int64_t entry) {
    if (!c || entry < 0 || entry >= c->n || !c->e[entry].used) return false;
    const text_entry *t = &c->e[entry];
    for (int64_t i = 0; i < t->num_layers; i++)
        if (!t->filled[i]) return false;
    return true;
}

ltx2_status dit_text_kv(dit_run *r, const dit_stream *s, int64_t i, const ltx2_dit_attn_w *a,
                        const ltx2_tensor *context, ltx2_tensor *k, ltx2_tensor *v) {
    ltx2_dit_text_cache *c = r->text_cache;
    const int64_t S = s->S, inner = a->heads * a->head_dim;
    const size_t nbytes = (size_t)(S * inner) * ltx2_dtype_size(r->dt);
    for (int64_t b = 0; b < s->B; b++) {
        ltx2_tensor kb = dit_sample(k, b), vb = dit_sample(v, b), cb;
        const int64_t e = c && s->text_entry ? s->text_entry[b] : -1;
        const bool project_here = e < 0 || !c->e[e].filled[i];
        if (project_here && !context) /* s->text_cached said every block was cached */
            return LTX2_ERROR(r->ctx, LTX2_ERR_INTERNAL, "dit text cache: block %lld sample %lld has no K/V and no context",
                              (long long)i, (long long)b);
        if (project_here) cb = dit_sample(context, b);
        if (e < 0) {
            LTX2_TRY(project(r, a, &cb, &kb, &vb));
            continue;
        }
        text_entry *t = &c->e[e];
        ltx2_tensor ck = kb, cv = vb;
        ck.data = (char *)t->k + (size_t)i * nbytes;
        cv.data = (char *)t->v + (size_t)i * nbytes;
        if (!t->filled[i]) {
            LTX2_TRY(project(r, a, &cb, &ck, &cv));
            t->filled[i] = 1;
            c->projections++;
        } else {
            c->hits++;
        }
        LTX2_TRY(r->be->copy(r->be, r->ctx, kb.data, ck.data, nbytes));
        LTX2_TRY(r->be->copy(r->be, r->ctx, vb.data, cv.data, nbytes));
    }
    return LTX2_OK;
}
