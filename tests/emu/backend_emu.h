/* An op table over the CPU emulator of the CUDA kernels: the same kernel ops as the CUDA backend
 * (src/backend/backend_kernels.c) reaching the emulated launchers, its memory host memory tagged
 * as device memory (so a host pointer handed to it by mistake is refused like on a GPU), and its
 * GEMMs a stand-in for cuBLASLt (the CPU fp32 GEMM on the bf16-rounded operands, the epilogue in
 * fp32, one rounding to the output dtype): what a model forward does on CUDA, checked without a
 * GPU. Slow (every CUDA thread a fiber, every mma emulated): for tiny models. */
#ifndef LTX2_TESTS_EMU_BACKEND_EMU_H
#define LTX2_TESTS_EMU_BACKEND_EMU_H

#include "backend/backend.h"

/* The attention kernel follows LTX2_ATTN_IMPL as on CUDA (auto / mma_sync / wgmma). */
ltx2_status ltx2_backend_emu_create(ltx2_context *ctx, ltx2_backend **out);

#endif
