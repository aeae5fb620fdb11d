// Flash-style attention forward (FlashAttention-2 schedule) on the portable sm_80+ tensor-core
// path: mma.sync.m16n8k16 bf16 -> fp32, ldmatrix, cp.async double buffering. One CTA owns
// ATT_BM query rows of one (batch, head) and streams K/V tiles of att_bn(d) keys through shared
// memory with an online softmax, so the S x S score matrix never exists.
// QK RMSNorm (across heads) and RoPE: Q is normalised/rotated in the CTA prologue, straight in
// shared memory, from per-token inverse RMS values a small pre-pass writes to the workspace. K is
// normalised/rotated once by a pre-pass into a bf16 copy in the workspace: doing it inside the
// main loop would repeat the work for every one of the S/ATT_BM query blocks.
// On compute capability 9.x, ltx2_k_attention dispatches to the sm_90a wgmma/TMA kernel
// (attention_sm90.cu) after the same pre-pass; this kernel is the portable path and the
// correctness baseline that one is tested against.
// Gemma-3's masks (the MASKS instantiation): grouped-query heads read their kv head's K/V,
// causal and sliding-window key ranges skip the key tiles no row of the CTA sees and mask the
// rest per element, and a row left with no key gives 0 (empty_zero). A causal/windowed launch
// without empty_zero (empty rows averaged over every key, row by row) stays on the per-row kernel.
#include "att90_layout.h"
#include "attention.cuh"
#include "common.cuh"
#include "mma.cuh"
#include "mma_layout.h"
#include "rope.cuh"

#include <string.h>

// 4 warps x 16 query rows: each warp owns one m16 row block, so the softmax row statistics stay
// within a warp (a quad of lanes per row) and no cross-warp reduction is needed.
#define ATT_WARPS 4
#define ATT_THREADS (ATT_WARPS * 32)
#define ATT_BM (ATT_WARPS * 16)
// Keys per K/V tile. 64: S = 16 x 64 fp32 per warp is 32 registers per thread, and with d = 128
// the O accumulator (64) and the Q fragments (32) still fit under the 255-register cap. d = 256
// (Gemma-3): O alone is 128 registers, so 32 keys per tile and Q re-read from shared memory at
// each k-step instead of held in registers (FlashAttention-2's head-dim-256 trade).
__host__ __device__ constexpr int att_bn(int d) { return d > 128 ? 32 : 64; }
__host__ __device__ constexpr bool att_q_in_regs(int d) { return d <= 128; }
// Row padding of the shared tiles in bf16 elements (16 bytes): rows of d + 8 elements start 4
// banks apart (d = 64: 144 B = 36 words; d = 128: 272 B = 68 words), so the 8 row addresses of
// an ldmatrix phase hit 8 distinct 4-bank groups (checked in tests/test_layout_mma.c).
#define ATT_PAD LTX2_MMA_SMEM_PAD
// Pre-pass: one warp per token row; 8 warps per block.
#define ATT_PREP_WARPS 8
#define ATT_LOG2E 1.4426950408889634f
// Whether AUTO takes the sm_90a wgmma kernel on 9.x devices (for the launches it takes: d 64 /
// 128, no Gemma masks). On since three H100 runs (bench/results/NVIDIA_H100_80GB_HBM3-20261127,
// run2-run4) passed every d64/d128 op-harness case with it forced and compute-sanitizer memcheck
// clean; it runs the video self-attention 3.7x faster than the mma.sync kernel there.
#define ATT_AUTO_PICKS_WGMMA 1
// Whether AUTO also takes it for what it learned later: head dim 256 and Gemma-3's masks (grouped
// heads, causal, window, empty rows zero). Off until a GPU run passes the op harness's cases with
// the kernel forced (LTX2_ATTN_IMPL=wgmma: test_ops_wgmma in bench/device_run.sh) and bench_gemma
// with it forced beats the mma.sync kernel; until then those launches run it only when forced.
#define ATT_AUTO_PICKS_WGMMA_GEMMA 0

typedef __nv_bfloat16 bf16;

static size_t ws_round(size_t n) { return (n + LTX2_KATTN_WS_ALIGN - 1) / LTX2_KATTN_WS_ALIGN * LTX2_KATTN_WS_ALIGN; }

// Copies rows [row0, row0 + ROWS) x D of one head into smem (row stride LD), zero-filling rows
// at or beyond n_rows. gbase points at (row 0, this head); rows are ld elements apart.
template <int D, int ROWS>
__device__ __forceinline__ void att_load_tile(bf16 *s, const bf16 *gbase, int64_t row0, int64_t n_rows,
                                              int64_t ld) {
    constexpr int LD = D + ATT_PAD, CHUNKS = D / 8; // 16-byte chunks per row
#pragma unroll
    for (int i = threadIdx.x; i < ROWS * CHUNKS; i += ATT_THREADS) {
        const int r = i / CHUNKS, c = (i % CHUNKS) * 8;
        const int64_t gr = row0 + r;
        const bool ok = gr < n_rows;
        ltx2_cp_async16(s + ltx2_mma_smem_off(r, c, LD), ok ? gbase + gr * ld + c : gbase, ok);
    }
}

// This warp's 16 query rows at k-step kk: the A operand, row-major ldmatrix from the Q tile.
template <int LD>
__device__ __forceinline__ void att_load_q_frag(uint32_t (&f)[4], const bf16 *Qs, int warp, int lane, int kk) {
    ltx2_ldmatrix_x4(f, Qs + ltx2_mma_smem_off(warp * 16 + ltx2_mma_lm_a_row(lane), kk * 16 + ltx2_mma_lm_a_col(lane),
                                               LD));
}

template <int D, bool MASKS>
__global__ void __launch_bounds__(ATT_THREADS) att_fwd_kernel(att_params p) {
    constexpr int BN = att_bn(D), LD = D + ATT_PAD, KT = D / 16, NT = BN / 8;
    constexpr bool QREG = att_q_in_regs(D);
    LTX2_K_DYN_SMEM(unsigned char, att_smem);
    bf16 *Qs = reinterpret_cast<bf16 *>(att_smem);
    bf16 *Ks = Qs + ATT_BM * LD; // [2][BN][LD]
    bf16 *Vs = Ks + 2 * BN * LD;

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int64_t h = blockIdx.y, b = blockIdx.z, q0 = (int64_t)blockIdx.x * ATT_BM;
    const int64_t ld = p.H * D; // token stride of q and out
    // grouped-query heads: K/V hold Hkv heads, q head h reads kv head h / (H / Hkv)
    const int64_t hk = MASKS ? h / (p.H / p.Hkv) : h, ldkv = (MASKS ? p.Hkv : p.H) * D;
    const bf16 *qg = p.q + b * p.Sq * ld + h * D;
    const bf16 *kg = p.k + b * p.Skv * ldkv + hk * D;
    const bf16 *vg = p.v + b * p.Skv * ldkv + hk * D;
    const uint8_t *mask = p.mask ? p.mask + b * p.Skv : nullptr;

    // The key tiles some row of this CTA sees: causal stops after the last row's own key, a
    // window starts at the first row's oldest key. Never empty (row q0 sees key q0).
    const int64_t n_tiles = (p.Skv + BN - 1) / BN;
    int64_t t_begin = 0, t_end = n_tiles;
    // the window in 32 bits: one at least Skv long cuts nothing
    const int win = MASKS && p.window > 0 && p.window < p.Skv ? (int)p.window : 0;
    if (MASKS) {
        const int64_t q_last = (q0 + ATT_BM < p.Sq ? q0 + ATT_BM : p.Sq) - 1;
        if (p.causal && q_last / BN + 1 < t_end) t_end = q_last / BN + 1;
        if (p.window > 0 && q0 - p.window + 1 > 0) t_begin = (q0 - p.window + 1) / BN;
    }

    // cp.async groups: #0 = Q, #1 = K/V tile t_begin, then one group per later tile (possibly empty).
    att_load_tile<D, ATT_BM>(Qs, qg, q0, p.Sq, ld);
    ltx2_cp_async_commit();
    att_load_tile<D, BN>(Ks, kg, t_begin * BN, p.Skv, ldkv);
    att_load_tile<D, BN>(Vs, vg, t_begin * BN, p.Skv, ldkv);
    ltx2_cp_async_commit();

    // All keys masked: the CPU reference then averages every value (uniform weights); with
    // empty_zero the rows stay empty and give 0 instead.
    bool all_masked = false;
    if (mask && !(MASKS && p.empty_zero)) {
        int any = 0;
        for (int64_t j = tid; j < p.Skv; j += ATT_THREADS) any |= mask[j] != 0;
        all_masked = !__syncthreads_or(any);
    }

    ltx2_cp_async_wait<1>(); // Q landed (tile 0 may still be in flight)
    __syncthreads();
    if (p.q_inv_rms || p.rope != LTX2_KROPE_NONE) {
        // Prologue: Q rows <- rope(q * inv_rms * w) in fp32, one thread per element pair.
        const bool il = p.rope == LTX2_KROPE_INTERLEAVED;
        for (int i = tid; i < ATT_BM * (D / 2); i += ATT_THREADS) {
            const int r = i / (D / 2), pp = i % (D / 2);
            const int64_t qi = q0 + r;
            if (qi >= p.Sq) continue;
            // pair inside this head: split (pp, pp + D/2), interleaved (2pp, 2pp + 1)
            const ltx2_rope_pair pr = ltx2_rope_pair_of(pp, D, il);
            bf16 *row = Qs + r * LD;
            float a = __bfloat162float(row[pr.c0]), bb = __bfloat162float(row[pr.c1]);
            att_q_pair(p, b, h, qi, D, ld, il, pr, a, bb);
            row[pr.c0] = __float2bfloat16_rn(a);
            row[pr.c1] = __float2bfloat16_rn(bb);
        }
        __syncthreads();
    }

    // Q fragments for this warp's 16 rows, all of d (A operand, row-major ldmatrix); d = 256
    // reloads them from shared memory at each k-step instead (one slot).
    uint32_t qf[QREG ? KT : 1][4];
    if (QREG) {
#pragma unroll
        for (int kk = 0; kk < KT; kk++) att_load_q_frag<LD>(qf[QREG ? kk : 0], Qs, warp, lane, kk);
    }

    float o[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; j++) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
    // row halves r = 0, 1: accumulator elements 2r, 2r + 1, row ltx2_mma_c_row(lane, 2r)
    float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f};

    for (int64_t t = t_begin; t < t_end; t++) {
        const int stage = (int)((t - t_begin) & 1);
        if (t + 1 < t_end) {
            // The other stage was last read in iteration t-1, which ended with a barrier.
            att_load_tile<D, BN>(Ks + (stage ^ 1) * BN * LD, kg, (t + 1) * BN, p.Skv, ldkv);
            att_load_tile<D, BN>(Vs + (stage ^ 1) * BN * LD, vg, (t + 1) * BN, p.Skv, ldkv);
        }
        ltx2_cp_async_commit();
        ltx2_cp_async_wait<1>(); // tile t landed
        __syncthreads();
        const bf16 *Kt = Ks + stage * BN * LD, *Vt = Vs + stage * BN * LD;

        // S = Q K^T: K tile is [key][d] (d contiguous) = the B operand's [n][k] form.
        float s[NT][4];
#pragma unroll
        for (int j = 0; j < NT; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < KT; kk++) {
            if (!QREG) att_load_q_frag<LD>(qf[0], Qs, warp, lane, kk);
            const uint32_t *qa = qf[QREG ? kk : 0];
#pragma unroll
            for (int np = 0; np < NT / 2; np++) {
                uint32_t bfr[4];
                ltx2_ldmatrix_x4(bfr, Kt + ltx2_mma_smem_off(np * 16 + ltx2_mma_lm_b_nk_row(lane),
                                                             kk * 16 + ltx2_mma_lm_b_nk_col(lane), LD));
#pragma unroll
                for (int nt = 0; nt < 2; nt++)
                    ltx2_mma_bf16(s[2 * np + nt], qa, bfr[ltx2_mma_lm_b_reg(nt, 0)], bfr[ltx2_mma_lm_b_reg(nt, 1)]);
            }
        }

        // Causal/window tiles that are not wholly visible to every row of the CTA are masked per
        // element, from each row half's (tile start - row) offset.
        int key_minus_row[2] = {0, 0};
        bool edge = false;
        if (MASKS) {
            const int64_t k0 = t * BN, q_last = q0 + ATT_BM - 1;
            edge = (p.causal && k0 + BN - 1 > q0) || (win > 0 && q_last - k0 >= win);
#pragma unroll
            for (int r = 0; r < 2; r++) key_minus_row[r] = (int)(k0 - (q0 + warp * 16 + ltx2_mma_c_row(lane, 2 * r)));
        }
        // Scale into log2 units; masked keys and keys past Skv get -inf (weight 0).
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int64_t key = t * BN + j * 8 + ltx2_mma_c_col(lane, e);
                bool keep = key < p.Skv;
                if (keep && mask && !all_masked) keep = mask[key] != 0;
                if (MASKS && edge) {
                    // key - query in 32 bits (|difference| < Skv): fewer live registers at d 256
                    const int rel = key_minus_row[e >> 1] + j * 8 + ltx2_mma_c_col(lane, e);
                    if ((p.causal && rel > 0) || (win > 0 && -rel >= win)) keep = false;
                }
                s[j][e] = !keep ? -INFINITY : (all_masked ? 0.0f : s[j][e] * p.scale_log2);
            }

        // Online softmax, per row half r (elements 2r, 2r+1). A row lives in the 4 lanes of a
        // quad, so max/sum reduce with the two xor-shuffles LTX2_MMA_ROW_XOR_1/2.
#pragma unroll
        for (int r = 0; r < 2; r++) {
            float mx = -INFINITY;
#pragma unroll
            for (int j = 0; j < NT; j++) mx = fmaxf(mx, fmaxf(s[j][2 * r], s[j][2 * r + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, LTX2_MMA_ROW_XOR_1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, LTX2_MMA_ROW_XOR_2));
            const float m_new = fmaxf(m_run[r], mx);
            // A row with no live key yet keeps m = -inf; subtract 0 then so exp2(-inf) = 0, not NaN.
            const float base = m_new == -INFINITY ? 0.0f : m_new;
            const float alpha = exp2f(m_run[r] - base);
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < NT; j++) {
                s[j][2 * r] = exp2f(s[j][2 * r] - base);
                s[j][2 * r + 1] = exp2f(s[j][2 * r + 1] - base);
                sum += s[j][2 * r] + s[j][2 * r + 1];
            }
            l_run[r] = l_run[r] * alpha + sum; // this lane's partial; quad-reduced at the end
            m_run[r] = m_new;
#pragma unroll
            for (int j = 0; j < D / 8; j++) {
                o[j][2 * r] *= alpha;
                o[j][2 * r + 1] *= alpha;
            }
        }

        // O += P V. The S accumulators of n-tiles 2kk, 2kk+1 are exactly the A fragment of keys
        // 16kk..16kk+15 (ltx2_mma_a_from_c_*); V tile [key][d] is the B operand's [k][n] form,
        // loaded with .trans.
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
            uint32_t pa[4];
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const float *c = s[2 * kk + ltx2_mma_a_from_c_tile(r)] + ltx2_mma_a_from_c_elem(r);
                pa[r] = ltx2_pack_bf16(c[0], c[1]);
            }
#pragma unroll
            for (int dp = 0; dp < D / 16; dp++) {
                uint32_t bfr[4];
                ltx2_ldmatrix_x4_trans(bfr, Vt + ltx2_mma_smem_off(kk * 16 + ltx2_mma_lm_b_kn_row(lane),
                                                                   dp * 16 + ltx2_mma_lm_b_kn_col(lane), LD));
#pragma unroll
                for (int nt = 0; nt < 2; nt++)
                    ltx2_mma_bf16(o[2 * dp + nt], pa, bfr[ltx2_mma_lm_b_reg(nt, 0)],
                                  bfr[ltx2_mma_lm_b_reg(nt, 1)]);
            }
        }
        __syncthreads(); // everyone is done with this stage before it is refilled
    }

#pragma unroll
    for (int r = 0; r < 2; r++) {
        l_run[r] += __shfl_xor_sync(0xffffffffu, l_run[r], LTX2_MMA_ROW_XOR_1);
        l_run[r] += __shfl_xor_sync(0xffffffffu, l_run[r], LTX2_MMA_ROW_XOR_2);
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const int64_t qi = q0 + warp * 16 + ltx2_mma_c_row(lane, 2 * r);
        if (qi >= p.Sq) continue;
        // l > 0 unless the row saw no key at all: with empty_zero it gives 0 (otherwise every
        // row has a live key: Skv >= 1 and all-masked rows are uniform)
        const float inv_l = l_run[r] > 0.0f ? 1.0f / l_run[r] : 0.0f;
        bf16 *orow = p.out + (b * p.Sq + qi) * ld + h * D;
#pragma unroll
        for (int j = 0; j < D / 8; j++)
            *reinterpret_cast<__nv_bfloat162 *>(orow + j * 8 + ltx2_mma_c_col(lane, 2 * r)) =
                __floats2bfloat162_rn(o[j][2 * r] * inv_l, o[j][2 * r + 1] * inv_l);
    }
}

// Pre-pass, one warp per token row of x [rows, H*D]: inv_rms[row] = rsqrt(mean(x^2) + eps) when
// inv_out is set; y (when set) = rope(x * inv_rms * w) as bf16 (norm skipped when w is NULL). A
// lane takes V elements of each half-head (split), V elements (interleaved: V/2 pairs) or V
// elements (no RoPE) at a time: V = 8 is one 16-byte access per operand (att_prep_width says when
// the pointers and head dim allow it); V = 1 (2 interleaved) one element. The arithmetic per
// element is att_q_pair's whatever V is; only the order of the squares' sum differs between widths.
template <int V>
__global__ void att_prep_kernel(const bf16 *x, bf16 *y, float *inv_out, const bf16 *w, float eps, int rope,
                                const float *cos_t, const float *sin_t, int64_t rows, int64_t S, int64_t H,
                                int64_t d) {
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * ATT_PREP_WARPS + (threadIdx.x >> 5);
    if (row >= rows) return;
    const int64_t D = H * d;
    const bf16 *xr = x + row * D;
    float inv = 1.0f;
    if (w) {
        float ss = 0.0f;
        for (int64_t c = (int64_t)lane * V; c < D; c += 32 * V) {
            float v[V];
            ltx2_load<V>(xr + c, v);
#pragma unroll
            for (int j = 0; j < V; j++) ss += v[j] * v[j];
        }
        ss = ltx2_warp_sum(ss);
        inv = rsqrtf(ss / (float)D + eps);
        if (inv_out && lane == 0) inv_out[row] = inv;
    }
    if (!y) return;
    const int64_t b = row / S, t = row % S;
    bf16 *yr = y + row * D;
    if (rope == LTX2_KROPE_SPLIT) {
        // V pairs (c0 + j, c0 + j + d/2) of one head: d/2 is a multiple of V
        const int64_t half = d / 2;
        for (int64_t g = lane; g < D / 2 / V; g += 32) {
            const int64_t pp = g * V, head = pp / half, i = pp - head * half, c0 = head * d + i, c1 = c0 + half;
            float a[V], bb[V], cs[V], sn[V];
            ltx2_load<V>(xr + c0, a);
            ltx2_load<V>(xr + c1, bb);
            if (w) {
                float wa[V], wb[V];
                ltx2_load<V>(w + c0, wa);
                ltx2_load<V>(w + c1, wb);
#pragma unroll
                for (int j = 0; j < V; j++) {
                    a[j] = a[j] * inv * wa[j];
                    bb[j] = bb[j] * inv * wb[j];
                }
            }
            const int64_t ti = ((b * H + head) * S + t) * half + i;
            ltx2_load_f32v<V>(cos_t + ti, cs);
            ltx2_load_f32v<V>(sin_t + ti, sn);
#pragma unroll
            for (int j = 0; j < V; j++) ltx2_rope_rotate(a[j], bb[j], cs[j], sn[j], cs[j], sn[j]);
            ltx2_store<V>(yr + c0, a);
            ltx2_store<V>(yr + c1, bb);
        }
        return;
    }
    // interleaved (pairs 2p, 2p + 1, each element its own table entry) or no RoPE: V elements
    for (int64_t g = lane; g < D / V; g += 32) {
        const int64_t c = g * V;
        float v[V];
        ltx2_load<V>(xr + c, v);
        if (w) {
            float wv[V];
            ltx2_load<V>(w + c, wv);
#pragma unroll
            for (int j = 0; j < V; j++) v[j] = v[j] * inv * wv[j];
        }
        if (rope == LTX2_KROPE_INTERLEAVED) {
            float cs[V], sn[V];
            ltx2_load_f32v<V>(cos_t + row * D + c, cs);
            ltx2_load_f32v<V>(sin_t + row * D + c, sn);
#pragma unroll
            for (int j = 0; j + 1 < V; j += 2) ltx2_rope_rotate(v[j], v[j + 1], cs[j], sn[j], cs[j + 1], sn[j + 1]);
        }
        ltx2_store<V>(yr + c, v);
    }
}

// Elements a pre-pass lane takes at a time: 8 (16-byte accesses) when d/2 holds whole groups of 8 and
// every operand is 16-byte aligned, else 2 for interleaved pairs and 1 otherwise.
#define ATT_PREP_VEC 8
static int att_prep_width(const void *x, const void *y, const void *w, int rope, const float *cos_t,
                          const float *sin_t, int64_t d) {
    const bool tables = rope == LTX2_KROPE_NONE || (ltx2_k_aligned16(cos_t) && ltx2_k_aligned16(sin_t));
    if ((d / 2) % ATT_PREP_VEC == 0 && ltx2_k_aligned16(x) && (!y || ltx2_k_aligned16(y)) &&
        (!w || ltx2_k_aligned16(w)) && tables)
        return ATT_PREP_VEC;
    return rope == LTX2_KROPE_INTERLEAVED ? 2 : 1;
}

// The pre-pass over `rows` token rows, at att_prep_width's width.
static void att_prep_launch(cudaStream_t st, const bf16 *x, bf16 *y, float *inv_out, const bf16 *w, float eps,
                            int rope, const float *cos_t, const float *sin_t, int64_t rows, int64_t S, int64_t H,
                            int64_t d) {
    const unsigned grid = (unsigned)((rows + ATT_PREP_WARPS - 1) / ATT_PREP_WARPS), block = ATT_PREP_WARPS * 32;
    switch (att_prep_width(x, y, w, rope, cos_t, sin_t, d)) {
    case ATT_PREP_VEC:
        ltx2_launch<att_prep_kernel<ATT_PREP_VEC>>(grid, block, 0, st, x, y, inv_out, w, eps, rope, cos_t, sin_t, rows,
                                                   S, H, d);
        break;
    case 2:
        ltx2_launch<att_prep_kernel<2>>(grid, block, 0, st, x, y, inv_out, w, eps, rope, cos_t, sin_t, rows, S, H, d);
        break;
    default:
        ltx2_launch<att_prep_kernel<1>>(grid, block, 0, st, x, y, inv_out, w, eps, rope, cos_t, sin_t, rows, S, H, d);
    }
}

// Key-mask bits for the wgmma kernel, one thread per word: bit j of word w of batch b is key
// (w % tile words) * 32 + j of tile w / tile words (att90_layout.h); keys past Skv are 0.
__global__ void att_mask_bits_kernel(const uint8_t *mask, uint32_t *bits, int64_t B, int64_t Skv, int64_t words) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B * words) return;
    const int64_t b = i / words, k0 = (i % words) * 32;
    const uint8_t *m = mask + b * Skv;
    uint32_t w = 0;
    for (int j = 0; j < 32; j++)
        if (k0 + j < Skv && m[k0 + j]) w |= 1u << j;
    bits[i] = w;
}

static bool att_needs_prep(const ltx2_k_attn_args *a) { return a->q_norm || a->rope != LTX2_KROPE_NONE; }
// Head dims the tensor-core kernels take (mma.sync and wgmma alike); others run attention_small.cu.
static bool att_tensor_core_d(int64_t d) { return d == 64 || d == 128 || d == 256; }

// The workspace of one launch, carved in this order, each part on an LTX2_KATTN_WS_ALIGN boundary (a
// part absent is 0 bytes): K' normalised/rotated; q's per-token inverse RMS (a kernel that
// normalises Q itself); Q' normalised/rotated (the wgmma kernel's pre-pass); the packed key mask.
struct att_ws {
    size_t k2, q_inv, q2, bits;
    att_f8_ws f8; // the e4m3 pre-pass's parts, after the others (total 0 without fp8)
    size_t total;
};

static int att_check(const ltx2_k_attn_args *a);
static int att_choose(const ltx2_k_attn_args *a, const att_params &p);
static att_params att_params_of(const ltx2_k_attn_args *a);

static att_ws att_ws_of(const ltx2_k_attn_args *a, int pick) {
    att_ws w;
    memset(&w, 0, sizeof w);
    const bool prepass = pick == LTX2_KATTN_WGMMA && a->prep != LTX2_KATTN_PREP_IN_KERNEL;
    const size_t q_bytes = (size_t)(a->B * a->Sq * a->heads * a->head_dim) * sizeof(bf16);
    if (att_needs_prep(a)) {
        w.k2 = ws_round((size_t)(a->B * a->Skv * a->heads * a->head_dim) * sizeof(bf16));
        if (prepass)
            w.q2 = ws_round(q_bytes);
        else if (a->q_norm)
            w.q_inv = ws_round((size_t)(a->B * a->Sq) * sizeof(float));
    }
    if (prepass && a->key_mask) w.bits = ws_round((size_t)(a->B * att90_mask_words(a->Skv)) * sizeof(uint32_t));
    if (a->fp8) {
        const int64_t kvh = a->kv_heads > 0 ? a->kv_heads : a->heads;
        w.f8 = att_f8_ws_of(a->B, a->Sq, a->Skv, a->heads, kvh);
    }
    w.total = w.k2 + w.q_inv + w.q2 + w.bits + w.f8.total;
    return w;
}

extern "C" size_t ltx2_k_attention_workspace(const ltx2_k_attn_args *a) {
    if (att_check(a)) return 0; // ltx2_k_attention refuses it before touching the workspace
    const int pick = att_choose(a, att_params_of(a));
    return pick < 0 ? 0 : att_ws_of(a, pick).total;
}

// Q tile plus two stages of K and V tiles: 45 KB at d = 64, 85 KB at 128, 99 KB at 256 (32-key
// tiles), all under the 163 KB an sm_80 block may have.
template <int D, bool MASKS> static int att_launch_t(cudaStream_t st, const att_params &p, int64_t B, int64_t Sq) {
    const size_t smem = (size_t)(ATT_BM + 4 * att_bn(D)) * (D + ATT_PAD) * sizeof(bf16);
    cudaError_t e =
        cudaFuncSetAttribute(att_fwd_kernel<D, MASKS>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;
    dim3 grid((unsigned)((Sq + ATT_BM - 1) / ATT_BM), (unsigned)p.H, (unsigned)B);
    ltx2_launch<att_fwd_kernel<D, MASKS>>(grid, ATT_THREADS, smem, st, p);
    LTX2_K_RETURN_LAUNCH();
}

template <int D> static int att_launch(cudaStream_t st, const att_params &p, int64_t B, int64_t Sq, bool masks) {
    return masks ? att_launch_t<D, true>(st, p, B, Sq) : att_launch_t<D, false>(st, p, B, Sq);
}

static bool att_gemma_masks(const ltx2_k_attn_args *a) {
    return (a->kv_heads > 0 && a->kv_heads != a->heads) || a->causal || a->window > 0 || a->empty_zero || a->blocks;
}

// The argument checks of a launch: 0, or the error it is refused with.
static int att_check(const ltx2_k_attn_args *a) {
    if (!a || !a->q || !a->k || !a->v || !a->out) LTX2_K_BAD_ARG();
    if (a->head_dim < 2 || a->head_dim > ATT_SMALL_MAX_D || a->head_dim % 2) LTX2_K_BAD_ARG();
    if (a->B < 0 || a->Sq < 0 || a->Skv < 1 || a->heads < 1 || a->heads > 65535 || a->B > 65535) LTX2_K_BAD_ARG();
    if (!ltx2_k_aligned16(a->q) || !ltx2_k_aligned16(a->k) || !ltx2_k_aligned16(a->v) || !ltx2_k_aligned16(a->out))
        LTX2_K_BAD_ARG();
    if (!a->q_norm != !a->k_norm) LTX2_K_BAD_ARG();
    if (a->rope < LTX2_KROPE_NONE || a->rope > LTX2_KROPE_INTERLEAVED) LTX2_K_BAD_ARG();
    if (a->rope != LTX2_KROPE_NONE && (!a->q_cos || !a->q_sin || !a->k_cos || !a->k_sin)) LTX2_K_BAD_ARG();
    if ((a->Sq + ATT_BM - 1) / ATT_BM > INT32_MAX) LTX2_K_BAD_ARG(); // gridDim.x limit
    if (a->impl < LTX2_KATTN_AUTO || a->impl > LTX2_KATTN_WGMMA) LTX2_K_BAD_ARG();
    if (a->prep < LTX2_KATTN_PREP_AUTO || a->prep > LTX2_KATTN_PREP_IN_KERNEL) LTX2_K_BAD_ARG();
    const int64_t kvh = a->kv_heads > 0 ? a->kv_heads : a->heads;
    if (a->kv_heads < 0 || a->window < 0 || a->heads % kvh) LTX2_K_BAD_ARG();
    if (a->blocks && !a->causal) LTX2_K_BAD_ARG(); // blocks widen a causal mask
    if ((a->causal || a->window > 0) && a->Sq != a->Skv) LTX2_K_BAD_ARG();
    if (att_gemma_masks(a) && att_needs_prep(a)) LTX2_K_BAD_ARG(); // Gemma normalises and rotates q, k itself
    if (a->fp8 && (a->fp8 != 1 || a->head_dim != LTX2_KATTN_FP8_HEAD_DIM || a->causal || a->window > 0 ||
                   a->empty_zero || a->blocks ||
                   a->impl == LTX2_KATTN_MMA_SYNC || a->prep != LTX2_KATTN_PREP_AUTO))
        LTX2_K_BAD_ARG();
    return 0;
}

// The kernel a checked launch runs (LTX2_KATTN_MMA_SYNC, _WGMMA or _PER_ROW), or
// cudaErrorNotSupported as a negative value when its forced impl cannot take it. The per-row
// kernel: head dims the tensor-core kernels lack, causal/windowed rows that may each be empty and
// are then averaged over every key (no empty_zero), and image blocks. The wgmma kernel takes the
// rest (head dims 64, 128, 256, Gemma's other masks) on a 9.x device with the sm_90a code and a
// shape inside its TMA range; AUTO picks it as ATT_AUTO_PICKS_WGMMA(_GEMMA) say.
static int att_choose(const ltx2_k_attn_args *a, const att_params &p) {
    const bool rows_averaged = (a->causal || a->window > 0) && !a->empty_zero;
    const bool small = !att_tensor_core_d(a->head_dim) || rows_averaged || a->blocks;
    const bool wgmma_ok = !small && att90_shape_ok(p, a->B, a->head_dim) && att90_available();
    if (a->impl == LTX2_KATTN_WGMMA || a->fp8) return wgmma_ok ? LTX2_KATTN_WGMMA : -(int)cudaErrorNotSupported;
    if (small) return LTX2_KATTN_PER_ROW;
    const bool learned_later = att_gemma_masks(a) || a->head_dim > 128;
    const bool auto_picks = learned_later ? ATT_AUTO_PICKS_WGMMA_GEMMA : ATT_AUTO_PICKS_WGMMA;
    if (a->impl == LTX2_KATTN_AUTO && wgmma_ok && auto_picks) return LTX2_KATTN_WGMMA;
    return LTX2_KATTN_MMA_SYNC;
}

static att_params att_params_of(const ltx2_k_attn_args *a) {
    att_params p;
    p.q = (const bf16 *)a->q;
    p.k = (const bf16 *)a->k;
    p.v = (const bf16 *)a->v;
    p.out = (bf16 *)a->out;
    p.Sq = a->Sq;
    p.Skv = a->Skv;
    p.H = a->heads;
    p.scale_log2 = a->scale * ATT_LOG2E;
    p.mask = a->key_mask;
    p.mask_bits = nullptr;
    p.q_inv_rms = nullptr;
    p.q_norm = (const bf16 *)a->q_norm;
    p.rope = a->rope;
    p.q_cos = a->q_cos;
    p.q_sin = a->q_sin;
    p.Hkv = a->kv_heads > 0 ? a->kv_heads : a->heads;
    p.causal = a->causal;
    p.window = a->window;
    p.empty_zero = a->empty_zero;
    p.blocks = a->blocks;
    p.fp8 = 0; // att_f8_prepass sets it and the rest
    p.q8 = p.k8 = p.vt8 = nullptr;
    p.q_scale = p.k_scale = p.v_scale = p.v_mean = nullptr;
    p.skv_pad = 0;
    return p;
}

extern "C" int ltx2_k_attention_pick(const ltx2_k_attn_args *a) {
    const int rc = att_check(a);
    if (rc) return -rc;
    return att_choose(a, att_params_of(a));
}

extern "C" int ltx2_k_attention(void *stream, const ltx2_k_attn_args *a) {
    const int rc = att_check(a);
    if (rc) return rc;
    if (a->B * a->Sq == 0) return 0;
    cudaStream_t st = (cudaStream_t)stream;
    const bool gemma_masks = att_gemma_masks(a);
    att_params p = att_params_of(a);
    // Path choice before any work is queued, so a forced path that cannot run leaves nothing behind.
    const int pick = att_choose(a, p);
    if (pick < 0) return -pick;

    const att_ws ws = att_ws_of(a, pick);
    if (ws.total) {
        if (!a->workspace || a->workspace_bytes < ws.total || ((uintptr_t)a->workspace % LTX2_KATTN_WS_ALIGN) != 0)
            LTX2_K_BAD_ARG();
        char *base = (char *)a->workspace;
        bf16 *k2 = ws.k2 ? (bf16 *)base : nullptr;
        float *q_inv = ws.q_inv ? (float *)(base + ws.k2) : nullptr;
        bf16 *q2 = ws.q2 ? (bf16 *)(base + ws.k2 + ws.q_inv) : nullptr;
        uint32_t *bits = ws.bits ? (uint32_t *)(base + ws.k2 + ws.q_inv + ws.q2) : nullptr;
        const int64_t kr = a->B * a->Skv, qr = a->B * a->Sq;
        const unsigned prep_block = ATT_PREP_WARPS * 32;
        if (k2) {
            att_prep_launch(st, (const bf16 *)a->k, k2, nullptr, (const bf16 *)a->k_norm, a->norm_eps, a->rope, a->k_cos,
                            a->k_sin, kr, a->Skv, a->heads, a->head_dim);
            p.k = k2;
        }
        // Q' is Q's prologue done once for all key tiles: the same arithmetic as att_q_pair (norm,
        // then RoPE, in fp32, rounded to bf16 once), so the kernel sees the same bits either way.
        if (q_inv || q2)
            att_prep_launch(st, (const bf16 *)a->q, q2, q_inv, (const bf16 *)a->q_norm, a->norm_eps,
                            q2 ? a->rope : LTX2_KROPE_NONE, a->q_cos, a->q_sin, qr, a->Sq, a->heads, a->head_dim);
        if (q2) {
            p.q = q2;
            p.rope = LTX2_KROPE_NONE;
        }
        p.q_inv_rms = q_inv;
        if (bits) {
            const int64_t words = att90_mask_words(a->Skv), n = a->B * words;
            ltx2_launch<att_mask_bits_kernel>((unsigned)((n + prep_block - 1) / prep_block), prep_block, 0, st,
                                              a->key_mask, bits, a->B, a->Skv, words);
            p.mask_bits = bits;
        }
        if (ws.f8.total) {
            const int rc8 = att_f8_prepass(st, p, a->B, base + ws.k2 + ws.q_inv + ws.q2 + ws.bits, ws.f8);
            if (rc8) return rc8;
        }
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return (int)e;
    }
    if (pick == LTX2_KATTN_PER_ROW) return att_small_launch(st, p, a->B, a->head_dim);
    if (pick == LTX2_KATTN_WGMMA) return att90_launch(st, p, a->B, a->head_dim);
    if (a->head_dim == 64) return att_launch<64>(st, p, a->B, a->Sq, gemma_masks);
    if (a->head_dim == 128) return att_launch<128>(st, p, a->B, a->Sq, gemma_masks);
    return att_launch<256>(st, p, a->B, a->Sq, gemma_masks);
}
