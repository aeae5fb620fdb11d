// The conv3d implicit GEMM for Hopper (sm_90a): the im2col gather of conv3d.cu (16-byte
// cp.async chunks, taps walked by additions, padding as an index remap) written straight into
// 128-byte-swizzled shared memory, and wgmma reading both operands from there: two warpgroups of
// 64 output rows each, 128 or 256 output channels (one or two m64n128k16 per k16 step), K in
// steps of 64 through a ring of 4 stages. Every thread gathers; loads run two k-tiles ahead, and
// one wgmma group stays in flight past each barrier, so copies, the gather's arithmetic and the
// tensor cores overlap without a producer warpgroup. Swizzle, descriptors and accumulator maps
// are the attention kernel's (att90_layout.h); the tile arithmetic is in conv3d_layout.h.
// Device code exists only in the sm_90a compilation (and the CPU emulator); c90_available()
// tells dispatch. Not AUTO's pick until timed on a GPU (LTX2_KCONV_WGMMA asks for it).
#include "common.cuh"
#include "conv3d.cuh"
#include "conv3d_layout.h"
#include "mma.cuh"
#include "sm90.cuh"

typedef __nv_bfloat16 bf16;

static_assert(LTX2_C90_A_ROWS_PER_THREAD * LTX2_C90_THREADS == LTX2_C90_BM * (LTX2_C90_BK / LTX2_C3_CHUNK),
              "every thread gathers the same number of A chunks");
static_assert(LTX2_C90_BK == A90_PANEL, "one 128-byte swizzled row of A per output voxel and k-tile");
static_assert(LTX2_C90_STAGES >= 3, "a load in flight beside the tile read and the one wgmma may still read");

template <int NB>
__global__ void __launch_bounds__(LTX2_C90_THREADS, 1) c90_kernel(const ltx2_c3_params p) {
#if defined(A90_DEVICE_CODE)
    constexpr int A_ROWS = LTX2_C90_A_ROWS_PER_THREAD, STAGE = LTX2_C90_STAGE_BYTES(NB), AHEAD = LTX2_C90_AHEAD;
    LTX2_K_DYN_SMEM(uint8_t, smem_raw);
    // The ring starts on a swizzle period of the shared window (descriptors carry no base offset).
    const uint32_t raw = ltx2_smem_addr(smem_raw);
    const uint32_t pad = (A90_ATOM_BYTES - (raw & (A90_ATOM_BYTES - 1))) & (A90_ATOM_BYTES - 1);
    uint8_t *const ring = smem_raw + pad;
    const uint32_t ring_s = raw + pad;

    const ltx2_c3_geom *g = &p.g;
    const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid & 31;
    const int64_t m0 = (int64_t)blockIdx.x * LTX2_C90_BM, n0 = (int64_t)blockIdx.y * LTX2_C90_BN(NB);

    const int a_col = ltx2_c90_a_col(tid);
    ltx2_c3_origin a_org[A_ROWS];
    unsigned a_ok = 0; // bit i: row i is inside M
#pragma unroll
    for (int i = 0; i < A_ROWS; i++) {
        const int64_t m = m0 + ltx2_c90_a_row(tid, i);
        if (m < g->M) a_ok |= 1u << i;
        a_org[i] = ltx2_c3_row_origin(g, m < g->M ? m : 0);
    }
    ltx2_c3_tap tap = ltx2_c3_k_tap(g, a_col);

    // Loads k-tile kt into its slot; calls come in kt order, so the tap walks along.
    auto load_stage = [&](int64_t kt) {
        uint8_t *const at = ring + (int)(kt % LTX2_C90_STAGES) * STAGE, *const bt = at + LTX2_C90_A_TILE_BYTES;
        const int64_t k0 = kt * LTX2_C90_BK;
        const bool k_ok = k0 + a_col < g->K;
#pragma unroll
        for (int i = 0; i < A_ROWS; i++) {
            const int64_t off = ltx2_c3_x_offset(g, &a_org[i], &tap);
            const bool ok = k_ok && (a_ok >> i & 1u) && off >= 0;
            ltx2_cp_async16_ca(at + ltx2_c90_a_dst(ltx2_c90_a_row(tid, i), a_col), ok ? p.x + off : p.x, ok);
        }
        ltx2_c3_tap_advance(g, &tap, LTX2_C90_BK);
#pragma unroll
        for (int i = 0; i < NB * LTX2_C90_B_CHUNKS_PER_THREAD; i++) {
            const int r = ltx2_c90_b_row(tid, i, NB), c = ltx2_c90_b_col(tid, i, NB);
            const int64_t off = ltx2_c3_w_offset(g, k0 + r, n0 + c);
            ltx2_cp_async16(bt + ltx2_c90_b_dst(r, c), off >= 0 ? p.w + off : p.w, off >= 0);
        }
    };

    float acc[NB][LTX2_C90_N_PER_WGMMA / 2];
#pragma unroll
    for (int h = 0; h < NB; h++)
#pragma unroll
        for (int i = 0; i < LTX2_C90_N_PER_WGMMA / 2; i++) acc[h][i] = 0.0f;

    const int64_t n_k = (g->K + LTX2_C90_BK - 1) / LTX2_C90_BK;
#pragma unroll
    for (int s = 0; s < AHEAD; s++) {
        if (s < n_k) load_stage(s);
        ltx2_cp_async_commit();
    }
    for (int64_t kt = 0; kt < n_k; kt++) {
        ltx2_cp_async_wait<AHEAD - 1>(); // this thread's copies of k-tile kt have landed
        a90_fence_proxy_async();         // ... and are visible to wgmma (the async proxy)
        // every thread's copies too; and each warpgroup has waited for the wgmma of k-tile kt - 2,
        // whose slot the load below refills
        __syncthreads();
        if (kt + AHEAD < n_k) load_stage(kt + AHEAD);
        ltx2_cp_async_commit();
        const uint32_t at = ring_s + (uint32_t)(kt % LTX2_C90_STAGES) * STAGE, bt = at + LTX2_C90_A_TILE_BYTES;
#pragma unroll
        for (int h = 0; h < NB; h++)
#pragma unroll
            for (int i = 0; i < LTX2_C90_N_PER_WGMMA / 2; i++) a90_pin(acc[h][i]);
        a90_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < LTX2_C90_BK / 16; kk++) {
            const uint64_t da = ltx2_c90_a_desc(at, wg, kk);
#pragma unroll
            for (int h = 0; h < NB; h++) a90_wgmma_ss_n128<1, 1>(acc[h], da, ltx2_c90_b_desc(bt, h, kk));
        }
        a90_wgmma_commit();
        a90_wgmma_wait<1>(); // k-tile kt - 1's products are done; kt's stay in flight
#pragma unroll
        for (int h = 0; h < NB; h++)
#pragma unroll
            for (int i = 0; i < LTX2_C90_N_PER_WGMMA / 2; i++) a90_pin(acc[h][i]);
    }
    a90_wgmma_wait<0>();
#pragma unroll
    for (int h = 0; h < NB; h++)
#pragma unroll
        for (int i = 0; i < LTX2_C90_N_PER_WGMMA / 2; i++) a90_pin(acc[h][i]);

    // Epilogue: registers i, i + 1 are adjacent columns of one row (att90_acc_*).
#pragma unroll
    for (int h = 0; h < NB; h++)
#pragma unroll
        for (int i = 0; i < LTX2_C90_N_PER_WGMMA / 2; i += 2) {
            const int64_t m = m0 + wg * A90_WG_ROWS + att90_acc_row(warp, lane, i);
            const int64_t n = n0 + h * LTX2_C90_N_PER_WGMMA + att90_acc_col(lane, i);
            if (m >= g->M || n >= g->Co) continue;
            ltx2_c3_store_pair(p.y, p.bias, p.silu, m, n, g->Co, acc[h][i], acc[h][i + 1]);
        }
#endif
}

// More registers than an empty kernel body ever gets.
#define C90_STUB_MAX_REGS 32

bool c90_available(void) {
    if (!a90_device_is_sm90()) return false;
#ifdef LTX2_EMU
    return true; // the emulated build always carries the device code
#else
    // the image the runtime picked for this device: the sm_90a body (~170 registers) or the empty
    // stub other architectures compile (a handful)
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, c90_kernel<1>) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return fa.numRegs > C90_STUB_MAX_REGS;
#endif
}

template <int NB> static int c90_launch_t(cudaStream_t st, const ltx2_c3_params &p) {
    int64_t gx, gy;
    if (!ltx2_c90_grid(&p.g, NB, &gx, &gy)) LTX2_K_BAD_ARG();
    const int smem = LTX2_C90_SMEM_BYTES(NB);
    cudaError_t e = cudaFuncSetAttribute(c90_kernel<NB>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return (int)e;
    ltx2_launch<c90_kernel<NB>>(dim3((unsigned)gx, (unsigned)gy), LTX2_C90_THREADS, (size_t)smem, st, p);
    LTX2_K_RETURN_LAUNCH();
}

int c90_launch(cudaStream_t st, const ltx2_k_conv3d_args *a) {
    if (!c90_available()) return (int)cudaErrorNotSupported;
    const ltx2_c3_params p = ltx2_c3_params_from_args(a);
    return ltx2_c90_pick_nb(a->c_out) == 2 ? c90_launch_t<2>(st, p) : c90_launch_t<1>(st, p);
}

extern "C" int ltx2_k_conv3d_wgmma_available(void) { return c90_available() ? 1 : 0; }
