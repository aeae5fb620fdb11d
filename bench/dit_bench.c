/* The DiT benches' shared pieces (dit_bench.h). */
#include "dit_bench.h"

#include <stdlib.h>
#include <string.h>

#include "core/rng.h"

/* The inputs' one sigma (any value in (0, 1): the timing does not depend on it). */
#define SIGMA 0.5f
/* Positions: a latent frame spans 8 video frames at 25 fps, a latent pixel 32 px, an audio token 40 ms. */
#define FRAME_S (8.0f / 25.0f)
#define PATCH_PX 32.0f
#define AUDIO_TOKEN_S 0.04f

/* Every linear is 2*M*out*in FLOPs. */
static double lin_flops(const ltx2_dit_linear *l, int64_t M) { return 2.0 * (double)M * (double)l->out * (double)l->in; }

/* q/o on Tq rows, k/v on Tk rows, plus QK^T and PV: 2 * 2*Tq*Tk*inner (inner = heads * head_dim). */
static double attn_flops(const ltx2_dit_attn_w *a, int64_t Tq, int64_t Tk) {
    return lin_flops(&a->q, Tq) + lin_flops(&a->k, Tk) + lin_flops(&a->v, Tk) + lin_flops(&a->o, Tq) +
           4.0 * (double)Tq * (double)Tk * (double)(a->heads * a->head_dim);
}

static double adaln_flops(const ltx2_dit_adaln_w *a, int64_t U) {
    return lin_flops(&a->l1, U) + lin_flops(&a->l2, U) + lin_flops(&a->lin, U);
}

double dit_bench_forward_flops(const ltx2_dit_weights *w, int64_t B, int64_t Tv, int64_t Ta, int64_t S,
                               bool text_kv_cached) {
    const ltx2_dit_config *c = &w->cfg;
    double per_sample = lin_flops(&w->patchify, Tv) + lin_flops(&w->audio_patchify, Ta) +
                        lin_flops(&w->proj_out, Tv) + lin_flops(&w->audio_proj_out, Ta);
    if (c->caption_projection)
        per_sample += lin_flops(&w->caption1, S) + lin_flops(&w->caption2, S) + lin_flops(&w->audio_caption1, S) +
                      lin_flops(&w->audio_caption2, S);
    double f = (double)B * per_sample + adaln_flops(&w->adaln, 1) + adaln_flops(&w->audio_adaln, 1) +
               adaln_flops(&w->av_video_ss, 1) + adaln_flops(&w->av_audio_ss, 1) + adaln_flops(&w->av_a2v_gate, 1) +
               adaln_flops(&w->av_v2a_gate, 1);
    for (int64_t i = 0; i < c->num_layers; i++) {
        const ltx2_dit_block_w *b = &w->blocks[i];
        f += (double)B * (attn_flops(&b->attn1, Tv, Tv) + attn_flops(&b->attn2, Tv, S) +
                          attn_flops(&b->audio_attn1, Ta, Ta) + attn_flops(&b->audio_attn2, Ta, S) +
                          attn_flops(&b->a2v, Tv, Ta) + attn_flops(&b->v2a, Ta, Tv) + lin_flops(&b->ff.proj_in, Tv) +
                          lin_flops(&b->ff.proj_out, Tv) + lin_flops(&b->audio_ff.proj_in, Ta) +
                          lin_flops(&b->audio_ff.proj_out, Ta));
        if (text_kv_cached)
            f -= (double)B * (lin_flops(&b->attn2.k, S) + lin_flops(&b->attn2.v, S) +
                              lin_flops(&b->audio_attn2.k, S) + lin_flops(&b->audio_attn2.v, S));
    }
    return f;
}

void dit_bench_inputs_free(dit_bench_inputs *in) {
    free(in->v_lat), free(in->v_pos), free(in->v_ts), free(in->sig), free(in->v_ctx), free(in->a_ctx);
    free(in->a_lat), free(in->a_pos), free(in->a_ts), free(in->mask);
}

static float *alloc_f(int64_t n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(float)); }

bool dit_bench_inputs_make(const ltx2_dit_config *c, int64_t B, int64_t F, int64_t H, int64_t W, int64_t Ta,
                           int64_t S, int64_t cv, int64_t ca, dit_bench_inputs *in, ltx2_dit_forward_params *p) {
    const int64_t Tv = F * H * W;
    memset(in, 0, sizeof *in);
    in->v_lat = alloc_f(B * Tv * c->in_channels);
    in->v_pos = alloc_f(B * 3 * Tv * 2);
    in->v_ts = alloc_f(B * Tv);
    in->sig = alloc_f(B);
    in->v_ctx = alloc_f(B * S * cv);
    in->a_ctx = alloc_f(B * S * ca);
    in->a_lat = alloc_f(B * Ta * c->audio_in_channels);
    in->a_pos = alloc_f(B * Ta * 2);
    in->a_ts = alloc_f(B * Ta);
    in->mask = malloc((size_t)(B * S));
    if (!in->v_lat || !in->v_pos || !in->v_ts || !in->sig || !in->v_ctx || !in->a_ctx || !in->a_lat || !in->a_pos || !in->a_ts ||
        !in->mask)
        return false;
    ltx2_rng_normal(11, 0, 0, (size_t)(B * Tv * c->in_channels), in->v_lat);
    ltx2_rng_normal(11, 1, 0, (size_t)(B * Ta * c->audio_in_channels), in->a_lat);
    ltx2_rng_normal(11, 2, 0, (size_t)(B * S * cv), in->v_ctx);
    ltx2_rng_normal(11, 3, 0, (size_t)(B * S * ca), in->a_ctx);
    memset(in->mask, 1, (size_t)(B * S));
    for (int64_t b = 0; b < B; b++) {
        in->sig[b] = SIGMA;
        float *vp = in->v_pos + b * 3 * Tv * 2;
        for (int64_t f = 0; f < F; f++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t x = 0; x < W; x++) {
                    int64_t t = (f * H + h) * W + x;
                    vp[(0 * Tv + t) * 2] = (float)f * FRAME_S;
                    vp[(0 * Tv + t) * 2 + 1] = (float)(f + 1) * FRAME_S;
                    vp[(1 * Tv + t) * 2] = (float)h * PATCH_PX;
                    vp[(1 * Tv + t) * 2 + 1] = (float)(h + 1) * PATCH_PX;
                    vp[(2 * Tv + t) * 2] = (float)x * PATCH_PX;
                    vp[(2 * Tv + t) * 2 + 1] = (float)(x + 1) * PATCH_PX;
                }
        for (int64_t t = 0; t < Tv; t++) in->v_ts[b * Tv + t] = SIGMA;
        for (int64_t t = 0; t < Ta; t++) {
            in->a_pos[(b * Ta + t) * 2] = (float)t * AUDIO_TOKEN_S;
            in->a_pos[(b * Ta + t) * 2 + 1] = (float)(t + 1) * AUDIO_TOKEN_S;
            in->a_ts[b * Ta + t] = SIGMA;
        }
    }
    ltx2_dit_forward_params_init(p);
    p->batch = B;
    p->video = (ltx2_dit_modality){in->v_lat, in->v_pos, in->v_ts, in->sig, in->v_ctx, in->mask, Tv, S};
    p->audio = (ltx2_dit_modality){in->a_lat, in->a_pos, in->a_ts, in->sig, in->a_ctx, in->mask, Ta, S};
    return true;
}

