/* Gemma-3 text generation (the LM head, a K/V-cached decoding loop, greedy or seeded sampling), the
 * core of --enhance-prompt. */
#ifndef LTX2_MODEL_GEMMA_GENERATE_H
#define LTX2_MODEL_GEMMA_GENERATE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/gemma.h"

/* transformers' GenerationConfig defaults, what a checkpoint without generation_config.json samples
 * with (Google's Gemma-3 instruct checkpoints ship top_k 64, top_p 0.95). */
#define LTX2_GEMMA_DEFAULT_TOP_K 50
#define LTX2_GEMMA_DEFAULT_TOP_P 1.0f

/* How the next token is chosen, as transformers' generate chooses it: greedy (argmax, the first of
 * equal maxima), or sampled from the softmax of the logits after its warpers, in its order:
 * divided by temperature, then top-k (every token scoring below the k-th largest removed; ties
 * kept), then top-p (ascending by score, tokens whose cumulative probability is <= 1 - top_p
 * removed, the most likely always kept). The draw is ours (torch's RNG stream is not reproducible
 * outside torch): one Philox uniform per step from (seed, LTX2_GEMMA_SAMPLE_STREAM, step). */
typedef struct ltx2_gemma_sampling {
    bool sample;
    float temperature; /* > 0; 1: off */
    int64_t top_k;     /* 0: off */
    float top_p;       /* (0, 1]; 1: off */
    uint64_t seed;
} ltx2_gemma_sampling;

/* The Philox stream of the draws (the noise takes streams 0..3). */
#define LTX2_GEMMA_SAMPLE_STREAM 16

typedef struct ltx2_gemma_gen_params {
    int64_t max_new_tokens;
    const int32_t *stop_ids; /* generation ends after emitting one of these (Gemma-3: 1 <eos>, 106 <end_of_turn>) */
    int64_t n_stop;
    /* The prompt left-padded with pad_id to a multiple of align tokens (0 or 1: none), masked, as
     * ltx-core's _pad_inputs_for_attention_alignment does before generate (align 8, pad 0). */
    int64_t align;
    int32_t pad_id;
    ltx2_gemma_sampling sampling;
    const ltx2_gemma_images *images; /* the prompt's image features (NULL: none) */
    /* Polled after every token (may be NULL): nonzero stops with LTX2_ERR_CANCELLED. A progress line
     * is logged every LTX2_GEMMA_GEN_PROGRESS_S seconds. */
    int (*cancel)(void *);
    void *cancel_user;
} ltx2_gemma_gen_params;
#define LTX2_GEMMA_GEN_PROGRESS_S 10.0

/* A sink (ltx2_gemma_sink) keeping the last position of hidden state `layer` (generation: the
 * final norm's, index cfg.layers) of an [1, S, D] forward on be, as host f32 in h [D]. */
typedef struct ltx2_gemma_last_row {
    const ltx2_backend *be;
    int64_t layer, S, D;
    float *h;
} ltx2_gemma_last_row;
ltx2_status ltx2_gemma_keep_last(void *user, ltx2_context *ctx, const ltx2_tensor *h, int64_t layer);

/* logits [vocab] of the token after ids [S] (one sequence; mask [S] 1 = token, NULL: all; positions
 * [S] as ltx2_gemma_forward_pos, NULL: 0 .. S-1): the final-norm hidden state of the last position
 * times the tied embedding table (Gemma-3 has no final logit soft-capping). The whole forward, no
 * cache: the reference the cached loop is checked against. */
ltx2_status ltx2_gemma_logits_last(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                   const uint8_t *mask, const int64_t *positions, int64_t S, float *logits);

/* The distribution a sampling step draws from: probs [V] (0 for removed tokens) from logits [V]
 * under s's warpers (s->sample ignored). */
ltx2_status ltx2_gemma_warp(ltx2_context *ctx, const ltx2_gemma_sampling *s, const float *logits, int64_t V,
                            float *probs);

/* The token after logits [V] at generation step `step` (probs [V] scratch): the argmax, or a draw
 * from the warped distribution with the step's uniform u (the first token whose cumulative
 * probability, in id order, exceeds u). */
ltx2_status ltx2_gemma_next_token(ltx2_context *ctx, const ltx2_gemma_sampling *s, const float *logits, int64_t V,
                                  int64_t step, float *probs, int32_t *tok);

/* transformers' generate (its positions cumsum(mask) - 1) with a K/V cache: out [max_new_tokens]
 * gets the new ids, *n_out how many (the stop id included when one ended it). */
ltx2_status ltx2_gemma_generate(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *prompt, int64_t n_prompt,
                                const ltx2_gemma_gen_params *p, int32_t *out, int64_t *n_out);

#endif
