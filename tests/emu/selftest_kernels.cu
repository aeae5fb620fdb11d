// Kernels for the emulator's self-test (tests/test_emu_runtime.c): each exercises one collective
// or fault path of the runtime with a known answer. Compiled only into ltx2_kernels_emu.
#include "common.cuh"
#include "mma.cuh"
#include "mma_layout.h"
#include "selftest_kernels.h"

typedef __nv_bfloat16 bf16;

// Tile side of the mma test and its padded shared row (as the attention kernel pads).
#define ST_TILE 16
#define ST_LD (ST_TILE + LTX2_MMA_SMEM_PAD)
#define ST_CP_THREADS 16
#define ST_DIV_THREADS 128
#define ST_FULL 0xffffffffu

__global__ void st_block_sum_kernel(const float *x, float *out, int *any_out, int n) {
    __shared__ float red[32];
    const float *xb = x + (int64_t)blockIdx.x * n;
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += xb[i];
    s = ltx2_block_sum(s, red);
    const int any = __syncthreads_or(threadIdx.x == 0 && xb[0] != 0.0f);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = s;
        any_out[blockIdx.x] = any;
    }
}

extern "C" int ltx2_emu_st_block_sum(const float *x, float *out, int *any_out, int n, int blocks, int threads) {
    ltx2_launch<st_block_sum_kernel>((unsigned)blocks, (unsigned)threads, 0, nullptr, x, out, any_out, n);
    LTX2_K_RETURN_LAUNCH();
}

__global__ void st_mma_kernel(const bf16 *a, const bf16 *b, int b_kn, const float *c, float *d) {
    __shared__ __align__(16) bf16 As[ST_TILE * ST_LD];
    __shared__ __align__(16) bf16 Bs[ST_TILE * ST_LD];
    const int lane = threadIdx.x;
    for (int i = lane; i < ST_TILE * ST_TILE; i += 32) {
        As[ltx2_mma_smem_off(i / ST_TILE, i % ST_TILE, ST_LD)] = a[i];
        Bs[ltx2_mma_smem_off(i / ST_TILE, i % ST_TILE, ST_LD)] = b[i];
    }
    __syncwarp();
    uint32_t af[4], bfr[4];
    ltx2_ldmatrix_x4(af, As + ltx2_mma_smem_off(ltx2_mma_lm_a_row(lane), ltx2_mma_lm_a_col(lane), ST_LD));
    if (b_kn)
        ltx2_ldmatrix_x4_trans(bfr, Bs + ltx2_mma_smem_off(ltx2_mma_lm_b_kn_row(lane), ltx2_mma_lm_b_kn_col(lane), ST_LD));
    else
        ltx2_ldmatrix_x4(bfr, Bs + ltx2_mma_smem_off(ltx2_mma_lm_b_nk_row(lane), ltx2_mma_lm_b_nk_col(lane), ST_LD));
    for (int nt = 0; nt < 2; nt++) {
        float acc[4];
        for (int i = 0; i < 4; i++) acc[i] = c[ltx2_mma_c_row(lane, i) * ST_TILE + nt * 8 + ltx2_mma_c_col(lane, i)];
        ltx2_mma_bf16(acc, af, bfr[ltx2_mma_lm_b_reg(nt, 0)], bfr[ltx2_mma_lm_b_reg(nt, 1)]);
        for (int i = 0; i < 4; i++) d[ltx2_mma_c_row(lane, i) * ST_TILE + nt * 8 + ltx2_mma_c_col(lane, i)] = acc[i];
    }
}

extern "C" int ltx2_emu_st_mma(const uint16_t *a, const uint16_t *b, int b_kn, const float *c, float *d) {
    ltx2_launch<st_mma_kernel>(1, 32, 0, nullptr, (const bf16 *)a, (const bf16 *)b, b_kn, c, d);
    LTX2_K_RETURN_LAUNCH();
}

__global__ void st_cp_async_kernel(const float *src, float *out, float sentinel, int wait_n, int zero_fill) {
    __shared__ __align__(16) float buf[ST_CP_THREADS * 4];
    const int t = threadIdx.x;
    for (int j = 0; j < 4; j++) buf[4 * t + j] = sentinel;
    __syncthreads();
    if (t < ST_CP_THREADS / 2) ltx2_cp_async16(buf + 4 * t, src + 4 * t, !zero_fill);
    ltx2_cp_async_commit();
    if (t >= ST_CP_THREADS / 2) ltx2_cp_async16(buf + 4 * t, src + 4 * t, !zero_fill);
    ltx2_cp_async_commit();
    if (wait_n == 0) ltx2_cp_async_wait<0>();
    if (wait_n == 1) ltx2_cp_async_wait<1>();
    __syncthreads();
    for (int j = 0; j < 4; j++) out[4 * t + j] = buf[4 * t + j];
}

extern "C" int ltx2_emu_st_cp_async(const float *src, float *out, float sentinel, int wait_n, int zero_fill) {
    ltx2_launch<st_cp_async_kernel>(1, ST_CP_THREADS, 0, nullptr, src, out, sentinel, wait_n, zero_fill);
    LTX2_K_RETURN_LAUNCH();
}

__global__ void st_divergent_sync_kernel(float *out) {
    float v = (float)threadIdx.x;
    if (threadIdx.x & 1) __syncthreads(); // the bug under test: a barrier only odd threads reach
    v = ltx2_warp_sum(v);
    __syncthreads();
    out[threadIdx.x] = v;
}

extern "C" int ltx2_emu_st_divergent_sync(float *out) {
    ltx2_launch<st_divergent_sync_kernel>(1, ST_DIV_THREADS, 0, nullptr, out);
    LTX2_K_RETURN_LAUNCH();
}

__global__ void st_shfl_after_exit_kernel(float *out) {
    if (threadIdx.x >= 16) return;
    out[threadIdx.x] = __shfl_xor_sync(ST_FULL, (float)threadIdx.x, 1);
}

extern "C" int ltx2_emu_st_shfl_after_exit(float *out) {
    ltx2_launch<st_shfl_after_exit_kernel>(1, 32, 0, nullptr, out);
    LTX2_K_RETURN_LAUNCH();
}

__global__ void st_grid_kernel(int *out) {
    const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned nt = blockDim.x * blockDim.y * blockDim.z;
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    out[block * nt + tid] = (int)(block * 1000 + tid);
}

extern "C" int ltx2_emu_st_grid(int *out, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by) {
    ltx2_launch<st_grid_kernel>(dim3(gx, gy, gz), dim3(bx, by), 0, nullptr, out);
    LTX2_K_RETURN_LAUNCH();
}

__global__ void st_shfl_loop_kernel(float *out, int iters) {
    float v = (float)threadIdx.x;
    for (int i = 0; i < iters; i++) v = __shfl_xor_sync(ST_FULL, v, 1);
    out[threadIdx.x] = v;
}

extern "C" int ltx2_emu_st_shfl_loop(float *out, int threads, int iters) {
    ltx2_launch<st_shfl_loop_kernel>(1, (unsigned)threads, 0, nullptr, out, iters);
    LTX2_K_RETURN_LAUNCH();
}

__global__ void st_dyn_smem_kernel(int *out, int bytes) {
    LTX2_K_DYN_SMEM(unsigned char, buf);
    __shared__ int fresh;
    if (threadIdx.x == 0) {
        int ok = 1;
        for (int i = 0; i < bytes; i++) ok &= buf[i] == 0xFF;
        fresh = ok;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < bytes; i += blockDim.x) buf[i] = (unsigned char)(i * 7);
    __syncthreads();
    if (threadIdx.x == 0) {
        int good = 0;
        for (int i = 0; i < bytes; i++) good += buf[i] == (unsigned char)(i * 7);
        out[2 * blockIdx.x] = fresh;
        out[2 * blockIdx.x + 1] = good;
    }
}

extern "C" int ltx2_emu_st_dyn_smem(int *out, int bytes, int blocks) {
    ltx2_launch<st_dyn_smem_kernel>((unsigned)blocks, 64, (size_t)bytes, nullptr, out, bytes);
    LTX2_K_RETURN_LAUNCH();
}

// Two warps, one shared stage of 64 16-byte chunks: every thread cp.asyncs its chunk, and each
// warp reads the OTHER warp's 32 chunks with one ldmatrix.x4, twice (the stage is refilled from
// src + 512 in between). Mode 0 is the correct pipeline; the others each drop one ordering.
#define ST_PIPE_THREADS 64
#define ST_PIPE_CHUNK 8 // bf16 per 16-byte chunk
__global__ void st_pipeline_kernel(const bf16 *src, float *out, int mode) {
    __shared__ __align__(16) bf16 stage[ST_PIPE_THREADS * ST_PIPE_CHUNK];
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const bf16 *row = stage + ((1 - warp) * 32 + lane) * ST_PIPE_CHUNK;
    float acc = 0.0f;
    ltx2_cp_async16(stage + t * ST_PIPE_CHUNK, src + t * ST_PIPE_CHUNK, true);
    ltx2_cp_async_commit();
    for (int it = 0; it < 2; it++) {
        uint32_t r[4];
        if (mode == ST_PIPE_READ_IN_FLIGHT && it == 0) ltx2_ldmatrix_x4(r, row);
        ltx2_cp_async_wait<0>();
        if (mode != ST_PIPE_NO_SYNC_AFTER_WAIT) __syncthreads();
        ltx2_ldmatrix_x4(r, row);
        for (int i = 0; i < 4; i++) {
            const uint32_t lo = r[i] << 16, hi = r[i] & 0xffff0000u;
            float f;
            memcpy(&f, &lo, sizeof f);
            acc += f;
            memcpy(&f, &hi, sizeof f);
            acc += f;
        }
        if (it == 0) {
            if (mode != ST_PIPE_NO_SYNC_BEFORE_REFILL) __syncthreads();
            ltx2_cp_async16(stage + t * ST_PIPE_CHUNK, src + (ST_PIPE_THREADS + t) * ST_PIPE_CHUNK, true);
            ltx2_cp_async_commit();
        }
    }
    out[t] = acc;
}

extern "C" int ltx2_emu_st_pipeline(const uint16_t *src, float *out, int mode) {
    ltx2_launch<st_pipeline_kernel>(1, ST_PIPE_THREADS, 0, nullptr, (const bf16 *)src, out, mode);
    LTX2_K_RETURN_LAUNCH();
}
