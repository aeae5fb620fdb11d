/* Shared bits of the fuzz targets: a quiet context (warnings are expected on hostile input) and
 * a check that failures always come with a message. */
#ifndef LTX2_FUZZ_COMMON_H
#define LTX2_FUZZ_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/context.h"

static inline ltx2_context *fuzz_context(void) {
    ltx2_context_params p;
    ltx2_context_params_init(&p);
    p.log_level = LTX2_LOG_ERROR;
    return ltx2_context_create(&p);
}

/* A failed parse must say why; an empty message is a bug worth a crash report. */
static inline void fuzz_check_error(ltx2_context *ctx, ltx2_status st) {
    if (st != LTX2_OK && ltx2_last_error(ctx)[0] == '\0') {
        fprintf(stderr, "status %s without a message\n", ltx2_status_name(st));
        abort();
    }
}

/* The pipeline's input loaders take paths and tell formats by extension: the input's first byte
 * picks one of exts[n], the rest is written to a per-process temp file of that extension, whose
 * path is returned in path (cap bytes); false when it cannot be written (nothing to test). */
static inline bool fuzz_write_file(const uint8_t *data, size_t size, const char *const *exts, int n, char *path,
                                   size_t cap) {
    if (size < 1) return false;
    snprintf(path, cap, "/tmp/ltx2_fuzz_%d%s", (int)getpid(), exts[data[0] % n]);
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    const bool ok = fwrite(data + 1, 1, size - 1, f) == size - 1;
    return fclose(f) == 0 && ok;
}

#endif
