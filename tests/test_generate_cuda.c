/* The tiny generation on the CUDA backend against the CPU backend, per stage
 * (generate_device_check.h). Without a CUDA device (or a CUDA build) it prints why and skips (77). */
#include "generate_device_check.h"

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *cuda = NULL;
    if (ltx2_backend_cuda_create(ctx, 0, &cuda) != LTX2_OK) {
        char why[LTX2_ERROR_CAP];
        snprintf(why, sizeof why, "%s", ltx2_last_error(ctx));
        ltx2_context_free(ctx);
        return test_skip(why);
    }
    generate_device_check(ctx, cuda, "2.0");
    generate_device_check(ctx, cuda, "2.3");
    ltx2_backend_free(cuda);
    ltx2_context_free(ctx);
    return test_finish();
}
