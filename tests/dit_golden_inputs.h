/* The inputs of a DiT golden (tests/golden/gen_dit_goldens.py and the generators that reuse its
 * make_inputs): latents, positions, timesteps, sigmas, contexts and the context mask, read into
 * forward parameters. Shared by the DiT golden tests. */
#ifndef LTX2_TESTS_DIT_GOLDEN_INPUTS_H
#define LTX2_TESTS_DIT_GOLDEN_INPUTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/safetensors.h"
#include "model/dit.h"
#include "test_util.h"

typedef struct dit_inputs {
    float *v_lat, *v_pos, *v_ts, *v_sig, *v_ctx, *a_lat, *a_pos, *a_ts, *a_sig, *a_ctx, *mask_f;
    uint8_t *mask;
} dit_inputs;

static inline void dit_inputs_free(dit_inputs *in) {
    free(in->v_lat), free(in->v_pos), free(in->v_ts), free(in->v_sig), free(in->v_ctx);
    free(in->a_lat), free(in->a_pos), free(in->a_ts), free(in->a_sig), free(in->a_ctx);
    free(in->mask_f), free(in->mask);
}

/* Fills params from a golden file using the given tensor names (prefix "input." or ""). */
static inline bool dit_inputs_load(ltx2_context *ctx, const ltx2_st_file *f, const char *pfx, const char *mask_name,
                                   dit_inputs *in, ltx2_dit_forward_params *p) {
    char n[96];
#define LOAD(dst, what)                                      \
    do {                                                     \
        snprintf(n, sizeof n, "%s%s", pfx, what);            \
        dst = ltx2_st_read_f32(ctx, f, n, NULL);             \
        CHECK(dst != NULL, "input %s missing", n);           \
        if (!dst) return false;                              \
    } while (0)
    LOAD(in->v_lat, "video.latent");
    LOAD(in->v_pos, "video.positions");
    LOAD(in->v_ts, "video.timesteps");
    LOAD(in->v_sig, "video.sigma");
    LOAD(in->v_ctx, "video.context");
    LOAD(in->a_lat, "audio.latent");
    LOAD(in->a_pos, "audio.positions");
    LOAD(in->a_ts, "audio.timesteps");
    LOAD(in->a_sig, "audio.sigma");
    LOAD(in->a_ctx, "audio.context");
#undef LOAD
    int64_t nm = 0;
    in->mask_f = ltx2_st_read_f32(ctx, f, mask_name, &nm);
    CHECK(in->mask_f != NULL, "input %s missing", mask_name);
    if (!in->mask_f) return false;
    in->mask = malloc((size_t)nm);
    for (int64_t i = 0; i < nm; i++) in->mask[i] = in->mask_f[i] != 0.0f;
    snprintf(n, sizeof n, "%svideo.latent", pfx);
    const ltx2_st_tensor *vl = ltx2_st_find(f, n);
    snprintf(n, sizeof n, "%saudio.latent", pfx);
    const ltx2_st_tensor *al = ltx2_st_find(f, n);
    snprintf(n, sizeof n, "%svideo.context", pfx);
    const ltx2_st_tensor *vc = ltx2_st_find(f, n);
    ltx2_dit_forward_params_init(p);
    p->batch = vl->shape[0];
    p->video = (ltx2_dit_modality){in->v_lat, in->v_pos, in->v_ts, in->v_sig, in->v_ctx, in->mask, vl->shape[1],
                                   vc->shape[1]};
    p->audio = (ltx2_dit_modality){in->a_lat, in->a_pos, in->a_ts, in->a_sig, in->a_ctx, in->mask, al->shape[1],
                                   vc->shape[1]};
    return true;
}

#endif
