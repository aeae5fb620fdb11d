/* The multi-rank tiny generation with every rank on its own emulated GPU (tests/emu/: the CUDA
 * kernels on the CPU), checked without a GPU (generate_parallel_device_check.h): context 2
 * (LTX-2.3) and tensor 2 (LTX-2.0) against the CPU per stage, and a rank with too little device
 * memory refused by its own plan. (The DiT's splits alone: test_emu_dit_parallel.) */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "backend_emu.h"
#include "generate_parallel_device_check.h"

/* The free memory an emulated device reports (it has no mem_info of its own): ample for the tiny
 * model, so each rank's plan runs and passes. */
#define EMU_AMPLE_FREE ((size_t)64 << 30)

static ltx2_status ample(const ltx2_backend *be, ltx2_context *ctx, size_t *free_b, size_t *total_b) {
    (void)be, (void)ctx;
    *free_b = EMU_AMPLE_FREE, *total_b = EMU_AMPLE_FREE;
    return LTX2_OK;
}

static ltx2_status make_emu(ltx2_context *ctx, int rank, bool scarce, ltx2_backend **out) {
    (void)rank;
    LTX2_TRY(ltx2_backend_emu_create(ctx, out));
    (*out)->mem_info = scarce ? gen_par_scarce : ample;
    return LTX2_OK;
}

int main(void) {
    return generate_parallel_device_main(make_emu);
}
