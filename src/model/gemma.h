/* The Gemma-3 text encoder as LTX-2 runs it: transformers' Gemma3TextModel (the language model of
 * Gemma3ForConditionalGeneration, LM head unused) returning every hidden state, one forward on the
 * backend op table. Embeddings x sqrt(hidden) (the scale rounded to the table's dtype), per layer
 * (1 + w) RMSNorms before and after attention and MLP, QK-norm per head, grouped-query attention
 * with a causal + left-padding mask (sliding-window layers also limit i - j < window; a query with
 * no key left gets 0, as torch's SDPA gives), rotate-half RoPE (global layers: theta and linear
 * scaling from the config; local layers: the local theta), GELU-tanh gated MLP, a final norm. */
#ifndef LTX2_MODEL_GEMMA_H
#define LTX2_MODEL_GEMMA_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "model/weight_table.h"

/* Bounds on a config's sizes, checked before anything is allocated (the 12B: 48 layers of 3840,
 * 262208 tokens). */
#define LTX2_GEMMA_MAX_LAYERS 512
#define LTX2_GEMMA_MAX_DIM 65536
#define LTX2_GEMMA_MAX_VOCAB (1 << 22)

typedef struct ltx2_gemma_config {
    int64_t hidden, layers, heads, kv_heads, head_dim, ffn, vocab;
    double eps;
    double query_pre_attn_scalar; /* attention scale = query_pre_attn_scalar^-0.5 */
    double rope_theta, rope_local_theta;
    double rope_linear_factor;    /* global layers' linear scaling (1: none) */
    int64_t sliding_window;
    bool sliding[LTX2_GEMMA_MAX_LAYERS]; /* per layer: a sliding-window (local) layer */
} ltx2_gemma_config;

/* Parses a Gemma-3 config.json: the multimodal one ("model_type": "gemma3", the language model in
 * "text_config") or the text-only one ("gemma3_text"). Absent keys take transformers'
 * Gemma3TextConfig defaults (Google's 12B config.json omits most of them). label names the file. */
ltx2_status ltx2_gemma_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                    ltx2_gemma_config *out);
/* dir/config.json */
ltx2_status ltx2_gemma_config_load(ltx2_context *ctx, const char *dir, ltx2_gemma_config *out);

typedef struct ltx2_gemma_layer_w {
    ltx2_linear q, k, v, o, gate, up, down;
    /* (1 + w) already applied: the norms run as plain weighted RMSNorms */
    ltx2_tensor in_norm, post_attn_norm, pre_ff_norm, post_ff_norm, q_norm, k_norm;
} ltx2_gemma_layer_w;

typedef struct ltx2_gemma_weights {
    ltx2_gemma_config cfg;
    ltx2_gemma_layer_w *layers;
    ltx2_tensor final_norm;
    /* The embedding table stays in the mapped file (the 12B's is 2 GB in bf16): the forward gathers
     * the rows it needs on the host. */
    const ltx2_st_tensor *embed;
    ltx2_st_tensor embed_own; /* random weights: the table lives in embed_data */
    float *embed_data;
    ltx2_st_set *set;
    ltx2_st_file view;
    char prefix[64]; /* the language model's key prefix in the files */
    const ltx2_backend *be;
    ltx2_dtype dtype;
    ltx2_wstore store;
} ltx2_gemma_weights;

/* Loads a Gemma-3 checkpoint directory (config.json and model.safetensors or sharded
 * model-*.safetensors with their index): the language model's tensors onto be in dtype (vision
 * tower and projector skipped), every tensor checked against the config. */
ltx2_status ltx2_gemma_weights_load_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype, const char *dir,
                                       ltx2_gemma_weights **out);
/* The same with the Linear weights stored in fp8 e4m3, each quantised per tensor as it loads (scale
 * = 448 / amax, as ltx-core quantises the DiT's; ltx2_fp8_quantize_per_tensor) and widened to dtype
 * just before its GEMM: half the resident bytes of bf16 (the 12B: ~11 GiB instead of ~22), the
 * weights' e4m3 rounding the only numeric change. No reference has an fp8 Gemma: this is ours. */
ltx2_status ltx2_gemma_weights_load_fp8_on(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype, const char *dir,
                                           ltx2_gemma_weights **out);
/* A Gemma3RMSNorm gain t on be made the plain RMSNorm weight 1 + w, in fp32 as the reference
 * computes it, then back in t's dtype; tmp holds numel(t) floats. (The language model's norms and
 * the vision projector's.) */
ltx2_status ltx2_gemma_norm_one_plus(ltx2_context *ctx, const ltx2_backend *be, ltx2_tensor *t, float *tmp);

/* Seeded normal weights (times scale; norms and embeddings too) for cfg on the CPU in f32, no
 * file: for benches at real shapes. */
ltx2_status ltx2_gemma_weights_random(ltx2_context *ctx, const ltx2_gemma_config *cfg, uint64_t seed, float scale,
                                      ltx2_gemma_weights **out);
/* A copy of src's layers on be in dtype; the embedding table stays src's (host) and is borrowed:
 * free the copy first. */
ltx2_status ltx2_gemma_weights_to(ltx2_context *ctx, const ltx2_gemma_weights *src, const ltx2_backend *be,
                                  ltx2_dtype dtype, ltx2_gemma_weights **out);
void ltx2_gemma_weights_free(ltx2_gemma_weights *w);

/* ids [B, S] (each < vocab) with mask [B, S] (1 = token; left padding) -> hidden [B, S, hidden,
 * layers + 1] host f32, the layer axis last (what the LTX feature extractor takes): index 0 the
 * scaled embeddings, index l the output of layer l - 1, the last after the final norm. */
ltx2_status ltx2_gemma_forward(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                               const uint8_t *mask, int64_t B, int64_t S, float *hidden);
/* The same, calling poll (may be NULL) after each hidden state reaches the host: layer of layers
 * + 1 done. An error from poll stops the forward with it (a cancelled run stops between layers, not
 * after minutes of a 12B on the CPU); poll also reports progress. The layer-last output is
 * transposed from the layer-major states at the end (a second copy of them meanwhile): the
 * pipeline takes ltx2_gemma_forward_split's layout instead. */
typedef ltx2_status (*ltx2_gemma_poll)(void *user, ltx2_context *ctx, int64_t layer, int64_t layers);
ltx2_status ltx2_gemma_forward_polled(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                      const uint8_t *mask, int64_t B, int64_t S, float *hidden, ltx2_gemma_poll poll,
                                      void *poll_user);

/* The leading positions mask [B, S] pads in every sample (the left padding the batch shares). */
int64_t ltx2_gemma_common_padding(const uint8_t *mask, int64_t B, int64_t S);
/* The pipeline skips the shared padding in whole multiples of a quantum. On the CPU the GEMM's
 * block over the summed dimension (LTX2_GEMM_KC, src/cpu/gemm_driver.h), so the attention's sums
 * over keys fall in the same blocks as in the whole forward (the skipped keys' blocks add exact
 * zeros) and its real rows are the whole forward's bit for bit (tests/test_text_golden.c holds the
 * pipeline to that); on a device, whose real rows move by rounding anyway (another row count, other
 * GEMM tilings), the attention kernels' 128-query tiles, so every tile of the rows left is whole. */
#define LTX2_GEMMA_SKIP_QUANTUM_CPU 384
#define LTX2_GEMMA_SKIP_QUANTUM_DEVICE 128
/* The skip the pipeline's forwards take on be: the shared padding in whole quanta. */
int64_t ltx2_gemma_pipeline_skip(const ltx2_backend *be, const uint8_t *mask, int64_t B, int64_t S);

/* The forward with sample b's states layer-major, [layers + 1, S, hidden] host f32
 * (model/text_states.h), into its own buffer hidden_b[b]: each state is written where it belongs
 * as it arrives (no interleave, one layer staged), and a caller that hands each prompt's states on
 * needs no copy of them (the 12B's are 770 MB a prompt). poll as in ltx2_gemma_forward_polled.
 * skip: the first skip positions, padding in every sample (at most ltx2_gemma_common_padding), are
 * not computed and their rows of every state are zero. No real token's state depends on them (a
 * padded key is masked, and left padding puts them before every real query), so the real rows are
 * the full forward's (bit for bit on the CPU for a skip that is a multiple of
 * LTX2_GEMMA_SKIP_QUANTUM_CPU; to rounding otherwise); LTX never reads the padded rows (its feature extractor zeroes them and the connectors put
 * registers in their place), so its contexts are the full forward's too. A pair of 200-300-token
 * prompts padded to 1024 then costs a quarter of the full forward. 0: the reference's whole
 * forward, padded rows included. */
ltx2_status ltx2_gemma_forward_split(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                     const uint8_t *mask, int64_t B, int64_t S, int64_t skip, float *const *hidden_b,
                                     ltx2_gemma_poll poll, void *poll_user);

/* The forward with sample b's states kept where they are made, layer-major, in out_b[b]: a
 * contiguous [layers + 1, S, hidden] tensor on the weights' backend in their activation dtype
 * (w->dtype), allocated by the caller. Nothing reaches the host: the connectors take the states
 * there (ltx2_text_hidden.dev). skip as in ltx2_gemma_forward_split. */
ltx2_status ltx2_gemma_forward_keep(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                    const uint8_t *mask, int64_t B, int64_t S, int64_t skip, ltx2_tensor *const *out_b,
                                    ltx2_gemma_poll poll, void *poll_user);

/* Where each hidden state goes as the forward makes it: h is [B, S, hidden] in the weights' dtype
 * on their backend, valid until the call returns; layer is its index in ltx2_gemma_forward's layer
 * axis. ltx2_gemma_forward_split's sink copies to the host; a consumer on the device (a streaming feature
 * extractor) or a bench timing the layers alone passes its own. */
typedef ltx2_status (*ltx2_gemma_sink)(void *user, ltx2_context *ctx, const ltx2_tensor *h, int64_t layer);
ltx2_status ltx2_gemma_forward_to(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                  const uint8_t *mask, int64_t B, int64_t S, ltx2_gemma_sink sink, void *user);
/* ltx2_gemma_forward_to with each token's RoPE position given, positions [B, S] (NULL: 0 .. S-1, as
 * the encoder runs with its padding counted): generation passes transformers' mask-aware positions
 * (cumsum(mask) - 1, padding at 1). */
ltx2_status ltx2_gemma_forward_pos(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                   const uint8_t *mask, const int64_t *positions, int64_t B, int64_t S,
                                   ltx2_gemma_sink sink, void *user);

/* Generation's K/V cache (one sequence): each layer's keys (after QK-norm and RoPE) and values for
 * up to cap tokens on the weights' backend, in their dtype, so a new token costs one token's forward
 * instead of the whole sequence's. */
typedef struct ltx2_gemma_kv ltx2_gemma_kv;
/* Device allocations its forwards' activations have made (the prompt's, then one decoding step's:
 * the later steps take theirs from the kept pool). */
int64_t ltx2_gemma_kv_act_allocs(const ltx2_gemma_kv *kv);
/* Its device bytes for cap tokens in a dtype of elem bytes (the 12B in bf16: 768 KiB a token). */
uint64_t ltx2_gemma_kv_bytes(const ltx2_gemma_config *cfg, int64_t cap, size_t elem);
ltx2_status ltx2_gemma_kv_create(ltx2_context *ctx, const ltx2_gemma_weights *w, int64_t cap, ltx2_gemma_kv **out);
void ltx2_gemma_kv_free(ltx2_gemma_kv *kv);
/* ltx2_gemma_forward_pos for one sequence with kv: the first call takes the prompt (S tokens, mask
 * and positions [S]) and caches its rows; each later call takes one token (S 1), which attends to
 * every cached row under the same causal, window and padding rules, and caches its own. The sink
 * sees [1, S, hidden] states. */
ltx2_status ltx2_gemma_forward_kv(ltx2_context *ctx, const ltx2_gemma_weights *w, ltx2_gemma_kv *kv, const int32_t *ids,
                                  const uint8_t *mask, const int64_t *positions, int64_t S, ltx2_gemma_sink sink,
                                  void *user);

/* Image features in place of a prompt's image tokens (Gemma3Model: the embeddings of the ids equal
 * to image_token replaced, in order, by these rows, unscaled); each contiguous run of image tokens
 * is a block whose tokens attend to each other both ways (the causal mask widened; windows still
 * apply), in the prompt's forward only. */
typedef struct ltx2_gemma_images {
    int32_t image_token;
    const float *features; /* [n, hidden] host f32 (ltx2_gemma_vision_forward) */
    int64_t n;             /* must equal the prompt's count of image tokens */
} ltx2_gemma_images;
/* ltx2_gemma_forward_kv with img (may be NULL) on the prompt's call. */
ltx2_status ltx2_gemma_forward_kv_images(ltx2_context *ctx, const ltx2_gemma_weights *w, ltx2_gemma_kv *kv,
                                         const int32_t *ids, const uint8_t *mask, const int64_t *positions, int64_t S,
                                         const ltx2_gemma_images *img, ltx2_gemma_sink sink, void *user);

/* Device bytes of loading cfg in a 2-byte dtype (fp8: its Linear weights at a byte each, plus the
 * largest one widened for its GEMM) and running the forward on B x S tokens: the layers' weights (the
 * embedding table stays on the host) and the forward's buffers (as gemma_forward.c takes them),
 * without the runtime's own overhead. */
uint64_t ltx2_gemma_device_bytes(const ltx2_gemma_config *cfg, int64_t B, int64_t S, bool fp8);

#endif
