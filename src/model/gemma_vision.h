/* Gemma-3's vision path as Gemma3ForConditionalGeneration.get_image_features runs it: the SigLIP
 * vision tower (a 14x14 patch embedding, learned positions, pre-LayerNorm encoder layers with
 * biased attention and a GELU-tanh MLP, a final LayerNorm), then the multimodal projector (average
 * pooling of the patch grid to mm_tokens_per_image tokens, a (1 + w) RMSNorm, a projection to the
 * language model's width). One forward on the backend op table; what prompt enhancement with an
 * image (ltx-core's enhance_i2v) feeds the language model in place of its image tokens. */
#ifndef LTX2_MODEL_GEMMA_VISION_H
#define LTX2_MODEL_GEMMA_VISION_H

#include <stdint.h>

#include "backend/backend.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "model/gemma.h"
#include "model/weight_table.h"

typedef struct ltx2_gemma_vision_config {
    int64_t hidden, ffn, layers, heads, image_size, patch, channels;
    double eps;           /* the tower's LayerNorms and the projector's RMSNorm */
    int64_t mm_tokens;    /* image tokens after pooling (a square number) */
    int64_t text_hidden;  /* the projection's output: the language model's width */
    int32_t image_token, boi_token, eoi_token;
} ltx2_gemma_vision_config;

/* From a multimodal Gemma-3 config.json root ("vision_config", "mm_tokens_per_image", the token
 * indices; absent keys take transformers' defaults: Gemma3Config's SigLIP-400M tower when
 * "vision_config" is absent, SiglipVisionConfig's per key otherwise). text_hidden from the text
 * config. A text-only config, or a patch grid the pooling does not divide, is refused. */
ltx2_status ltx2_gemma_vision_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                           int64_t text_hidden, ltx2_gemma_vision_config *out);

typedef struct ltx2_gemma_vision_layer_w {
    ltx2_tensor ln1_w, ln1_b, ln2_w, ln2_b;
    ltx2_linear q, k, v, o, fc1, fc2;
} ltx2_gemma_vision_layer_w;

typedef struct ltx2_gemma_vision_weights {
    ltx2_gemma_vision_config cfg;
    ltx2_gemma_vision_layer_w *layers;
    ltx2_linear patch;       /* the Conv2d as a Linear over flattened (channel, row, column) patches */
    ltx2_tensor pos;         /* [patches, hidden] */
    ltx2_tensor post_w, post_b;
    ltx2_tensor mm_norm;     /* (1 + w) applied */
    ltx2_tensor mm_proj;     /* [hidden, text_hidden]: used as x @ W (LTX2_B_KN) */
    ltx2_st_set *set;
    ltx2_st_file view;
    char tower[48], proj[40]; /* the tensors' prefixes in the files (gemma_vision.c lists them) */
    const ltx2_backend *be;
    ltx2_dtype dtype;
    ltx2_wstore store;
    struct ltx2_bpool *extra; /* the patch weight (read apart: the table takes 2-D tensors) */
} ltx2_gemma_vision_weights;

/* The vision config of the Gemma-3 checkpoint directory dir (its config.json), no weight read. */
ltx2_status ltx2_gemma_vision_config_load(ltx2_context *ctx, const char *dir, ltx2_gemma_vision_config *out);
/* The device bytes ltx2_gemma_vision_load and one ltx2_gemma_vision_forward hold at once in dtype:
 * the weights, the patch rows, the tower's eight activation buffers and the projector's three
 * (test_gemma_vision holds it to the planning backend). The 12B's SigLIP-400M: ~0.9 GiB in bf16. */
uint64_t ltx2_gemma_vision_device_bytes(const ltx2_gemma_vision_config *c, ltx2_dtype dtype);
/* The vision tower and projector of the Gemma-3 checkpoint directory dir onto be in dtype. */
ltx2_status ltx2_gemma_vision_load(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype, const char *dir,
                                   ltx2_gemma_vision_weights **out);
void ltx2_gemma_vision_free(ltx2_gemma_vision_weights *w);

/* pixels [channels, image_size, image_size] host f32, already normalised as the image processor
 * leaves them ((x / 255 - 0.5) / 0.5) -> features [mm_tokens, text_hidden] host f32. */
ltx2_status ltx2_gemma_vision_forward(ltx2_context *ctx, const ltx2_gemma_vision_weights *w, const float *pixels,
                                      float *features);

#endif
