// The e4m3 attention's pre-pass (ltx2_k_attn_args.fp8): Q, K and V (bf16, already normalised and
// rotated when the launch asks for it) onto e4m3 with scales the wgmma kernel folds back for free:
//  - Q: a scale per (token, head) row of d, applied to that query row's scores (the softmax's
//    per-row multiplier);
//  - K: minus its per-channel mean over the keys (a constant per query row added to the scores,
//    which the softmax ignores), then a scale per (batch, kv head, 128-key tile), same multiplier;
//  - V: minus its per-channel mean (added back to O: each row's weights sum to 1), then a scale
//    per (batch, kv head, channel) over every key, applied to O's columns at the end.
// The means (SageAttention's smoothing) spend e4m3's range on what varies between tokens: a channel
// with a large offset would otherwise set the scale and leave its variation a few codes.
// A group's absolute maximum maps onto e4m3's largest value (scale = amax / 448, codes
// e4m3(x * 448 / amax), round to nearest even), so nothing saturates. V is written transposed
// (keys contiguous: 8-bit wgmma operands must be K-major) with the keys of each group of 32 in the
// order the P fragment needs (att90_f8_vperm). src/cpu/attention_fp8.c quantises the same way.
// The groups' statistics (means and maxima) are over the keys the queries see (att_f8_seen).
// Launches: Q rows; with a mask, whether each batch attends a key; K and V tile sums; K tiles with
// each V tile's per-channel maxima; V^T tiles.
#include "att90_layout.h"
#include "attention.cuh"
#include "common.cuh"
#include "fp8_layout.h"

typedef __nv_bfloat16 bf16;

// Warps of the Q kernel's blocks (a warp a (token, head) row).
#define ATT_F8_Q_WARPS 8
// Threads of the K and V^T kernels' blocks (one 128 x 128 tile a block).
#define ATT_F8_TILE_THREADS 256
// 16-byte chunks of 8 bf16 in a tile row of d = 128, and per thread of a tile block.
#define ATT_F8_ROW_CHUNKS (A90_F8_D / 8)
#define ATT_F8_CHUNKS_PER_THREAD (A90_F8_BN * ATT_F8_ROW_CHUNKS / ATT_F8_TILE_THREADS)

// The scale of a group whose absolute maximum is amax, and the factor its values are multiplied by
// before rounding (0 for an all-zero group, whose codes are then 0 whatever the scale).
__device__ __forceinline__ float att_f8_scale(float amax) { return amax > 0.0f ? amax / A90_F8_MAX : 1.0f; }
__device__ __forceinline__ float att_f8_inv(float amax) { return amax > 0.0f ? A90_F8_MAX / amax : 0.0f; }

// Four values as e4m3 codes (x0 lowest): the integer encoder of fp8_layout.h, the CPU's bits.
__device__ __forceinline__ uint32_t att_f8_pack4(const float *x, float inv) {
    return ltx2_f32_to_e4m3(x[0] * inv) | ltx2_f32_to_e4m3(x[1] * inv) << 8 | ltx2_f32_to_e4m3(x[2] * inv) << 16 |
           ltx2_f32_to_e4m3(x[3] * inv) << 24;
}

// Q: one warp per (token, head) row of 128 values, 4 a lane.
__global__ void att_f8_q_kernel(const bf16 *q, uint8_t *q8, float *qs, int64_t rows) {
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * ATT_F8_Q_WARPS + (threadIdx.x >> 5);
    if (row >= rows) return;
    float v[4];
    ltx2_load<4>(q + row * A90_F8_D + 4 * lane, v);
    float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
    amax = ltx2_warp_max(amax);
    reinterpret_cast<uint32_t *>(q8 + row * A90_F8_D)[lane] = att_f8_pack4(v, att_f8_inv(amax));
    if (lane == 0) qs[row] = att_f8_scale(amax);
}

// The keys a batch's queries see, which alone make the quantisation's statistics (so masked keys,
// the parallel DiT's padding among them, change no code): those of the key mask, or every key when
// there is no mask or the batch has no key left (its rows then average every value).
struct att_f8_seen {
    const uint8_t *mask; // this batch's [Skv] or NULL: every key
    __device__ __forceinline__ bool operator()(int64_t key) const { return !mask || mask[key]; }
};
__device__ __forceinline__ att_f8_seen att_f8_seen_of(const uint8_t *mask, const uint8_t *any, int64_t b,
                                                      int64_t Skv) {
    att_f8_seen s;
    s.mask = mask && any[b] ? mask + b * Skv : nullptr;
    return s;
}

// any[b] = whether batch b's mask attends some key (one block a batch).
__global__ void att_f8_any_kernel(const uint8_t *mask, uint8_t *any, int64_t Skv) {
    const int64_t b = blockIdx.x;
    int hit = 0;
    for (int64_t j = threadIdx.x; j < Skv; j += blockDim.x) hit |= mask[b * Skv + j] != 0;
    hit = __syncthreads_or(hit);
    if (threadIdx.x == 0) any[b] = (uint8_t)(hit != 0);
}

// Per-channel column statistics of one 128-key tile of a kv head, by 256 threads: channel tid % 128
// over the tile's rows tid / 128, tid / 128 + 2, ... (coalesced rows), the two halves combined
// through shared memory; rows past Skv or not seen are left out. SUM: the sum of x; else the
// maximum of |x - sub[channel]|. Thread tid < 128 returns its channel's value (the others 0).
template <bool SUM>
__device__ __forceinline__ float att_f8_col_stat(const bf16 *x, const float *sub, int64_t key0, int64_t Skv,
                                                  att_f8_seen seen, int64_t ld, float (*part)[A90_F8_D]) {
    const int tid = threadIdx.x, ch = tid % A90_F8_D, half = tid / A90_F8_D, halves = ATT_F8_TILE_THREADS / A90_F8_D;
    const float m = SUM ? 0.0f : sub[ch];
    float acc = 0.0f;
    for (int r = half; r < A90_F8_BN && key0 + r < Skv; r += halves) {
        if (!seen(key0 + r)) continue;
        const float v = __bfloat162float(x[(key0 + r) * ld + ch]);
        acc = SUM ? acc + v : fmaxf(acc, fabsf(v - m));
    }
    part[half][ch] = acc;
    __syncthreads();
    float out = 0.0f;
    if (half == 0) {
        out = acc;
        for (int j = 1; j < halves; j++) out = SUM ? out + part[j][ch] : fmaxf(out, part[j][ch]);
    }
    __syncthreads(); // part is reused by the caller's next statistic
    return out;
}

// The mean of each channel over the seen keys from the tiles' partial sums [tiles, 128] and seen
// counts [tiles] (tiles in order: one fixed order, so every block of a head finds the same bits),
// into mean[128] by threads < 128.
__device__ __forceinline__ void att_f8_mean(const float *psum, const float *pcnt, int64_t tiles, float *mean) {
    const int tid = threadIdx.x;
    if (tid < A90_F8_D) {
        float s = 0.0f, n = 0.0f;
        for (int64_t j = 0; j < tiles; j++) s += psum[j * A90_F8_D + tid], n += pcnt[j];
        mean[tid] = n > 0.0f ? s / n : 0.0f;
    }
    __syncthreads();
}

// Tile statistics pass: each channel's sum of K and of V over the tile's seen keys, into ksum and
// vsum [B, Hkv, tiles, 128], and (the mask being a batch's, the kv heads' blocks 0) their count into
// cnt [B, tiles] (K's and V's means are known
// only once every tile is summed).
__global__ void att_f8_sum_kernel(const bf16 *k, const bf16 *v, const uint8_t *mask, const uint8_t *any, float *ksum,
                                  float *vsum, float *cnt, int64_t Skv, int64_t Hkv) {
    __shared__ float part[ATT_F8_TILE_THREADS / A90_F8_D][A90_F8_D];
    const int64_t t = blockIdx.x, hk = blockIdx.y, b = blockIdx.z, tiles = gridDim.x;
    const int64_t ld = Hkv * A90_F8_D, off = b * Skv * ld + hk * A90_F8_D, key0 = t * A90_F8_BN;
    const att_f8_seen seen = att_f8_seen_of(mask, any, b, Skv);
    const float ks = att_f8_col_stat<true>(k + off, nullptr, key0, Skv, seen, ld, part);
    const float vs = att_f8_col_stat<true>(v + off, nullptr, key0, Skv, seen, ld, part);
    if (threadIdx.x < A90_F8_D) {
        const int64_t o = ((b * Hkv + hk) * tiles + t) * A90_F8_D + threadIdx.x;
        ksum[o] = ks;
        vsum[o] = vs;
    }
    if (hk == 0 && threadIdx.x == 0) {
        int n = 0;
        for (int r = 0; r < A90_F8_BN && key0 + r < Skv; r++) n += seen(key0 + r);
        cnt[b * tiles + t] = (float)n;
    }
}

// K tile (blockIdx.x) of kv head blockIdx.y, batch blockIdx.z: K minus its channel means (a constant
// per query row added to every score: the softmax does not see it, and e4m3 spends its range on
// what varies), its scale and codes; and the V tile's per-channel maxima of |V - V's mean| into
// vmax [B, Hkv, tiles, 128]. Rows past Skv count as 0. Block 0 of a head writes V's means.
__global__ void att_f8_k_kernel(const bf16 *k, const bf16 *v, const uint8_t *mask, const uint8_t *any,
                                const float *ksum, const float *vsum, const float *cnt, uint8_t *k8, float *ks,
                                float *vmax, float *vmean_out, int64_t Skv, int64_t Hkv) {
    __shared__ float red[32];
    __shared__ float part[ATT_F8_TILE_THREADS / A90_F8_D][A90_F8_D];
    __shared__ float kmean[A90_F8_D], vmean[A90_F8_D];
    const int64_t t = blockIdx.x, hk = blockIdx.y, b = blockIdx.z, tiles = gridDim.x;
    const int64_t ld = Hkv * A90_F8_D, key0 = t * A90_F8_BN, head = (b * Hkv + hk) * tiles * A90_F8_D;
    const int tid = threadIdx.x;
    const att_f8_seen seen = att_f8_seen_of(mask, any, b, Skv);
    att_f8_mean(ksum + head, cnt + b * tiles, tiles, kmean);
    att_f8_mean(vsum + head, cnt + b * tiles, tiles, vmean);
    float x[ATT_F8_CHUNKS_PER_THREAD][8];
    float amax = 0.0f;
#pragma unroll
    for (int c = 0; c < ATT_F8_CHUNKS_PER_THREAD; c++) {
        const int chunk = tid + c * ATT_F8_TILE_THREADS, r = chunk / ATT_F8_ROW_CHUNKS, col = chunk % ATT_F8_ROW_CHUNKS * 8;
        const int64_t key = key0 + r;
        if (key < Skv && seen(key)) {
            ltx2_load<8>(k + (b * Skv + key) * ld + hk * A90_F8_D + col, x[c]);
            for (int j = 0; j < 8; j++) x[c][j] -= kmean[col + j];
        } else { // past Skv or not seen: code 0, and no part of the scale
            for (int j = 0; j < 8; j++) x[c][j] = 0.0f;
        }
#pragma unroll
        for (int j = 0; j < 8; j++) amax = fmaxf(amax, fabsf(x[c][j]));
    }
    amax = ltx2_block_max(amax, red);
    const float inv = att_f8_inv(amax);
#pragma unroll
    for (int c = 0; c < ATT_F8_CHUNKS_PER_THREAD; c++) {
        const int chunk = tid + c * ATT_F8_TILE_THREADS, r = chunk / ATT_F8_ROW_CHUNKS, col = chunk % ATT_F8_ROW_CHUNKS * 8;
        const int64_t key = key0 + r;
        if (key >= Skv) continue;
        uint2 w; // (an unseen key's values are 0 here: code 0)
        w.x = att_f8_pack4(x[c], inv);
        w.y = att_f8_pack4(x[c] + 4, inv);
        *reinterpret_cast<uint2 *>(k8 + (b * Skv + key) * ld + hk * A90_F8_D + col) = w;
    }
    if (tid == 0) ks[(b * Hkv + hk) * tiles + t] = att_f8_scale(amax);
    const float m = att_f8_col_stat<false>(v + b * Skv * ld + hk * A90_F8_D, vmean, key0, Skv, seen, ld, part);
    if (tid < A90_F8_D) {
        vmax[head + t * A90_F8_D + tid] = m;
        if (t == 0) vmean_out[(b * Hkv + hk) * A90_F8_D + tid] = vmean[tid];
    }
}

// V^T tile (blockIdx.x) of kv head blockIdx.y, batch blockIdx.z: row d of vt8 [B, Hkv*128,
// skv_pad] holds, at byte key0 + 32g + k, channel d minus its mean for key key0 + 32g +
// att90_f8_vperm(k) (0 past Skv and for keys not seen; P's rows sum to 1 after the division by l,
// so the kernel adds the mean back to O). Block 0 of each (batch, head) also writes the channels' scales.
__global__ void att_f8_vt_kernel(const bf16 *v, const uint8_t *mask, const uint8_t *any, const float *vmax,
                                 const float *vmean, uint8_t *vt8, float *vs, int64_t Skv, int64_t Hkv,
                                 int64_t skv_pad) {
    __shared__ bf16 tile[A90_F8_BN][A90_F8_D + 8]; // +8: rows 16 bytes apart in bank terms
    __shared__ float inv[A90_F8_D], mean[A90_F8_D];
    const int64_t t = blockIdx.x, hk = blockIdx.y, b = blockIdx.z, tiles = gridDim.x;
    const int64_t ld = Hkv * A90_F8_D, key0 = t * A90_F8_BN;
    const int tid = threadIdx.x;
    const att_f8_seen seen = att_f8_seen_of(mask, any, b, Skv);
    for (int chunk = tid; chunk < A90_F8_BN * ATT_F8_ROW_CHUNKS; chunk += ATT_F8_TILE_THREADS) {
        const int r = chunk / ATT_F8_ROW_CHUNKS, col = chunk % ATT_F8_ROW_CHUNKS * 8;
        uint4 w = make_uint4(0u, 0u, 0u, 0u);
        if (key0 + r < Skv) w = *reinterpret_cast<const uint4 *>(v + (b * Skv + key0 + r) * ld + hk * A90_F8_D + col);
        *reinterpret_cast<uint4 *>(&tile[r][col]) = w;
    }
    if (tid < A90_F8_D) {
        const float *mp = vmax + (b * Hkv + hk) * tiles * A90_F8_D + tid;
        float m = 0.0f;
        for (int64_t j = 0; j < tiles; j++) m = fmaxf(m, mp[j * A90_F8_D]);
        inv[tid] = att_f8_inv(m);
        mean[tid] = vmean[(b * Hkv + hk) * A90_F8_D + tid];
        if (t == 0) vs[(b * Hkv + hk) * A90_F8_D + tid] = att_f8_scale(m);
    }
    __syncthreads();
    // 16-byte output chunks: row d, keys 16c..16c+15 of the tile (in stored order)
    for (int chunk = tid; chunk < A90_F8_D * (A90_F8_BN / 16); chunk += ATT_F8_TILE_THREADS) {
        const int d = chunk / (A90_F8_BN / 16), c = chunk % (A90_F8_BN / 16);
        uint32_t w[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float x[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int pos = 16 * c + 4 * j + e, key = pos / 32 * 32 + att90_f8_vperm(pos % 32);
                x[e] = key0 + key < Skv && seen(key0 + key) ? __bfloat162float(tile[key][d]) - mean[d] : 0.0f;
            }
            w[j] = att_f8_pack4(x, inv[d]);
        }
        *reinterpret_cast<uint4 *>(vt8 + ((b * Hkv + hk) * A90_F8_D + d) * skv_pad + key0 + 16 * c) =
            make_uint4(w[0], w[1], w[2], w[3]);
    }
}

att_f8_ws att_f8_ws_of(int64_t B, int64_t Sq, int64_t Skv, int64_t H, int64_t Hkv) {
    att_f8_ws w;
    size_t part[A90_F8_WS_PARTS];
    w.total = att90_f8_ws_parts(B, Sq, Skv, H, Hkv, LTX2_KATTN_WS_ALIGN, part);
    w.q8 = part[A90_F8_WS_Q8], w.qs = part[A90_F8_WS_QS], w.k8 = part[A90_F8_WS_K8], w.ks = part[A90_F8_WS_KS];
    w.vt8 = part[A90_F8_WS_VT8], w.vmax = part[A90_F8_WS_VMAX], w.vs = part[A90_F8_WS_VS];
    w.vmean = part[A90_F8_WS_VMEAN], w.ksum = part[A90_F8_WS_KSUM], w.vsum = part[A90_F8_WS_VSUM];
    w.cnt = part[A90_F8_WS_CNT], w.any = part[A90_F8_WS_ANY];
    return w;
}

int att_f8_prepass(cudaStream_t st, att_params &p, int64_t B, char *ws, const att_f8_ws &w) {
    uint8_t *q8 = (uint8_t *)ws, *k8 = q8 + w.q8 + w.qs, *vt8 = k8 + w.k8 + w.ks;
    float *qs = (float *)(q8 + w.q8), *ks = (float *)(k8 + w.k8), *vmax = (float *)(vt8 + w.vt8),
          *vs = (float *)((char *)vmax + w.vmax), *vmean = (float *)((char *)vs + w.vs),
          *ksum = (float *)((char *)vmean + w.vmean), *vsum = (float *)((char *)ksum + w.ksum),
          *cnt = (float *)((char *)vsum + w.vsum);
    uint8_t *any = (uint8_t *)cnt + w.cnt;
    const int64_t tiles = att90_f8_tiles(p.Skv), rows = B * p.Sq * p.H;
    if (rows > 0)
        ltx2_launch<att_f8_q_kernel>((unsigned)((rows + ATT_F8_Q_WARPS - 1) / ATT_F8_Q_WARPS), ATT_F8_Q_WARPS * 32, 0,
                                     st, p.q, q8, qs, rows);
    const dim3 grid((unsigned)tiles, (unsigned)p.Hkv, (unsigned)B);
    if (p.mask) ltx2_launch<att_f8_any_kernel>((unsigned)B, ATT_F8_TILE_THREADS, 0, st, p.mask, any, p.Skv);
    ltx2_launch<att_f8_sum_kernel>(grid, ATT_F8_TILE_THREADS, 0, st, p.k, p.v, p.mask, (const uint8_t *)any, ksum,
                                   vsum, cnt, p.Skv, p.Hkv);
    ltx2_launch<att_f8_k_kernel>(grid, ATT_F8_TILE_THREADS, 0, st, p.k, p.v, p.mask, (const uint8_t *)any,
                                 (const float *)ksum, (const float *)vsum, (const float *)cnt, k8, ks, vmax, vmean,
                                 p.Skv, p.Hkv);
    ltx2_launch<att_f8_vt_kernel>(grid, ATT_F8_TILE_THREADS, 0, st, p.v, p.mask, (const uint8_t *)any,
                                  (const float *)vmax, (const float *)vmean, vt8, vs, p.Skv, p.Hkv,
                                  tiles * (int64_t)A90_F8_BN);
    p.fp8 = 1;
    p.q8 = q8;
    p.k8 = k8;
    p.vt8 = vt8;
    p.q_scale = qs;
    p.k_scale = ks;
    p.v_scale = vs;
    p.v_mean = vmean;
    p.skv_pad = tiles * A90_F8_BN;
    LTX2_K_RETURN_LAUNCH();
}
