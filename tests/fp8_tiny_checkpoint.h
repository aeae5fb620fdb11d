/* A pre-quantised fp8 tiny checkpoint for the generation tests: the tiny LTX-2.3 single file with
 * its DiT replaced by the mixed fp8/bf16 DiT of tests/golden/data/dit_fp8_2.3.safetensors (block
 * 1's Linears e4m3 with weight and input scales, test_dit_fp8_scaled holds its forward to ltx-core's
 * FP8Linear), written where a test asks. */
#ifndef LTX2_TESTS_FP8_TINY_CHECKPOINT_H
#define LTX2_TESTS_FP8_TINY_CHECKPOINT_H

#include <stdbool.h>
#include <string.h>

#include "core/context.h"
#include "io/safetensors.h"
#include "test_util.h"

#define FP8_TINY_DIT_PREFIX "model.diffusion_model."

/* path = the tiny 2.3 single file with every DiT tensor the fp8 golden holds taken from it (the fp8
 * weights, their scales, the rest as stored), its metadata kept. */
static inline bool fp8_tiny_checkpoint_write(ltx2_context *ctx, const char *path) {
    ltx2_st_file *tiny = NULL, *gold = NULL;
    ltx2_st_writer *w = NULL;
    bool ok = ltx2_st_open(ctx, LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-2.3.safetensors", &tiny) == LTX2_OK &&
              ltx2_st_open(ctx, LTX2_SOURCE_DIR "/tests/golden/data/dit_fp8_2.3.safetensors", &gold) == LTX2_OK &&
              ltx2_st_writer_create(ctx, &w) == LTX2_OK;
    for (size_t i = 0; ok && i < tiny->n_meta; i++)
        ok = ltx2_st_writer_set_meta(ctx, w, tiny->meta[i].key, tiny->meta[i].value) == LTX2_OK;
    for (size_t i = 0; ok && i < tiny->n_tensors; i++) {
        const ltx2_st_tensor *t = &tiny->tensors[i];
        if (strncmp(t->name, FP8_TINY_DIT_PREFIX, strlen(FP8_TINY_DIT_PREFIX)) == 0 && ltx2_st_find(gold, t->name)) continue;
        const ltx2_tensor v = ltx2_st_view(t);
        ok = ltx2_st_writer_add(ctx, w, t->name, &v) == LTX2_OK;
    }
    for (size_t i = 0; ok && i < gold->n_tensors; i++) {
        const ltx2_st_tensor *t = &gold->tensors[i];
        if (strncmp(t->name, FP8_TINY_DIT_PREFIX, strlen(FP8_TINY_DIT_PREFIX)) != 0) continue;
        const ltx2_tensor v = ltx2_st_view(t);
        ok = ltx2_st_writer_add(ctx, w, t->name, &v) == LTX2_OK;
    }
    if (ok) ok = ltx2_st_writer_write(ctx, w, path) == LTX2_OK;
    CHECK(ok, "writing the fp8 checkpoint: %s", ltx2_last_error(ctx));
    ltx2_st_writer_free(w);
    ltx2_st_close(gold);
    ltx2_st_close(tiny);
    return ok;
}

#endif
