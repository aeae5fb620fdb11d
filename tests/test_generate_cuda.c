/* The tiny generation on the CUDA backend against the CPU backend, per stage
 * (generate_device_check.h), and the conditioned pipelines (generate_cond_device_check.h). Without
 * a CUDA device (or a CUDA build) it prints why and skips (77). */
#include "cuda_test.h"
#include "generate_cond_device_check.h"

static void both_checks(ltx2_context *ctx, const ltx2_backend *cuda, const char *v) {
    generate_device_check(ctx, cuda, v);
    generate_cond_device_check(ctx, cuda, v);
}

int main(void) {
    static const char *const versions[] = {"2.0", "2.3", NULL};
    return cuda_test_main(both_checks, versions);
}
