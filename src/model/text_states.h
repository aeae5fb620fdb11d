/* Gemma hidden states in their two layouts. Files (--prompt-embeds, the text cache) and ltx-core's
 * torch.stack(hidden_states, dim=-1) hold them layer-last, [S, D, L]; the engine holds them
 * layer-major, [L, S, D]: each layer's state lands in one contiguous block as the encoder makes
 * it, so nothing is interleaved on the way out of Gemma (the 12B's 2 x 1024 tokens: 1.5 GB of
 * f32, which the interleave read and wrote back several times; bench/PERF_NOTES.md, the text
 * encoder). These transposes run only where a file is read or written. */
#ifndef LTX2_MODEL_TEXT_STATES_H
#define LTX2_MODEL_TEXT_STATES_H

#include <stdint.h>

/* major[l * records + r] = last[r * L + l] for records (token, channel) pairs and L layers. */
void ltx2_text_states_to_layer_major(const float *last, int64_t records, int64_t L, float *major);
/* last[r * L + l] = major[l * records + r]. */
void ltx2_text_states_to_layer_last(const float *major, int64_t records, int64_t L, float *last);

#endif
