/* The tiny Gemma-3's one forward through the CUDA kernels run by the CPU emulator (tests/emu/)
 * against the CPU reference: what a CUDA text encoder computes, checked without a GPU
 * (gemma_device_check.h). */
#include "backend_emu.h"
#include "gemma_device_check.h"

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *emu = NULL;
    CHECK(ltx2_backend_emu_create(ctx, &emu) == LTX2_OK, "emu backend: %s", ltx2_last_error(ctx));
    if (emu) gemma_device_check(ctx, emu);
    ltx2_backend_free(emu);
    ltx2_context_free(ctx);
    return test_finish();
}
