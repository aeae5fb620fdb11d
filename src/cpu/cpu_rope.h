/* CPU reference rotary position embeddings (RoPE) as LTX-2 uses them (ltx-core rope.py):
 * cos/sin tables from fractional positions, and their application in the "split" (pair i with
 * i + d/2 inside each head, per-head tables) and legacy "interleaved" (adjacent pairs over the whole
 * inner dim) layouts. Tables follow the reference's order of operations in fp32, with the
 * frequency ladder in float64 when the checkpoint asks for it. */
#ifndef LTX2_CPU_CPU_ROPE_H
#define LTX2_CPU_CPU_ROPE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/op_desc.h"
#include "core/context.h"

/* Number of frequencies per axis: dim / (2 * n_axes). */
int64_t ltx2_cpu_rope_n_freqs(const ltx2_rope_params *p);

/* The ladder w_k = theta^(k / (nf - 1)) * pi / 2, k < nf, rounded to fp32 (computed in float64 or
 * in fp32 like torch.linspace/pow, per p->double_precision). out holds ltx2_cpu_rope_n_freqs(p). */
ltx2_status ltx2_cpu_rope_freqs(ltx2_context *ctx, const ltx2_rope_params *p, float *out);

/* Tables from positions[B, n_axes, T, pos_last] (pos_last 2: [start, end) bounds, 1: one value;
 * use_middle needs 2). Angles are frequency-major, axis-minor (index k * n_axes + axis) and the
 * unused leading entries (dim/2 - n_axes*nf for split, dim % (2*n_axes) for interleaved) are
 * identity (cos 1, sin 0), as in the reference.
 * split:       cos, sin are [B, heads, T, dim / (2 * heads)]
 * interleaved: cos, sin are [B, T, dim] (each angle repeated for its adjacent pair) */
ltx2_status ltx2_cpu_rope_tables(ltx2_context *ctx, const ltx2_rope_params *p, const float *positions,
                                 int64_t B, int64_t T, int64_t pos_last, float *cos_out, float *sin_out);

/* x[B, T, heads * head_dim] in place, each head rotated with its own table rows:
 * (a, b) = (x[:d/2], x[d/2:]) -> (a cos - b sin, b cos + a sin). cos/sin as made above (split). */
ltx2_status ltx2_cpu_rope_apply_split(ltx2_context *ctx, float *x, const float *cos_t, const float *sin_t,
                                      int64_t B, int64_t T, int64_t heads, int64_t head_dim);
/* The same with tables [tab_rows, tab_heads, T, head_dim / 2], tab_rows B or 1 and tab_heads heads or
 * 1: a table of one row / head serves every batch row / head (a sequence's positions shared). */
ltx2_status ltx2_cpu_rope_apply_split_tab(ltx2_context *ctx, float *x, const float *cos_t, const float *sin_t,
                                          int64_t B, int64_t T, int64_t heads, int64_t head_dim, int64_t tab_rows,
                                          int64_t tab_heads);

/* x[B, T, dim] in place: (x[2i], x[2i+1]) -> (x[2i] c - x[2i+1] s, x[2i+1] c + x[2i] s) with the
 * interleaved tables [B, T, dim]. */
ltx2_status ltx2_cpu_rope_apply_interleaved(ltx2_context *ctx, float *x, const float *cos_t,
                                            const float *sin_t, int64_t B, int64_t T, int64_t dim);

#endif
