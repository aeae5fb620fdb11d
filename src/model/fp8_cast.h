/* ltx-core's fp8_cast quantisation policy (ltx-pipelines' --quantization fp8-cast; ltx_core/quantization/
 * fp8_cast.py at 1.0.0): the weight and bias of every block Linear it names (TRANSFORMER_LINEAR_DOWNCAST_MAP:
 * transformer_blocks.*.to_q / to_k / to_v / to_out.0 and both feed-forwards' net.0.proj / net.2) are cast
 * to float8_e4m3fn with no scale (torch's `.to`: round to nearest even, saturating at +-448, tiny values
 * to subnormals or zero), and every Linear upcasts them back to the activations' dtype in its forward
 * (UPCAST_DURING_INFERENCE, without stochastic rounding). The engine keeps the rounded values in its
 * usual weight dtype (e4m3 values are exact in bf16 and f32): the reference's numbers, not its memory. */
#ifndef LTX2_MODEL_FP8_CAST_H
#define LTX2_MODEL_FP8_CAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/dit_weights.h"

/* Whether the policy casts the DiT tensor `name` (relative to the DiT prefix: a `.weight` or `.bias`). */
bool ltx2_fp8_cast_applies(const char *name);
/* v[i] = e4m3(v[i]) as a float. */
void ltx2_fp8_cast_round(float *v, size_t n);
/* The weight table's adjust hook (weight_table.h ltx2_wload.adjust): rounds the weights the policy casts. */
ltx2_status ltx2_fp8_cast_adjust(ltx2_context *ctx, const char *name, float *w, int64_t out, int64_t in, void *user);
/* Rounds the biases of the Linears the policy casts, on w's backend (after the load). */
ltx2_status ltx2_fp8_cast_biases(ltx2_context *ctx, ltx2_dit_weights *w);

#endif
