// Index arithmetic of the mma.sync.m16n8k16 (bf16 -> fp32) path, plain C so that
// tests/test_layout_mma.c can check it on the CPU against an emulation of ldmatrix and mma
// written from the PTX ISA text: which shared-memory row each lane hands ldmatrix.x4, where each
// accumulator register sits in the 16x8 C tile, how two C tiles become the A operand of the next
// product, and the row padding that keeps ldmatrix free of bank conflicts. The kernels
// (attention.cu) compute their addresses and masks through these functions only.
#ifndef LTX2_KERNELS_MMA_LAYOUT_H
#define LTX2_KERNELS_MMA_LAYOUT_H

#include "hostdev.h"

// Row padding of ldmatrix-read shared tiles, in 16-bit elements (16 bytes). A row of c + 8
// elements with c a multiple of 64 is 4 words past a multiple of 32 words, so the 8 row
// addresses of one 8x8 matrix land on 8 different 4-bank groups (no bank conflict), and every row
// stays 16-byte aligned as ldmatrix and cp.async need.
#define LTX2_MMA_SMEM_PAD 8

// Lanes 4g..4g+3 (a quad) hold accumulator row g and row g + 8: a row reduction combines the
// quad with these two xor-shuffle distances.
#define LTX2_MMA_ROW_XOR_1 1
#define LTX2_MMA_ROW_XOR_2 2

// Element offset of (row, col) in a padded row-major shared tile of ld elements per row.
LTX2_HD int ltx2_mma_smem_off(int row, int col, int ld) { return row * ld + col; }

// ldmatrix.x4 for the A operand of one m16n8k16: a 16x16 [m][k] tile (k contiguous). Lane L
// hands the address of tile row ltx2_mma_lm_a_row(L), column ltx2_mma_lm_a_col(L); matrices
// 0..3 are (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15), so
// x4 register r is A register r.
LTX2_HD int ltx2_mma_lm_a_row(int lane) { return lane & 15; }
LTX2_HD int ltx2_mma_lm_a_col(int lane) { return (lane >> 4) * 8; }

// ldmatrix.x4 (no .trans) for the B operands of two adjacent n-tiles from a 16x16 [n][k] tile
// (k contiguous, e.g. K rows for Q K^T). Matrices: (n 0-7, k 0-7), (n 0-7, k 8-15),
// (n 8-15, k 0-7), (n 8-15, k 8-15). Returns the tile's n row and k column of lane's address.
LTX2_HD int ltx2_mma_lm_b_nk_row(int lane) { return (lane & 7) + ((lane >> 4) << 3); }
LTX2_HD int ltx2_mma_lm_b_nk_col(int lane) { return ((lane >> 3) & 1) * 8; }

// ldmatrix.x4.trans for the B operands of two adjacent n-tiles from a 16x16 [k][n] tile
// (n contiguous, e.g. V rows for P V). Matrices: (k 0-7, n 0-7), (k 8-15, n 0-7),
// (k 0-7, n 8-15), (k 8-15, n 8-15). Returns the tile's k row and n column of lane's address.
LTX2_HD int ltx2_mma_lm_b_kn_row(int lane) { return (lane & 7) + ((lane >> 3) & 1) * 8; }
LTX2_HD int ltx2_mma_lm_b_kn_col(int lane) { return (lane >> 4) * 8; }

// With either B load above: the x4 register holding B register breg (0: k 0-7, 1: k 8-15) of
// n-tile ntile (0: n 0-7, 1: n 8-15).
LTX2_HD int ltx2_mma_lm_b_reg(int ntile, int breg) { return 2 * ntile + breg; }

// Accumulator register i (0..3) of lane: its row (0..15) and column (0..7) in the 16x8 C tile.
LTX2_HD int ltx2_mma_c_row(int lane, int i) { return (lane >> 2) + (i >> 1) * 8; }
LTX2_HD int ltx2_mma_c_col(int lane, int i) { return (lane & 3) * 2 + (i & 1); }

// C -> A without data movement (P V after Q K^T): the accumulators of n-tiles 2j, 2j+1 over k
// columns 16j..16j+15 are the A operand of k-block j. A register r holds the pair at C index
// ltx2_mma_a_from_c_elem(r) (and + 1) of n-tile 2j + ltx2_mma_a_from_c_tile(r).
LTX2_HD int ltx2_mma_a_from_c_tile(int r) { return r >> 1; }
LTX2_HD int ltx2_mma_a_from_c_elem(int r) { return (r & 1) * 2; }

#endif
