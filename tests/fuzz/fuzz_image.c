/* Fuzz target: a conditioning image as generate reads it (--image PATH: PNG through libpng, any
 * other format through FFmpeg when the build has it). The H.264 round trip is not fuzzed: it only
 * ever sees what this reader returned. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "io/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const exts[] = {".png", ".jpg"};
    char path[64];
    if (!fuzz_write_file(data, size, exts, 2, path, sizeof path)) return 0;
    ltx2_context *ctx = fuzz_context();
    if (ctx) {
        uint8_t *rgb = NULL;
        int64_t w = 0, h = 0;
        const ltx2_status st = ltx2_image_read_rgb8(ctx, path, &rgb, &w, &h);
        fuzz_check_error(ctx, st);
        if (st == LTX2_OK && (!rgb || w < 1 || h < 1)) abort(); /* success must give pixels */
        if (st == LTX2_OK) {
            volatile uint8_t last = rgb[(size_t)(w * h * 3) - 1]; /* the whole buffer is there (ASan) */
            (void)last;
        }
        free(rgb);
        ltx2_context_free(ctx);
    }
    unlink(path);
    return 0;
}
