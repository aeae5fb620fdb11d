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

#ifdef __cplusplus
}
#endif
#endif
