/* The tiny DiT's one forward through the CUDA kernels run by the CPU emulator (tests/emu/) against
 * the CPU reference: what `--device cuda` computes, checked without a GPU (dit_device_check.h). */
#include "backend_emu.h"
#include "dit_device_check.h"

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *emu = NULL;
    CHECK(ltx2_backend_emu_create(ctx, &emu) == LTX2_OK, "emu backend: %s", ltx2_last_error(ctx));
    if (emu) {
        dit_device_check_all(ctx, emu, "2.0");
        dit_device_check_all(ctx, emu, "2.3");
    }
    ltx2_backend_free(emu);
    ltx2_context_free(ctx);
    return test_finish();
}
