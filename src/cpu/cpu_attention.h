/* CPU reference multi-head scaled-dot-product attention (fp32, OpenMP), the oracle for the fused
 * GPU attention. Tokens are [B, T, heads * head_dim] row-major (heads contiguous inside a token),
 * the layout the projections produce, so no transposes are needed. */
#ifndef LTX2_CPU_CPU_ATTENTION_H
#define LTX2_CPU_CPU_ATTENTION_H

#include <stdint.h>

#include "core/context.h"

/* out[b, i, h] = sum_j softmax_j(scale * <q[b,i,h], k[b,j,h]>) v[b,j,h] over keys j with
 * key_mask[b, j] != 0 (key_mask [B, Tk] may be NULL = all keys). A row whose keys are all masked
 * averages every value uniformly, which is what the reference's additive -FLT_MAX bias gives.
 * q: [B, Tq, H*d], k and v: [B, Tk, H*d], out: [B, Tq, H*d] (must not alias q, k or v).
 * scale is usually 1/sqrt(d). */
ltx2_status ltx2_cpu_attention(ltx2_context *ctx, const float *q, const float *k, const float *v, float *out,
                               int64_t B, int64_t Tq, int64_t Tk, int64_t heads, int64_t head_dim,
                               const uint8_t *key_mask, float scale);

#endif
