/* The stage machinery of the pipelines with two stages (generate_stages.h). */
#include "pipeline/generate_stages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/finite.h"
#include "io/file.h"
#include "model/names.h"
#include "pipeline/scheduler.h"

void ltx2_gen_stage_free(gen_stage *s) {
    free(s->sigmas);
    free(s->vpos);
    free(s->apos);
    free(s->mask);
    free(s->clean);
}

/* create_noised_state with conditionings: x holds the stage's initial latent (zeros, or the
 * upsampled one) in the latent dtype; the images overwrite their tokens (x becomes the clean
 * latent, kept in s->clean with the mask in s->mask), then GaussianNoiser mixes in noise with the
 * mask times noise_scale. Without images: the plain noiser (mask 1). */
ltx2_status ltx2_gen_noise_stage(ltx2_context *ctx, const ltx2_sem_rules *rules, const gen_cond *cond,
                                 gen_stage *s, float *x, float *noise, float noise_scale) {
    const int64_t n = s->gr.video_tokens * s->g.lc; /* x: the grid, then zeros where keyframes go */
    ltx2_sched_round_latent(rules, noise, n); /* drawn in the latent dtype */
    if (cond->n) {
        s->mask = ltx2_pipe_alloc_f(s->gr.video_tokens);
        s->clean = ltx2_pipe_alloc_f(n);
        if (!s->mask || !s->clean) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for the conditioning");
        memcpy(s->clean, x, (size_t)n * sizeof(float));
        const ltx2_video_cond_stage cs = {.g = &s->g, .tokens = s->gr.video_tokens, .height = s->height,
                                          .width = s->width, .fps = s->fps, .frame_div = s->frame_div,
                                          .mask = s->mask, .clean = s->clean, .positions = s->vpos};
        LTX2_TRY(ltx2_video_cond_apply(ctx, cond->enc, rules, cond->imgs, cond->n, &cs));
        memcpy(x, s->clean, (size_t)n * sizeof(float));
    }
    ltx2_pipe_renoise(x, noise, s->mask, s->g.lc, noise_scale, n);
    ltx2_sched_round_latent(rules, x, n);
    return LTX2_OK;
}

/* The latent upsampler of a two-stage pipeline, loaded before any other model so that a wrong
 * file (or a size its stage 1 cannot have) is refused before Gemma or the DiT run. */
ltx2_status ltx2_gen_load_upsampler(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_upsampler **out,
                                    ltx2_two_stage_clip *clip) {
    const char *path = ltx2_gen_upsampler_path(p);
    ltx2_status st = ltx2_upsampler_open(ctx, path, out);
    if (st == LTX2_OK)
        st = ltx2_two_stage_clip_make(ctx, ltx2_upsampler_get_config(*out), p->frames, p->height, p->width, p->fps,
                                      p->images, p->n_images, clip);
    if (st != LTX2_OK) {
        ltx2_error_prefix(ctx, "generate: latent upsampler %s", path);
        ltx2_upsampler_free(*out);
        *out = NULL;
    }
    return st;
}

/* Positions and sigmas of stage s (geometry set): the LTX-2 scheduler's `steps` sigmas, or the
 * distilled list `fixed` verbatim. */
ltx2_status ltx2_gen_stage_prepare(ltx2_context *ctx, const ltx2_sem_rules *rules, const ltx2_video_decoder *vd,
                                   int steps, int fixed, gen_stage *s) {
    s->steps = steps;
    s->sigmas = ltx2_pipe_alloc_f(steps + 1);
    s->vpos = ltx2_pipe_alloc_f(3 * s->gr.video_tokens * 2);
    s->apos = ltx2_pipe_alloc_f(s->g.at * 2);
    if (!s->sigmas || !s->vpos || !s->apos) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory");
    /* the grid's; keyframes write theirs after it (ltx2_video_cond_apply) */
    ltx2_pipe_video_positions(&s->g, vd->time_factor, vd->space_factor, s->fps, rules->latent_bf16, rules->dit_rope_xla,
                              s->gr.video_tokens,
                              s->vpos);
    ltx2_pipe_audio_positions(&s->g, rules->dit_rope_xla, s->apos);
    if (fixed == LTX2_GEN_SIGMAS_GIVEN) return LTX2_OK;
    if (fixed < 0) {
        ltx2_sched_params sp = ltx2_sched_params_default(steps, s->g.video_tokens);
        return ltx2_sched_sigmas(ctx, rules, &sp, s->sigmas);
    }
    int n = 0;
    const float *v = ltx2_sched_distilled((ltx2_distilled_stage)fixed, &n);
    if (!v || n != steps + 1) return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "generate: distilled sigma list %d", fixed);
    memcpy(s->sigmas, v, (size_t)n * sizeof(float));
    return LTX2_OK;
}

/* The stage's starting state as --dump files: noise (the latents it starts from), sigmas and
 * positions, under the stage's prefix. */
ltx2_status ltx2_gen_dump_stage(ltx2_context *ctx, const char *dump, const gen_stage *s, const float *xv,
                                const float *xa) {
    if (!dump) return LTX2_OK;
    const ltx2_pipe_geometry *g = &s->gr;
    const int64_t s1[2] = {g->video_tokens, g->lc}, s2[2] = {g->at, g->audio_feat}, s3[1] = {s->steps + 1};
    const int64_t s4[4] = {1, 3, g->video_tokens, 2}, s5[4] = {1, 1, g->at, 2};
    static const char *const names[5] = {"noise_video", "noise_audio", "sigmas", "video_positions", "audio_positions"};
    const float *data[5] = {xv, xa, s->sigmas, s->vpos, s->apos};
    const int nd[5] = {2, 2, 1, 4, 4};
    const int64_t *shapes[5] = {s1, s2, s3, s4, s5};
    char name[96];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "%s%s", s->dump_prefix, names[i]);
        LTX2_TRY(ltx2_pipe_dump(ctx, dump, name, data[i], nd[i], shapes[i]));
    }
    return LTX2_OK;
}

/* Between the two stages (distilled.py): the stage-1 video latent through upsample_video (the
 * VAE's per-channel statistics around the upsampler) into *xv (reallocated at the stage-2 size),
 * then video and audio re-noised to sigma0 with stage 2's noise (a given audio stays as it is). */
ltx2_status ltx2_gen_upsample_and_renoise(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_sem_rules *rules,
                                          const ltx2_pipe_models *m, const ltx2_upsampler *ups, const gen_cond *cond,
                                          const gen_stage *s1, gen_stage *s2, const char *dump, float **xv, float *xa) {
    const ltx2_pipe_geometry *g1 = &s1->g, *g2 = &s2->g;
    const int64_t in[5] = {1, g1->lf, g1->lh, g1->lw, g1->lc}, out[5] = {1, g2->lf, g2->lh, g2->lw, g2->lc};
    /* the grid of stage 1's result (clear_conditioning drops the keyframe tokens after it) goes up;
     * stage 2's keyframe tokens start as zeros */
    const int64_t nv = s2->gr.video_tokens * g2->lc, na = g2->at * g2->audio_feat;
    float *up = calloc((size_t)nv, sizeof(float)), *noise_v = ltx2_pipe_alloc_f(nv), *noise_a = ltx2_pipe_alloc_f(na);
    ltx2_status st = LTX2_OK;
    if (!up || !noise_v || !noise_a) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "generate: out of memory for stage 2");
    if (st == LTX2_OK) {
        ltx2_tensor x = ltx2_tensor_make(*xv, LTX2_F32, 5, in), y = ltx2_tensor_make(up, LTX2_F32, 5, out);
        st = ltx2_upsampler_upsample_latent_on(ctx, ups, m->be, m->vdec->mean_of_means, m->vdec->std_of_means, &x, &y);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "upsampling the stage-1 latent");
    }
    if (st == LTX2_OK)
        st = ltx2_check_finite(ctx, LTX2_ERR_NUMERIC, up, 5, out, "the upsampled video latent [1, F', H', W', C]");
    if (st == LTX2_OK) st = ltx2_pipe_dump(ctx, dump, "upsampled_video_latent", up, 5, out);
    if (st == LTX2_OK) {
        if (p->noise)
            st = ltx2_pipe_noise_load(ctx, p->noise, 1, &s2->gr, noise_v, noise_a);
        else
            ltx2_pipe_noise_philox(&s2->gr, p->seed, 1, noise_v, noise_a);
    }
    if (st == LTX2_OK) st = ltx2_pipe_noise_dump(ctx, dump, 1, &s2->gr, noise_v, noise_a);
    if (st == LTX2_OK) {
        /* the reference's noise is drawn in the latent dtype, the upsampler's output is in it */
        ltx2_sched_round_latent(rules, up, nv);
        st = ltx2_gen_noise_stage(ctx, rules, cond, s2, up, noise_v, s2->sigmas[0]);
    }
    if (st == LTX2_OK) {
        if (!p->audio) { /* a given audio is held: its noise is drawn and multiplied by 0 (a2vid) */
            ltx2_sched_round_latent(rules, noise_a, na);
            ltx2_pipe_renoise(xa, noise_a, NULL, g2->audio_feat, s2->sigmas[0], na);
            ltx2_sched_round_latent(rules, xa, na);
        }
        free(*xv);
        *xv = up;
        up = NULL;
    }
    free(up);
    free(noise_v);
    free(noise_a);
    return st;
}


/* Longest checkpoint directory + upsampler config path looked at (longer: not found). */
#define UPSAMPLER_PATH_CAP 4096

const char *ltx2_gen_upsampler_path(const ltx2_generate_params *p) {
    if (p->spatial_upsampler) return p->spatial_upsampler;
    const char *const *paths;
    int n_paths;
    ltx2_gen_checkpoint_paths(p, &paths, &n_paths);
    /* a diffusers directory: alone, or beside a MaxDiffusion weights cache (ckpt_source.h) */
    for (int i = 0; i < n_paths; i++) {
        if (!paths[i] || !ltx2_names_is_diffusers_dir(paths[i])) continue;
        char cfg[UPSAMPLER_PATH_CAP];
        const int n = snprintf(cfg, sizeof cfg, "%s/%s/config.json", paths[i], LTX2_UPSAMPLER_DF_FOLDER);
        return n > 0 && (size_t)n < sizeof cfg && ltx2_path_is_file(cfg) ? paths[i] : NULL;
    }
    return NULL;
}

bool ltx2_gen_attention_fp8(const ltx2_generate_params *p) {
    return p->attention_dtype && !strcmp(p->attention_dtype, "fp8");
}

const char *ltx2_gen_weights_dtype(const char *wdt) {
    static const char *const names[] = {"bf16", "fp8", "fp8-cast"};
    if (!wdt) return names[0];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(wdt, names[i])) return names[i];
    return NULL;
}

bool ltx2_gen_fp8_weights(const ltx2_generate_params *p) {
    return p->weights_dtype && !strcmp(p->weights_dtype, "fp8");
}

bool ltx2_gen_fp8_cast(const ltx2_generate_params *p) {
    return p->weights_dtype && !strcmp(p->weights_dtype, "fp8-cast");
}

void ltx2_gen_checkpoint_paths(const ltx2_generate_params *p, const char *const **paths, int *n) {
    if (p->checkpoint || p->n_checkpoint_files <= 0) {
        *paths = &p->checkpoint;
        *n = 1;
    } else {
        *paths = p->checkpoint_files;
        *n = p->n_checkpoint_files;
    }
}
