/* The CPU emulator's runtime interface (tests/emu/emu.c), shared by the C runtime and the C++
 * shim (cuda_emu.h) that the emulated kernels are compiled with. One launch runs every block of
 * the grid in turn; each CUDA thread of a block is a fiber, and every warp or block collective
 * is a rendezvous of its threads under one block-wide lock. The first fault of a launch
 * (deadlock, divergence, a lane that left before a full-mask collective, a bad operand) unwinds
 * the block's threads and makes the launch return cudaErrorLaunchFailure.
 * Tests do not include this: they use emu_kernels.h. */
#ifndef LTX2_EMU_H
#define LTX2_EMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define LTX2_EMU_TLS __thread
#else
#define LTX2_EMU_TLS _Thread_local
#endif

/* cudaError_t values the runtime returns (driver_types.h; repeated so the C runtime needs no
 * CUDA header). */
#define LTX2_EMU_ERR_INVALID_VALUE 1
#define LTX2_EMU_ERR_INVALID_CONFIGURATION 9
#define LTX2_EMU_ERR_LAUNCH_FAILURE 719

typedef struct ltx2_emu_dim3 {
    unsigned x, y, z;
} ltx2_emu_dim3;

/* What an emulated thread reads as threadIdx, blockIdx, blockDim and gridDim. */
typedef struct ltx2_emu_builtins {
    ltx2_emu_dim3 thread_idx, block_idx, block_dim, grid_dim;
} ltx2_emu_builtins;

/* The current emulated thread's built-ins (found from the stack it runs on: fibers share the OS
 * thread, so thread-local storage cannot tell them apart); NULL outside a launch. */
const ltx2_emu_builtins *ltx2_emu_builtins_here(void);

typedef void (*ltx2_emu_body)(void *closure);

/* Runs body(closure) as every thread of every block of grid x block; dyn_smem bytes of dynamic
 * shared memory per block. Returns 0 or a cudaError_t value, which is also kept for
 * ltx2_emu_get_last_error(). kernel names the kernel in fault messages. */
int ltx2_emu_launch(const char *kernel, ltx2_emu_dim3 grid, ltx2_emu_dim3 block, size_t dyn_smem,
                    ltx2_emu_body body, void *closure);
/* cudaGetLastError for the calling host thread: the last launch error, then cleared. */
int ltx2_emu_get_last_error(void);

/* ---- called from inside an emulated thread; file/line name the call site in fault messages ---- */
void *ltx2_emu_dyn_smem(void);
void ltx2_emu_syncthreads(const char *file, int line);
int ltx2_emu_syncthreads_or(int pred, const char *file, int line);
void ltx2_emu_syncwarp(unsigned mask, const char *file, int line);
/* __shfl_xor_sync on up to 8 bytes of raw bits. */
uint64_t ltx2_emu_shfl_xor(unsigned mask, uint64_t bits, int lane_mask, int width, const char *file, int line);
/* ldmatrix.sync.aligned.m8n8.x4{.trans}.shared.b16: row is this lane's 16-byte row address. */
void ltx2_emu_ldmatrix_x4(uint32_t r[4], const void *row, int trans, const char *file, int line);
/* mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 with d as both C and D. */
void ltx2_emu_mma_bf16_m16n8k16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1, const char *file,
                                int line);
/* cp.async.cg.shared.global 16 bytes, src_bytes (0..16) read and the rest zero-filled. */
void ltx2_emu_cp_async16(void *dst, const void *src, int src_bytes, const char *file, int line);
void ltx2_emu_cp_async_commit(void);
void ltx2_emu_cp_async_wait(int n);
/* Reports a fault from kernel-side code (e.g. an intrinsic the emulator cannot run) and unwinds. */
void ltx2_emu_fault(const char *file, int line, const char *what);

/* ---- sm_90 mechanisms (emu_sm90.c), as attention_sm90.cu uses them. Shared memory has 32-bit
 * addresses in an emulated window: LTX2_EMU_SMEM_STATIC_BASE.. for static objects registered
 * with ltx2_emu_smem_object, LTX2_EMU_SMEM_DYN_BASE.. for the dynamic region (as on the GPU,
 * the dynamic region follows the static one and need not start on a 1024-byte boundary). ---- */
#define LTX2_EMU_SMEM_STATIC_BASE 0x400u
#define LTX2_EMU_SMEM_DYN_BASE 0x480u
/* Gives the static __shared__ object at p (bytes long) its address in the window (every thread
 * of a block may call it; the first call per block places it). */
void ltx2_emu_smem_object(void *p, size_t bytes, const char *file, int line);
/* __cvta_generic_to_shared. */
uint32_t ltx2_emu_cvta_shared(const void *p, const char *file, int line);
/* mbarrier.init / arrive (expect_tx: arrive.expect_tx with tx_bytes) / try_wait.parity (blocks
 * until the phase of that parity has completed). */
void ltx2_emu_mbar_init(uint32_t bar, uint32_t count, const char *file, int line);
void ltx2_emu_mbar_arrive(uint32_t bar, int expect_tx, uint32_t tx_bytes, const char *file, int line);
void ltx2_emu_mbar_wait_parity(uint32_t bar, uint32_t parity, const char *file, int line);
/* cp.async.bulk.tensor.<rank>d.shared::cluster.global.mbarrier::complete_tx::bytes from the
 * tensor map at map (written by ltx2_emu_tmap_encode), coordinates innermost first. */
void ltx2_emu_tma_load(uint32_t dst, const void *map, uint32_t bar, int rank, const int32_t *coords,
                       const char *file, int line);
/* cuTensorMapEncodeTiled's checks and encoding into the 128-byte map. elem_bytes 0: a type the
 * emulator does not know; swizzle_bytes 0 (none), 32, 64, 128, or -1 for the other modes.
 * Returns a CUresult (0, or 1 = CUDA_ERROR_INVALID_VALUE). */
int ltx2_emu_tmap_encode(void *map, int elem_bytes, int is_float, unsigned rank, const void *addr,
                         const uint64_t *dims, const uint64_t *strides, const uint32_t *box, const uint32_t *estr,
                         int interleave, int swizzle_bytes, int l2promo, int oob_fill);
/* setmaxnreg.{inc,dec}.sync.aligned.u32: a warpgroup collective with no other effect. */
void ltx2_emu_setmaxnreg(int inc, uint32_t regs, const char *file, int line);
/* bar.sync id, count. */
void ltx2_emu_bar_named(int id, int count, const char *file, int line);
/* wgmma.fence / commit_group / wait_group n (warpgroup collectives). */
void ltx2_emu_wgmma_fence(const char *file, int line);
void ltx2_emu_wgmma_commit(const char *file, int line);
void ltx2_emu_wgmma_wait(int n, const char *file, int line);
/* wgmma.mma_async.sync.aligned.m64n<n>k16.f32.bf16.bf16: d is this thread's n/2 accumulators; a
 * its 4 A registers (RS form) or NULL (SS form, A from descriptor da). Only recorded here: it runs
 * at the wgmma.wait_group that covers its group, reading d, a and shared memory then. */
void ltx2_emu_wgmma_bf16(int n, float *d, const uint32_t *a, uint64_t da, uint64_t db, int scale_d, int neg_a,
                         int neg_b, int tnsp_a, int tnsp_b, const char *file, int line);
/* wgmma.mma_async.sync.aligned.m64n<n>k32.f32.e4m3.e4m3: as above with e4m3 operands, both K-major
 * (a: 4 registers of 4 e4m3 each, or NULL). */
void ltx2_emu_wgmma_e4m3(int n, float *d, const uint32_t *a, uint64_t da, uint64_t db, int scale_d, const char *file,
                         int line);

/* ---- for tests (also declared by emu_kernels.h) ---- */
const char *ltx2_emu_last_fault(void);
void ltx2_emu_reset_fault(void);
/* Warp and block collectives completed by all launches so far (a speed measure). */
uint64_t ltx2_emu_collectives(void);

#ifdef __cplusplus
}
#endif
#endif
