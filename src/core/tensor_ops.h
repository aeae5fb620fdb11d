/* View transforms over ltx2_tensor: they only rewrite shape/strides/data pointer, never copy, and
 * report bad dims as LTX2_ERR_SHAPE. Dims may be negative, Python-style (-1 = last). */
#ifndef LTX2_CORE_TENSOR_OPS_H
#define LTX2_CORE_TENSOR_OPS_H

#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

/* New shape over the same elements; t must be contiguous. One entry may be -1 (inferred). */
ltx2_status ltx2_tensor_reshape(ltx2_context *ctx, const ltx2_tensor *t, int ndim, const int64_t *shape,
                                ltx2_tensor *out);
/* Elements [start, end) along dim (0 <= start <= end <= size); the data pointer moves to start. */
ltx2_status ltx2_tensor_slice(ltx2_context *ctx, const ltx2_tensor *t, int dim, int64_t start, int64_t end,
                              ltx2_tensor *out);
/* out dim i is t's dim perm[i]; perm must name every dim exactly once. */
ltx2_status ltx2_tensor_permute(ltx2_context *ctx, const ltx2_tensor *t, const int *perm, ltx2_tensor *out);

#endif
