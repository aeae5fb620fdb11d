/* Gemma-3 12B's text layers as the Gemma benches build them (bench_gemma, bench_gemma_generate):
 * google/gemma-3-12b-it's config.json with Gemma3TextConfig's defaults, random weights. */
#ifndef LTX2_BENCH_GEMMA12B_H
#define LTX2_BENCH_GEMMA12B_H

#include "model/gemma.h"

#define G12_HIDDEN 3840
#define G12_HEADS 16
#define G12_KV_HEADS 8
#define G12_HEAD_DIM 256
#define G12_FFN 15360
#define G12_LAYERS 48
/* every 6th layer global (sliding_window_pattern 6) */
#define G12_SLIDING_PATTERN 6
#define G12_WINDOW 1024
/* The vocabulary only sizes the gathered table (and the LM head, which no bench runs): kept small. */
#define BENCH_VOCAB 4096
/* Random weight scale ~ 1/sqrt(hidden): keeps the residual stream O(1). */
#define WEIGHT_SCALE 0.016f

/* layers of the 12B's shapes, alternating local and global (a short run sees both kinds). */
static inline ltx2_gemma_config gemma12b_config(int64_t layers) {
    ltx2_gemma_config c = {.hidden = G12_HIDDEN, .layers = layers, .heads = G12_HEADS, .kv_heads = G12_KV_HEADS,
                           .head_dim = G12_HEAD_DIM, .ffn = G12_FFN, .vocab = BENCH_VOCAB, .eps = 1e-6,
                           .query_pre_attn_scalar = G12_HEAD_DIM, .rope_theta = 1e6, .rope_local_theta = 1e4,
                           .rope_linear_factor = 8.0, .sliding_window = G12_WINDOW};
    for (int64_t l = 0; l < layers; l++) c.sliding[l] = l % 2 == 0;
    return c;
}

#endif
