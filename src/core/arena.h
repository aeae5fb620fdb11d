/* Bump allocator over one block: O(1) aligned allocations, freed all at once (reset) or back to a
 * mark (scratch space for one op or one step). The struct is caller-owned; create/destroy manage
 * the block only. */
#ifndef LTX2_CORE_ARENA_H
#define LTX2_CORE_ARENA_H

#include <stddef.h>

#include "ltx2/ltx2.h"

/* The block itself is aligned to this (a cache line; also enough for any AVX-512 load). */
#define LTX2_ARENA_BASE_ALIGN 64

typedef struct ltx2_arena {
    unsigned char *base;
    size_t cap;  /* bytes usable */
    size_t used; /* bytes handed out, including alignment padding */
    size_t peak; /* highest `used` since create */
} ltx2_arena;

/* Allocates a block of cap (> 0) bytes. On failure *a is zeroed. */
ltx2_status ltx2_arena_create(ltx2_context *ctx, ltx2_arena *a, size_t cap);
void ltx2_arena_destroy(ltx2_arena *a);

/* size bytes aligned to align (a power of two; 0 means LTX2_ARENA_BASE_ALIGN). Returns NULL and
 * records LTX2_ERR_OOM (requested, used, capacity) when the arena is exhausted, or
 * LTX2_ERR_INVALID_ARG for a bad alignment. size 0 gives a valid aligned pointer. */
void *ltx2_arena_alloc(ltx2_context *ctx, ltx2_arena *a, size_t size, size_t align);

/* A mark is the current `used`; resetting to it frees everything allocated after it. */
size_t ltx2_arena_mark(const ltx2_arena *a);
ltx2_status ltx2_arena_reset_to(ltx2_context *ctx, ltx2_arena *a, size_t mark);
void ltx2_arena_reset(ltx2_arena *a);
size_t ltx2_arena_used(const ltx2_arena *a);
size_t ltx2_arena_peak(const ltx2_arena *a);

#endif
