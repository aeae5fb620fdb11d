/* Shared-memory hazard tracking for the CPU emulator's cp.async / ldmatrix pipeline (see
 * emu_race.h): one record per 16-byte chunk touched in the running block, in an open-addressing
 * table cleared per block. Intervals are stored +1 so that 0 means "never". */
#include "emu_race.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* First table size (chunks); it doubles whenever it is half full. 4096 chunks = 64 KB of shared
 * memory, about one attention block's tiles. */
#define EMU_RACE_INITIAL_SLOTS 4096
#define EMU_RACE_CHUNK 16

typedef struct emu_chunk {
    uintptr_t key; /* chunk address / 16; 0 = free slot */
    uint64_t read_iv;
    uint32_t readers; /* warps that read it with ldmatrix in read_iv */
    emu_site reader;  /* the last of them */
    int inflight;     /* cp.async issued and not landed */
    emu_site writer;  /* the last issuer */
    uint64_t land_iv;
    emu_site lander;
} emu_chunk;

struct emu_race {
    emu_chunk *slots;
    size_t cap, used;
    uint64_t iv; /* current barrier interval + 1 */
};

static const char *emu_race_base(const char *path) {
    if (!path) return "?";
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

emu_race *emu_race_create(void) {
    emu_race *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->slots = calloc(EMU_RACE_INITIAL_SLOTS, sizeof *r->slots);
    if (!r->slots) {
        free(r);
        return NULL;
    }
    r->cap = EMU_RACE_INITIAL_SLOTS;
    r->iv = 1;
    return r;
}

void emu_race_free(emu_race *r) {
    if (!r) return;
    free(r->slots);
    free(r);
}

void emu_race_block_start(emu_race *r) {
    memset(r->slots, 0, r->cap * sizeof *r->slots);
    r->used = 0;
    r->iv = 1;
}

void emu_race_barrier(emu_race *r) { r->iv++; }

static size_t emu_race_hash(uintptr_t key, size_t cap) {
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

/* Doubles the table; on allocation failure keeps the old one (it still has free slots). */
static void emu_race_grow(emu_race *r) {
    const size_t cap = 2 * r->cap;
    emu_chunk *s = calloc(cap, sizeof *s);
    if (!s) return;
    for (size_t i = 0; i < r->cap; i++) {
        if (!r->slots[i].key) continue;
        size_t j = emu_race_hash(r->slots[i].key, cap);
        while (s[j].key) j = (j + 1) & (cap - 1);
        s[j] = r->slots[i];
    }
    free(r->slots);
    r->slots = s;
    r->cap = cap;
}

/* The chunk's record, created empty on first touch; NULL only if the table is full and cannot grow. */
static emu_chunk *emu_race_find(emu_race *r, const void *chunk) {
    const uintptr_t key = (uintptr_t)chunk / EMU_RACE_CHUNK;
    if (2 * (r->used + 1) > r->cap) emu_race_grow(r);
    if (r->used + 1 >= r->cap) return NULL;
    size_t i = emu_race_hash(key, r->cap);
    while (r->slots[i].key && r->slots[i].key != key) i = (i + 1) & (r->cap - 1);
    if (!r->slots[i].key) {
        r->slots[i].key = key;
        r->used++;
    }
    return &r->slots[i];
}

/* Lowest warp index in a warp set. */
static int emu_race_first_warp(uint32_t warps) {
    int w = 0;
    while (!(warps >> w & 1u)) w++;
    return w;
}

int emu_race_read(emu_race *r, const void *chunk, emu_site s, char *msg, size_t cap) {
    emu_chunk *c = emu_race_find(r, chunk);
    if (!c) return 0;
    if (c->inflight) {
        snprintf(msg, cap,
                 "shared-memory race: ldmatrix (%s:%d) in warp %d reads 16 bytes at %p that a cp.async of thread "
                 "%d (%s:%d) may still be writing: no cp.async.wait_group has covered that copy yet",
                 emu_race_base(s.file), s.line, s.warp, chunk, c->writer.tid, emu_race_base(c->writer.file),
                 c->writer.line);
        return 1;
    }
    if (c->land_iv == r->iv && c->lander.warp != s.warp) {
        snprintf(msg, cap,
                 "shared-memory race: ldmatrix (%s:%d) in warp %d reads 16 bytes at %p that thread %d (warp %d) "
                 "waited for (cp.async.wait_group, %s:%d) since the last block barrier: its copy is only visible "
                 "to other warps after a __syncthreads",
                 emu_race_base(s.file), s.line, s.warp, chunk, c->lander.tid, c->lander.warp,
                 emu_race_base(c->lander.file), c->lander.line);
        return 1;
    }
    if (c->read_iv != r->iv) {
        c->read_iv = r->iv;
        c->readers = 0;
    }
    c->readers |= 1u << (s.warp & 31);
    c->reader = s;
    return 0;
}

int emu_race_copy_issue(emu_race *r, const void *chunk, emu_site s, char *msg, size_t cap) {
    emu_chunk *c = emu_race_find(r, chunk);
    if (!c) return 0;
    const uint32_t others = c->readers & ~(1u << (s.warp & 31));
    if (c->read_iv == r->iv && others) {
        snprintf(msg, cap,
                 "shared-memory race: cp.async (%s:%d) of thread %d (warp %d) overwrites 16 bytes at %p that warp "
                 "%d read with ldmatrix (%s:%d) since the last block barrier: a __syncthreads must separate the "
                 "reads from the refill",
                 emu_race_base(s.file), s.line, s.tid, s.warp, chunk, emu_race_first_warp(others),
                 emu_race_base(c->reader.file), c->reader.line);
        return 1;
    }
    c->inflight++;
    c->writer = s;
    return 0;
}

int emu_race_copy_land(emu_race *r, const void *chunk, emu_site s, char *msg, size_t cap) {
    (void)msg;
    (void)cap;
    emu_chunk *c = emu_race_find(r, chunk);
    if (!c) return 0;
    if (c->inflight) c->inflight--;
    c->land_iv = r->iv;
    c->lander = s;
    return 0;
}
