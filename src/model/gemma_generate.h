/* Gemma-3 text generation (the LM head and greedy decoding), the core of --enhance-prompt. */
#ifndef LTX2_MODEL_GEMMA_GENERATE_H
#define LTX2_MODEL_GEMMA_GENERATE_H

#include <stdint.h>

#include "model/gemma.h"

typedef struct ltx2_gemma_gen_params {
    int64_t max_new_tokens;
    const int32_t *stop_ids; /* generation ends after emitting one of these (Gemma-3: 1 <eos>, 106 <end_of_turn>) */
    int64_t n_stop;
    /* The prompt left-padded with pad_id to a multiple of align tokens (0 or 1: none), masked, as
     * ltx-core's _pad_inputs_for_attention_alignment does before generate (align 8, pad 0). */
    int64_t align;
    int32_t pad_id;
} ltx2_gemma_gen_params;

/* logits [vocab] of the token after ids [S] (one sequence; mask [S] 1 = token, NULL: all; positions
 * [S] as ltx2_gemma_forward_pos, NULL: 0 .. S-1): the final-norm hidden state of the last position
 * times the tied embedding table (Gemma-3 has no final logit soft-capping). */
ltx2_status ltx2_gemma_logits_last(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids,
                                   const uint8_t *mask, const int64_t *positions, int64_t S, float *logits);

/* Greedy decoding (transformers' generate with do_sample=False, its positions cumsum(mask) - 1):
 * out [max_new_tokens] gets the new ids, *n_out how many (the stop id included when one ended it). */
ltx2_status ltx2_gemma_generate_greedy(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *prompt,
                                       int64_t n_prompt, const ltx2_gemma_gen_params *p, int32_t *out,
                                       int64_t *n_out);

#endif
