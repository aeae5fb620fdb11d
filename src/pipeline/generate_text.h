/* The text stage of a generation (generate.c runs it): from prompts or prompt embeddings to the
 * DiT's contexts, and the header reads it and the planning before it need. */
#ifndef LTX2_PIPELINE_GENERATE_TEXT_H
#define LTX2_PIPELINE_GENERATE_TEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "ltx2/ltx2.h"
#include "model/ckpt_source.h"
#include "model/connectors.h"
#include "pipeline/denoise.h"
#include "pipeline/pipeline.h"

/* Whatever checkpoint source p names (a single file, a diffusers directory, split files), headers
 * only. */
ltx2_status ltx2_gen_open_source(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_ckpt_source **src);

/* The checkpoint's connectors config and the text width its projection takes. */
ltx2_status ltx2_gen_ckpt_connectors(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_connectors_config *cc,
                                     int64_t *text_dim);

/* p->prompt (and, with need_neg, the negative prompt or Lightricks' default) through Gemma-3 in one
 * batch on p->text_encoder_device (NULL: the generation's device run_be when it is a GPU Gemma fits,
 * else the CPU), after checking the encoder's width against the checkpoint. With
 * p->enhance_prompt the prompt is first rewritten (ltx2_pipe_enhance_prompt) and *enhanced holds
 * the new text (malloc'd). */
ltx2_status ltx2_gen_text_from_prompts(ltx2_context *ctx, const ltx2_generate_params *p, bool need_neg,
                                       const ltx2_backend *run_be, ltx2_pipe_text *tp, ltx2_pipe_text *tn,
                                       char **enhanced);

/* ltx2_gen_text_from_prompts for one rank of world (NULL: one rank): rank 0 alone runs Gemma (and,
 * with p->enhance_prompt, rewrites the prompt first) and broadcasts the text it encoded and the
 * hidden states; the other ranks wait for them instead of each loading the encoder and computing the
 * same states (P times the text stage's work and, with --text-encoder-device cuda, P encoders on
 * one GPU). *enhanced holds rank 0's rewritten prompt on every rank. */
struct ltx2_comm;
ltx2_status ltx2_gen_text_ranked(ltx2_context *ctx, const ltx2_generate_params *p, bool need_neg,
                                 struct ltx2_comm *world, const ltx2_backend *run_be, ltx2_pipe_text *tp,
                                 ltx2_pipe_text *tn, char **enhanced);

/* Whether a prompt's Gemma states may stay on the generation's device until the connectors take
 * them (the encoder placed there by default; both feature extractors take device states): they
 * then count in the text encoder's memory and, on one rank, in the plan's text stage. */
bool ltx2_gen_text_keep(const ltx2_generate_params *p);

/* The DiT contexts from the encoded (tp, tn) or loaded (p's embeddings) hidden states through the
 * connectors (rope_xla: MaxDiffusion's RoPE); prompts of different lengths are left-padded to the
 * longer one. Takes tp and tn over (freed here). */
ltx2_status ltx2_gen_text_contexts(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_pipe_models *m,
                                   bool rope_xla, bool need_neg, ltx2_pipe_text *tp, ltx2_pipe_text *tn,
                                   ltx2_pipe_context *pos, ltx2_pipe_context *neg);

#endif
