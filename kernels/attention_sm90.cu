// Flash-attention forward for Hopper (sm_90a), FlashAttention-3 style: TMA bulk tensor loads of
// Q and of a K/V ring in shared memory guarded by mbarriers, one producer warpgroup that only
// issues those loads, and two consumer warpgroups of 64 query rows each that run S = QK^T with
// wgmma (both operands from 128-byte-swizzled shared memory), the online softmax in registers,
// and O += PV with wgmma taking P (bf16) straight from registers. Same inputs and semantics as
// the sm_80 mma.sync kernel in attention.cu, which runs the Q/K pre-pass first: K arrives already
// normalised/rotated from the workspace. Q arrives normalised/rotated the same way, and the key mask
// as a bit per key (LTX2_KATTN_PREP_AUTO). Why: a prologue of Q in shared memory is serial,
// latency-bound work each CTA does before its first product, with no other CTA on the SM to hide
// it. On an H200 (bench/results/NVIDIA_H200-20261127/run2) the video self-attention with RoPE
// took 0.56 ms more than without (2.65 against 2.09 ms, K's pre-pass included), and the masked
// video->text call 2x cuDNN's time. The pre-pass variant is not timed on a GPU yet.
// The IN_KERNEL layout (kept to time both in one run) does that prologue here, from the pre-pass's
// per-token inverse RMS as the sm_80 kernel does, and reads the mask a byte per score.
// Intra-warpgroup overlap: the QK^T of tile t is issued together with the PV of tile t-1, and
// the softmax of tile t runs while that PV is still on the tensor cores.
// The device code exists only in the sm_90a compilation (__CUDA_ARCH_FEAT_SM90_ALL); other
// architectures get an empty stub, which att90_available() detects so dispatch never picks it.
// The CPU emulator (tests/emu/, LTX2_EMU) compiles the device code too, with each PTX wrapper
// below routed to its emulation (tests/emu/emu_sm90.c).
// Gemma-3's launches (head dim 256, grouped-query heads, causal and sliding-window masks, rows
// with no key giving 0) run here too, with the sm_80 kernel's semantics: a CTA loads only the key
// tiles some row of it sees, and masks per element the tiles its warpgroup's rows see in part.
// At d = 256 a tile is 64 keys (att90_layout.h) and O += PV is two n128 products, one per half of d.
#include "att90_layout.h"
#include "attention.cuh"
#include "common.cuh"
#include "mma.cuh"
#include "rope.cuh"
#include "sm90.cuh"


// Tile geometry (A90_WG_ROWS, A90_BN_OF, A90_STAGES, 64-column swizzled panels) is in
// att90_layout.h. d <= 128, 128 keys a tile: S is 64 fp32 registers per thread; with the d = 128 O
// accumulator (64) and P (32 bf16 pairs) it fits the consumers' 240-register budget. Two stages
// of 128 x 128 bf16 K and V tiles plus Q is 160 KB of the 227 KB. d = 256, 64 keys: O 128, S 32,
// P 16 registers; Q 64 KB + two stages of 64 x 256 K and V tiles 128 KB = 192 KB.
// A warpgroup: 4 consecutive warps issuing wgmma together, over A90_WG_ROWS rows (the wgmma M).
#define A90_WG_THREADS 128
// Query rows per CTA: two consumer warpgroups.
#define A90_BM (A90_CONSUMERS * A90_WG_ROWS)
#define A90_CONSUMERS 2
#define A90_THREADS ((1 + A90_CONSUMERS) * A90_WG_THREADS)
#define A90_CONSUMER_WARPS (A90_CONSUMERS * 4)
// Register split (setmaxnreg): the producer only issues TMA; 24 x 128 + 240 x 256 <= 64K.
// (Both must be multiples of 8, and the entry cap 65536 / 384 -> 168 must lie between them.)
#define A90_PRODUCER_REGS 24
#define A90_CONSUMER_REGS 240
// mbarriers: Q full, then per stage K full, K empty, V full, V empty.
#define A90_BARRIERS (1 + 4 * A90_STAGES)
// Named barriers 1 and 2 (0 is __syncthreads) sync one consumer warpgroup.
#define A90_WG_BARRIER0 1

typedef __nv_bfloat16 bf16;

// F8: the e4m3 variant (d = 128): Q, K and V^T tiles of 128-byte rows, one panel each (att90_layout.h).
template <int D, bool F8 = false> struct a90_cfg {
    static constexpr int BN = F8 ? A90_F8_BN : A90_BN_OF(D);           // keys per K/V tile
    static constexpr int NP = F8 ? 1 : D / A90_PANEL;                  // panels per row
    static constexpr int Q_PANEL = A90_BM * A90_ROW_BYTES;             // bytes between Q panels
    static constexpr int KV_PANEL = A90_KV_PANEL_BYTES(BN);            // bytes between K/V panels
    static constexpr int Q_BYTES = NP * A90_BM * A90_ROW_BYTES;        // the Q TMA transaction
    static constexpr int TILE_BYTES = NP * BN * A90_ROW_BYTES;         // one K, V or V^T tile
    // Q's region: the bf16 O tile is staged there at the end, so the e4m3 variant keeps it bf16-sized
    static constexpr int Q_REGION = A90_TILE_BYTES(D, A90_BM);
    static constexpr int PF = F8 ? BN / 8 : BN / 4;                    // P fragment registers
    // + one atom of slack to align the dynamic region to the swizzle period
    static constexpr int SMEM = Q_REGION + 2 * A90_STAGES * TILE_BYTES + A90_ATOM_BYTES;
};

#if defined(A90_DEVICE_CODE)
// S = Q K^T over d: Q rows [64][D] at qa and a K tile [BN][D] at kb, both K-major (d
// contiguous) in 64-column swizzled panels (start addresses and strides: att90_qk_addr,
// A90_QK_LBO/SBO).
template <int D> __device__ __forceinline__ void a90_qk(float s[a90_cfg<D>::BN / 2], uint32_t qa, uint32_t kb) {
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        const uint64_t da = att90_desc(att90_qk_addr(qa, a90_cfg<D>::Q_PANEL, kk), A90_QK_LBO, A90_QK_SBO);
        const uint64_t db = att90_desc(att90_qk_addr(kb, a90_cfg<D>::KV_PANEL, kk), A90_QK_LBO, A90_QK_SBO);
        if constexpr (a90_cfg<D>::BN == 128) {
            if (kk == 0)
                a90_wgmma_ss_n128<0>(s, da, db);
            else
                a90_wgmma_ss_n128<1>(s, da, db);
        } else {
            if (kk == 0)
                a90_wgmma_ss_n64<0>(s, da, db);
            else
                a90_wgmma_ss_n64<1>(s, da, db);
        }
    }
}

// O += P V: P from registers (4 b32 per 16 keys), the V tile [BN keys][D] is MN-major for
// this product (d contiguous), so B is transposed. A k16 step is 16 key rows (att90_pv_addr);
// SBO steps 8 keys, LBO steps to the next 64-column panel of d (A90_PV_LBO/SBO). d = 256 is two
// n128 products: columns 128-255 are V's panels 2 and 3 and O's registers 64-127 (att90_acc_col
// of register i is 8 (i / 4) + ..., so register 64 + i is column 128 + that of register i).
template <int D>
__device__ __forceinline__ void a90_pv(float o[D / 2], const uint32_t pf[a90_cfg<D>::BN / 4], uint32_t vb) {
    constexpr int BN = a90_cfg<D>::BN;
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++) {
        const uint64_t db = att90_desc(att90_pv_addr(vb, kk), A90_PV_LBO(BN), A90_PV_SBO);
        if constexpr (D == 256) {
            const uint64_t db_hi = att90_desc(att90_pv_addr(vb + 2 * a90_cfg<D>::KV_PANEL, kk), A90_PV_LBO(BN),
                                              A90_PV_SBO);
            a90_wgmma_rs_n128(o, &pf[4 * kk], db);
            a90_wgmma_rs_n128(o + 64, &pf[4 * kk], db_hi);
        } else if constexpr (D == 128) {
            a90_wgmma_rs_n128(o, &pf[4 * kk], db);
        } else {
            a90_wgmma_rs_n64(o, &pf[4 * kk], db);
        }
    }
}

// The e4m3 products (d = 128, 128-key tiles): S = Q K^T in 4 k32 steps, both K-major; O += P V^T
// with V^T a K-major B (its rows are channels, keys contiguous, permuted as att90_f8_vperm) and P
// from registers (att90_f8_pfrag_src).
__device__ __forceinline__ void a90_qk_f8(float s[64], uint32_t qa, uint32_t kb) {
#pragma unroll
    for (int kk = 0; kk < A90_F8_D / A90_F8_K_STEP; kk++) {
        const uint64_t da = att90_desc(att90_qk_addr(qa, a90_cfg<A90_F8_D, true>::Q_PANEL, kk), A90_QK_LBO, A90_QK_SBO);
        const uint64_t db = att90_desc(att90_qk_addr(kb, a90_cfg<A90_F8_D, true>::KV_PANEL, kk), A90_QK_LBO, A90_QK_SBO);
        if (kk == 0)
            a90_wgmma_ss_n128_e4m3<0>(s, da, db);
        else
            a90_wgmma_ss_n128_e4m3<1>(s, da, db);
    }
}
__device__ __forceinline__ void a90_pv_f8(float o[64], const uint32_t pf[16], uint32_t vb) {
#pragma unroll
    for (int kk = 0; kk < A90_F8_BN / A90_F8_K_STEP; kk++)
        a90_wgmma_rs_n128_e4m3(o, &pf[4 * kk],
                               att90_desc(att90_qk_addr(vb, a90_cfg<A90_F8_D, true>::KV_PANEL, kk), A90_QK_LBO, A90_QK_SBO));
}

// One warp's share of releasing a ring slot (the empty barriers count A90_CONSUMER_WARPS).
__device__ __forceinline__ void a90_release(uint32_t bar, int lane) {
    __syncwarp();
    if (lane == 0) a90_bar_arrive(bar);
}

// This batch's key mask as the kernel reads it: the pre-pass's bits (a word per 32 keys) or, in the
// IN_KERNEL layout, the bytes; NULL both when there is none.
struct a90_mask {
    const uint32_t *bits;
    const uint8_t *bytes;
};

// Causal / sliding-window masking of one tile for this thread's two rows: on when some row of the
// warpgroup sees only part of the tile; (tile's first key) - row per row half, as the sm_80 kernel
// keeps it (32 bits: |key - row| < Skv <= INT32_MAX); win 0 when there is no window.
struct a90_edge {
    bool on, causal;
    int win;
    int key_minus_row[2];
};

// The edge of the tile starting at key0 for the warpgroup whose rows start at q0w (uniform in it)
// and this thread's rows my_row.
template <int BN>
__device__ __forceinline__ a90_edge a90_edge_of(bool causal, int win, int64_t key0, int64_t q0w,
                                                const int64_t my_row[2]) {
    a90_edge e;
    e.causal = causal;
    e.win = win;
    e.on = (causal && key0 + BN - 1 > q0w) || (win > 0 && q0w + A90_WG_ROWS - 1 - key0 >= win);
    e.key_minus_row[0] = (int)(key0 - my_row[0]);
    e.key_minus_row[1] = (int)(key0 - my_row[1]);
    return e;
}

// Online softmax of one S tile (raw scores) for this thread's two rows (att90_acc_half 0 and 1:
// rows lane/4 and lane/4 + 8 of its warp). Masked keys, keys past Skv and (edge) keys after the
// row or outside its window get -inf; all-masked rows score 0 (uniform weights, as the CPU
// reference, unless the launch zeroes empty rows). The running max is kept in scaled log2
// units, so each weight is one FFMA and one EX2 (mul[r] = scale * log2(e), times the e4m3 variant's
// Q row and K tile scales, is > 0: dispatch requires scale > 0, so the max of raw scores is the max
// of scaled ones). On return s holds the unnormalised weights and alpha the factor the O rows must
// be rescaled by.
template <int BN>
__device__ __forceinline__ void a90_softmax(float s[BN / 2], int64_t key0, int64_t Skv, a90_mask mask,
                                            bool all_masked, const a90_edge &edge, const float mul[2], int lane,
                                            float m_run[2], float l_run[2], float alpha[2]) {
    if (mask.bits && !all_masked) {
        // the tile's words, a uniform load each; keys past Skv have 0 bits
        uint32_t w[A90_MASK_TILE_WORDS(BN)];
        const uint32_t *tw = mask.bits + key0 / 32;
#pragma unroll
        for (int j = 0; j < A90_MASK_TILE_WORDS(BN); j++) w[j] = tw[j] >> att90_mask_shift(lane);
#pragma unroll
        for (int i = 0; i < BN / 2; i++)
            if (!att90_mask_bit(w, i)) s[i] = -INFINITY;
    } else if (all_masked || mask.bytes || key0 + BN > Skv) {
        const uint8_t *mb = all_masked ? nullptr : mask.bytes;
#pragma unroll
        for (int i = 0; i < BN / 2; i++) {
            const int64_t key = key0 + att90_acc_col(lane, i);
            bool keep = key < Skv;
            if (keep && mb) keep = mb[key] != 0;
            s[i] = !keep ? -INFINITY : (all_masked ? 0.0f : s[i]);
        }
    }
    if (edge.on) {
#pragma unroll
        for (int i = 0; i < BN / 2; i++) {
            const int rel = edge.key_minus_row[att90_acc_half(i)] + att90_acc_col(lane, i);
            if ((edge.causal && rel > 0) || (edge.win > 0 && -rel >= edge.win)) s[i] = -INFINITY;
        }
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        float mx = -INFINITY;
        // registers i, i+1 with att90_acc_half(i) == r: two adjacent columns of row half r
#pragma unroll
        for (int i = 0; i < BN / 2; i += 2)
            if (att90_acc_half(i) == r) mx = fmaxf(mx, fmaxf(s[i], s[i + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(m_run[r], mx * mul[r]);
        // A row with no live key yet keeps m = -inf; subtract 0 then so exp2(-inf) = 0, not NaN.
        const float base = m_new == -INFINITY ? 0.0f : m_new;
        alpha[r] = a90_ex2(m_run[r] - base);
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < BN / 2; i += 2) {
            if (att90_acc_half(i) != r) continue;
            s[i] = a90_ex2(fmaf(s[i], mul[r], -base));
            s[i + 1] = a90_ex2(fmaf(s[i + 1], mul[r], -base));
            sum += s[i] + s[i + 1];
        }
        l_run[r] = l_run[r] * alpha[r] + sum; // this lane's partial; quad-reduced at the end
        m_run[r] = m_new;
    }
}

// S accumulator -> A fragments of PV (att90_pfrag_src: keys 16kk..16kk+15 are S column
// blocks 2kk and 2kk+1).
template <int BN> __device__ __forceinline__ void a90_pack_p(const float s[BN / 2], uint32_t pf[BN / 4]) {
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            pf[4 * kk + r] = ltx2_pack_bf16(s[att90_pfrag_src(kk, r, 0)], s[att90_pfrag_src(kk, r, 1)]);
}

// The e4m3 variant's P fragments: weights times A90_F8_P_SCALE, rounded to e4m3, four to a register
// (att90_f8_pfrag_src).
__device__ __forceinline__ void a90_pack_p_f8(const float s[64], uint32_t pf[16]) {
    const float k = A90_F8_P_SCALE;
#pragma unroll
    for (int kk = 0; kk < A90_F8_BN / A90_F8_K_STEP; kk++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            pf[4 * kk + r] = a90_e4m3x4(k * s[att90_f8_pfrag_src(kk, r, 0)], k * s[att90_f8_pfrag_src(kk, r, 1)],
                                        k * s[att90_f8_pfrag_src(kk, r, 2)], k * s[att90_f8_pfrag_src(kk, r, 3)]);
}

#endif // A90_DEVICE_CODE

// Grid (ceil(Sq / A90_BM), H, B); A90_THREADS threads: warpgroup 0 produces, 1 and 2 consume.
// F8: the e4m3 variant (d = 128; tm_q, tm_k over p.q8, p.k8 and tm_v over p.vt8).
template <int D, bool F8>
__global__ void __launch_bounds__(A90_THREADS, 1)
    att90_fwd_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                     const __grid_constant__ CUtensorMap tm_v, const att_params p) {
#if defined(A90_DEVICE_CODE)
    typedef a90_cfg<D, F8> C;
    constexpr int BN = C::BN;
    // Static shared memory only in this build: att90_available() reads its size to tell the
    // real kernel from the stub other architectures compile.
    __shared__ __align__(8) uint64_t bars[A90_BARRIERS];
#ifdef LTX2_EMU
    ltx2_emu_smem_object(bars, sizeof bars, __FILE__, __LINE__); // its place in the emulated shared window
#endif
    LTX2_K_DYN_SMEM(unsigned char, a90_smem);
    const uint32_t raw = ltx2_smem_addr(a90_smem);
    const uint32_t base = (raw + A90_ATOM_BYTES - 1) & ~(uint32_t)(A90_ATOM_BYTES - 1);
    unsigned char *gQ = a90_smem + (base - raw); // generic pointer to Q, for ordinary accesses
    const uint32_t sQ = base, sK = sQ + C::Q_REGION, sV = sK + A90_STAGES * C::TILE_BYTES;
    const uint32_t b_q = ltx2_smem_addr(&bars[0]), b_kfull = b_q + 8, b_kempty = b_kfull + 8 * A90_STAGES,
                   b_vfull = b_kempty + 8 * A90_STAGES, b_vempty = b_vfull + 8 * A90_STAGES;

    const int tid = threadIdx.x, wg = tid / A90_WG_THREADS, lane = tid & 31;
    const int64_t h = blockIdx.y, b = blockIdx.z, q0 = (int64_t)blockIdx.x * A90_BM;
    const int64_t mask_words = att90_mask_words(p.Skv);
    a90_mask mask = {p.mask_bits ? p.mask_bits + b * mask_words : nullptr,
                     p.mask && !p.mask_bits ? p.mask + b * p.Skv : nullptr};
    // The key tiles some row of this CTA sees (the sm_80 kernel's range): causal stops after the
    // last row's own key, a window starts at the first row's oldest key. Never empty (row q0 sees
    // key q0). The ring counts tiles from t_begin (j = t - t_begin).
    const int win = p.window > 0 && p.window < p.Skv ? (int)p.window : 0; // one >= Skv cuts nothing
    int t_begin = 0, t_end = (int)((p.Skv + BN - 1) / BN);
    {
        const int64_t q_last = (q0 + A90_BM < p.Sq ? q0 + A90_BM : p.Sq) - 1;
        if (p.causal && q_last / BN + 1 < t_end) t_end = (int)(q_last / BN + 1);
        if (win > 0 && q0 - win + 1 > 0) t_begin = (int)((q0 - win + 1) / BN);
    }
    const int n_tiles = t_end - t_begin;

    if (tid == 0) {
        a90_bar_init(b_q, 1);
        for (int s = 0; s < A90_STAGES; s++) {
            a90_bar_init(b_kfull + 8 * s, 1);
            a90_bar_init(b_vfull + 8 * s, 1);
            a90_bar_init(b_kempty + 8 * s, A90_CONSUMER_WARPS);
            a90_bar_init(b_vempty + 8 * s, A90_CONSUMER_WARPS);
        }
        a90_fence_mbarrier_init();
    }
    // All keys masked: the CPU reference then averages every value (uniform weights); with
    // empty_zero the rows stay empty and give 0 instead. The barrier also publishes the mbarrier
    // initialisation to every thread.
    bool all_masked = false;
    if (mask.bits && !p.empty_zero) {
        int any = 0;
        for (int64_t j = tid; j < mask_words; j += A90_THREADS) any |= mask.bits[j] != 0;
        all_masked = !__syncthreads_or(any);
    } else if (mask.bytes && !p.empty_zero) {
        int any = 0;
        for (int64_t j = tid; j < p.Skv; j += A90_THREADS) any |= mask.bytes[j] != 0;
        all_masked = !__syncthreads_or(any);
    } else {
        __syncthreads();
    }

    if (wg == 0) {
        // ---- producer: one thread issues every TMA load; the rest of the warpgroup retires ----
        a90_setmaxnreg_dec<A90_PRODUCER_REGS>();
        if (tid == 0) {
            // grouped-query heads: K/V hold Hkv heads, q head h reads kv head h / (H / Hkv)
            const int col0 = (int)(h * D), kcol0 = (int)(h / (p.H / p.Hkv) * D); // kcol0: V^T's row too
            a90_bar_expect_tx(b_q, C::Q_BYTES);
#pragma unroll
            for (int pn = 0; pn < C::NP; pn++)
                a90_tma_load(sQ + pn * C::Q_PANEL, &tm_q, b_q, col0 + pn * A90_PANEL, (int)q0, (int)b);
            for (int j = 0; j < n_tiles; j++) {
                const int st = att90_stage(j), key0 = (t_begin + j) * BN;
                const uint32_t free_parity = att90_empty_parity(j);
                a90_bar_wait(b_kempty + 8 * st, free_parity);
                a90_bar_expect_tx(b_kfull + 8 * st, C::TILE_BYTES);
#pragma unroll
                for (int pn = 0; pn < C::NP; pn++)
                    a90_tma_load(sK + st * C::TILE_BYTES + pn * C::KV_PANEL, &tm_k, b_kfull + 8 * st,
                                 kcol0 + pn * A90_PANEL, key0, (int)b);
                a90_bar_wait(b_vempty + 8 * st, free_parity);
                a90_bar_expect_tx(b_vfull + 8 * st, C::TILE_BYTES);
                if constexpr (F8) {
                    a90_tma_load(sV + st * C::TILE_BYTES, &tm_v, b_vfull + 8 * st, key0, kcol0, (int)b);
                } else {
#pragma unroll
                    for (int pn = 0; pn < C::NP; pn++)
                        a90_tma_load(sV + st * C::TILE_BYTES + pn * C::KV_PANEL, &tm_v, b_vfull + 8 * st,
                                     kcol0 + pn * A90_PANEL, key0, (int)b);
                }
            }
        }
        return;
    }

    // ---- consumers: warpgroup cw owns CTA rows A90_WG_ROWS*cw .. + A90_WG_ROWS - 1 ----
    a90_setmaxnreg_inc<A90_CONSUMER_REGS>();
    const int cw = wg - 1, ctid = tid - A90_WG_THREADS * wg, warp = ctid >> 5;
    const int wg_bar = A90_WG_BARRIER0 + cw;
    const int64_t ld = p.H * D; // token stride
    // this warpgroup's first row, and this thread's two rows (att90_acc_half 0, 1) for the masks
    const int64_t q0w = q0 + A90_WG_ROWS * cw;
    const int64_t my_row[2] = {q0w + att90_acc_row(warp, lane, 0), q0w + att90_acc_row(warp, lane, 2)};
    a90_bar_wait(b_q, 0);
    if (!F8 && (p.q_inv_rms || p.rope != LTX2_KROPE_NONE)) {
        // Q rows <- rope(q * inv_rms * w) in fp32, in place in the swizzled tile, one thread per
        // element pair (the sm_80 prologue's arithmetic).
        const bool il = p.rope == LTX2_KROPE_INTERLEAVED;
        for (int i = ctid; i < A90_WG_ROWS * (D / 2); i += A90_WG_THREADS) {
            const int r = A90_WG_ROWS * cw + i / (D / 2), pp = i % (D / 2);
            const int64_t qi = q0 + r;
            if (qi >= p.Sq) continue;
            const ltx2_rope_pair pr = ltx2_rope_pair_of(pp, D, il);
            bf16 *e0 = reinterpret_cast<bf16 *>(gQ + att90_tile_off(r, (int)pr.c0, C::Q_PANEL));
            bf16 *e1 = reinterpret_cast<bf16 *>(gQ + att90_tile_off(r, (int)pr.c1, C::Q_PANEL));
            float a = __bfloat162float(*e0), bb = __bfloat162float(*e1);
            att_q_pair(p, b, h, qi, D, ld, il, pr, a, bb);
            *e0 = __float2bfloat16_rn(a);
            *e1 = __float2bfloat16_rn(bb);
        }
        a90_fence_proxy_async();
        a90_named_sync(wg_bar, A90_WG_THREADS);
    }

    float o[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; i++) o[i] = 0.0f;
    float s[BN / 2]; // the first QK^T overwrites it (scale-d 0); zeroed so it is never read undefined
#pragma unroll
    for (int i = 0; i < BN / 2; i++) s[i] = 0.0f;
    uint32_t pf[C::PF];
    float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f}, alpha[2];
    // The softmax's multiplier per row half: scale * log2(e), times (e4m3) the row's Q scale and
    // the tile's K scale (tile_mul; a tile's scale is loaded before its barrier wait, so the
    // load's latency hides behind it).
    const int64_t kvh = h / (p.H / p.Hkv);
    float q_mul[2] = {p.scale_log2, p.scale_log2}, mul[2] = {p.scale_log2, p.scale_log2};
    const float *k_scales = nullptr;
    if constexpr (F8) {
#pragma unroll
        for (int r = 0; r < 2; r++)
            q_mul[r] = (my_row[r] < p.Sq ? p.q_scale[(b * p.Sq + my_row[r]) * p.H + h] : 1.0f) * p.scale_log2;
        k_scales = p.k_scale + (b * p.Hkv + kvh) * att90_f8_tiles(p.Skv);
    }
    auto tile_scale = [&](int t) { return F8 ? k_scales[t] : 1.0f; };
    auto tile_mul = [&](float ks) {
        if constexpr (F8) {
            mul[0] = q_mul[0] * ks;
            mul[1] = q_mul[1] * ks;
        }
    };
    const uint32_t qa = sQ + (uint32_t)(cw * A90_WG_ROWS * A90_ROW_BYTES); // this warpgroup's rows in each panel

    // Tile 0: S alone (there is no PV to overlap yet).
    a90_bar_wait(b_kfull + 8 * att90_stage(0), att90_full_parity(0));
    a90_wgmma_fence();
    if constexpr (F8)
        a90_qk_f8(s, qa, sK + att90_stage(0) * C::TILE_BYTES);
    else
        a90_qk<D>(s, qa, sK + att90_stage(0) * C::TILE_BYTES);
    a90_wgmma_commit();
    a90_wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < BN / 2; i++) a90_pin(s[i]);
    a90_release(b_kempty + 8 * att90_stage(0), lane);
    const a90_edge e0 = a90_edge_of<BN>(p.causal != 0, win, (int64_t)t_begin * BN, q0w, my_row);
    tile_mul(tile_scale(t_begin));
    a90_softmax<BN>(s, (int64_t)t_begin * BN, p.Skv, mask, all_masked, e0, mul, lane, m_run, l_run, alpha);
    if constexpr (F8)
        a90_pack_p_f8(s, pf);
    else
        a90_pack_p<BN>(s, pf);

    for (int j = 1; j < n_tiles; j++) {
        const int ks = att90_stage(j), vs = att90_stage(j - 1);
        const float k_scale = tile_scale(t_begin + j);
        // Both waits come before the fence: a spin loop between fence and wgmma makes ptxas
        // insert another fence. V_{j-1} was issued before K_j, so waiting for it first is free.
        a90_bar_wait(b_kfull + 8 * ks, att90_full_parity(j));
        a90_bar_wait(b_vfull + 8 * vs, att90_full_parity(j - 1));
        // O's rescale and P's packing must be done before the fence, not sunk below it
#pragma unroll
        for (int i = 0; i < D / 2; i++) a90_pin(o[i]);
#pragma unroll
        for (int i = 0; i < C::PF; i++) a90_pin(pf[i]);
        a90_wgmma_fence();
        if constexpr (F8) {
            a90_qk_f8(s, qa, sK + ks * C::TILE_BYTES); // S_j
            a90_wgmma_commit();
            a90_pv_f8(o, pf, sV + vs * C::TILE_BYTES); // O += P_{j-1} V_{j-1}
        } else {
            a90_qk<D>(s, qa, sK + ks * C::TILE_BYTES); // S_j
            a90_wgmma_commit();
            a90_pv<D>(o, pf, sV + vs * C::TILE_BYTES); // O += P_{j-1} V_{j-1}
        }
        a90_wgmma_commit();
        a90_wgmma_wait<1>(); // S_j done; the PV may still run
#pragma unroll
        for (int i = 0; i < BN / 2; i++) a90_pin(s[i]);
        a90_release(b_kempty + 8 * ks, lane);
        const int64_t key0 = (int64_t)(t_begin + j) * BN;
        const a90_edge ej = a90_edge_of<BN>(p.causal != 0, win, key0, q0w, my_row);
        tile_mul(k_scale);
        a90_softmax<BN>(s, key0, p.Skv, mask, all_masked, ej, mul, lane, m_run, l_run, alpha);
        a90_wgmma_wait<0>(); // PV done: O and the P registers are free again
#pragma unroll
        for (int i = 0; i < D / 2; i++) a90_pin(o[i]);
#pragma unroll
        for (int i = 0; i < C::PF; i++) a90_pin(pf[i]);
        a90_release(b_vempty + 8 * vs, lane);
#pragma unroll
        for (int i = 0; i < D / 2; i++) o[i] *= alpha[att90_acc_half(i)];
        if constexpr (F8)
            a90_pack_p_f8(s, pf);
        else
            a90_pack_p<BN>(s, pf);
    }

    {
        const int vs = att90_stage(n_tiles - 1);
        a90_bar_wait(b_vfull + 8 * vs, att90_full_parity(n_tiles - 1));
#pragma unroll
        for (int i = 0; i < D / 2; i++) a90_pin(o[i]);
#pragma unroll
        for (int i = 0; i < C::PF; i++) a90_pin(pf[i]);
        a90_wgmma_fence();
        if constexpr (F8)
            a90_pv_f8(o, pf, sV + vs * C::TILE_BYTES);
        else
            a90_pv<D>(o, pf, sV + vs * C::TILE_BYTES);
        a90_wgmma_commit();
        a90_wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < D / 2; i++) a90_pin(o[i]);
        a90_release(b_vempty + 8 * vs, lane);
    }

    // ---- epilogue: O / l as bf16, staged through this warpgroup's (now unused) Q rows in the
    // same swizzled layout (conflict-free 4-byte stores), then written as coalesced 16-byte rows ----
#pragma unroll
    for (int r = 0; r < 2; r++) {
        l_run[r] += __shfl_xor_sync(0xffffffffu, l_run[r], 1);
        l_run[r] += __shfl_xor_sync(0xffffffffu, l_run[r], 2);
    }
    // l > 0 unless the row saw no key at all: with empty_zero it gives 0 (otherwise every row has a
    // live key: Skv >= 1 and all-masked rows are uniform)
    // (e4m3: O also carries A90_F8_P_SCALE, and each column its V channel's scale and lacks its mean)
    const float o_mul = F8 ? 1.0f / A90_F8_P_SCALE : 1.0f;
    const float inv_l[2] = {l_run[0] > 0.0f ? o_mul / l_run[0] : 0.0f, l_run[1] > 0.0f ? o_mul / l_run[1] : 0.0f};
    const float *v_scales = F8 ? p.v_scale + (b * p.Hkv + kvh) * D : nullptr;
    const float *v_means = F8 ? p.v_mean + (b * p.Hkv + kvh) * D : nullptr;
    a90_named_sync(wg_bar, A90_WG_THREADS); // every warp's QK^T reads of these Q rows are done
#pragma unroll
    for (int i = 0; i < D / 2; i += 2) { // registers i, i+1: adjacent columns of one row
        const int row = A90_WG_ROWS * cw + att90_acc_row(warp, lane, i), col = att90_acc_col(lane, i);
        const float il = inv_l[att90_acc_half(i)];
        float o0 = o[i] * il, o1 = o[i + 1] * il;
        if constexpr (F8) {
            o0 = fmaf(o0, v_scales[col], v_means[col]);
            o1 = fmaf(o1, v_scales[col + 1], v_means[col + 1]);
        }
        *reinterpret_cast<__nv_bfloat162 *>(gQ + att90_tile_off(row, col, C::Q_PANEL)) = __floats2bfloat162_rn(o0, o1);
    }
    a90_named_sync(wg_bar, A90_WG_THREADS);
    for (int i = ctid; i < A90_WG_ROWS * (D / 8); i += A90_WG_THREADS) {
        const int row = A90_WG_ROWS * cw + i / (D / 8), c = (i % (D / 8)) * 8;
        const int64_t qi = q0 + row;
        if (qi >= p.Sq) continue;
        const uint4 v = *reinterpret_cast<const uint4 *>(gQ + att90_tile_off(row, c, C::Q_PANEL));
        *reinterpret_cast<uint4 *>(p.out + (b * p.Sq + qi) * ld + h * D + c) = v;
    }
#endif
}

// ---- host side ----

// Tensor map over one of q/k/v [B, S, ld] (ld = H*d) of bf16 or (esize 1) e4m3 bytes: 3-D (column,
// token, batch) so a box never spans two sequences, boxes of one 128-byte panel (64 bf16 or 128
// bytes) x `rows` tokens with 128-byte swizzle, out-of-range tokens zero-filled. The e4m3 V^T
// [B, Hkv*d, skv_pad] is mapped the same way, its keys as the columns and its channels as the rows.
static bool a90_map(PFN_cuTensorMapEncodeTiled_v12000 enc, CUtensorMap *m, const void *ptr, int64_t S, int64_t B,
                    int64_t ld, int rows, int esize = 2) {
    const cuuint64_t dims[3] = {(cuuint64_t)ld, (cuuint64_t)S, (cuuint64_t)B};
    const cuuint64_t strides[2] = {(cuuint64_t)(ld * esize), (cuuint64_t)(S * ld * esize)};
    const cuuint32_t box[3] = {(cuuint32_t)(A90_ROW_BYTES / esize), (cuuint32_t)rows, 1}, elem[3] = {1, 1, 1};
    return enc(m, esize == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3,
               const_cast<void *>(ptr), dims, strides, box, elem,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool att90_available(void) {
    if (!a90_device_is_sm90()) return false;
#ifdef LTX2_EMU
    return true; // the emulated build always carries the device code
#else
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, att90_fwd_kernel<128, false>) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return fa.sharedSizeBytes >= A90_BARRIERS * sizeof(uint64_t);
#endif
}

bool att90_shape_ok(const att_params &p, int64_t B, int64_t head_dim) {
    // TMA coordinates are int32; a tail tile's row coordinate reaches Skv + A90_BN_MAX.
    const int64_t lim = INT32_MAX - A90_BN_MAX;
    return (head_dim == 64 || head_dim == 128 || head_dim == 256) && p.scale_log2 > 0.0f &&
           p.scale_log2 < INFINITY && p.Sq <= lim && p.Skv <= lim && p.H * head_dim <= lim && p.Hkv >= 1 &&
           p.H % p.Hkv == 0 && B <= lim;
}

template <int D, bool F8 = false> static int a90_launch(cudaStream_t st, const att_params &p, int64_t B) {
    PFN_cuTensorMapEncodeTiled_v12000 enc = a90_encoder();
    if (!enc) return (int)cudaErrorNotSupported;
    const int64_t ld = p.H * D, ldkv = p.Hkv * D;
    constexpr int BN = a90_cfg<D, F8>::BN;
    CUtensorMap mq, mk, mv;
    const bool mapped = F8 ? a90_map(enc, &mq, p.q8, p.Sq, B, ld, A90_BM, 1) &&
                                 a90_map(enc, &mk, p.k8, p.Skv, B, ldkv, BN, 1) &&
                                 a90_map(enc, &mv, p.vt8, ldkv, B, p.skv_pad, D, 1)
                           : a90_map(enc, &mq, p.q, p.Sq, B, ld, A90_BM) && a90_map(enc, &mk, p.k, p.Skv, B, ldkv, BN) &&
                                 a90_map(enc, &mv, p.v, p.Skv, B, ldkv, BN);
    if (!mapped) return (int)cudaErrorInvalidValue;
    const int smem = a90_cfg<D, F8>::SMEM;
    cudaError_t e = cudaFuncSetAttribute(att90_fwd_kernel<D, F8>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return (int)e;
    dim3 grid((unsigned)((p.Sq + A90_BM - 1) / A90_BM), (unsigned)p.H, (unsigned)B);
    ltx2_launch<att90_fwd_kernel<D, F8>>(grid, A90_THREADS, smem, st, mq, mk, mv, p);
    LTX2_K_RETURN_LAUNCH();
}

int att90_launch(cudaStream_t st, const att_params &p, int64_t B, int64_t head_dim) {
    if (p.fp8) return head_dim == A90_F8_D ? a90_launch<A90_F8_D, true>(st, p, B) : (int)cudaErrorNotSupported;
    if (head_dim == 64) return a90_launch<64>(st, p, B);
    return head_dim == 128 ? a90_launch<128>(st, p, B) : a90_launch<256>(st, p, B);
}

extern "C" int ltx2_k_attention_wgmma_available(void) { return att90_available() ? 1 : 0; }
