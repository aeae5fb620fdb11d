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
    int attn_prep;         /* LTX2_KATTN_PREP_* */
    int conv_impl;         /* LTX2_KCONV_* */
    /* Makes the backend's device current for the calling thread. */
    ltx2_status (*enter)(const ltx2_backend *be, ltx2_context *ctx);
    /* Scratch ordered with the launches (freed after the work queued before the free). */
    ltx2_status (*scratch)(const ltx2_backend *be, ltx2_context *ctx, size_t nbytes, void **out);
    void (*scratch_free)(const ltx2_backend *be, void *p);
    /* "cudaErrorX (text)" for a launcher's result. */
    const char *(*error_text)(int err);
} ltx2_kernel_rt;

/* Environment variables that pick a kernel for a backend created while they are set (tests and
 * benches that compare two kernels of one op): unset or "auto" (the launcher's AUTO), "mma_sync"
 * or "wgmma" (forced; creation fails where wgmma cannot run); LTX2_CONV3D_IMPL also "cudnn" (the
 * CUDA backend's cuDNN conv3d instead of a kernel, LTX2_CONV3D_IMPL_LIBRARY). */
#define LTX2_ATTN_IMPL_ENV "LTX2_ATTN_IMPL"
#define LTX2_CONV3D_IMPL_ENV "LTX2_CONV3D_IMPL"
/* Where the wgmma attention kernel normalises/rotates Q and reads the key mask (ltx2_k_attn_args
 * .prep): unset or "auto" (the pre-pass), "in_kernel" (the earlier layout, for timing both). */
#define LTX2_ATTN_PREP_ENV "LTX2_ATTN_PREP"

/* Reads env into *out as 0 (auto), 1 (mma_sync) or 2 (wgmma), the values LTX2_KATTN_* and
 * LTX2_KCONV_* share; "wgmma" is refused where wgmma_available() returns 0 on device dev, naming
 * the kernel. */
ltx2_status ltx2_kernel_impl_from_env(ltx2_context *ctx, const char *env, const char *kernel,
                                      int (*wgmma_available)(void), int dev, int *out);
/* rt->conv_impl when LTX2_CONV3D_IMPL=cudnn: no kernel, the backend's library conv (the kernel
 * launcher never sees it: the backend's fallback runs the kernel as AUTO). */
#define LTX2_CONV3D_IMPL_LIBRARY 3
/* Every kernel choice above into rt (its k set first), for a backend on device dev; library: the
 * backend has a cuDNN conv3d (else LTX2_CONV3D_IMPL=cudnn is refused). */
ltx2_status ltx2_kernel_choices_from_env(ltx2_context *ctx, int dev, bool library, ltx2_kernel_rt *rt);

/* Whether rt's kernel choices leave e4m3 attention its kernel: the wgmma one with its pre-pass
 * (LTX2_ATTN_IMPL not mma_sync, LTX2_ATTN_PREP not in_kernel). Whether the device runs that kernel
 * is the backend's to add. */
static inline bool ltx2_kernel_fp8_attention_allowed(const ltx2_kernel_rt *rt) {
    return rt->attn_impl != LTX2_KATTN_MMA_SYNC && rt->attn_prep == LTX2_KATTN_PREP_AUTO;
}

/* Sets every kernel-backed op of be (be->impl must start with an ltx2_kernel_rt). */
void ltx2_backend_kernels_fill(ltx2_backend *be);

#endif
