// Tensor-core building blocks for the sm_80+ portable path (attention, conv3d): cp.async
// 16-byte copies with zero fill, ldmatrix and mma.sync.m16n8k16 bf16 -> fp32. Fragment layouts
// are from the PTX ISA ("Matrix Fragments for mma.m16n8k16 with floating point type"); with
// g = lane / 4 and q = lane % 4 (groupID / threadID_in_group), per .b32 register (two bf16, the
// lower column or k index in the low half):
//   A (16x16, row-major), 4 regs:  reg 0 = a0,a1: (row g,   k 2q..2q+1)
//                                  reg 1 = a2,a3: (row g+8, k 2q..2q+1)
//                                  reg 2 = a4,a5: (row g,   k 2q+8..2q+9)
//                                  reg 3 = a6,a7: (row g+8, k 2q+8..2q+9)
//   B (16x8, "col"), 2 regs:       reg 0 = b0,b1: (k 2q..2q+1,   col g)
//                                  reg 1 = b2,b3: (k 2q+8..2q+9, col g)
//   C/D (16x8 fp32), 4 floats:     c0,c1: (row g,   cols 2q, 2q+1)
//                                  c2,c3: (row g+8, cols 2q, 2q+1)
// ldmatrix.m8n8.x4: lanes 8i..8i+7 give the 8 row addresses (16 bytes each) of matrix i; every
// lane receives, per matrix i, the pair at (row lane/4, cols 2*(lane%4)..+1) in reg i; with .trans
// it receives the pair at (rows 2*(lane%4)..+1, col lane/4) instead. The lane -> address maps that
// turn this into A and B operands (and the C-fragment map) are in mma_layout.h, checked against
// an emulation of both instructions by tests/test_layout_mma.c:
//   A from a row-major [16][16] tile:         lane -> (row lane%16, col 8*(lane/16)), reg r = A reg r
//   B of n-tiles 0,1 from a [n][k] tile:      lane -> (n (lane&7) + 8*(lane>>4), k 8*((lane>>3)&1))
//   B of n-tiles 0,1 from a [k][n] tile .trans: lane -> (k (lane&7) + 8*((lane>>3)&1), n 8*(lane>>4))
//   with both B forms, x4 regs 0,1 are B regs 0,1 of n-tile 0 and regs 2,3 those of n-tile 1.
#ifndef LTX2_KERNELS_MMA_CUH
#define LTX2_KERNELS_MMA_CUH

#include <cuda_bf16.h>
#include <stdint.h>

#ifdef LTX2_EMU
// CPU emulator (tests/emu/): the same instructions as per-thread queues (cp.async) and warp
// rendezvous (ldmatrix, mma) in the emulator runtime; the call site names faults.
__device__ __forceinline__ void ltx2_cp_async16(void *smem, const void *gmem, bool valid, LTX2_EMU_SITE) {
    ltx2_emu_cp_async16(smem, gmem, valid ? 16 : 0, LTX2_EMU_AT);
}
__device__ __forceinline__ void ltx2_cp_async16_ca(void *smem, const void *gmem, bool valid, LTX2_EMU_SITE) {
    ltx2_emu_cp_async16(smem, gmem, valid ? 16 : 0, LTX2_EMU_AT); // no caches here: same copy
}
__device__ __forceinline__ void ltx2_cp_async_commit() { ltx2_emu_cp_async_commit(); }
template <int N> __device__ __forceinline__ void ltx2_cp_async_wait() { ltx2_emu_cp_async_wait(N); }
__device__ __forceinline__ void ltx2_ldmatrix_x4(uint32_t r[4], const void *smem, LTX2_EMU_SITE) {
    ltx2_emu_ldmatrix_x4(r, smem, 0, LTX2_EMU_AT);
}
__device__ __forceinline__ void ltx2_ldmatrix_x4_trans(uint32_t r[4], const void *smem, LTX2_EMU_SITE) {
    ltx2_emu_ldmatrix_x4(r, smem, 1, LTX2_EMU_AT);
}
__device__ __forceinline__ void ltx2_mma_bf16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1,
                                              LTX2_EMU_SITE) {
    ltx2_emu_mma_bf16_m16n8k16(d, a, b0, b1, LTX2_EMU_AT);
}
#else
__device__ __forceinline__ uint32_t ltx2_smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

// 16-byte global -> shared copy that bypasses L1; src_bytes 0 writes 16 zero bytes (the source
// is not read but must still be a valid address).
__device__ __forceinline__ void ltx2_cp_async16(void *smem, const void *gmem, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(ltx2_smem_addr(smem)), "l"(gmem),
                 "r"(valid ? 16 : 0));
}
// The same copy allocating in L1: for gathers that read the same global bytes again soon (the
// conv3d im2col: neighbouring taps of neighbouring output rows are mostly the same voxels).
__device__ __forceinline__ void ltx2_cp_async16_ca(void *smem, const void *gmem, bool valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(ltx2_smem_addr(smem)), "l"(gmem),
                 "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void ltx2_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N> __device__ __forceinline__ void ltx2_cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ltx2_ldmatrix_x4(uint32_t r[4], const void *smem) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(ltx2_smem_addr(smem)));
}
__device__ __forceinline__ void ltx2_ldmatrix_x4_trans(uint32_t r[4], const void *smem) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(ltx2_smem_addr(smem)));
}

// d += A * B for one m16n8k16 tile (bf16 inputs, fp32 accumulators).
__device__ __forceinline__ void ltx2_mma_bf16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

#endif

// Two floats -> one .b32 of bf16 (lo in the low half = the lower column index of a fragment).
__device__ __forceinline__ uint32_t ltx2_pack_bf16(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

#endif
