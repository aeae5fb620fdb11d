/* LoRA adapters fused into the DiT's Linear weights at load, as ltx-core fuses them
 * (ltx_core/loader/fuse_loras.py apply_loras, the transformer builder of ltx_pipelines
 * utils/model_ledger.py): W' = W + sum_i (B_i * strength_i) @ A_i, each product in the adapter's
 * dtype (bf16 files: B * strength rounded to bf16, the product rounded to bf16 once), the sum and
 * the add in the weight's load dtype (f32 here).
 *
 * Key formats: ltx-core / ComfyUI `diffusion_model.<module>.lora_{A,B}.weight` (Lightricks' LoRAs,
 * LTXV_LORA_COMFY_RENAMING_MAP strips the prefix) and diffusers / PEFT
 * `transformer.<diffusers module>.lora_{A,B}.weight` (renamed with model/names.h). Unlike ltx-core,
 * which skips what it cannot place, every tensor of an adapter must be used: a key of another
 * format, a module the DiT does not have, or a shape that is not this model's is an error naming
 * it (a LoRA for another model, or a file that is not a LoRA). */
#ifndef LTX2_MODEL_LORA_H
#define LTX2_MODEL_LORA_H

#include <stdbool.h>
#include <stdint.h>

#include "ltx2/ltx2.h"

typedef struct ltx2_lora_set ltx2_lora_set;

/* Opens every adapter (kept mapped until ltx2_lora_set_free) and pairs its A and B tensors; a
 * lone half, a rank mismatch or a tensor of another kind is refused here, before any model load. */
ltx2_status ltx2_lora_set_open(ltx2_context *ctx, const ltx2_lora_spec *specs, int n, ltx2_lora_set **out);
void ltx2_lora_set_free(ltx2_lora_set *s);
int ltx2_lora_set_count(const ltx2_lora_set *s);

/* Adds every adapter's product for the Linear weight `name` (ltx-core module name + ".weight",
 * e.g. "transformer_blocks.0.attn1.to_q.weight") to w [out, in] (f32, row-major) and marks those
 * pairs used; a pair whose product is not [out, in] is an error. Names no adapter covers are left. */
ltx2_status ltx2_lora_fuse(ltx2_context *ctx, ltx2_lora_set *s, const char *name, float *w, int64_t out, int64_t in);
/* As ltx2_lora_fuse for the block [r0, r0 + nr) x [c0, c0 + nc) of that [out, in] weight, held in
 * w [nr, nc]: a rank's shard (dit_shard_load.c). Bitwise the same block of the whole weight's
 * fusion: each product element is the same K-ordered FMA chain. */
ltx2_status ltx2_lora_fuse_block(ltx2_context *ctx, ltx2_lora_set *s, const char *name, float *w, int64_t out,
                                 int64_t in, int64_t r0, int64_t nr, int64_t c0, int64_t nc);
/* As ltx2_lora_fuse for a scaled fp8 weight dequantised into w (fp32): ltx-core adds the deltas in
 * bf16 there (apply_loras' deltas_dtype for an fp8 target), so their sum is rounded to bf16 before
 * the add; *touched says whether any adapter covered name (ltx-core re-quantises only those,
 * _fuse_delta_with_scaled_fp8; the others keep their codes and scale). */
ltx2_status ltx2_lora_fuse_fp8(ltx2_context *ctx, ltx2_lora_set *s, const char *name, float *w, int64_t out,
                               int64_t in, bool *touched);
/* ltx2_lora_fuse_fp8 for the block [r0, r0 + nr) x [c0, c0 + nc) of the weight, held in w [nr, nc]
 * (a rank's shard of an fp8 weight; ltx2_lora_fuse_block's block rule). */
ltx2_status ltx2_lora_fuse_block_fp8(ltx2_context *ctx, ltx2_lora_set *s, const char *name, float *w, int64_t out,
                                     int64_t in, int64_t r0, int64_t nr, int64_t c0, int64_t nc, bool *touched);

/* After a model's load: an error naming the pairs no weight took (the first few, and how many). */
ltx2_status ltx2_lora_check_used(ltx2_context *ctx, const ltx2_lora_set *s);

/* Number of pairs, and of those fused so far (for the log line). */
void ltx2_lora_counts(const ltx2_lora_set *s, int64_t *pairs, int64_t *used);

#endif
