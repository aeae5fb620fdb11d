/* What tiling.c (plans, tile batching, the decode / encode streams) and tiling_blend.c (the
 * decode blend: block accumulators from first to last covering tile, the temporal carry, the
 * division by the weights) share. Not part of the public tiling API (tiling.h). */
#ifndef LTX2_PIPELINE_TILING_INTERNAL_H
#define LTX2_PIPELINE_TILING_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/tiling.h"

/* ltx-core divides the blended sum by the accumulated weights clamped to this. */
#define TILE_WEIGHT_EPS 1e-8f

typedef struct interval {
    int64_t s, e, lr, rr; /* [s, e) and blend ramps, in the split axis' units */
} interval;

typedef struct axis_plan {
    int n;
    interval *iv;
} axis_plan;

typedef struct tile {
    int64_t in0[3], in1[3];   /* input slice (t, h, w) */
    int64_t out0[3], out1[3]; /* output slice */
    float *mask[3];           /* per-axis 1-D masks over the output slice */
    int group;                /* temporal interval index */
    float *result;            /* decoded / encoded tile while waiting to be blended */
    int64_t result_n;         /* floats in result */
} tile;

typedef struct plan {
    axis_plan ax[3];
    int64_t n_tiles;
    tile *tiles;
} plan;

/* Bytes of tiler buffers held now and at most (stats->peak_bytes); NULL-safe. */
typedef struct mem_meter {
    int64_t cur, peak;
} mem_meter;

/* n_floats floats (zeroed if asked), counted in m (NULL-safe); NULL when out of memory. */
float *tile_meter_alloc(mem_meter *m, int64_t n_floats, bool zero);
void tile_meter_free(mem_meter *m, float *p, int64_t n_floats);

/* The frame cut at every tile edge along rows and along columns: each block of the cut is covered
 * by the same tiles of a group (a contiguous range of row intervals x a contiguous range of column
 * intervals), so its accumulator can be allocated when its first tile in plan order is blended
 * and finalised when its last one is. */
typedef struct seg_axis {
    int n;             /* segments */
    int64_t *edge;     /* n + 1 ascending edges, output pixels */
    int *first, *last; /* first / last interval covering segment i */
} seg_axis;

/* One block's accumulators for the current group: sum [B, F, rows, cols, C], weights [F, rows, cols]. */
typedef struct block_acc {
    float *sum, *w;
} block_acc;

/* Frames [f0, f1) of the previous group that the current one overlaps, full frames: sum
 * [B, f1-f0, H, W, C], weights [f1-f0, H, W]. */
typedef struct carry_buf {
    int64_t f0, f1;
    float *sum, *w;
} carry_buf;

/* The geometry of one temporal group's blend. */
typedef struct group_ctx {
    int64_t vs[5];            /* video shape */
    int64_t f0, F, head_end;  /* group frames [f0, f0 + F); frames before head_end are final here */
    const seg_axis *rows, *cols;
    block_acc *blocks;        /* rows->n x cols->n */
    int64_t n_done;           /* blocks finalised so far */
    mem_meter *mem;
} group_ctx;

static inline int64_t tile_seg_len(const seg_axis *s, int i) { return s->edge[i + 1] - s->edge[i]; }

/* Segments of output axis a (1 rows, 2 columns) from the plan's group-0 tiles. */
ltx2_status tile_seg_axis_build(ltx2_context *ctx, const plan *p, int a, seg_axis *s);
void tile_seg_axis_free(seg_axis *s);
/* Blends tile (ih, iw) of the group into every block it covers, then finalises (and emits) the
 * blocks whose last tile it is. */
ltx2_status tile_blend_and_finish(ltx2_context *ctx, group_ctx *g, const tile *tl, const float *res, int ih, int iw,
                                  const carry_buf *prev, carry_buf *next, ltx2_vae_block_fn emit, void *user);

#endif
