/* Index arithmetic of the fused DiT kernels (kernels/fused.cu), plain C so that
 * tests/test_layout_fused.c checks it on the CPU against the CPU backend's fused ops
 * (src/backend/backend_cpu_fused.c) for every element.
 *
 * Token tensors are [rows, dim] row-major (rows = B*S flattened). AdaLN tables (scale, shift,
 * gate) are f32 [U, dim] views whose rows are `stride` elements apart; token row r reads table
 * row m = row_idx[r] when a per-token index is given, else r / rows_per_group (per-sample: a
 * group is one sample's S tokens). The attention head gate's logits are [rows, heads]. */
#ifndef LTX2_KERNELS_FUSED_LAYOUT_H
#define LTX2_KERNELS_FUSED_LAYOUT_H

#include <stdint.h>

#include "hostdev.h"

/* Table row of token row r. */
LTX2_HD int64_t ltx2_fused_mod_row(const int32_t *row_idx, int64_t r, int64_t rows_per_group) {
    return row_idx ? (int64_t)row_idx[r] : r / rows_per_group;
}

/* Table element (offset from the table's first element) that channel c of token row r uses. */
LTX2_HD int64_t ltx2_fused_mod_off(const int32_t *row_idx, int64_t rows_per_group, int64_t stride, int64_t r,
                                   int64_t c) {
    return ltx2_fused_mod_row(row_idx, r, rows_per_group) * stride + c;
}

/* Table element that flat element e of a [rows, dim] token tensor uses (the gated add walks the
 * tensor flat). */
LTX2_HD int64_t ltx2_fused_mod_off_flat(const int32_t *row_idx, int64_t rows_per_group, int64_t stride,
                                        int64_t dim, int64_t e) {
    const int64_t r = e / dim;
    return ltx2_fused_mod_off(row_idx, rows_per_group, stride, r, e - r * dim);
}

/* Logit (index into [rows, heads]) that flat element e of o [rows, heads*head_dim] is gated by. */
LTX2_HD int64_t ltx2_fused_head_logit(int64_t heads, int64_t head_dim, int64_t e) {
    const int64_t inner = heads * head_dim, r = e / inner;
    return r * heads + (e - r * inner) / head_dim;
}

#endif
