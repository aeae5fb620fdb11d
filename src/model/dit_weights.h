/* The DiT's tensors, loaded by name from a Lightricks single-file checkpoint
 * (`model.diffusion_model.*`, the text connectors excluded), each checked against the shape the
 * config implies, and placed on a backend in one dtype: host f32 for the CPU reference, bf16 on
 * CUDA (read from the mapping tensor by tensor through a small staging buffer, never a full host
 * copy). Missing, mis-shaped and unexpected tensors are reported together, naming the first few
 * offenders. */
#ifndef LTX2_MODEL_DIT_WEIGHTS_H
#define LTX2_MODEL_DIT_WEIGHTS_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "io/safetensors.h"
#include "model/dit_config.h"
#include "model/weight_table.h"

/* Key prefix of the DiT in the single file, and the connector sub-trees under it that belong to
 * the text path (loaded elsewhere). */
#define LTX2_DIT_PREFIX "model.diffusion_model."

/* A Linear of the DiT (model/weight_table.h); the gate of an ungated attention is absent. */
typedef ltx2_linear ltx2_dit_linear;

typedef struct ltx2_dit_attn_w {
    ltx2_dit_linear q, k, v, o;
    ltx2_dit_linear gate; /* to_gate_logits [heads, query_dim]; w.data NULL when not gated */
    ltx2_tensor q_norm, k_norm; /* [heads * head_dim] */
    int64_t heads, head_dim, query_dim, context_dim;
    /* A tensor-parallel rank holds heads [head0, head0 + heads) of heads_total; whole weights
     * have head0 0 and heads_total == heads. */
    int64_t head0, heads_total;
} ltx2_dit_attn_w;

typedef struct ltx2_dit_ff_w {
    ltx2_dit_linear proj_in, proj_out; /* ff.net.0.proj, ff.net.2 */
} ltx2_dit_ff_w;

/* AdaLayerNormSingle: emb.timestep_embedder.linear_1/2 then linear (rows * dim outputs). */
typedef struct ltx2_dit_adaln_w {
    ltx2_dit_linear l1, l2, lin;
    int64_t dim, rows;
} ltx2_dit_adaln_w;

typedef struct ltx2_dit_block_w {
    ltx2_dit_attn_w attn1, attn2, audio_attn1, audio_attn2, a2v, v2a;
    ltx2_dit_ff_w ff, audio_ff;
    ltx2_tensor sst, audio_sst;               /* [adaln_rows, Dv] / [adaln_rows, Da] */
    ltx2_tensor sst_a2v_video, sst_a2v_audio; /* [5, Dv] / [5, Da] */
    ltx2_tensor prompt_sst, audio_prompt_sst; /* [2, Dv] / [2, Da], LTX-2.3 only */
} ltx2_dit_block_w;

typedef struct ltx2_dit_weights {
    ltx2_dit_config cfg; /* audio_in_channels filled from the weights when the config lacks it */
    const ltx2_backend *be; /* where every tensor lives */
    ltx2_dtype dtype;       /* and its dtype (the Linear weights': store.matrix_dtype) */
    ltx2_dit_linear patchify, audio_patchify, proj_out, audio_proj_out;
    ltx2_dit_linear caption1, caption2, audio_caption1, audio_caption2; /* LTX-2.0 only */
    ltx2_dit_adaln_w adaln, audio_adaln, prompt_adaln, audio_prompt_adaln;
    ltx2_dit_adaln_w av_video_ss, av_audio_ss, av_a2v_gate, av_v2a_gate;
    ltx2_tensor sst, audio_sst; /* output head [2, D] */
    ltx2_dit_block_w *blocks;
    ltx2_wstore store;    /* the one allocation on be: tensors, elements and bytes held */
    bool layers_skipped;  /* ltx2_dit_weights_load_replicated: the block layer tensors are absent */
} ltx2_dit_weights;

/* Loads every DiT tensor of f under `prefix` (NULL = LTX2_DIT_PREFIX) onto the CPU in f32
 * (bf16/f16/f32 convert exactly, fp8 with its scale), all of it: the source the parallel path
 * slices. cfg as parsed from the same file. */
ltx2_status ltx2_dit_weights_load(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix,
                                  const ltx2_dit_config *cfg, ltx2_dit_weights **out);
/* The weights a single-process forward runs on: onto backend be in dtype (f32 or bf16; what
 * ltx2_backend_supports says for gemm). On a device each tensor is converted in a host staging
 * buffer of one tensor and uploaded. On the CPU (f32) a file whose Linear weights are all bf16
 * keeps them bf16 (store.matrix_dtype): half the resident bytes, the same results bitwise. */
ltx2_status ltx2_dit_weights_load_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                     const ltx2_st_file *f, const char *prefix, const ltx2_dit_config *cfg,
                                     ltx2_dit_weights **out);
/* As ltx2_dit_weights_load_on, with the adapters of loras fused into the Linear weights (lora.h;
 * NULL: none): stored in dtype (no bf16 view of the file), and every adapter pair must have found
 * its weight, or the load fails naming the ones that did not. */
struct ltx2_lora_set;
ltx2_status ltx2_dit_weights_load_lora(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                       const ltx2_st_file *f, const char *prefix, const ltx2_dit_config *cfg,
                                       struct ltx2_lora_set *loras, ltx2_dit_weights **out);
/* The Linear of checkpoint module name `module` (relative to the DiT prefix, e.g.
 * "transformer_blocks.0.attn1.to_q"), NULL when w has none: its weight, bias and fp8 scales. */
const ltx2_dit_linear *ltx2_dit_weights_find_linear(ltx2_dit_weights *w, const char *module);
/* fn(user, name of its weight, the Linear) for every Linear of w, in the loader's order; the first
 * error fn returns stops the walk and is returned. */
typedef ltx2_status (*ltx2_dit_linear_fn)(void *user, const char *name, ltx2_dit_linear *lin);
ltx2_status ltx2_dit_weights_each_linear(ltx2_context *ctx, ltx2_dit_weights *w, ltx2_dit_linear_fn fn, void *user);
/* As ltx2_dit_weights_load_on, with the file's scaled fp8 Linear weights (e4m3 + weight_scale +
 * input_scale, ltx2_weight_fp8_scales) kept fp8: each runs as ltx-core's FP8Linear (x quantised with
 * the static input scale, fp8 GEMM); the file's other weights load as usual. A file without scaled
 * fp8 weights is refused, as ltx-core's fp8_scaled_mm policy refuses it. be needs an fp8 GEMM.
 * loras (NULL: none) are fused as ltx2_dit_weights_load_lora fuses them, into the fp8 weights by
 * ltx-core's rule for them (ltx2_lora_fuse_fp8, then re-quantised). */
/* As ltx2_dit_weights_load_on under ltx-core's fp8_cast policy (fp8_cast.h): the named block Linears'
 * weights and biases rounded to e4m3 values, kept in dtype. No LoRAs: ltx-core fuses them into fp8-cast
 * weights with stochastic rounding in a GPU kernel (fuse_loras.py, triton), which nothing here reproduces. */
ltx2_status ltx2_dit_weights_load_fp8_cast(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                           const ltx2_st_file *f, const char *prefix, const ltx2_dit_config *cfg,
                                           ltx2_dit_weights **out);
ltx2_status ltx2_dit_weights_load_fp8(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                      const ltx2_st_file *f, const char *prefix, const ltx2_dit_config *cfg,
                                      struct ltx2_lora_set *loras, ltx2_dit_weights **out);
/* The loaded tensor of checkpoint name `name` (relative to the DiT prefix, e.g.
 * "transformer_blocks.0.attn1.to_q.weight"), NULL when w has no such tensor or holds no data for it. */
const ltx2_tensor *ltx2_dit_weights_find(ltx2_dit_weights *w, const char *name);
/* As ltx2_dit_weights_load, with every tensor checked the same way (missing, shape, dtype,
 * unexpected: the same errors), but the blocks' attention and FFN tensors (to_q/k/v/out,
 * to_gate_logits, q/k_norm, ff / audio_ff) not loaded: their data stays NULL and their shapes
 * (out, in, heads, ...) are filled. What remains is the part a tensor-parallel rank keeps whole;
 * model/dit_parallel.h reads the layer shards from f itself. */
ltx2_status ltx2_dit_weights_load_replicated(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix,
                                             const ltx2_dit_config *cfg, ltx2_dit_weights **out);
/* As ltx2_dit_weights_load_replicated, onto backend be in dtype (a rank computing on its GPU holds
 * the replicated part there in bf16, as a single-process load would; on the CPU f32), with the
 * adapters of loras (NULL: none) that cover it fused; those of the layers are the shards' to fuse
 * (ltx2_dit_parallel_create_sharded_lora), so no check of unused pairs here. */
ltx2_status ltx2_dit_weights_load_replicated_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                                const ltx2_st_file *f, const char *prefix,
                                                const ltx2_dit_config *cfg, struct ltx2_lora_set *loras,
                                                ltx2_dit_weights **out);
/* Opens path (single file or diffusers directory), parses its config and loads the weights onto the
 * CPU as ltx2_dit_weights_load_on does (f32; bf16 Linear weights kept bf16); the file is closed
 * again. */
ltx2_status ltx2_dit_weights_load_file(ltx2_context *ctx, const char *path, ltx2_dit_weights **out);
/* A copy of src on backend be in dtype (every tensor converted; absent tensors stay absent). */
ltx2_status ltx2_dit_weights_to(ltx2_context *ctx, const ltx2_dit_weights *src, const ltx2_backend *be,
                                ltx2_dtype dtype, ltx2_dit_weights **out);
/* Same tensor list as the loader for cfg on the CPU in f32, every value a Philox normal (seed,
 * stream 0) times `scale`: for benches and shape tests, not a meaningful model.
 * audio_in_channels 0 becomes 128 (ltx-core's default). */
ltx2_status ltx2_dit_weights_random(ltx2_context *ctx, const ltx2_dit_config *cfg, uint64_t seed, float scale,
                                    ltx2_dit_weights **out);
/* The loader's tensor list for cfg laid out on be in dtype, every value zero (nothing read): the
 * memory planner lays the weights out on the planning backend (backend_plan.h) to count them.
 * audio_in_channels 0 (absent from real configs) becomes ltx-core's default, 128. */
ltx2_status ltx2_dit_weights_layout_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                       const ltx2_dit_config *cfg, ltx2_dit_weights **out);
/* The same without the block layer tensors (their shapes filled, as ltx2_dit_weights_load_replicated
 * leaves them): what a rank of the parallel DiT holds whole, for the memory plan of a multi-rank run
 * (ltx2_dit_parallel_create_layout lays out the shards). */
ltx2_status ltx2_dit_weights_layout_replicated_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                                  const ltx2_dit_config *cfg, ltx2_dit_weights **out);
/* As ltx2_dit_weights_layout_on, with Linear weights in fp8 e4m3 and their scales 0: those f holds
 * as scaled fp8 (what ltx2_dit_weights_load_fp8 keeps; the memory plan), or with f NULL every block's
 * (attention q/k/v/out and gates, both FFs; benches fill them and set each ltx2_linear's w_scale and
 * x_scale: the forward refuses an fp8 linear without them). Needs an fp8 GEMM on be. */
ltx2_status ltx2_dit_weights_layout_fp8(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                        const ltx2_dit_config *cfg, const ltx2_st_file *f, ltx2_dit_weights **out);
void ltx2_dit_weights_free(ltx2_dit_weights *w);

/* True when the linear is present (gates exist only with gated attention). */
static inline bool ltx2_dit_linear_present(const ltx2_dit_linear *L) { return ltx2_linear_present(L); }

#endif
