/* The tiny Gemma-3's one forward on the CUDA backend against the CPU reference
 * (gemma_device_check.h). Without a CUDA device (or a CUDA build) it prints why and skips (77). */
#include "cuda_test.h"
#include "gemma_device_check.h"

static void check(ltx2_context *ctx, const ltx2_backend *cuda, const char *arg) {
    (void)arg;
    gemma_device_check(ctx, cuda);
}

int main(void) {
    static const char *const once[] = {"", NULL};
    return cuda_test_main(check, once);
}
