/* The DiT's per-generation RoPE table cache (ltx2_dit_rope_cache in model/dit.h). A stream's tables
 * (its own positions, and the audio-video cross axis) are a function of one sample's positions and
 * the table parameters alone, and a denoising loop passes the same positions at every call; without
 * the cache each call computes them on the host and uploads them (for a 768x512x121 clip 300 MB of
 * fp32 per sample, and 109 ms of one core here for one sample's tables before any device work: see
 * the note in dit.h).
 * An entry holds one sample's tables, this rank's heads, on the weights' backend, keyed by the exact
 * bytes of the positions and of the parameters, so a hit is what computing them again gives. */
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/dit_internal.h"

/* Streams: 0 video, 1 audio. */
#define ROPE_CACHE_STREAMS 2

typedef struct rope_entry {
    int used;
    dit_rope_key key; /* key.pos points at pos */
    float *pos;
    dit_rope_tables t; /* one sample; data from be->alloc */
} rope_entry;

struct ltx2_dit_rope_cache {
    rope_entry e[ROPE_CACHE_STREAMS];
    int64_t builds, hits;
};

ltx2_status ltx2_dit_rope_cache_create(ltx2_context *ctx, ltx2_dit_rope_cache **out) {
    if (!out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit RoPE cache: NULL out");
    *out = calloc(1, sizeof **out);
    return *out ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit RoPE cache");
}

static void entry_clear(rope_entry *e) {
    const ltx2_backend *be = e->key.be;
    if (be) {
        be->free(be, e->t.cos.data);
        be->free(be, e->t.sin.data);
        be->free(be, e->t.xcos.data);
        be->free(be, e->t.xsin.data);
    }
    free(e->pos);
    memset(e, 0, sizeof *e);
}

void ltx2_dit_rope_cache_free(ltx2_dit_rope_cache *c) {
    if (!c) return;
    for (int i = 0; i < ROPE_CACHE_STREAMS; i++) entry_clear(&c->e[i]);
    free(c);
}

void ltx2_dit_rope_cache_get_stats(const ltx2_dit_rope_cache *c, ltx2_dit_rope_cache_stats *out) {
    memset(out, 0, sizeof *out);
    if (!c) return;
    out->builds = c->builds;
    out->hits = c->hits;
}

void dit_rope_key_init(dit_rope_key *k) { memset(k, 0, sizeof *k); }

static bool key_equal(const dit_rope_key *a, const dit_rope_key *b) {
    /* the parameter structs were zeroed before being filled (dit_rope_key_init), so their padding
     * compares equal too */
    return a->stream == b->stream && a->be == b->be && a->tp_rank == b->tp_rank && a->tp_size == b->tp_size &&
           a->T == b->T && a->n_pos == b->n_pos && memcmp(&a->rp, &b->rp, sizeof a->rp) == 0 &&
           memcmp(&a->xp, &b->xp, sizeof a->xp) == 0 &&
           memcmp(a->pos, b->pos, (size_t)a->n_pos * sizeof(float)) == 0;
}

const dit_rope_tables *dit_rope_cache_find(ltx2_dit_rope_cache *c, const dit_rope_key *k) {
    if (k->stream < 0 || k->stream >= ROPE_CACHE_STREAMS) return NULL;
    rope_entry *e = &c->e[k->stream];
    if (!e->used || !key_equal(&e->key, k)) return NULL;
    c->hits++;
    return &e->t;
}

/* A tensor of shape on be owned by the entry, filled from host. */
static ltx2_status upload_owned(ltx2_context *ctx, const ltx2_backend *be, const float *host, int nd,
                                const int64_t *shape, ltx2_tensor *t) {
    *t = ltx2_tensor_make(NULL, LTX2_F32, nd, shape);
    t->device = be->device;
    LTX2_TRY(be->alloc(be, ctx, ltx2_tensor_nbytes(t), &t->data));
    return ltx2_backend_from_host_f32(ctx, be, host, t);
}

ltx2_status dit_rope_cache_store(ltx2_context *ctx, ltx2_dit_rope_cache *c, const dit_rope_key *k,
                                 const dit_rope_host *h, const dit_rope_tables **out) {
    *out = NULL;
    if (k->stream < 0 || k->stream >= ROPE_CACHE_STREAMS)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit RoPE cache: stream %d", k->stream);
    rope_entry *e = &c->e[k->stream];
    entry_clear(e);
    e->pos = malloc((size_t)(k->n_pos ? k->n_pos : 1) * sizeof(float));
    if (!e->pos) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit RoPE cache: %lld positions", (long long)k->n_pos);
    memcpy(e->pos, k->pos, (size_t)k->n_pos * sizeof(float));
    e->key = *k;
    e->key.pos = e->pos;
    const ltx2_backend *be = k->be;
    ltx2_status st = upload_owned(ctx, be, h->cos, h->nd, h->shape, &e->t.cos);
    if (st == LTX2_OK) st = upload_owned(ctx, be, h->sin, h->nd, h->shape, &e->t.sin);
    if (st == LTX2_OK) st = upload_owned(ctx, be, h->xcos, h->nd, h->xshape, &e->t.xcos);
    if (st == LTX2_OK) st = upload_owned(ctx, be, h->xsin, h->nd, h->xshape, &e->t.xsin);
    if (st != LTX2_OK) {
        entry_clear(e);
        return st;
    }
    e->used = 1;
    c->builds++;
    *out = &e->t;
    return LTX2_OK;
}
