/* What a tests/test_emu_*.c includes: the launchers of kernels/ltx2_kernels.h under their usual
 * names, mapped to the CPU emulator's copies (ltx2_emu_k_*), plus the emulator's fault report.
 * Emulated "device memory" is host memory: pass host pointers (aligned_alloc(256, ...) where a
 * launcher needs 16-byte alignment) and stream NULL; a launch has finished when the launcher
 * returns (0, a cudaError_t value for bad arguments, or 719 = cudaErrorLaunchFailure when the
 * emulation faulted: deadlock, divergence, a misaligned operand; ltx2_emu_last_fault() says what). */
#ifndef LTX2_EMU_KERNELS_H
#define LTX2_EMU_KERNELS_H

#include "emu_rename.h"
#include "ltx2_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cudaErrorLaunchFailure: what a launch that faulted under emulation returns. */
#define LTX2_EMU_LAUNCH_FAILURE 719

/* NULL, or the message of the last faulting launch (kernel, block, thread, what happened). */
const char *ltx2_emu_last_fault(void);
void ltx2_emu_reset_fault(void);

#ifdef __cplusplus
}
#endif
#endif
