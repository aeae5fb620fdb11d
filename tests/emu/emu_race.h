/* Shared-memory hazards of the async-copy pipeline, for the CPU emulator (emu.c). The emulator
 * lands each cp.async at the cp.async.wait_group that covers it, which makes a missing wait
 * visible but hides the opposite mistake: a copy issued into a stage that other warps are still
 * reading (a missing __syncthreads before the refill). A GPU may land the copy anywhere between
 * issue and wait, so this tracker checks the orderings themselves, per 16-byte chunk (the unit of
 * cp.async and of an ldmatrix row), in "barrier intervals" (the time between two completed block
 * barriers of the block):
 *   - write after read: a cp.async is issued, or lands, into a chunk that another warp read with
 *     ldmatrix since the copy was issued or in the current interval;
 *   - read of an in-flight copy: ldmatrix reads a chunk whose cp.async has not been waited for;
 *   - read after write without a barrier: ldmatrix reads a chunk that another warp's
 *     wait_group landed in the current interval.
 * Plain shared-memory loads and stores are not seen (they are not intercepted). The emulator
 * calls everything here with its block lock held. */
#ifndef LTX2_EMU_RACE_H
#define LTX2_EMU_RACE_H

#include <stddef.h>
#include <stdint.h>

typedef struct emu_race emu_race;

/* Where an access comes from, for the messages. */
typedef struct emu_site {
    int tid, warp;
    const char *file;
    int line;
} emu_site;

emu_race *emu_race_create(void);
void emu_race_free(emu_race *r);
/* A new block: no chunk has history. */
void emu_race_block_start(emu_race *r);
/* A block barrier completed: a new interval begins. */
void emu_race_barrier(emu_race *r);

/* Each returns 0, or 1 with a description of the hazard in msg. chunk is a 16-byte aligned
 * shared address. */
int emu_race_read(emu_race *r, const void *chunk, emu_site s, char *msg, size_t cap);
int emu_race_copy_issue(emu_race *r, const void *chunk, emu_site s, char *msg, size_t cap);
int emu_race_copy_land(emu_race *r, const void *chunk, emu_site s, char *msg, size_t cap);

#endif
