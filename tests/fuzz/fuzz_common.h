/* Shared bits of the fuzz targets: a quiet context (warnings are expected on hostile input) and
 * a check that failures always come with a message. */
#ifndef LTX2_FUZZ_COMMON_H
#define LTX2_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>

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

#endif
