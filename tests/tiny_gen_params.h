/* The end-to-end golden's generation settings (tests/golden/gen_e2e_golden.py) on a tiny
 * checkpoint: 64 x 96, 9 frames at 24 fps, 2 steps, STG on block 1, the tiny prompt embeddings.
 * What the generation tests run; each sets its device and latent rounding on top. */
#ifndef LTX2_TESTS_TINY_GEN_PARAMS_H
#define LTX2_TESTS_TINY_GEN_PARAMS_H

#include "ltx2/ltx2.h"

static inline void tiny_gen_params(ltx2_generate_params *p, const char *ckpt) {
    ltx2_generate_params_init(p);
    p->checkpoint = ckpt;
    p->prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_positive.safetensors";
    p->negative_prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_negative.safetensors";
    p->steps = 2;
    p->height = 64;
    p->width = 96;
    p->frames = 9;
    p->fps = 24.0;
    p->stg_block = 1;
}

#endif
