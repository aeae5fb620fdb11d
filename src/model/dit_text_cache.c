/* The DiT's per-generation text K/V cache (see ltx2_dit_text_cache in model/dit.h): the text
 * cross-attention's K (after k_norm) and V depend only on the context (and, for LTX-2.3, the
 * prompt-AdaLN row of the sample's sigma), so every guidance pass and step with the same key can
 * reuse them. Entries are keyed by the exact bytes, so a hit is exact by construction. */
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "cpu/cpu_ops.h"
#include "model/dit_internal.h"

typedef struct text_entry {
    int used;
    int stream;           /* 0 video, 1 audio */
    int64_t S, D;         /* context rows and width */
    int64_t P;            /* prompt row width (2D for LTX-2.3, else 0) */
    float *key;           /* [S*D + P] the context rows, then the prompt row */
    float *k, *v;         /* [num_layers, S, inner] */
    uint8_t *filled;      /* [num_layers] */
    int64_t num_layers, inner;
    const ltx2_dit_weights *w; /* the weights the K/V came from */
    uint64_t last_use;    /* forward stamp, for LRU eviction */
} text_entry;

struct ltx2_dit_text_cache {
    text_entry *e;
    int64_t n;
    uint64_t stamp; /* current forward */
    int64_t projections, hits;
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
    free(t->k);
    free(t->v);
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
    for (int64_t i = 0; i < c->n; i++) out->entries += c->e[i].used;
}

void dit_text_cache_begin(ltx2_dit_text_cache *c) {
    if (c) c->stamp++;
}

static bool entry_matches(const text_entry *t, const ltx2_dit_weights *w, int stream, int64_t S, int64_t D, int64_t P, const float *ctx_rows,
                          const float *prow) {
    return t->used && t->w == w && t->stream == stream && t->S == S && t->D == D && t->P == P &&
           memcmp(t->key, ctx_rows, (size_t)(S * D) * sizeof(float)) == 0 &&
           (P == 0 || memcmp(t->key + S * D, prow, (size_t)P * sizeof(float)) == 0);
}

ltx2_status dit_text_cache_bind(ltx2_context *ctx, ltx2_dit_text_cache *c, const ltx2_dit_weights *w, int stream,
                                const dit_stream *s, int64_t *entry_out) {
    const int64_t S = s->S, D = s->D, P = s->prompt_mod ? 2 * D : 0;
    const ltx2_dit_attn_w *a = stream ? &w->blocks[0].audio_attn2 : &w->blocks[0].attn2;
    const int64_t L = w->cfg.num_layers, inner = a->heads * a->head_dim;
    for (int64_t b = 0; b < s->B; b++) {
        const float *rows = s->context + b * S * D, *prow = P ? s->prompt_mod + b * P : NULL;
        int64_t hit = -1, victim = -1;
        for (int64_t i = 0; i < c->n && hit < 0; i++)
            if (entry_matches(&c->e[i], w, stream, S, D, P, rows, prow)) hit = i;
        if (hit < 0) {
            /* an empty slot, else the least recently used one not bound in this forward */
            for (int64_t i = 0; i < c->n; i++) {
                const text_entry *t = &c->e[i];
                if (t->used && t->last_use == c->stamp) continue;
                if (victim < 0 || !t->used || (c->e[victim].used && t->last_use < c->e[victim].last_use)) victim = i;
                if (!t->used) break;
            }
            if (victim >= 0) {
                text_entry *t = &c->e[victim];
                entry_clear(t);
                t->key = malloc((size_t)(S * D + P) * sizeof(float));
                t->k = malloc((size_t)(L * S * inner) * sizeof(float));
                t->v = malloc((size_t)(L * S * inner) * sizeof(float));
                t->filled = calloc((size_t)L, 1);
                if (!t->key || !t->k || !t->v || !t->filled) {
                    entry_clear(t);
                    return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit text cache: entry of %lld x %lld floats",
                                      (long long)(L * S), (long long)inner);
                }
                memcpy(t->key, rows, (size_t)(S * D) * sizeof(float));
                if (P) memcpy(t->key + S * D, prow, (size_t)P * sizeof(float));
                t->used = 1;
                t->stream = stream;
                t->S = S;
                t->D = D;
                t->P = P;
                t->num_layers = L;
                t->inner = inner;
                t->w = w;
                hit = victim;
            }
        }
        if (hit >= 0) c->e[hit].last_use = c->stamp;
        entry_out[b] = hit;
    }
    return LTX2_OK;
}

/* K and V of S rows of one sample, exactly as Attention.forward computes them (to_k, k_norm over
 * all heads; to_v); rows are independent, so this equals the batched projection bit for bit. */
static ltx2_status project(dit_run *r, const ltx2_dit_attn_w *a, const float *c, int64_t S, float *k, float *v) {
    LTX2_TRY(dit_linear(r, &a->k, c, S, k));
    LTX2_TRY(ltx2_cpu_rms_norm(r->ctx, k, k, S, a->heads * a->head_dim, a->k_norm, r->w->cfg.norm_eps));
    return dit_linear(r, &a->v, c, S, v);
}

ltx2_status dit_text_kv(dit_run *r, const dit_stream *s, int64_t i, const ltx2_dit_attn_w *a, const float *context,
                        float *k, float *v) {
    ltx2_dit_text_cache *c = r->text_cache;
    const int64_t S = s->S, inner = a->heads * a->head_dim, Dc = a->context_dim;
    const size_t n = (size_t)(S * inner);
    for (int64_t b = 0; b < s->B; b++) {
        float *kb = k + b * S * inner, *vb = v + b * S * inner;
        const int64_t e = c && s->text_entry ? s->text_entry[b] : -1;
        if (e < 0) {
            LTX2_TRY(project(r, a, context + b * S * Dc, S, kb, vb));
            continue;
        }
        text_entry *t = &c->e[e];
        float *ck = t->k + i * S * inner, *cv = t->v + i * S * inner;
        if (!t->filled[i]) {
            LTX2_TRY(project(r, a, context + b * S * Dc, S, ck, cv));
            t->filled[i] = 1;
            c->projections++;
        } else {
            c->hits++;
        }
        memcpy(kb, ck, n * sizeof(float));
        memcpy(vb, cv, n * sizeof(float));
    }
    return LTX2_OK;
}
