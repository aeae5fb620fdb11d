// The e4m3 attention's pre-pass (ltx2_k_attn_args.fp8): Q, K and V (bf16, already normalised and
// rotated when the launch asks for it) onto e4m3 with scales the wgmma kernel folds back for free:
//  - Q: a scale per (token, head) row of d, applied to that query row's scores (the softmax's
//    per-row multiplier);
//  - K: a scale per (batch, kv head, 128-key tile), one scalar a tile, same multiplier;
//  - V: a scale per (batch, kv head, channel) over every key, applied to O's columns at the end.
// A group's absolute maximum maps onto e4m3's largest value (scale = amax / 448, codes
// e4m3(x * 448 / amax), round to nearest even), so nothing saturates. V is written transposed
// (keys contiguous: 8-bit wgmma operands must be K-major) with the keys of each group of 32 in the
// order the P fragment needs (att90_f8_vperm). src/cpu/attention_fp8.c quantises the same way.
// Three launches: Q rows; K tiles with each V tile's per-channel maxima; V^T tiles.
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

// K tile (blockIdx.x) of kv head blockIdx.y, batch blockIdx.z: its scale and codes, and the V
// tile's per-channel absolute maxima into vmax [B, Hkv, tiles, 128]. Rows past Skv count as 0.
__global__ void att_f8_k_kernel(const bf16 *k, const bf16 *v, uint8_t *k8, float *ks, float *vmax, int64_t Skv,
                                int64_t Hkv) {
    __shared__ float red[32];
    __shared__ float vcol[ATT_F8_TILE_THREADS / A90_F8_D][A90_F8_D];
    const int64_t t = blockIdx.x, hk = blockIdx.y, b = blockIdx.z, tiles = gridDim.x;
    const int64_t ld = Hkv * A90_F8_D, key0 = t * A90_F8_BN;
    const int tid = threadIdx.x;
    float x[ATT_F8_CHUNKS_PER_THREAD][8];
    float amax = 0.0f;
#pragma unroll
    for (int c = 0; c < ATT_F8_CHUNKS_PER_THREAD; c++) {
        const int chunk = tid + c * ATT_F8_TILE_THREADS, r = chunk / ATT_F8_ROW_CHUNKS, col = chunk % ATT_F8_ROW_CHUNKS * 8;
        const int64_t key = key0 + r;
        if (key < Skv)
            ltx2_load<8>(k + (b * Skv + key) * ld + hk * A90_F8_D + col, x[c]);
        else
            for (int j = 0; j < 8; j++) x[c][j] = 0.0f;
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
        uint2 w;
        w.x = att_f8_pack4(x[c], inv);
        w.y = att_f8_pack4(x[c] + 4, inv);
        *reinterpret_cast<uint2 *>(k8 + (b * Skv + key) * ld + hk * A90_F8_D + col) = w;
    }
    if (tid == 0) ks[(b * Hkv + hk) * tiles + t] = att_f8_scale(amax);
    // V: channel tid % 128 over the tile's rows tid / 128, tid / 128 + 2, ... (coalesced rows)
    const int ch = tid % A90_F8_D, part = tid / A90_F8_D, parts = ATT_F8_TILE_THREADS / A90_F8_D;
    float m = 0.0f;
    for (int r = part; r < A90_F8_BN && key0 + r < Skv; r += parts)
        m = fmaxf(m, fabsf(__bfloat162float(v[(b * Skv + key0 + r) * ld + hk * A90_F8_D + ch])));
    vcol[part][ch] = m;
    __syncthreads();
    if (part == 0) {
        for (int j = 1; j < parts; j++) m = fmaxf(m, vcol[j][ch]);
        vmax[((b * Hkv + hk) * tiles + t) * A90_F8_D + ch] = m;
    }
}

// V^T tile (blockIdx.x) of kv head blockIdx.y, batch blockIdx.z: row d of vt8 [B, Hkv*128,
// skv_pad] holds, at byte key0 + 32g + k, channel d of key key0 + 32g + att90_f8_vperm(k) (0 past
// Skv). Block 0 of each (batch, head) also writes the channels' scales.
__global__ void att_f8_vt_kernel(const bf16 *v, const float *vmax, uint8_t *vt8, float *vs, int64_t Skv, int64_t Hkv,
                                 int64_t skv_pad) {
    __shared__ bf16 tile[A90_F8_BN][A90_F8_D + 8]; // +8: rows 16 bytes apart in bank terms
    __shared__ float inv[A90_F8_D];
    const int64_t t = blockIdx.x, hk = blockIdx.y, b = blockIdx.z, tiles = gridDim.x;
    const int64_t ld = Hkv * A90_F8_D, key0 = t * A90_F8_BN;
    const int tid = threadIdx.x;
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
                const int pos = 16 * c + 4 * j + e;
                x[e] = __bfloat162float(tile[pos / 32 * 32 + att90_f8_vperm(pos % 32)][d]);
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
    return w;
}

int att_f8_prepass(cudaStream_t st, att_params &p, int64_t B, char *ws, const att_f8_ws &w) {
    uint8_t *q8 = (uint8_t *)ws, *k8 = q8 + w.q8 + w.qs, *vt8 = k8 + w.k8 + w.ks;
    float *qs = (float *)(q8 + w.q8), *ks = (float *)(k8 + w.k8), *vmax = (float *)(vt8 + w.vt8),
          *vs = (float *)((char *)vmax + w.vmax);
    const int64_t tiles = att90_f8_tiles(p.Skv), rows = B * p.Sq * p.H;
    if (rows > 0)
        ltx2_launch<att_f8_q_kernel>((unsigned)((rows + ATT_F8_Q_WARPS - 1) / ATT_F8_Q_WARPS), ATT_F8_Q_WARPS * 32, 0,
                                     st, p.q, q8, qs, rows);
    const dim3 grid((unsigned)tiles, (unsigned)p.Hkv, (unsigned)B);
    ltx2_launch<att_f8_k_kernel>(grid, ATT_F8_TILE_THREADS, 0, st, p.k, p.v, k8, ks, vmax, p.Skv, p.Hkv);
    ltx2_launch<att_f8_vt_kernel>(grid, ATT_F8_TILE_THREADS, 0, st, p.v, (const float *)vmax, vt8, vs, p.Skv, p.Hkv,
                                  tiles * (int64_t)A90_F8_BN);
    p.fp8 = 1;
    p.q8 = q8;
    p.k8 = k8;
    p.vt8 = vt8;
    p.q_scale = qs;
    p.k_scale = ks;
    p.v_scale = vs;
    p.skv_pad = tiles * A90_F8_BN;
    LTX2_K_RETURN_LAUNCH();
}
