/* The tiny generation through the CUDA kernels run by the CPU emulator (tests/emu/) against the CPU
 * backend, per stage (generate_device_check.h): what `ltx2 generate --device cuda` computes, checked
 * without a GPU. The emulator's backend is given device memory to plan (a GPU's mem_info
 * stand-in): 64 GiB free for the runs, which the memory plan must pass, and 1 MiB, which it must
 * refuse before loading anything. */
#include "backend_emu.h"
#include "device_mem_stub.h"
#include "generate_device_check.h"

static void refused_for_memory(ltx2_context *ctx, const ltx2_backend *emu) {
    ltx2_backend small = *emu;
    small.mem_info = mem_stub_scarce;
    ltx2_generate_params p;
    ltx2_generate_params_init(&p);
    p.checkpoint = LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-2.3.safetensors";
    p.prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_positive.safetensors";
    p.negative_prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_negative.safetensors";
    p.steps = 2, p.height = 64, p.width = 96, p.frames = 9;
    ltx2_generate_result r;
    const ltx2_status st = ltx2_generate_on(ctx, &p, &small, &r);
    const char *msg = ltx2_last_error(ctx);
    printf("1 MiB free: %s\n", msg);
    CHECK(st == LTX2_ERR_OOM && strstr(msg, "not enough device memory") && strstr(msg, "GiB free") &&
              r.video == NULL,
          "a device with 1 MiB free must be refused before any work: %s %s", ltx2_status_name(st), msg);
    ltx2_clear_error(ctx);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *emu = NULL;
    CHECK(ltx2_backend_emu_create(ctx, &emu) == LTX2_OK, "emu backend: %s", ltx2_last_error(ctx));
    if (emu) {
        emu->mem_info = mem_stub_ample;
        refused_for_memory(ctx, emu);
        generate_device_check(ctx, emu, "2.0");
        generate_device_check(ctx, emu, "2.3");
    }
    ltx2_backend_free(emu);
    ltx2_context_free(ctx);
    return test_finish();
}
