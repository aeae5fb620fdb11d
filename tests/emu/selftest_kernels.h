/* Launchers of the emulator's self-test kernels (tests/emu/selftest_kernels.cu, compiled only
 * into ltx2_kernels_emu), used by tests/test_emu_runtime.c. Host pointers; each returns 0 or the
 * launch's cudaError_t value (719 when the emulation faulted). */
#ifndef LTX2_EMU_SELFTEST_KERNELS_H
#define LTX2_EMU_SELFTEST_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[b] = sum of x[b*n .. b*n+n) for each of `blocks` blocks of `threads` threads (a multiple of
 * 32), via ltx2_block_sum (shuffles + __syncthreads); any_out[b] = __syncthreads_or(x[b*n] != 0). */
int ltx2_emu_st_block_sum(const float *x, float *out, int *any_out, int n, int blocks, int threads);

/* One warp: d[16][16] = c + a b with a [16][16] row-major bf16 and b either [n][k] (b_kn = 0,
 * ldmatrix) or [k][n] (b_kn = 1, ldmatrix .trans), through the kernels' mma_layout.h lane maps. */
int ltx2_emu_st_mma(const uint16_t *a, const uint16_t *b, int b_kn, const float *c, float *d);

/* 16 threads; thread t copies src[4t .. 4t+4) into shared memory prefilled with `sentinel` in two
 * cp.async groups (threads 0-7 in the first, 8-15 in the second; zero_fill: src-size 0), then
 * waits with wait_group<wait_n> (wait_n < 0: no wait at all), syncs and writes shared to out[64]. */
int ltx2_emu_st_cp_async(const float *src, float *out, float sentinel, int wait_n, int zero_fill);

/* 128 threads: odd threads reach a __syncthreads the even ones skip; the even lanes then shuffle
 * (full mask). Nothing can move: a deadlock fault. */
int ltx2_emu_st_divergent_sync(float *out);

/* 32 threads: lanes >= 16 return, then a full-mask shuffle: a fault. */
int ltx2_emu_st_shfl_after_exit(float *out);

/* grid gx x gy x gz of blocks bx x by threads: out[block * threads + thread] = block*1000 + thread
 * (linear indices), out has gx*gy*gz*bx*by entries. */
int ltx2_emu_st_grid(int *out, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by);

/* `threads` threads, `iters` rounds of one full-mask shuffle each (a speed measure); out[threads]. */
int ltx2_emu_st_shfl_loop(float *out, int threads, int iters);

/* `blocks` blocks of 64 threads with `bytes` of dynamic shared memory: out[2b] = 1 when block b
 * found it all 0xFF (fresh per block), out[2b+1] = bytes that read back what the threads wrote. */
int ltx2_emu_st_dyn_smem(int *out, int bytes, int blocks);

/* The shared-memory ordering checks of the cp.async / ldmatrix pipeline (tests/emu/emu_race.c).
 * 64 threads; src holds 2 x 512 bf16. Each warp reads the other warp's chunks, once from src[0..512)
 * and once after a refill from src[512..1024); out[64] gets each thread's sum of the values its
 * ldmatrix registers held (per warp, the two halves' totals of the other warp's chunks). */
enum {
    ST_PIPE_OK = 0,                    /* wait, __syncthreads, read, __syncthreads, refill */
    ST_PIPE_NO_SYNC_BEFORE_REFILL = 1, /* write after read: the refill races the other warp's read */
    ST_PIPE_NO_SYNC_AFTER_WAIT = 2,    /* read after write: another thread's copy is not yet visible */
    ST_PIPE_READ_IN_FLIGHT = 3         /* an ldmatrix before the wait_group that covers the copy */
};
int ltx2_emu_st_pipeline(const uint16_t *src, float *out, int mode);

/* ---- sm_90 mechanisms (tests/emu/emu_sm90.c) ---- */

/* `threads` (<= 64) threads, one mbarrier of count `threads` (short_count: threads + 1, so its
 * phase 0 never completes). Every thread first waits on parity 1 of the fresh barrier, then for
 * rounds 0 and 1: marks itself, arrives, waits on parity (round & 1) twice, and writes to
 * out[round * threads + t] the sum of all threads' marks it sees (round + 1 each).
 * *bar_addr gets the barrier's shared address. */
int ltx2_emu_st_mbar(int *out, uint32_t *bar_addr, int threads, int short_count);

/* One 3-D TMA load (bf16, 128-byte swizzle, zero fill) of a 64 x ST_TMA_ROWS x 1 box at
 * coordinates (c0 column, c1 row, c2 batch) of src [batches][rows][cols] into a 1024-aligned
 * shared destination, after mbarrier.arrive.expect_tx(box bytes + extra_tx); out gets the
 * destination's ST_TMA_BYTES raw bytes, info[0] the mbarrier's and info[1] the destination's
 * shared address. */
#define ST_TMA_ROWS 16
#define ST_TMA_BYTES (ST_TMA_ROWS * 128)
int ltx2_emu_st_tma(const uint16_t *src, int cols, int rows, int batches, int c0, int c1, int c2, int extra_tx,
                    uint16_t *out, uint32_t *info);

/* One warpgroup, D = C + A B with K = 64 (four k16 wgmma.mma_async in one group), A [64][64]
 * row-major bf16. rs 0 (SS, m64n128k16): B given as [128 n][64 k], A and B K-major tiles that TMA
 * wrote with 128-byte swizzle. rs 1 (RS, m64n64k16): A from registers, B given as [64 k][64 n]
 * (MN-major tile). c, early and out are [64][N] row-major f32: early holds the accumulators as
 * read after commit_group but before wait_group, out as read after it. */
#define ST_WGMMA_N_SS 128
#define ST_WGMMA_N_RS 64
int ltx2_emu_st_wgmma(const uint16_t *a, const uint16_t *b, const float *c, float *early, float *out, int rs);

#ifdef __cplusplus
}
#endif
#endif
