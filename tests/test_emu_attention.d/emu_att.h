/* What test_emu_attention.c and its parts share beyond tests/emu_check.h (buffers, inputs,
 * comparison): the launchers' error codes, this test's input seed, and the entry point of the
 * RoPE / softmax part. test_util.h keeps its counters per translation unit, so a part returns its
 * counts for main to add. Include after "emu_check.h". */
#ifndef TEST_EMU_ATT_H
#define TEST_EMU_ATT_H

#include "backend/backend.h"
#include "ltx2/ltx2.h"

/* cudaError_t values the launchers return (driver_types.h): bad argument, path not available. */
#define EMU_ERR_INVALID_VALUE 1
#define EMU_ERR_NOT_SUPPORTED 801
/* Philox seed of every input of this test (emu_normal_seeded). */
#define EMU_ATT_SEED 0x1e2a77e5ULL

typedef struct emu_counts {
    int passed, failed;
} emu_counts;

/* test_emu_attention.d/rope_softmax.c */
emu_counts test_emu_rope_softmax(ltx2_context *ctx);

#endif
