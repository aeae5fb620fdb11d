/* Minimal test helpers: CHECK records a pass/fail with location; test_finish prints the
 * "N passed, N failed" line CTest logs show and returns the exit code (77 = skipped). */
#ifndef LTX2_TEST_UTIL_H
#define LTX2_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

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

static inline int test_finish(void) {
    printf("%d passed, %d failed\n", test_counts_g.passed, test_counts_g.failed);
    return test_counts_g.failed ? 1 : 0;
}

static inline int test_skip(const char *why) {
    printf("skipped: %s\n0 passed, 0 failed, 1 skipped\n", why);
    return TEST_SKIP_CODE;
}

#endif
