/* The stage machinery of the pipelines with two stages (generate.c runs it): each stage's geometry,
 * sigmas and positions, the images' conditioning of a stage, the noiser, the latent upsampler between
 * the stages and the stage's --dump files. */
#ifndef LTX2_PIPELINE_GENERATE_STAGES_H
#define LTX2_PIPELINE_GENERATE_STAGES_H

#include <stdint.h>

#include "model/upsampler.h"
#include "pipeline/pipeline.h"
#include "pipeline/semantics.h"
#include "pipeline/two_stage_clip.h"
#include "pipeline/video_cond.h"

/* One denoising stage's inputs: its geometry, sigmas and positions, and with images the video
 * tokens they give (denoise mask and clean latent). */
typedef struct gen_stage {
    ltx2_pipe_geometry g;  /* the latent grid */
    /* what the DiT runs on: the grid, plus the tokens keyframes append (video_tokens counts them) */
    ltx2_pipe_geometry gr;
    int64_t height, width; /* pixels */
    double fps;
    int frame_div; /* >= 1: an image at frame k of the clip sits at frame k / frame_div of this stage */
    int steps;
    const char *dump_prefix;
    float *sigmas, *vpos, *apos;
    float *mask, *clean; /* NULL without images */
} gen_stage;

/* The images a run is conditioned on, and the encoder that turns them into latents. */
typedef struct gen_cond {
    const ltx2_cond_image *imgs;
    int n;
    const ltx2_video_encoder *enc;
} gen_cond;

void ltx2_gen_stage_free(gen_stage *s);

/* create_noised_state with conditionings: x holds the stage's initial latent (zeros, or the
 * upsampled one) in the latent dtype; the images overwrite their tokens (x becomes the clean
 * latent, kept in s->clean with the mask in s->mask), then GaussianNoiser mixes in noise with the
 * mask times noise_scale. Without images: the plain noiser (mask 1). */
ltx2_status ltx2_gen_noise_stage(ltx2_context *ctx, const ltx2_sem_rules *rules, const gen_cond *cond,
                                 gen_stage *s, float *x, float *noise, float noise_scale);

/* The checkpoint paths of p: {p->checkpoint}, or p->checkpoint_files (split files). */
void ltx2_gen_checkpoint_paths(const ltx2_generate_params *p, const char *const **paths, int *n);
/* The latent upsampler p names (spatial_upsampler), or else the diffusers checkpoint directory
 * when it holds one (LTX2_UPSAMPLER_DF_FOLDER); NULL: none. */
const char *ltx2_gen_upsampler_path(const ltx2_generate_params *p);
/* Whether p asks for e4m3 attention in the DiT (attention_dtype "fp8"). */
bool ltx2_gen_attention_fp8(const ltx2_generate_params *p);
/* Whether p asks for fp8 DiT weights (weights_dtype "fp8"). */
bool ltx2_gen_fp8_weights(const ltx2_generate_params *p);
/* The weights dtype names generate takes ("bf16", "fp8", "fp8-cast"; NULL is "bf16"), as this
 * static string; NULL for any other name. */
const char *ltx2_gen_weights_dtype(const char *wdt);
/* Whether p asks for ltx-core's fp8_cast policy (weights_dtype "fp8-cast", model/fp8_cast.h). */
bool ltx2_gen_fp8_cast(const ltx2_generate_params *p);
/* The latent upsampler of a two-stage pipeline (p's), loaded before any other model so that a wrong
 * file is refused before Gemma or the DiT run, and the stage-1 clip it makes of p's
 * (two_stage_clip.h; refused when p's size, frames or image frames do not fit it). */
ltx2_status ltx2_gen_load_upsampler(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_upsampler **out,
                                    ltx2_two_stage_clip *clip);

/* Positions and sigmas of stage s (geometry set): the LTX-2 scheduler's `steps` sigmas (fixed < 0),
 * the distilled list `fixed` verbatim, or with LTX2_GEN_SIGMAS_GIVEN room for the caller's. */
#define LTX2_GEN_SIGMAS_GIVEN (-2)
ltx2_status ltx2_gen_stage_prepare(ltx2_context *ctx, const ltx2_sem_rules *rules, const ltx2_video_decoder *vd,
                                   int steps, int fixed, gen_stage *s);

/* The stage's starting state as --dump files: noise (the latents it starts from), sigmas and
 * positions, under the stage's prefix. */
ltx2_status ltx2_gen_dump_stage(ltx2_context *ctx, const char *dump, const gen_stage *s, const float *xv,
                                const float *xa);

/* Between the two stages (distilled.py): the stage-1 video latent through upsample_video (the
 * VAE's per-channel statistics around the upsampler) into *xv (reallocated at the stage-2 size),
 * then video and audio re-noised to sigma0 with stage 2's noise (a given audio, p->audio, is held:
 * a2vid_two_stage re-noises it with scale 0). */
ltx2_status ltx2_gen_upsample_and_renoise(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_sem_rules *rules,
                                          const ltx2_pipe_models *m, const ltx2_upsampler *ups, const gen_cond *cond,
                                          const gen_stage *s1, gen_stage *s2, const char *dump, float **xv, float *xa);

#endif
