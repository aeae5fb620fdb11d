/* The conditioned pipelines (distilled with a held audio; two-stage with LoRAs and
 * stage 2's DiT loaded again) through the CUDA kernels run by the CPU emulator, against the CPU
 * backend (generate_cond_device_check.h): the device paths #14 added, checked without a GPU.
 * LTX-2.3 only (the emulator is slow; 2.0 differs in no path these add). */
#include "backend_emu.h"
#include "generate_cond_device_check.h"

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *emu = NULL;
    CHECK(ltx2_backend_emu_create(ctx, &emu) == LTX2_OK, "emu backend: %s", ltx2_last_error(ctx));
    if (emu) generate_cond_device_check(ctx, emu, "2.3");
    ltx2_backend_free(emu);
    ltx2_context_free(ctx);
    return test_finish();
}
