/* Fuzz target: a LoRA file as generate reads it (--lora PATH: lora_A / lora_B pairs under
 * ltx-core or diffusers names), then the fusion into an 8 x 8 weight of a name such files use. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "model/lora.h"

/* A Linear the fuzzer's pairs can name ("diffusion_model.transformer_blocks.0.attn1.to_q"). */
#define FUZZ_WEIGHT "transformer_blocks.0.attn1.to_q.weight"
#define FUZZ_DIM 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const exts[] = {".safetensors"};
    char path[64];
    if (!fuzz_write_file(data, size, exts, 1, path, sizeof path)) return 0;
    ltx2_context *ctx = fuzz_context();
    if (ctx) {
        const ltx2_lora_spec spec = {path, 0.5};
        ltx2_lora_set *set = NULL;
        ltx2_status st = ltx2_lora_set_open(ctx, &spec, 1, &set);
        fuzz_check_error(ctx, st);
        if (st == LTX2_OK) {
            float w[FUZZ_DIM * FUZZ_DIM] = {0};
            st = ltx2_lora_fuse(ctx, set, FUZZ_WEIGHT, w, FUZZ_DIM, FUZZ_DIM);
            fuzz_check_error(ctx, st);
            fuzz_check_error(ctx, ltx2_lora_check_used(ctx, set));
        }
        ltx2_lora_set_free(set);
        ltx2_context_free(ctx);
    }
    unlink(path);
    return 0;
}
