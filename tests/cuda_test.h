/* What every tests/test_*_cuda.c does around its check: the CUDA backend on device 0, or the
 * reason there is none, so the test skips (77) saying why. Include after test_util.h. */
#ifndef LTX2_TESTS_CUDA_TEST_H
#define LTX2_TESTS_CUDA_TEST_H

#include <stdio.h>

#include "backend/backend.h"
#include "core/context.h"
#include "test_util.h"

/* Runs check(ctx, cuda, arg) for each arg of the NULL-terminated list on a fresh context;
 * returns main's exit code. */
typedef void (*cuda_check_fn)(ltx2_context *ctx, const ltx2_backend *cuda, const char *arg);

static int cuda_test_main(cuda_check_fn check, const char *const *args) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *cuda = NULL;
    if (ltx2_backend_cuda_create(ctx, 0, &cuda) != LTX2_OK) {
        char why[LTX2_ERROR_CAP];
        snprintf(why, sizeof why, "%s", ltx2_last_error(ctx));
        ltx2_context_free(ctx);
        return test_skip(why);
    }
    for (int i = 0; args[i]; i++) check(ctx, cuda, args[i]);
    ltx2_backend_free(cuda);
    ltx2_context_free(ctx);
    return test_finish();
}

#endif
