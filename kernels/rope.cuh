// RoPE and QK-norm arithmetic shared by the standalone RoPE kernel and the attention kernels,
// written to match src/cpu/rope.c operation by operation (products first, then the sum).
// Table layouts (ltx2_cpu_rope_tables): split [B, H, S, d/2] pairs element i of a head with
// i + d/2 and both use entry i; interleaved [B, S, H*d] pairs 2i with 2i+1, each with its own
// entry (the tables repeat the angle).
#ifndef LTX2_KERNELS_ROPE_CUH
#define LTX2_KERNELS_ROPE_CUH

#include <stdint.h>

// Column offsets (inside one token row of H*d) of pair p (p < H*d/2) and the table offsets of
// its two elements, relative to the token's table row. Split tables: the token's row is
// ((b*H + h)*S + t)*(d/2); the caller adds that per head, so split returns i (the in-head
// index) and the head.
struct ltx2_rope_pair {
    int64_t c0, c1;  // element columns in the token row
    int64_t t0, t1;  // table entries for c0 and c1 (split: in-head index, same for both)
    int64_t head;
};

__device__ __forceinline__ ltx2_rope_pair ltx2_rope_pair_of(int64_t p, int64_t head_dim, bool interleaved) {
    ltx2_rope_pair r;
    if (interleaved) {
        r.c0 = 2 * p;
        r.c1 = 2 * p + 1;
        r.t0 = r.c0;
        r.t1 = r.c1;
        r.head = r.c0 / head_dim;
    } else {
        const int64_t half = head_dim / 2;
        r.head = p / half;
        const int64_t i = p - r.head * half;
        r.c0 = r.head * head_dim + i;
        r.c1 = r.c0 + half;
        r.t0 = r.t1 = i;
    }
    return r;
}

// (a, b) -> (a c0 - b s0, b c1 + a s1): the CPU reference's order of fp32 operations, each
// product and the sum rounded on its own. nvcc would otherwise contract "ra + (-s0) * b" into
// one fma (--fmad=true is its default) while the C reference (ISO C11, -ffp-contract=off) and
// torch round twice; the _rn intrinsics are never contracted.
__device__ __forceinline__ void ltx2_rope_rotate(float &a, float &b, float c0, float s0, float c1, float s1) {
    const float ra = __fmul_rn(a, c0), rb = __fmul_rn(b, c1);
    const float na = __fadd_rn(ra, __fmul_rn(-s0, b)), nb = __fadd_rn(rb, __fmul_rn(s1, a));
    a = na;
    b = nb;
}

#endif
