/* Stage 1 of a pipeline with two stages: the clip whose video latent the latent upsampler brings to
 * the final one. The upsampler file decides it (generate.c, the memory plan and the CLI all ask here):
 * - spatial x2 (ltx-pipelines' two-stage and distilled pipelines): half the width and height;
 * - spatial x1.5: two thirds of them;
 * - temporal x2: every second frame at half the frame rate, so stage 1 spans the same seconds
 *   (ltx-pipelines' DFR pipeline doubles frames and rate this way: 2 (F - 1) + 1 frames at 2 fps).
 * The audio latent spans the final clip in both stages (stage 2 carries stage 1's as it is); an image
 * at final frame k conditions stage-1 frame k / frame_div. */
#ifndef LTX2_PIPELINE_TWO_STAGE_CLIP_H
#define LTX2_PIPELINE_TWO_STAGE_CLIP_H

#include <stdint.h>

#include "ltx2/ltx2.h"
#include "model/upsampler.h"

/* The LTX-2 video VAE's latent cell: 32 x 32 pixels by 8 frames (after the causal first frame). */
#define LTX2_TWO_STAGE_CELL_PX 32
#define LTX2_TWO_STAGE_CELL_FRAMES 8

typedef struct ltx2_two_stage_clip {
    int64_t frames, height, width; /* stage 1's */
    double fps;                    /* stage 1's */
    int frame_div;                 /* an image at final frame k sits at stage-1 frame k / frame_div */
    const char *kind;              /* "spatial x2", "spatial x1.5", "temporal x2" */
    const char *what;              /* how stage 1 relates to the final clip, for the run's first lines */
} ltx2_two_stage_clip;

/* Stage 1 for upsampler c and the final clip frames x height x width at fps, conditioned on
 * images[0..n_images) (may be NULL). Refused (LTX2_ERR_INVALID_ARG) when the final size or frame
 * count does not come from a whole stage-1 latent (the message says which multiple and the nearest
 * sizes that fit) or an image's frame is not one of stage 1's, and
 * (LTX2_ERR_UNSUPPORTED) for upsamplers no two-stage pipeline takes (x0.75, x4: none is published). */
ltx2_status ltx2_two_stage_clip_make(ltx2_context *ctx, const ltx2_upsampler_config *c, int64_t frames, int64_t height,
                                     int64_t width, double fps, const ltx2_image_cond *images, int n_images,
                                     ltx2_two_stage_clip *out);

#endif
