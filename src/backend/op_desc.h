/* The op descriptors the backend ops take besides tensors (the conv3d one is conv3d_desc.h): the
 * GEMM weight layout and the RoPE layout and table parameters. They live in the backend layer;
 * src/cpu implements the ops on them and defines none. */
#ifndef LTX2_BACKEND_OP_DESC_H
#define LTX2_BACKEND_OP_DESC_H

#include <stdbool.h>
#include <stdint.h>

/* How the second GEMM operand is stored. NK is a torch Linear weight ([out, in]: y = x W^T);
 * KN is a plain [K, N] matrix (y = x B). */
typedef enum ltx2_b_layout { LTX2_B_NK = 0, LTX2_B_KN = 1 } ltx2_b_layout;

/* ltx-core BlurDownsample's binomial kernel: outer([1, 4, 6, 4, 1])^2 / 256, zero padding 2. */
#define LTX2_BLUR_TAPS 5

/* RoPE pairing: "split" pairs i with i + d/2 inside each head (per-head tables), the legacy
 * "interleaved" adjacent pairs over the whole inner dim (ltx-core rope.py). */
typedef enum ltx2_rope_type { LTX2_ROPE_SPLIT = 0, LTX2_ROPE_INTERLEAVED = 1 } ltx2_rope_type;

/* Most position axes any RoPE instance has (video: time, y, x). */
#define LTX2_ROPE_MAX_AXES 3

/* What a RoPE table is made from (cpu_rope.h builds the tables on the host). */
typedef struct ltx2_rope_params {
    ltx2_rope_type type;
    int64_t dim;            /* the attention inner dim the tables cover (heads * head_dim) */
    int64_t heads;          /* split only: the tables are reshaped per head */
    int n_axes;             /* 1..LTX2_ROPE_MAX_AXES */
    float max_pos[LTX2_ROPE_MAX_AXES]; /* fractional position = position / max_pos[axis] */
    double theta;           /* 10000 for every LTX-2 instance */
    bool double_precision;  /* frequency ladder in float64 (`frequencies_precision: float64`) */
    bool use_middle;        /* position = (start + end) / 2 of each token's interval, else start */
    bool xla;               /* MaxDiffusion under XLA: fp32 one-sided ladder (jnp.linspace), position
                               times fl(1 / max_pos) (overrides double_precision) */
} ltx2_rope_params;

#endif
