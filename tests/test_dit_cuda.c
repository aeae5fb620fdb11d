/* The tiny DiT's one forward on the CUDA backend against the CPU reference (dit_device_check.h).
 * Without a CUDA device (or a CUDA build) it prints why and skips (77). */
#include "cuda_test.h"
#include "dit_device_check.h"

int main(void) {
    static const char *const versions[] = {"2.0", "2.3", NULL};
    return cuda_test_main(dit_device_check_all, versions);
}
