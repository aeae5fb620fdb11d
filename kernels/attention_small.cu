// Attention for head dims the tensor-core kernels do not take (anything but 64, 128 and 256; the tiny
// test models have 8 and 16): one thread per (batch, head, query row) streams every key with an
// online softmax in fp32. A correctness path, not a fast one: no shared memory, no collectives, the
// q row and the output accumulator in per-thread arrays. K arrives normalised and rotated by
// ltx2_k_attention's pre-pass (as for the other kernels); Q is normalised and rotated here, in
// fp32, by the same prologue the tensor-core kernels use (att_q_pair). A row whose keys are all
// masked averages every value, like the CPU reference, or gives 0 with empty_zero. It takes
// Gemma-3's masks (grouped-query heads, causal and sliding-window key ranges) at any head dim;
// the mma.sync and wgmma kernels take them too at d = 64 / 128 / 256 except causal/windowed rows
// averaged when empty (no empty_zero) and image blocks, which only this row-at-a-time loop does.
#include "attention.cuh"
#include "common.cuh"

// Threads per block: one query row each.
#define ATT_SMALL_THREADS 128

// Key j (>= the window's start) for a query whose causal range ends at j_end and whose image block
// is bq (-1: none): inside the range or its block, and not padding.
__device__ __forceinline__ bool att_small_key(const uint8_t *mask, const int32_t *blk, int32_t bq, int64_t j,
                                              int64_t j_end) {
    return (j < j_end || (bq >= 0 && blk[j] == bq)) && (!mask || mask[j] != 0);
}

__global__ void __launch_bounds__(ATT_SMALL_THREADS) att_small_kernel(att_params p, int64_t d) {
    const int64_t i = (int64_t)blockIdx.x * ATT_SMALL_THREADS + threadIdx.x, b = blockIdx.y;
    if (i >= p.Sq * p.H) return;
    const int64_t qi = i / p.H, h = i % p.H, ld = p.H * d, ldkv = p.Hkv * d, hk = h / (p.H / p.Hkv);
    const bool il = p.rope == LTX2_KROPE_INTERLEAVED;
    const __nv_bfloat16 *qr = p.q + (b * p.Sq + qi) * ld + h * d;
    float qv[ATT_SMALL_MAX_D], acc[ATT_SMALL_MAX_D];
    for (int64_t pp = 0; pp < d / 2; pp++) {
        // the head's rotation pairs, columns relative to the head (d is even: checked)
        const ltx2_rope_pair pr = ltx2_rope_pair_of(pp, d, il);
        float a = __bfloat162float(qr[pr.c0]), bb = __bfloat162float(qr[pr.c1]);
        att_q_pair(p, b, h, qi, d, ld, il, pr, a, bb);
        qv[pr.c0] = a;
        qv[pr.c1] = bb;
    }
    for (int64_t c = 0; c < d; c++) acc[c] = 0.0f;
    const uint8_t *mask = p.mask ? p.mask + b * p.Skv : nullptr;
    // the key range causal and window leave (all keys otherwise), then the padding mask in it; an
    // image token also sees the later keys of its own block (blocks, with causal)
    const int64_t j_end = p.causal ? qi + 1 : p.Skv, j_begin = p.window > 0 && qi - p.window + 1 > 0 ? qi - p.window + 1 : 0;
    const int32_t *blk = p.blocks ? p.blocks + b * p.Sq : nullptr;
    const int32_t bq = blk ? blk[qi] : -1;
    const int64_t j_last = bq >= 0 ? p.Skv : j_end; // keys past j_end count only in qi's block
    int64_t live = 0;
    for (int64_t j = j_begin; j < j_last; j++) live += att_small_key(mask, blk, bq, j, j_end);
    __nv_bfloat16 *orow = p.out + (b * p.Sq + qi) * ld + h * d;
    if (live == 0 && p.empty_zero) {
        for (int64_t c = 0; c < d; c++) orow[c] = __float2bfloat16_rn(0.0f);
        return;
    }
    const bool all_masked = live == 0; // then every key counts, with equal scores
    float m = -INFINITY, l = 0.0f;
    for (int64_t j = 0; j < p.Skv; j++) {
        if (!all_masked && (j < j_begin || j >= j_last || !att_small_key(mask, blk, bq, j, j_end))) continue;
        const __nv_bfloat16 *kr = p.k + (b * p.Skv + j) * ldkv + hk * d;
        const __nv_bfloat16 *vr = p.v + (b * p.Skv + j) * ldkv + hk * d;
        float s = 0.0f;
        if (!all_masked) {
            for (int64_t c = 0; c < d; c++) s += qv[c] * __bfloat162float(kr[c]);
            s *= p.scale_log2;
        }
        const float mn = fmaxf(m, s), corr = exp2f(m - mn), e = exp2f(s - mn);
        l = l * corr + e;
        for (int64_t c = 0; c < d; c++) acc[c] = acc[c] * corr + e * __bfloat162float(vr[c]);
        m = mn;
    }
    const float inv = 1.0f / l; // Skv >= 1: at least one key counted
    for (int64_t c = 0; c < d; c++) orow[c] = __float2bfloat16_rn(acc[c] * inv);
}

int att_small_launch(cudaStream_t st, const att_params &p, int64_t B, int64_t head_dim) {
    dim3 grid((unsigned)((p.Sq * p.H + ATT_SMALL_THREADS - 1) / ATT_SMALL_THREADS), (unsigned)B);
    ltx2_launch<att_small_kernel>(grid, ATT_SMALL_THREADS, 0, st, p, head_dim);
    LTX2_K_RETURN_LAUNCH();
}
