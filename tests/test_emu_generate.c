/* The tiny generation through the CUDA kernels run by the CPU emulator (tests/emu/) against the CPU
 * backend, per stage (generate_device_check.h): what `ltx2 generate --device cuda` computes, checked
 * without a GPU. */
#include "backend_emu.h"
#include "generate_device_check.h"

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *emu = NULL;
    CHECK(ltx2_backend_emu_create(ctx, &emu) == LTX2_OK, "emu backend: %s", ltx2_last_error(ctx));
    if (emu) {
        generate_device_check(ctx, emu, "2.0");
        generate_device_check(ctx, emu, "2.3");
    }
    ltx2_backend_free(emu);
    ltx2_context_free(ctx);
    return test_finish();
}
