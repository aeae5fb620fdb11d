/* Bump allocator (see arena.h). Alignment is computed on absolute addresses, so any power of two
 * works, not just those dividing the block's own alignment. */
#include "core/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"

ltx2_status ltx2_arena_create(ltx2_context *ctx, ltx2_arena *a, size_t cap) {
    if (!a) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "arena_create: NULL arena");
    memset(a, 0, sizeof(*a));
    if (cap == 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "arena_create: capacity must be > 0");
    /* aligned_alloc wants a multiple of the alignment. */
    size_t rounded = (cap + LTX2_ARENA_BASE_ALIGN - 1) / LTX2_ARENA_BASE_ALIGN * LTX2_ARENA_BASE_ALIGN;
    if (rounded < cap)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "arena_create: capacity %zu bytes overflows", cap);
    a->base = aligned_alloc(LTX2_ARENA_BASE_ALIGN, rounded);
    if (!a->base)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "arena_create: could not allocate %zu bytes", cap);
    a->cap = cap;
    return LTX2_OK;
}

void ltx2_arena_destroy(ltx2_arena *a) {
    if (!a) return;
    free(a->base);
    memset(a, 0, sizeof(*a));
}

void *ltx2_arena_alloc(ltx2_context *ctx, ltx2_arena *a, size_t size, size_t align) {
    if (!a || !a->base) {
        LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "arena_alloc: arena not created");
        return NULL;
    }
    if (align == 0) align = LTX2_ARENA_BASE_ALIGN;
    if (align & (align - 1)) {
        LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "arena_alloc: alignment %zu is not a power of two", align);
        return NULL;
    }
    uintptr_t cur = (uintptr_t)a->base + a->used;
    uintptr_t aligned = (cur + (align - 1)) & ~(uintptr_t)(align - 1);
    size_t pad = (size_t)(aligned - cur);
    size_t avail = a->cap - a->used;
    if (aligned < cur || pad > avail || size > avail - pad) {
        LTX2_ERROR(ctx, LTX2_ERR_OOM,
                   "arena exhausted: requested %zu bytes (align %zu), used %zu of capacity %zu", size,
                   align, a->used, a->cap);
        return NULL;
    }
    a->used += pad + size;
    if (a->used > a->peak) a->peak = a->used;
    return (void *)aligned;
}

size_t ltx2_arena_mark(const ltx2_arena *a) { return a ? a->used : 0; }

ltx2_status ltx2_arena_reset_to(ltx2_context *ctx, ltx2_arena *a, size_t mark) {
    if (!a) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "arena_reset_to: NULL arena");
    if (mark > a->used)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "arena_reset_to: mark %zu is past the used size %zu (stale mark?)", mark, a->used);
    a->used = mark;
    return LTX2_OK;
}

void ltx2_arena_reset(ltx2_arena *a) {
    if (a) a->used = 0;
}

size_t ltx2_arena_used(const ltx2_arena *a) { return a ? a->used : 0; }
size_t ltx2_arena_peak(const ltx2_arena *a) { return a ? a->peak : 0; }
