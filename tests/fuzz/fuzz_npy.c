/* Fuzz target: the .npy parser. Accepted arrays have every byte of their data touched. */
#include <stdint.h>

#include "fuzz_common.h"
#include "io/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ltx2_context *ctx = fuzz_context();
    if (!ctx) return 0;
    ltx2_array a;
    ltx2_status st = ltx2_npy_parse(ctx, data, size, "fuzz.npy", &a);
    fuzz_check_error(ctx, st);
    if (st == LTX2_OK) {
        size_t nb = ltx2_tensor_nbytes(&a.t);
        if (nb > size) abort();
        volatile uint8_t sink = 0;
        for (size_t i = 0; i < nb; i++) sink ^= ((const uint8_t *)a.t.data)[i];
        (void)sink;
        ltx2_array_free(&a);
    }
    ltx2_context_free(ctx);
    return 0;
}
