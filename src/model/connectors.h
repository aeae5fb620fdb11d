/* The LTX-2 / LTX-2.3 text path between Gemma-3 and the DiT, on the weights' backend (the CPU fp32
 * reference, or a device), matching ltx-core 1.0.0's EmbeddingsProcessor.process_hidden_states: the feature extractor (V1 for LTX-2.0:
 * per-sample per-layer masked mean/range x8, then text_embedding_projection.aggregate_embed; V2 for
 * LTX-2.3: per-token RMS, x sqrt(out/D), then video_/audio_aggregate_embed) and the video and
 * audio Embeddings1DConnector (learnable registers replace padding, 1-D RoPE, pre-norm
 * self-attention + FFN blocks, final RMS norm). The outputs are the DiT's prompt contexts. */
#ifndef LTX2_MODEL_CONNECTORS_H
#define LTX2_MODEL_CONNECTORS_H

#include <stdbool.h>
#include <stdint.h>

#include "io/json.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"

/* Key prefixes in the single-file checkpoint. */
#define LTX2_CONNECTOR_VIDEO_PREFIX "model.diffusion_model.video_embeddings_connector."
#define LTX2_CONNECTOR_AUDIO_PREFIX "model.diffusion_model.audio_embeddings_connector."
#define LTX2_TEXT_PROJ_PREFIX "text_embedding_projection."
/* The projection input of the real checkpoints: Gemma-3-12B's 3840-wide hidden states of its 48
 * layers plus the embeddings (ltx-core GEMMA3_CONFIG_FOR_LTX), flattened. */
#define LTX2_GEMMA_TEXT_DIM (3840 * 49)
/* Tokens the feature extractor normalises and projects at a time. The projection's input is as
 * wide as Gemma's states (3840 x 49 = 188,160 for the real encoder): a 1024-token prompt's whole
 * would be 770 MB of host f32 and 385 MB in bf16 on a device, three times over on the device (the
 * uploaded states, their modulation, the interleaved features); a chunk of 64 tokens is 48 MB on
 * the host and 3 x 24 MB on the device, and the projection GEMM at 64 rows stays deep
 * (K = 188,160). */
#define LTX2_CONNECTOR_FE_CHUNK 64
/* ltx-core builds every connector with 128 registers (it ignores connector_num_learnable_registers). */
#define LTX2_CONNECTOR_REGISTERS 128

typedef enum ltx2_text_fe_version {
    LTX2_TEXT_FE_V1 = 1, /* LTX-2.0: projection in the DiT (caption_projection) */
    LTX2_TEXT_FE_V2 = 2  /* LTX-2.3: caption_proj_before_connector */
} ltx2_text_fe_version;

typedef struct ltx2_connector_config {
    int64_t heads, head_dim, inner_dim, num_layers;
    bool gated; /* connector_apply_gated_attention: per-head 2*sigmoid gates */
} ltx2_connector_config;

typedef struct ltx2_connectors_config {
    ltx2_text_fe_version fe;
    ltx2_connector_config video, audio;
    float max_pos;           /* connector_positional_embedding_max_pos[0] */
    double rope_theta;       /* fixed 10000: ltx-core never passes the config's theta */
    ltx2_rope_type rope_type;
    bool rope_double_precision;
    int64_t dit_video_dim, dit_audio_dim; /* V2 projection widths (DiT inner dims) */
} ltx2_connectors_config;

/* Parses the "transformer" section (connector_* keys with ltx-core's defaults; rope_type,
 * frequencies_precision and connector_positional_embedding_max_pos are required because ltx-core's
 * defaults differ from every checkpoint). label names the source in messages. */
ltx2_status ltx2_connectors_config_parse(ltx2_context *ctx, const ltx2_json *transformer, const char *label,
                                         ltx2_connectors_config *out);
ltx2_status ltx2_connectors_config_from_st(ltx2_context *ctx, const ltx2_st_file *f, ltx2_connectors_config *out);

typedef struct ltx2_connector_block_w {
    ltx2_dit_attn_w attn1;
    ltx2_dit_ff_w ff;
} ltx2_connector_block_w;

typedef struct ltx2_connector_w {
    ltx2_tensor registers; /* [LTX2_CONNECTOR_REGISTERS, inner_dim] */
    ltx2_connector_block_w *blocks;
} ltx2_connector_w;

typedef struct ltx2_connectors_weights {
    ltx2_connectors_config cfg;
    int64_t text_dim;        /* flattened Gemma width D * L the projections take */
    ltx2_dit_linear proj_video; /* V1: aggregate_embed (no bias); V2: video_aggregate_embed */
    ltx2_dit_linear proj_audio; /* V2 only: audio_aggregate_embed */
    ltx2_connector_w video, audio;
    const ltx2_backend *be;  /* where the tensors live, and their dtype */
    ltx2_dtype dtype;
    ltx2_wstore store;
} ltx2_connectors_weights;

/* Loads `text_embedding_projection.*` and both connectors onto the CPU in f32 (a file's bf16 Linear
 * weights stay bf16: store.matrix_dtype), each tensor checked against the config; missing,
 * mis-shaped and unexpected tensors are reported by name. */
ltx2_status ltx2_connectors_weights_load(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_connectors_config *cfg,
                                         ltx2_connectors_weights **out);
/* The same onto backend be in dtype. */
ltx2_status ltx2_connectors_weights_load_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                            const ltx2_st_file *f, const ltx2_connectors_config *cfg,
                                            ltx2_connectors_weights **out);
/* The text projection's input width (Gemma width x hidden states) as the file's projection weight
 * has it (it is not in the config). */
ltx2_status ltx2_connectors_text_dim(ltx2_context *ctx, const ltx2_st_file *f, const ltx2_connectors_config *cfg,
                                     int64_t *out);
/* The loader's tensor list for cfg and a text_dim-wide projection input laid out on be in dtype,
 * every value zero (nothing read): for the memory planner (backend_plan.h). */
ltx2_status ltx2_connectors_weights_layout_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype,
                                              const ltx2_connectors_config *cfg, int64_t text_dim,
                                              ltx2_connectors_weights **out);
/* A copy of src on backend be in dtype. */
ltx2_status ltx2_connectors_weights_to(ltx2_context *ctx, const ltx2_connectors_weights *src, const ltx2_backend *be,
                                       ltx2_dtype dtype, ltx2_connectors_weights **out);
ltx2_status ltx2_connectors_weights_load_file(ltx2_context *ctx, const char *path, ltx2_connectors_weights **out);
void ltx2_connectors_weights_free(ltx2_connectors_weights *w);

typedef struct ltx2_text_hidden {
    const float *hidden;  /* [B, S, D, L] Gemma hidden states, the layer axis last (index 0: embeddings) */
    const uint8_t *mask;  /* [B, S] 1 = real token, 0 = padding (left padding in the pipeline) */
    int64_t B, S, D, L;   /* S must be a multiple of LTX2_CONNECTOR_REGISTERS; D * L == text_dim */
    bool layer_major;     /* hidden is [B, L, S, D] instead (model/text_states.h: the encoder's layout) */
    /* Or the states already on the weights' backend in their dtype, layer-major [B, L, S, D]
     * contiguous (ltx2_gemma_forward_keep; hidden unused): nothing goes up (LTX-2.0's statistics:
     * each row's sum, min and max come down, 12 bytes a (layer, token)). */
    const ltx2_tensor *dev;
} ltx2_text_hidden;

/* video_out [B, S, video.inner_dim], audio_out [B, S, audio.inner_dim], mask_out [B, S] (all ones:
 * registers fill the padding), host f32. dump (may be NULL) sees the intermediates named as in
 * tests/golden/gen_connector_goldens.py. The feature extractor, the projections and both
 * connectors run on the weights' backend, the host states uploaded a chunk of tokens at a time
 * (LTX2_CONNECTOR_FE_CHUNK); LTX-2.0's per-layer statistics are combined on the host from the
 * per-row ones (row_stats where the states are). Layer-last host states are transposed first. */
ltx2_status ltx2_connectors_forward(ltx2_context *ctx, const ltx2_connectors_weights *w, const ltx2_text_hidden *in,
                                    ltx2_dit_dump_fn dump, void *dump_user, float *video_out, float *audio_out,
                                    uint8_t *mask_out);
/* The same with the RoPE of MaxDiffusion under XLA when rope_xla (ltx2_rope_params.xla: the
 * semantics' dit_rope_xla). */
ltx2_status ltx2_connectors_forward_rope(ltx2_context *ctx, const ltx2_connectors_weights *w,
                                         const ltx2_text_hidden *in, bool rope_xla, ltx2_dit_dump_fn dump_fn,
                                         void *dump_user, float *video_out, float *audio_out, uint8_t *mask_out);

#endif
