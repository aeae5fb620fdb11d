/* numpy-style broadcasting plan for binary elementwise ops, shared by the CPU and CUDA backends:
 * aligns a and b to the output's dims, gives each a stride of 0 where it broadcasts, and merges
 * adjacent dims that are contiguous in all three views so kernels loop over as few dims as
 * possible. */
#ifndef LTX2_CPU_BROADCAST_H
#define LTX2_CPU_BROADCAST_H

#include "core/context.h"
#include "ltx2/tensor.h"

typedef struct ltx2_broadcast_plan {
    int ndim;                         /* after merging; >= 1 */
    int64_t shape[LTX2_MAX_DIMS];     /* merged output shape */
    int64_t a_strides[LTX2_MAX_DIMS]; /* in elements; 0 where a broadcasts */
    int64_t b_strides[LTX2_MAX_DIMS];
    int64_t out_strides[LTX2_MAX_DIMS];
    int64_t numel;                    /* output elements */
} ltx2_broadcast_plan;

/* Fills plan for out = a (op) b. Fails with LTX2_ERR_SHAPE when a and b do not broadcast or out
 * does not have the broadcast shape (the message gives all three shapes). */
ltx2_status ltx2_broadcast_plan_make(ltx2_context *ctx, const ltx2_tensor *a, const ltx2_tensor *b,
                                     const ltx2_tensor *out, ltx2_broadcast_plan *plan);

#endif
