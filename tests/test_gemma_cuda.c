/* The tiny Gemma-3's one forward on the CUDA backend against the CPU reference
 * (gemma_device_check.h). Without a CUDA device (or a CUDA build) it prints why and skips (77). */
#include "gemma_device_check.h"

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *cuda = NULL;
    if (ltx2_backend_cuda_create(ctx, 0, &cuda) != LTX2_OK) {
        char why[LTX2_ERROR_CAP];
        snprintf(why, sizeof why, "%s", ltx2_last_error(ctx));
        ltx2_context_free(ctx);
        return test_skip(why);
    }
    gemma_device_check(ctx, cuda);
    ltx2_backend_free(cuda);
    ltx2_context_free(ctx);
    return test_finish();
}
