// Causal conv3d as an implicit GEMM over NDHWC bf16 (fp32 accumulation, mma.sync bf16):
// M = output voxels, N = c_out, K = kt*kh*kw*c_in, with A[m][k] gathered on the fly from x
// (the padding rules are an index remap: time clamped = edge frames replicated, space zero or
// reflect) and B = the packed weight [kt, kh, kw, c_in][c_out] of ltx2_conv3d_pack_weight.
// Because c_in % 8 == 0, each 16-byte chunk of a K row lies inside one tap, so the gather is one
// cp.async (or one zero fill) per chunk; each thread walks its chunk column's tap through K by
// additions (ltx2_c3_tap_advance), not divisions. A 4-stage cp.async ring keeps three k-tiles in
// flight. Epilogue: + bias, optional SiLU, bf16 store.
// All index arithmetic (tiles, im2col, padding, thread/lane maps) is in conv3d_layout.h, which
// tests/test_layout_conv3d.c runs on the CPU against a naive convolution.
// The sm_90a wgmma variant (conv3d_sm90.cu) shares the gather; ltx2_k_conv3d dispatches to it when
// the arguments ask (LTX2_KCONV_WGMMA), and AUTO does on 9.x where it was timed faster
// (ltx2_c90_auto_picks).
#include "common.cuh"
#include "conv3d.cuh"
#include "conv3d_layout.h"
#include "mma.cuh"

static_assert(LTX2_C3_BK * (LTX2_C3_WARP_N / LTX2_C3_CHUNK) % (LTX2_C3_WARPS_M * 32) == 0,
              "every thread copies the same number of B chunks per stage");
static_assert(LTX2_C3_WARP_M == 32 && LTX2_C3_BK % 16 == 0 && LTX2_C3_WARP_N % 16 == 0,
              "each warp computes 2 m16 tiles over 8 n8 tiles, k in k16 steps");
static_assert(LTX2_C3_STAGES >= 2, "the ring needs a stage in flight beside the one computed");

typedef __nv_bfloat16 bf16;

// WN warps along N (conv3d_layout.h). Launch bounds ask for 4 / WN CTAs per SM, i.e. 16 warps
// and at most 128 registers per thread: measured faster on an H100 than 1 CTA of 8 warps at 157
// registers, ~200 against ~145 TFLOP/s on the decoder's 3x3x3 layers
// (bench/results/NVIDIA_H100_80GB_HBM3-20261127/run8).
template <int WN>
__global__ void __launch_bounds__(LTX2_C3_THREADS(WN), 4 / WN) c3_kernel(const ltx2_c3_params p) {
    constexpr int BN = LTX2_C3_BN(WN), LDB = LTX2_C3_LDB(WN), A_ROWS = LTX2_C3_A_ROWS_PER_THREAD(WN);
    constexpr int STAGE = LTX2_C3_STAGE_ELEMS(WN);
    LTX2_K_DYN_SMEM(bf16, smem);
    const ltx2_c3_geom *g = &p.g;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int64_t m0 = (int64_t)blockIdx.x * LTX2_C3_BM, n0 = (int64_t)blockIdx.y * BN;

    // The A rows this thread gathers, decomposed once (rows past M read row 0 and are zero-filled),
    // and the tap of its chunk column in the next k-tile to load.
    const int a_col = ltx2_c3_a_col(tid);
    ltx2_c3_origin a_org[A_ROWS];
    unsigned a_ok = 0; // bit i: row i is inside M (one register for all rows)
#pragma unroll
    for (int i = 0; i < A_ROWS; i++) {
        const int64_t m = m0 + ltx2_c3_a_row(tid, i, WN);
        if (m < g->M) a_ok |= 1u << i;
        a_org[i] = ltx2_c3_row_origin(g, m < g->M ? m : 0);
    }
    ltx2_c3_tap tap = ltx2_c3_k_tap(g, a_col);

    // Loads k-tile kt into its ring slot; the calls come in kt order, so the tap walks along.
    auto load_stage = [&](int64_t kt) {
        bf16 *As = smem + (int)(kt % LTX2_C3_STAGES) * STAGE, *Bs = As + LTX2_C3_BM * LTX2_C3_LDA;
        const int64_t k0 = kt * LTX2_C3_BK;
        // A: one 16-byte chunk (one tap, 8 channels) of each gathered row, or zeros
        const bool k_ok = k0 + a_col < g->K;
#pragma unroll
        for (int i = 0; i < A_ROWS; i++) {
            const int64_t off = ltx2_c3_x_offset(g, &a_org[i], &tap);
            const bool ok = k_ok && (a_ok >> i & 1u) && off >= 0;
            // src_bytes 0 reads nothing but the address must still be valid: use x itself. Through
            // L1: the next taps of the neighbouring rows read mostly these voxels again.
            ltx2_cp_async16_ca(&As[ltx2_c3_a_row(tid, i, WN) * LTX2_C3_LDA + a_col], ok ? p.x + off : p.x, ok);
        }
        ltx2_c3_tap_advance(g, &tap, LTX2_C3_BK);
        // B: LTX2_C3_BK rows x BN columns of the packed weight
#pragma unroll
        for (int i = 0; i < LTX2_C3_B_CHUNKS_PER_THREAD; i++) {
            const int r = ltx2_c3_b_row(tid, i, WN), cc = ltx2_c3_b_col(tid, i, WN);
            const int64_t off = ltx2_c3_w_offset(g, k0 + r, n0 + cc);
            ltx2_cp_async16(&Bs[r * LDB + cc], off >= 0 ? p.w + off : p.w, off >= 0);
        }
    };

    float acc[2][LTX2_C3_WARP_N / 8][4];
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int j = 0; j < LTX2_C3_WARP_N / 8; j++) acc[mt][j][0] = acc[mt][j][1] = acc[mt][j][2] = acc[mt][j][3] = 0.0f;

    // The ring: k-tiles 0 .. STAGES-2 in flight first. One commit per k-tile (possibly empty)
    // keeps wait_group<STAGES-2> meaning "k-tile kt has landed".
    const int64_t n_k = (g->K + LTX2_C3_BK - 1) / LTX2_C3_BK;
#pragma unroll
    for (int s = 0; s < LTX2_C3_STAGES - 1; s++) {
        if (s < n_k) load_stage(s);
        ltx2_cp_async_commit();
    }
    for (int64_t kt = 0; kt < n_k; kt++) {
        ltx2_cp_async_wait<LTX2_C3_STAGES - 2>();
        // every thread's copies of k-tile kt are visible, and every warp is done with k-tile
        // kt - 1, whose slot the load below refills
        __syncthreads();
        if (kt + LTX2_C3_STAGES - 1 < n_k) load_stage(kt + LTX2_C3_STAGES - 1);
        ltx2_cp_async_commit();
        const bf16 *As = smem + (int)(kt % LTX2_C3_STAGES) * STAGE, *Bs = As + LTX2_C3_BM * LTX2_C3_LDA;
#pragma unroll
        for (int ks = 0; ks < LTX2_C3_BK / 16; ks++) {
            uint32_t af[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
                ltx2_ldmatrix_x4(af[mt], &As[ltx2_c3_lda_row(warp, mt, lane) * LTX2_C3_LDA + ltx2_c3_lda_col(ks, lane)]);
#pragma unroll
            for (int np = 0; np < LTX2_C3_WARP_N / 16; np++) {
                uint32_t bfr[4]; // B tile is [k][n] (n contiguous): .trans gives the col fragment
                ltx2_ldmatrix_x4_trans(bfr, &Bs[ltx2_c3_ldb_row(ks, lane) * LDB + ltx2_c3_ldb_col(warp, np, lane)]);
#pragma unroll
                for (int mt = 0; mt < 2; mt++)
#pragma unroll
                    for (int nt = 0; nt < 2; nt++)
                        ltx2_mma_bf16(acc[mt][2 * np + nt], af[mt], bfr[ltx2_mma_lm_b_reg(nt, 0)],
                                      bfr[ltx2_mma_lm_b_reg(nt, 1)]);
            }
        }
    }

    // Epilogue: C fragment pairs (columns n, n + 1) -> ltx2_c3_store_pair.
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int64_t m = m0 + ltx2_c3_acc_row(warp, mt, lane, r);
            if (m >= g->M) continue;
#pragma unroll
            for (int j = 0; j < LTX2_C3_WARP_N / 8; j++) {
                const int64_t n = n0 + ltx2_c3_acc_col(warp, j, lane);
                if (n >= g->Co) continue;
                ltx2_c3_store_pair(p.y, p.bias, p.silu, m, n, g->Co, acc[mt][j][2 * r], acc[mt][j][2 * r + 1]);
            }
        }
}

template <int WN> static int c3_launch(cudaStream_t st, const ltx2_c3_params &p) {
    int64_t gx, gy;
    if (!ltx2_c3_grid(&p.g, WN, &gx, &gy)) LTX2_K_BAD_ARG();
    const int smem = LTX2_C3_SMEM_BYTES(WN); // over the 48 KB a launch gets without asking
    cudaError_t e = cudaFuncSetAttribute(c3_kernel<WN>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return (int)e;
    ltx2_launch<c3_kernel<WN>>(dim3((unsigned)gx, (unsigned)gy), LTX2_C3_THREADS(WN), (size_t)smem, st, p);
    LTX2_K_RETURN_LAUNCH();
}

extern "C" int ltx2_k_conv3d(void *stream, const ltx2_k_conv3d_args *a) {
    if (!a || !a->x || !a->w || !a->y || !ltx2_c3_args_valid(a)) LTX2_K_BAD_ARG();
    if (!ltx2_k_aligned16(a->x) || !ltx2_k_aligned16(a->w) || !ltx2_k_aligned16(a->y)) LTX2_K_BAD_ARG();
    if (a->impl != LTX2_KCONV_AUTO && a->impl != LTX2_KCONV_MMA_SYNC && a->impl != LTX2_KCONV_WGMMA) LTX2_K_BAD_ARG();
    if (a->impl == LTX2_KCONV_WGMMA) return c90_launch((cudaStream_t)stream, a);
    const ltx2_c3_params p = ltx2_c3_params_from_args(a);
    int64_t gx, gy;
    if (a->impl == LTX2_KCONV_AUTO && ltx2_c90_auto_picks(a->c_out, a->kt * a->kh * a->kw) &&
        ltx2_c90_grid(&p.g, ltx2_c90_pick_nb(a->c_out), &gx, &gy) && c90_available())
        return c90_launch((cudaStream_t)stream, a);
    return ltx2_c3_pick_wn(a->c_out) == 2 ? c3_launch<2>((cudaStream_t)stream, p)
                                          : c3_launch<1>((cudaStream_t)stream, p);
}
