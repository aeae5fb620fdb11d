/* Minimal test helpers: CHECK records a pass/fail with location; test_finish prints the
 * "N passed, N failed" line CTest logs show and returns the exit code (77 = skipped); test_rel_l2
 * is the distance every golden test reports. */
#ifndef LTX2_TEST_UTIL_H
#define LTX2_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ltx2/ltx2.h"

#define TEST_SKIP_CODE 77

typedef struct test_counts {
    int passed, failed;
} test_counts;

static test_counts test_counts_g;

#define CHECK(cond, ...)                                              \
    do {                                                              \
        if (cond) {                                                   \
            test_counts_g.passed++;                                   \
        } else {                                                      \
            test_counts_g.failed++;                                   \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                             \
            fputc('\n', stderr);                                      \
        }                                                             \
    } while (0)

/* ||got - ref|| / ||ref|| in double (the absolute norm when ref is all zero). */
static inline double test_rel_l2(const float *got, const float *ref, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double)got[i] - ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static inline int test_finish(void) {
    printf("%d passed, %d failed\n", test_counts_g.passed, test_counts_g.failed);
    return test_counts_g.failed ? 1 : 0;
}

static inline int test_skip(const char *why) {
    printf("skipped: %s\n0 passed, 0 failed, 1 skipped\n", why);
    return TEST_SKIP_CODE;
}

/* A context that logs warnings and errors only (the tests print their own lines). */
static inline ltx2_context *test_context_quiet(void) {
    ltx2_context_params cp;
    ltx2_context_params_init(&cp);
    cp.log_level = LTX2_LOG_WARN;
    return ltx2_context_create(&cp);
}

#endif
