// Layout arithmetic of the sm_90a wgmma/TMA attention kernel (attention_sm90.cu), plain C so
// that tests/test_layout_att90.c can check it on the CPU against an emulation written from the
// PTX ISA and CUDA driver documentation: where TMA's 128-byte swizzle puts a tile element, the
// wgmma shared-memory descriptors and their per-k16-step start addresses, the m64nNk16
// accumulator and A-fragment register maps, and the mbarrier ring's stage/parity schedule. The
// kernel computes these only through the functions below.
#ifndef LTX2_KERNELS_ATT90_LAYOUT_H
#define LTX2_KERNELS_ATT90_LAYOUT_H

#include <stdint.h>

#include "hostdev.h"

// A warpgroup's rows: the M of every wgmma.
#define A90_WG_ROWS 64
// Keys per K/V tile (bn): the N of the S = QK^T wgmma and the K extent of the PV product. 128 up
// to d = 128; at d = 256 (Gemma-3) the O accumulator alone is 128 registers a thread, so 64 keys
// (S 32 registers, P 16) keep a consumer inside its 240. A90_BN_MAX is the wider.
#define A90_BN_OF(d) ((d) > 128 ? 64 : 128)
#define A90_BN_MAX 128
// K and V ring depth.
#define A90_STAGES 2
// A tile is stored as panels of 64 bf16 columns: one 128-byte row per panel row is what a TMA
// box with 128-byte swizzle can hold, and it is the 128-byte wgmma swizzle atom's width.
#define A90_PANEL 64
#define A90_ROW_BYTES 128
// 8 rows x 128 bytes: the period of the 128-byte swizzle. Tiles start on it so descriptors need
// no base offset, and it is the stride between 8-row core-matrix groups (SBO).
#define A90_ATOM_BYTES 1024
// One k16 step of a K-major bf16 operand: 16 elements = two 16-byte chunks of a 128-byte row.
#define A90_K16_BYTES 32
// Bytes one TMA load of `rows` token rows of a d-wide head brings: d / 64 boxes of 64 x rows,
// each credited in full to the mbarrier even where rows lie past the tensor (zero-filled).
#define A90_TILE_BYTES(d, rows) ((d) / A90_PANEL * (rows) * A90_ROW_BYTES)
// Bytes between 64-column panels of a K or V tile of bn keys.
#define A90_KV_PANEL_BYTES(bn) ((bn) * A90_ROW_BYTES)
// Descriptor strides. S = QK^T, both operands K-major: SBO steps 8 rows; LBO is unused by
// swizzled K-major layouts ("assumed to be 1", i.e. 16 bytes). O += PV, V MN-major (d
// contiguous): LBO steps to the next 64-column panel of d, SBO steps 8 keys.
#define A90_QK_LBO 16
#define A90_QK_SBO A90_ATOM_BYTES
#define A90_PV_LBO(bn) A90_KV_PANEL_BYTES(bn)
#define A90_PV_SBO A90_ATOM_BYTES
// Descriptor swizzle-mode field (bits 62-63) for the 128-byte swizzle.
#define A90_DESC_SWIZZLE_128B 1ull

// Byte offset of (row, col) (col < 64) inside a 64-column panel written by TMA with 128-byte
// swizzle, for a panel starting on a 1024-byte boundary: the 16-byte chunk index is XORed with
// the row's position in its 8-row atom.
LTX2_HD uint32_t att90_swz(int row, int col) {
    return (uint32_t)(row * A90_ROW_BYTES + ((((col >> 3) ^ row) & 7) << 4) + (col & 7) * 2);
}

// Byte offset of (row, col) in a tile of 64-column panels panel_bytes apart.
LTX2_HD uint32_t att90_tile_off(int row, int col, uint32_t panel_bytes) {
    return (uint32_t)(col / A90_PANEL) * panel_bytes + att90_swz(row, col % A90_PANEL);
}

// wgmma shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format"): start address,
// leading and stride byte offsets as (x & 0x3FFFF) >> 4 in bits 0-13, 16-29, 32-45; base offset
// (bits 49-51) 0 because every tile starts on a 1024-byte swizzle period; 128-byte swizzle.
LTX2_HD uint64_t att90_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
    return (uint64_t)((addr & 0x3FFFFu) >> 4) | ((uint64_t)((lbo & 0x3FFFFu) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFFu) >> 4) << 32) | (A90_DESC_SWIZZLE_128B << 62);
}

// Start address of k16 step kk of a K-major operand whose rows start at `rows` in panel 0:
// panel kk / 4, then 32 bytes per step inside the 128-byte row (the hardware applies the
// swizzle to the resulting absolute address, as TMA did when writing).
LTX2_HD uint32_t att90_qk_addr(uint32_t rows, uint32_t panel_bytes, int kk) {
    const int steps_per_panel = A90_ROW_BYTES / A90_K16_BYTES;
    return rows + (uint32_t)(kk / steps_per_panel) * panel_bytes + (uint32_t)(kk % steps_per_panel) * A90_K16_BYTES;
}

// Start address of k16 step kk (keys 16kk..16kk+15) of the MN-major V tile at vb.
LTX2_HD uint32_t att90_pv_addr(uint32_t vb, int kk) { return vb + (uint32_t)kk * 16 * A90_ROW_BYTES; }

// m64nNk16 accumulator map: register i of lane `lane` in warp `warp` (of its warpgroup) holds
// row att90_acc_row (0..63) and column att90_acc_col (0..N-1) -- the mma.sync m16n8 C layout of
// the warp's 16 rows, repeated over the N/8 column blocks.
LTX2_HD int att90_acc_half(int i) { return (i >> 1) & 1; }
LTX2_HD int att90_acc_row(int warp, int lane, int i) { return 16 * warp + (lane >> 2) + 8 * att90_acc_half(i); }
LTX2_HD int att90_acc_col(int lane, int i) { return 8 * (i >> 2) + 2 * (lane & 3) + (i & 1); }

// S accumulator -> A fragment of PV step kk: register reg (0..3) of the fragment packs S
// registers att90_pfrag_src(kk, reg, 0) (low half) and (kk, reg, 1) (high half). Keys
// 16kk..16kk+15 are S column blocks 2kk and 2kk+1, whose (row g / g+8, col 2q..2q+1) pairs are
// exactly A's (row g / g+8, k 2q..2q+1 / 2q+8..2q+9) registers.
LTX2_HD int att90_pfrag_src(int kk, int reg, int half) { return 8 * kk + 2 * reg + half; }

// Key-mask bits (the pre-pass packs ltx2_k_attn_args.key_mask): a bit per key, 32 keys a word (key
// j in word j / 32), each batch's words padded to whole A90_BN_MAX-key tiles, so a tile of either
// width starting at key0 finds its A90_MASK_TILE_WORDS(bn) words from word key0 / 32 on.
#define A90_MASK_TILE_WORDS(bn) ((bn) / 32)
LTX2_HD int64_t att90_mask_words(int64_t Skv) {
    return (Skv + A90_BN_MAX - 1) / A90_BN_MAX * A90_MASK_TILE_WORDS(A90_BN_MAX);
}
// The mask bit of accumulator register i (column att90_acc_col(lane, i) of the tile) from the
// tile's words, each shifted right by att90_mask_shift(lane) first: column 8(i/4) + 2(lane%4) +
// i%2 lies in word i/16 at bit 8((i/4)%4) + 2(lane%4) + i%2, so what is left is a constant shift.
LTX2_HD int att90_mask_shift(int lane) { return 2 * (lane & 3); }
LTX2_HD uint32_t att90_mask_bit(const uint32_t *shifted, int i) {
    return (shifted[i >> 4] >> (8 * ((i >> 2) & 3) + (i & 1))) & 1u;
}

// ---- the e4m3 (fp8) variant, head dim 128 (attention_sm90.cu with F8; att_fp8.cu's pre-pass) ----
// Q, K and V^T (keys contiguous) are e4m3 in 128-byte rows: a k32 step of an 8-bit operand is the
// same 32 bytes as a bf16 k16 step, so att90_qk_addr and A90_QK_LBO/SBO serve S = QK^T and, with
// V^T as a K-major B, O += PV alike; d = 128 is one panel, and so is a tile of 128 keys.
#define A90_F8_D 128
#define A90_F8_BN 128
#define A90_F8_K_STEP 32
// P is multiplied by this before its e4m3 rounding and O divided by it at the end (a power of two:
// exact). p <= 1 becomes <= 256 < 448 (e4m3's largest), and weights down to 2^-14 stay normal
// numbers (e4m3's smallest normal is 2^-6) instead of flushing to subnormals at 2^-6.
#define A90_F8_P_SCALE 256.0f
// Largest finite e4m3: a group's absolute maximum maps onto it (scale = amax / 448).
#define A90_F8_MAX 448.0f
// The e4m3 A fragment of the PV k32 step over keys 32kk..32kk+31 (ALayout_64x32: register r, byte
// j is row g + 8 (r % 2), k = 4q + 16 (r / 2) + j) is made of this thread's own S registers:
// register r, byte j takes S register att90_f8_pfrag_src(kk, r, j), whose column is key
// 32kk + att90_f8_vperm(k). The columns a thread holds (8 (i / 4) + 2q + i % 2) are not A's k, so
// instead of moving values between threads the keys are permuted inside each group of 32: the
// pre-pass stores at V^T byte 32kk + k the value of key 32kk + att90_f8_vperm(k). The sum over keys
// does not care in which order they come.
LTX2_HD int att90_f8_pfrag_src(int kk, int r, int j) { return 4 * (4 * kk + 2 * (r / 2) + j / 2) + 2 * (r % 2) + (j & 1); }
LTX2_HD int att90_f8_vperm(int k) {
    const int h = k / 16, q = (k % 16) / 4, j = k % 4;
    return 16 * h + 8 * (j / 2) + 2 * q + (j & 1);
}
// Key tiles of the fp8 K scales and the V^T rows' padded length (whole tiles, zero beyond Skv).
LTX2_HD int64_t att90_f8_tiles(int64_t Skv) { return (Skv + A90_F8_BN - 1) / A90_F8_BN; }
// The e4m3 pre-pass's workspace parts in bytes, each rounded up to `align`, in the order they are
// carved (att_fp8.cu; the memory plan counts their sum): Q codes, Q scales, K codes, K tile
// scales, V^T codes (whole tiles), V's per-tile channel maxima, V's channel scales, V's channel
// means, K's and V's per-tile channel sums, the per-tile counts of seen keys, whether each batch
// attends a key.
enum {
    A90_F8_WS_Q8, A90_F8_WS_QS, A90_F8_WS_K8, A90_F8_WS_KS, A90_F8_WS_VT8, A90_F8_WS_VMAX, A90_F8_WS_VS,
    A90_F8_WS_VMEAN, A90_F8_WS_KSUM, A90_F8_WS_VSUM, A90_F8_WS_CNT, A90_F8_WS_ANY, A90_F8_WS_PARTS
};
LTX2_HD size_t att90_f8_ws_parts(int64_t B, int64_t Sq, int64_t Skv, int64_t H, int64_t Hkv, size_t align,
                                 size_t part[A90_F8_WS_PARTS]) {
    const int64_t t = att90_f8_tiles(Skv), d = A90_F8_D;
    const size_t n[A90_F8_WS_PARTS] = {(size_t)(B * Sq * H * d),      (size_t)(B * Sq * H) * 4, (size_t)(B * Skv * Hkv * d),
                                      (size_t)(B * Hkv * t) * 4,      (size_t)(B * Hkv * d * t * A90_F8_BN),
                                      (size_t)(B * Hkv * t * d) * 4, (size_t)(B * Hkv * d) * 4,
                                      (size_t)(B * Hkv * d) * 4,     (size_t)(B * Hkv * t * d) * 4,
                                      (size_t)(B * Hkv * t * d) * 4, (size_t)(B * t) * 4,
                                      (size_t)B};
    size_t total = 0;
    for (int i = 0; i < A90_F8_WS_PARTS; i++) {
        part[i] = (n[i] + align - 1) / align * align;
        total += part[i];
    }
    return total;
}

// Ring schedule of tile t: its stage, the parity of the full-barrier phase a consumer waits
// for (phase t / A90_STAGES of that stage), and the parity the producer waits for on the
// stage's empty barrier before reloading it (the phase that released tile t - A90_STAGES; for
// the first A90_STAGES tiles parity 1, which a freshly initialised barrier reports complete).
LTX2_HD int att90_stage(int t) { return t % A90_STAGES; }
LTX2_HD uint32_t att90_full_parity(int t) { return (uint32_t)(t / A90_STAGES) & 1u; }
LTX2_HD uint32_t att90_empty_parity(int t) { return att90_full_parity(t) ^ 1u; }

#endif
