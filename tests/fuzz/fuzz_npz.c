/* Fuzz target: the .npz (zip) reader, stored and deflated members. Accepted archives have every
 * member's name and data touched. */
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "io/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ltx2_context *ctx = fuzz_context();
    if (!ctx) return 0;
    ltx2_npz z;
    ltx2_status st = ltx2_npz_parse(ctx, data, size, "fuzz.npz", &z);
    fuzz_check_error(ctx, st);
    if (st == LTX2_OK) {
        volatile uint8_t sink = 0;
        for (size_t i = 0; i < z.n; i++) {
            sink ^= (uint8_t)strlen(z.names[i]);
            size_t nb = ltx2_tensor_nbytes(&z.arrays[i].t);
            for (size_t k = 0; k < nb; k++) sink ^= ((const uint8_t *)z.arrays[i].t.data)[k];
        }
        (void)sink;
        ltx2_npz_free(&z);
    }
    ltx2_context_free(ctx);
    return 0;
}
