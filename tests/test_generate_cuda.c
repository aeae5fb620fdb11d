/* The tiny generation on the CUDA backend against the CPU backend, per stage
 * (generate_device_check.h). Without a CUDA device (or a CUDA build) it prints why and skips (77). */
#include "cuda_test.h"
#include "generate_device_check.h"

int main(void) {
    static const char *const versions[] = {"2.0", "2.3", NULL};
    return cuda_test_main(generate_device_check, versions);
}
