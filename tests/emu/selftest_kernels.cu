// Kernels for the emulator's self-test (tests/test_emu_runtime.c): each exercises one collective
// or fault path of the runtime with a known answer. Compiled only into ltx2_kernels_emu.
#include "common.cuh"
#include "mma.cuh"
#include "mma_layout.h"
#include "sm90.cuh"
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

// ---- sm_90 mechanisms (tests/emu/emu_sm90.c), through the very wrappers attention_sm90.cu uses
// (kernels/sm90.cuh, whose LTX2_EMU branch routes them to the emulation). ----
// Swizzled tiles start on the 1024-byte period of the 128-byte swizzle (descriptor base offset 0).
#define ST_ATOM 1024u
// One tile row: 64 bf16 = 128 bytes, the 128-byte swizzle span and a TMA box's inner extent.
#define ST_ROW_BYTES 128
#define ST_PANEL 64
// wgmma M and K per instruction; a warpgroup.
#define ST_WG_M 64
#define ST_WG_K 16
#define ST_WG_THREADS 128
// Register budget asked with setmaxnreg (a multiple of 8 in 24..256).
#define ST_MAXNREG 240
// Named barrier id used by the wgmma test (0 is __syncthreads).
#define ST_NAMED_ID 1

static uint32_t st_align_atom(uint32_t a) { return (a + ST_ATOM - 1) & ~(ST_ATOM - 1); }

// 3-D bf16 map over [batches][rows][cols] (innermost first), boxes of 64 columns x box_rows x 1,
// 128-byte swizzle, out-of-range elements zero-filled. Returns a cudaError_t value.
static int st_map(CUtensorMap *m, const void *ptr, uint64_t cols, uint64_t rows, uint64_t batches, uint32_t box_rows) {
    PFN_cuTensorMapEncodeTiled_v12000 enc = a90_encoder();
    if (!enc) return (int)cudaErrorNotSupported;
    const cuuint64_t dims[3] = {cols, rows, batches};
    const cuuint64_t strides[2] = {cols * sizeof(bf16), rows * cols * sizeof(bf16)};
    const cuuint32_t box[3] = {ST_PANEL, box_rows, 1}, elem[3] = {1, 1, 1};
    const CUresult r = enc(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void *>(ptr), dims, strides, box, elem,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? 0 : (int)cudaErrorInvalidValue;
}

// mbarrier phases: count = blockDim.x (short: one more, so phase 0 never completes).
#define ST_MB_MAX_THREADS 64
__global__ void st_mbar_kernel(int *out, uint32_t *bar_addr, int short_count) {
    __shared__ __align__(8) uint64_t bars[1];
    __shared__ int marks[ST_MB_MAX_THREADS];
    ltx2_emu_smem_object(bars, sizeof bars, __FILE__, __LINE__);
    const int t = threadIdx.x, n = blockDim.x;
    const uint32_t bar = ltx2_smem_addr(&bars[0]);
    if (t == 0) {
        *bar_addr = bar;
        a90_bar_init(bar, (uint32_t)(n + (short_count ? 1 : 0)));
    }
    marks[t] = 0;
    __syncthreads();
    a90_bar_wait(bar, 1); // a fresh barrier reports the phase "before" phase 0 (parity 1) complete
    for (int round = 0; round < 2; round++) {
        marks[t] = round + 1;
        a90_bar_arrive(bar);
        a90_bar_wait(bar, (uint32_t)round & 1u); // phase `round`: completes at the n-th arrival
        a90_bar_wait(bar, (uint32_t)round & 1u); // a completed phase stays complete
        int seen = 0;
        for (int j = 0; j < n; j++) seen += marks[j];
        out[round * n + t] = seen;
        __syncthreads();
    }
}

extern "C" int ltx2_emu_st_mbar(int *out, uint32_t *bar_addr, int threads, int short_count) {
    if (threads < 1 || threads > ST_MB_MAX_THREADS) return (int)cudaErrorInvalidValue;
    ltx2_launch<st_mbar_kernel>(1, (unsigned)threads, 0, nullptr, out, bar_addr, short_count);
    LTX2_K_RETURN_LAUNCH();
}

// One TMA box of 64 x ST_TMA_ROWS x 1 into a 1024-aligned destination, announced with
// expect_tx(box bytes + extra_tx); the raw destination bytes are copied out.
#define ST_TMA_THREADS 32
__global__ void st_tma_kernel(const __grid_constant__ CUtensorMap map, uint16_t *out, uint32_t *info, int c0, int c1,
                              int c2, int extra_tx) {
    __shared__ __align__(8) uint64_t bars[1];
    ltx2_emu_smem_object(bars, sizeof bars, __FILE__, __LINE__);
    LTX2_K_DYN_SMEM(unsigned char, smem);
    const uint32_t raw = ltx2_smem_addr(smem), base = st_align_atom(raw);
    const uint16_t *tile = (const uint16_t *)(smem + (base - raw));
    const uint32_t bar = ltx2_smem_addr(&bars[0]);
    const int t = threadIdx.x;
    if (t == 0) {
        info[0] = bar;
        info[1] = base;
        a90_bar_init(bar, 1);
    }
    __syncthreads();
    if (t == 0) {
        a90_bar_expect_tx(bar, (uint32_t)(ST_TMA_BYTES + extra_tx));
        a90_tma_load(base, &map, bar, c0, c1, c2);
    }
    a90_bar_wait(bar, 0);
    for (int i = t; i < ST_TMA_BYTES / 2; i += blockDim.x) out[i] = tile[i];
}

extern "C" int ltx2_emu_st_tma(const uint16_t *src, int cols, int rows, int batches, int c0, int c1, int c2,
                               int extra_tx, uint16_t *out, uint32_t *info) {
    CUtensorMap map;
    const int e = st_map(&map, src, (uint64_t)cols, (uint64_t)rows, (uint64_t)batches, ST_TMA_ROWS);
    if (e) return e;
    ltx2_launch<st_tma_kernel>(1, ST_TMA_THREADS, ST_TMA_BYTES + ST_ATOM, nullptr, map, out, info, c0, c1, c2, extra_tx);
    LTX2_K_RETURN_LAUNCH();
}

// wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format"): start, LBO and SBO >> 4 in bits
// 0-13, 16-29, 32-45, base offset 0, swizzle mode 1 (128-byte) in bits 62-63.
static uint64_t st_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
    return (uint64_t)((addr & 0x3FFFFu) >> 4) | ((uint64_t)((lbo & 0x3FFFFu) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFFu) >> 4) << 32) | (1ull << 62);
}
// K-major 128-byte-swizzled operand: LBO unused (16), SBO = 8 rows of 128 bytes; k16 step kk
// starts 32 bytes further along the row. MN-major: SBO = 8 k-rows, LBO = next 64-wide panel
// (unused for N = 64); k16 step kk starts 16 rows further.
#define ST_KMAJOR_LBO 16u
#define ST_SBO ST_ATOM
#define ST_K16_BYTES 32u
#define ST_MN_LBO 8192u

__device__ __forceinline__ uint32_t st_bf16_bits(const bf16 *p) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return h;
}

// One warpgroup: D[64][N] = C + A[64][64] B over four k16 steps. SS (rs 0): A [64 m][64 k] and
// B [N n][64 k] K-major, both brought by TMA. RS (rs 1): A from registers (read from global a),
// B [64 k][N n] MN-major by TMA. early gets the accumulators read between commit and wait.
template <int N>
__global__ void st_wgmma_kernel(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                                const bf16 *a, const float *c, float *early, float *out, int rs) {
    __shared__ __align__(8) uint64_t bars[1];
    ltx2_emu_smem_object(bars, sizeof bars, __FILE__, __LINE__);
    LTX2_K_DYN_SMEM(unsigned char, smem);
    const uint32_t raw = ltx2_smem_addr(smem), sa = st_align_atom(raw), sb = sa + ST_WG_M * ST_ROW_BYTES;
    const uint32_t bar = ltx2_smem_addr(&bars[0]);
    const int t = threadIdx.x, w = t / 32, g = (t % 32) / 4, q = t % 4;
    a90_setmaxnreg_inc<ST_MAXNREG>();
    const uint32_t b_rows = rs ? ST_PANEL : N, bytes = (rs ? 0u : ST_WG_M * ST_ROW_BYTES) + b_rows * ST_ROW_BYTES;
    if (t == 0) {
        a90_bar_init(bar, 1);
        a90_bar_expect_tx(bar, bytes);
        if (!rs) a90_tma_load(sa, &ma, bar, 0, 0, 0);
        a90_tma_load(sb, &mb, bar, 0, 0, 0);
    }
    a90_named_sync(ST_NAMED_ID, ST_WG_THREADS); // the init precedes every wait
    a90_bar_wait(bar, 0);
    // Fragments (PTX ISA "Register Fragments", m64nNk16): D register i: row 16w + g + 8((i/2)%2),
    // column 8(i/4) + 2q + i%2; A register r: row 16w + g + 8(r%2), k 2q + 8(r/2) (+1 high half).
    float d[N / 2];
    for (int i = 0; i < N / 2; i++) d[i] = c[(16 * w + g + 8 * ((i / 2) % 2)) * N + 8 * (i / 4) + 2 * q + i % 2];
    uint32_t af[ST_PANEL / ST_WG_K][4];
    for (int kk = 0; kk < ST_PANEL / ST_WG_K; kk++)
        for (int r = 0; r < 4; r++) {
            const bf16 *p = a + (16 * w + g + 8 * (r % 2)) * ST_PANEL + ST_WG_K * kk + 2 * q + 8 * (r / 2);
            af[kk][r] = st_bf16_bits(p) | st_bf16_bits(p + 1) << 16;
        }
    a90_wgmma_fence();
    for (int kk = 0; kk < ST_PANEL / ST_WG_K; kk++) {
        // the forms attention_sm90.cu has: SS at N = 128, RS at N = 64 (and 128)
        if constexpr (N == ST_WGMMA_N_RS)
            a90_wgmma_rs_n64(d, af[kk], st_desc(sb + kk * ST_WG_K * ST_ROW_BYTES, ST_MN_LBO, ST_SBO));
        else
            a90_wgmma_ss_n128<1>(d, st_desc(sa + kk * ST_K16_BYTES, ST_KMAJOR_LBO, ST_SBO),
                                 st_desc(sb + kk * ST_K16_BYTES, ST_KMAJOR_LBO, ST_SBO));
    }
    a90_wgmma_commit();
    for (int i = 0; i < N / 2; i++) early[(16 * w + g + 8 * ((i / 2) % 2)) * N + 8 * (i / 4) + 2 * q + i % 2] = d[i];
    a90_wgmma_wait<0>();
    for (int i = 0; i < N / 2; i++) out[(16 * w + g + 8 * ((i / 2) % 2)) * N + 8 * (i / 4) + 2 * q + i % 2] = d[i];
}

extern "C" int ltx2_emu_st_wgmma(const uint16_t *a, const uint16_t *b, const float *c, float *early, float *out, int rs) {
    CUtensorMap ma, mb;
    const int n = rs ? ST_WGMMA_N_RS : ST_WGMMA_N_SS;
    int e = st_map(&ma, a, ST_PANEL, ST_WG_M, 1, ST_WG_M);
    if (!e) e = st_map(&mb, b, ST_PANEL, rs ? ST_PANEL : (uint64_t)n, 1, rs ? ST_PANEL : (uint32_t)n);
    if (e) return e;
    const size_t smem = ST_ATOM + ST_WG_M * ST_ROW_BYTES + (size_t)(rs ? ST_PANEL : n) * ST_ROW_BYTES;
    if (rs)
        ltx2_launch<st_wgmma_kernel<ST_WGMMA_N_RS>>(1, ST_WG_THREADS, smem, nullptr, ma, mb, (const bf16 *)a, c, early,
                                                    out, rs);
    else
        ltx2_launch<st_wgmma_kernel<ST_WGMMA_N_SS>>(1, ST_WG_THREADS, smem, nullptr, ma, mb, (const bf16 *)a, c, early,
                                                    out, rs);
    LTX2_K_RETURN_LAUNCH();
}
