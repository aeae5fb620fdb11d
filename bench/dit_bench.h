/* What the DiT benches share (bench_dit_block on the CPU, bench_step on any backend): the matmul
 * FLOPs of one forward, and synthetic inputs of a video grid, audio tokens and a text context with
 * positions as the pipeline makes them. */
#ifndef LTX2_BENCH_DIT_BENCH_H
#define LTX2_BENCH_DIT_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "model/dit.h"

/* Matmul FLOPs of one forward with batch B and ONE distinct timestep (AdaLN MLPs run once per
 * distinct value): patchify + caption projections + AdaLN MLPs + per block {video self (Tv,Tv), video
 * text (Tv,S), audio self (Ta,Ta), audio text (Ta,S), a2v (Tv,Ta), v2a (Ta,Tv), FFNs} + output
 * projections. text_kv_cached: the text attentions' K/V projections come from the text cache (a
 * denoising step after the first), so they are not counted. Elementwise work is not counted. */
double dit_bench_forward_flops(const ltx2_dit_weights *w, int64_t B, int64_t Tv, int64_t Ta, int64_t S,
                               bool text_kv_cached);

/* Synthetic inputs for batch B: grid F x H x W video tokens, Ta audio tokens, S text tokens of
 * widths cv (video) and ca (audio), one sigma, every text token attended. */
typedef struct dit_bench_inputs {
    float *v_lat, *v_pos, *v_ts, *sig, *v_ctx, *a_ctx, *a_lat, *a_pos, *a_ts;
    uint8_t *mask;
} dit_bench_inputs;

bool dit_bench_inputs_make(const ltx2_dit_config *c, int64_t B, int64_t F, int64_t H, int64_t W, int64_t Ta,
                           int64_t S, int64_t cv, int64_t ca, dit_bench_inputs *in, ltx2_dit_forward_params *p);
void dit_bench_inputs_free(dit_bench_inputs *in);

#endif
