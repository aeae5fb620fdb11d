/* The part of an op table that a kernel library implements (backend_kernels.c), shared by every
 * backend built on kernels/: the real CUDA one and the CPU emulator's. A backend's impl starts with
 * an ltx2_kernel_rt saying which launchers to call and how to reach the device. Private to
 * src/backend/ and the emulator backend. */
#ifndef LTX2_BACKEND_BACKEND_KERNELS_H
#define LTX2_BACKEND_BACKEND_KERNELS_H

#include "backend/backend.h"
#include "ltx2_kernels.h"

typedef struct ltx2_kernel_rt {
    const ltx2_k_table *k; /* the launchers */
    void *stream;          /* what they enqueue on (a cudaStream_t; NULL for the emulator) */
    int dev;               /* for messages */
    int attn_impl;         /* LTX2_KATTN_* */
    /* Makes the backend's device current for the calling thread. */
    ltx2_status (*enter)(const ltx2_backend *be, ltx2_context *ctx);
    /* Scratch ordered with the launches (freed after the work queued before the free). */
    ltx2_status (*scratch)(const ltx2_backend *be, ltx2_context *ctx, size_t nbytes, void **out);
    void (*scratch_free)(const ltx2_backend *be, void *p);
    /* "cudaErrorX (text)" for a launcher's result. */
    const char *(*error_text)(int err);
} ltx2_kernel_rt;

/* Sets every kernel-backed op of be (be->impl must start with an ltx2_kernel_rt). */
void ltx2_backend_kernels_fill(ltx2_backend *be);

#endif
