/* The text around prompt enhancement (--enhance-prompt): the Gemma-3 chat prompt ltx-core builds
 * for a text-to-video enhancement, and ltx-pipelines' clean-up of the model's answer. */
#ifndef LTX2_TEXT_PROMPT_TEXT_H
#define LTX2_TEXT_PROMPT_TEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/context.h"

/* ltx-core's enhance_t2v messages (400fd31, base_encoder.py): the system prompt, then the user turn
 * "user prompt: {prompt}", rendered with Gemma-3's chat template and its generation prompt:
 *   <bos><start_of_turn>user\n{system}\n\n{strip(user turn)}<end_of_turn>\n<start_of_turn>model\n
 * (the template prefixes the system text to the first user turn, untrimmed, and trims the turn as
 * Jinja's trim, str.strip, does). Both inputs UTF-8; a malloc'd string in *out. */
ltx2_status ltx2_gemma3_enhance_chat(ltx2_context *ctx, const char *system_prompt, const char *prompt, char **out);

/* enhance_i2v's messages: the system prompt, then a user turn of the image and the text "User Raw
 * Input Prompt: {prompt}." (trimmed), with Gemma3Processor's expansion of the image: the text
 * before its <start_of_image> ("...{system}\n\n" and the processor's "\n\n") and after its
 * <end_of_image> (the processor's "\n\n", the text, the turn's end and the generation prompt).
 * The caller puts the image tokens (<start_of_image>, mm_tokens image tokens, <end_of_image>)
 * between the two halves' ids: Gemma's tokenizer cuts the text at those added tokens anyway. */
ltx2_status ltx2_gemma3_enhance_chat_image(ltx2_context *ctx, const char *system_prompt, const char *prompt,
                                           char **before, char **after);

/* ltx-pipelines' clean_response (utils/helpers.py): curly quotes, dashes, the no-break space, prime
 * and minus to their ASCII forms, then everything before the first character str.isalpha() accepts
 * dropped (the text unchanged when it has none). text valid UTF-8; rewritten in place. */
void ltx2_enhance_clean(char *text);

/* Python's str.isalpha() for one code point (unicode_alpha.c). */
bool ltx2_unicode_is_alpha(uint32_t cp);

#endif
