/* Fuzz target: a prompt-embeds file as generate reads it (--prompt-embeds: .safetensors, .npz or a
 * lone .npy of Gemma hidden states + attention mask), then left-padded as a CFG pair of different
 * lengths is. Accepted files have every value and mask byte read. */
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "pipeline/pipeline.h"

/* The tiny checkpoints' text width: D 32 x L 3 hidden states (weights/tiny/prompt_embeds_*). */
#define FUZZ_TEXT_DIM 96

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const exts[] = {".safetensors", ".npz", ".npy"};
    char path[64];
    if (!fuzz_write_file(data, size, exts, 3, path, sizeof path)) return 0;
    ltx2_context *ctx = fuzz_context();
    if (!ctx) return 0;
    ltx2_pipe_text t;
    ltx2_status st = ltx2_pipe_text_load(ctx, path, FUZZ_TEXT_DIM, &t);
    fuzz_check_error(ctx, st);
    if (st == LTX2_OK) {
        volatile float sink = 0;
        for (int64_t i = 0; i < t.S * t.D * t.L; i++) sink += t.hidden[i];
        for (int64_t i = 0; i < t.S; i++) sink += (float)t.mask[i];
        (void)sink;
        st = ltx2_pipe_text_pad_left(ctx, &t, t.S + LTX2_CONNECTOR_REGISTERS);
        fuzz_check_error(ctx, st);
        ltx2_pipe_text_free(&t);
    }
    unlink(path);
    ltx2_context_free(ctx);
    return 0;
}
