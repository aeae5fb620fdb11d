/* Free device memory a test's device reports (ltx2_backend.mem_info stand-ins; the emulator has no
 * mem_info of its own): ample for the tiny models, so a memory plan runs and passes, or 1 MiB,
 * far below any model, so a plan or a size check must refuse. */
#ifndef LTX2_TESTS_DEVICE_MEM_STUB_H
#define LTX2_TESTS_DEVICE_MEM_STUB_H

#include "backend/backend.h"

#define DEVICE_MEM_STUB_AMPLE ((size_t)64 << 30)
#define DEVICE_MEM_STUB_SCARCE ((size_t)1 << 20)

static inline ltx2_status mem_stub_ample(const ltx2_backend *be, ltx2_context *ctx, size_t *free_b, size_t *total_b) {
    (void)be, (void)ctx;
    *free_b = *total_b = DEVICE_MEM_STUB_AMPLE;
    return LTX2_OK;
}

static inline ltx2_status mem_stub_scarce(const ltx2_backend *be, ltx2_context *ctx, size_t *free_b,
                                          size_t *total_b) {
    (void)be, (void)ctx;
    *free_b = DEVICE_MEM_STUB_SCARCE, *total_b = DEVICE_MEM_STUB_AMPLE;
    return LTX2_OK;
}

#endif
