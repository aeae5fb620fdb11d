/* The multi-rank tiny generation with every rank on its own emulated GPU (tests/emu/: the CUDA
 * kernels on the CPU), checked without a GPU (generate_parallel_device_check.h): context 2
 * (LTX-2.3) and tensor 2 (LTX-2.0) against the CPU per stage, and a rank with too little device
 * memory refused by its own plan. (The DiT's splits alone: test_emu_dit_parallel.) */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "backend_emu.h"
#include "generate_parallel_device_check.h"

static ltx2_status make_emu(ltx2_context *ctx, int rank, bool scarce, ltx2_backend **out) {
    (void)rank;
    LTX2_TRY(ltx2_backend_emu_create(ctx, out));
    (*out)->mem_info = scarce ? mem_stub_scarce : mem_stub_ample;
    return LTX2_OK;
}

int main(void) {
    return generate_parallel_device_main(make_emu);
}
