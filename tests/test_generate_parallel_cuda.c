/* The multi-rank tiny generation with every rank on its own CUDA device, rank r on GPU r mod the
 * GPU count (two ranks share one GPU on a one-GPU machine), over loopback threads
 * (generate_parallel_device_check.h): context 2 (LTX-2.3) and tensor 2 (LTX-2.0) against the CPU
 * per stage, and a rank whose device reads 1 MiB free refused by its own plan. Without a CUDA
 * device it prints why and skips (77). */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "generate_parallel_device_check.h"

static ltx2_status make_cuda(ltx2_context *ctx, int rank, bool scarce, ltx2_backend **out) {
    LTX2_TRY(ltx2_backend_cuda_create(ctx, rank % ltx2_backend_cuda_device_count(), out));
    if (scarce) (*out)->mem_info = mem_stub_scarce;
    return LTX2_OK;
}

int main(void) {
    if (ltx2_backend_cuda_device_count() < 1) return test_skip("no usable CUDA device (or no CUDA in this build)");
    return generate_parallel_device_main(make_cuda);
}
