/* The DiT's tensors in fp32, loaded by name from a Lightricks single-file checkpoint
 * (`model.diffusion_model.*`, the text connectors excluded), each checked against the shape the
 * config implies. Missing, mis-shaped and unexpected tensors are reported together, naming the
 * first few offenders. */
#ifndef LTX2_MODEL_DIT_WEIGHTS_H
#define LTX2_MODEL_DIT_WEIGHTS_H

#include <stdbool.h>
#include <stdint.h>

#include "io/safetensors.h"
#include "model/dit_config.h"

/* Key prefix of the DiT in the single file, and the connector sub-trees under it that belong to
 * the text path (loaded elsewhere). */
#define LTX2_DIT_PREFIX "model.diffusion_model."

typedef struct ltx2_dit_linear {
    float *w;  /* [out, in] (torch Linear) */
    float *b;  /* [out] */
    int64_t out, in;
} ltx2_dit_linear;

typedef struct ltx2_dit_attn_w {
    ltx2_dit_linear q, k, v, o;
    ltx2_dit_linear gate; /* to_gate_logits [heads, query_dim]; w NULL when not gated */
    float *q_norm, *k_norm; /* [inner] */
    int64_t heads, head_dim, query_dim, context_dim;
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
    float *sst, *audio_sst;                 /* [adaln_rows, Dv] / [adaln_rows, Da] */
    float *sst_a2v_video, *sst_a2v_audio;   /* [5, Dv] / [5, Da] */
    float *prompt_sst, *audio_prompt_sst;   /* [2, Dv] / [2, Da], LTX-2.3 only */
} ltx2_dit_block_w;

typedef struct ltx2_dit_weights {
    ltx2_dit_config cfg; /* audio_in_channels filled from the weights when the config lacks it */
    ltx2_dit_linear patchify, audio_patchify, proj_out, audio_proj_out;
    ltx2_dit_linear caption1, caption2, audio_caption1, audio_caption2; /* LTX-2.0 only */
    ltx2_dit_adaln_w adaln, audio_adaln, prompt_adaln, audio_prompt_adaln;
    ltx2_dit_adaln_w av_video_ss, av_audio_ss, av_a2v_gate, av_v2a_gate;
    float *sst, *audio_sst; /* output head [2, D] */
    ltx2_dit_block_w *blocks;
    size_t n_tensors;     /* tensors held (converted) */
    size_t n_floats;      /* floats held */
    bool layers_skipped;  /* ltx2_dit_weights_load_replicated: the block layer pointers are NULL */
    float *storage_;
} ltx2_dit_weights;

/* Loads every DiT tensor of f under `prefix` (NULL = LTX2_DIT_PREFIX), converting bf16/f16/f32 to
 * f32. cfg as parsed from the same file. */
ltx2_status ltx2_dit_weights_load(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix,
                                  const ltx2_dit_config *cfg, ltx2_dit_weights **out);
/* As ltx2_dit_weights_load, with every tensor checked the same way (missing, shape, dtype,
 * unexpected: the same errors), but the blocks' attention and FFN tensors (to_q/k/v/out,
 * to_gate_logits, q/k_norm, ff / audio_ff) not converted: their pointers stay NULL and their
 * shapes (out, in, heads, ...) are filled. What remains is the part a tensor-parallel rank keeps
 * whole; dist/dit_parallel.h reads the layer shards from f itself. */
ltx2_status ltx2_dit_weights_load_replicated(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix,
                                             const ltx2_dit_config *cfg, ltx2_dit_weights **out);
/* Opens path, parses its config and loads the weights (the file is closed again). */
ltx2_status ltx2_dit_weights_load_file(ltx2_context *ctx, const char *path, ltx2_dit_weights **out);
/* Same tensor list as the loader for cfg, every float a Philox normal (seed, stream 0) times
 * `scale`: for benches and shape tests, not a meaningful model. audio_in_channels 0 becomes 128. */
ltx2_status ltx2_dit_weights_random(ltx2_context *ctx, const ltx2_dit_config *cfg, uint64_t seed, float scale,
                                    ltx2_dit_weights **out);
void ltx2_dit_weights_free(ltx2_dit_weights *w);

#endif
