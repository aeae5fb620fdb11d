/* A DiT the e4m3 attention applies to, for the tests of ltx2_dit_forward_params.attention_fp8: the
 * tiny LTX-2.0 checkpoint's config with its video stream widened to heads of 128
 * (LTX2_ATTN_FP8_HEAD_DIM), random weights, QK-norm weights near 1 as trained models have them
 * (random ones near 0 would leave every score near 0 and the softmax uniform), and bench/dit_bench.c's
 * synthetic inputs: a CFG-like batch of 2, a 2 x 10 x 15 latent grid (300 tokens: 3 key tiles, the
 * last partial), 20 audio tokens, 64 text tokens of which sample 1's last 16 are padding. Shared by
 * test_emu_dit_attention_fp8 (the emulated device) and test_dit_parallel_attention_fp8 (ranks). */
#ifndef LTX2_TESTS_DIT_FP8_ATTN_MODEL_H
#define LTX2_TESTS_DIT_FP8_ATTN_MODEL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "dit_bench.h"
#include "model/dit.h"
#include "model/dit_config.h"
#include "model/dit_weights.h"
#include "test_util.h"

#define F8M_HEADS 2
#define F8M_LAYERS 1
/* Random weights: N(0, 1) times this (1 / sqrt(the video width 256)), so activations stay O(1). */
#define F8M_WEIGHT_SCALE 0.0625f
#define F8M_SEED 0xf8a77e11ULL
#define F8M_B 2
#define F8M_GRID_F 2
#define F8M_GRID_H 10
#define F8M_GRID_W 15
#define F8M_AUDIO 20
#define F8M_TEXT 64
#define F8M_TEXT_PAD 16

typedef struct f8m_model {
    ltx2_dit_weights *w; /* CPU, f32 */
    ltx2_dit_config cfg;
    dit_bench_inputs in;
    ltx2_dit_forward_params p; /* over in; attention_fp8 off */
    int64_t Tv, nv, na;        /* video tokens; velocity values per stream */
} f8m_model;

static inline void f8m_free(f8m_model *m) {
    dit_bench_inputs_free(&m->in);
    ltx2_dit_weights_free(m->w);
    memset(m, 0, sizeof *m);
}

/* The model and its inputs; false after a failed CHECK. */
static inline bool f8m_make(ltx2_context *ctx, f8m_model *m) {
    memset(m, 0, sizeof *m);
    char ck[1024];
    snprintf(ck, sizeof ck, "%s/weights/tiny/ltx2-tiny-2.0.safetensors", LTX2_SOURCE_DIR);
    ltx2_dit_weights *tiny = NULL;
    ltx2_status st = ltx2_dit_weights_load_file(ctx, ck, &tiny);
    if (st == LTX2_OK) {
        m->cfg = tiny->cfg;
        m->cfg.heads = F8M_HEADS, m->cfg.head_dim = LTX2_ATTN_FP8_HEAD_DIM, m->cfg.num_layers = F8M_LAYERS;
        m->cfg.inner_dim = m->cfg.cross_attention_dim = F8M_HEADS * LTX2_ATTN_FP8_HEAD_DIM;
        st = ltx2_dit_weights_random(ctx, &m->cfg, F8M_SEED, F8M_WEIGHT_SCALE, &m->w);
    }
    ltx2_dit_weights_free(tiny);
    for (int64_t l = 0; st == LTX2_OK && l < m->cfg.num_layers; l++) {
        ltx2_dit_attn_w *at[2] = {&m->w->blocks[l].attn1, &m->w->blocks[l].attn2};
        for (int i = 0; i < 2; i++) {
            ltx2_tensor *nw[2] = {&at[i]->q_norm, &at[i]->k_norm};
            for (int j = 0; j < 2; j++)
                for (int64_t c = 0; c < ltx2_tensor_numel(nw[j]); c++) ((float *)nw[j]->data)[c] += 1.0f;
        }
    }
    CHECK(st == LTX2_OK, "fp8 attention model: %s", ltx2_last_error(ctx));
    if (st != LTX2_OK) return false;
    m->Tv = F8M_GRID_F * F8M_GRID_H * F8M_GRID_W;
    m->nv = F8M_B * m->Tv * m->cfg.out_channels;
    m->na = F8M_B * F8M_AUDIO * m->cfg.audio_out_channels;
    const bool made = dit_bench_inputs_make(&m->w->cfg, F8M_B, F8M_GRID_F, F8M_GRID_H, F8M_GRID_W, F8M_AUDIO, F8M_TEXT,
                                            m->cfg.caption_channels, m->cfg.caption_channels, &m->in, &m->p);
    CHECK(made, "fp8 attention model: inputs out of memory");
    for (int64_t j = F8M_TEXT - F8M_TEXT_PAD; made && j < F8M_TEXT; j++) m->in.mask[F8M_TEXT + j] = 0; /* sample 1 */
    return made;
}

#endif
