/* The DiT's per-generation activation pool (ltx2_dit_act_pool in model/dit.h): one backend pool kept
 * across the model calls of a denoising loop, so the calls after the first take their buffers
 * without the device allocator (cudaMalloc, and cudaFree waiting for the device). It is emptied
 * before a call of another shape, and trimmed after each call to the buffers that call used, so it
 * holds at most one call's buffers between calls: the memory plan's per-call peak still bounds it. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "core/context.h"
#include "model/dit_internal.h"

struct ltx2_dit_act_pool {
    ltx2_bpool *pool; /* on be */
    const ltx2_backend *be;
    int64_t calls, clears;
};

ltx2_status ltx2_dit_act_pool_create(ltx2_context *ctx, ltx2_dit_act_pool **out) {
    if (!out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "dit activation pool: NULL out");
    *out = calloc(1, sizeof **out);
    return *out ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit activation pool");
}

void ltx2_dit_act_pool_free(ltx2_dit_act_pool *p) {
    if (!p) return;
    ltx2_bpool_free(p->pool);
    free(p);
}

void ltx2_dit_act_pool_get_stats(const ltx2_dit_act_pool *p, ltx2_dit_act_pool_stats *out) {
    memset(out, 0, sizeof *out);
    if (!p) return;
    out->calls = p->calls;
    out->clears = p->clears;
    out->allocs = p->pool ? ltx2_bpool_allocs(p->pool) : 0;
    out->bytes = p->pool ? (int64_t)ltx2_bpool_bytes(p->pool) : 0;
    out->peak = p->pool ? (int64_t)ltx2_bpool_peak_bytes(p->pool) : 0;
}

ltx2_status dit_act_pool_begin(ltx2_context *ctx, ltx2_dit_act_pool *a, const ltx2_backend *be,
                               const int64_t key[DIT_ACT_KEY], ltx2_bpool **pool) {
    if (a->pool && a->be != be) { /* a pool belongs to one backend */
        ltx2_bpool_free(a->pool);
        a->pool = NULL;
        a->clears++;
    }
    if (!a->pool) LTX2_TRY(ltx2_bpool_create(ctx, be, &a->pool));
    a->be = be;
    a->clears += ltx2_bpool_begin_run(a->pool, key, DIT_ACT_KEY);
    a->calls++;
    *pool = a->pool;
    return LTX2_OK;
}

void dit_act_pool_end(ltx2_dit_act_pool *a, ltx2_status st) { ltx2_bpool_end_run(a->pool, st == LTX2_OK); }
