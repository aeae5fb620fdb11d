/* Image conditioning of the video stream, as ltx-pipelines 1.0.0 prepares and applies it
 * (utils/media_io.py load_image_conditioning, utils/helpers.py combined_image_conditionings,
 * ltx_core/conditioning/types/latent_cond.py VideoConditionByLatentIndex): the image decoded and put
 * through the H.264 round trip once (io/image.h), then per stage resized to the stage's pixel size
 * and centre-cropped, normalised to [-1, 1], VAE-encoded, and its latent frame either written over
 * the video tokens of latent frame 0 (an image at frame 0) or appended after the grid as extra
 * tokens with their own positions (a keyframe, keyframe_cond.py VideoConditionByKeyframeIndex),
 * with denoise mask 1 - strength. The appended tokens are dropped after each stage
 * (clear_conditioning). */
#ifndef LTX2_PIPELINE_VIDEO_COND_H
#define LTX2_PIPELINE_VIDEO_COND_H

#include <stdint.h>

#include "ltx2/ltx2.h"
#include "model/video_vae.h"
#include "pipeline/pipeline.h"
#include "pipeline/semantics.h"

/* One image after decode and the H.264 round trip, with what the user asked of it. */
typedef struct ltx2_cond_image {
    uint8_t *rgb; /* [h][w][3] */
    int64_t w, h;
    const ltx2_image_cond *spec;
} ltx2_cond_image;

/* Reads and pre-processes every image of specs[0..n) for a clip of `frames` frames (refused here,
 * before any model loads: an unreadable file, a frame outside the clip, a strength outside [0, 1],
 * two images for one frame, a CRF outside 0..51). out[n] is filled; free with
 * ltx2_cond_images_free. */
ltx2_status ltx2_cond_images_load(ltx2_context *ctx, const ltx2_image_cond *specs, int n, int64_t frames,
                                  ltx2_cond_image *out);
void ltx2_cond_images_free(ltx2_cond_image *imgs, int n);

/* resize_and_center_crop + normalize_latent: rgb [h][w][3] scaled by max(out_h / h, out_w / w) to
 * ceil(h * s) x ceil(w * s) with torch's bilinear interpolation (align_corners False, no
 * antialiasing), the centre out_h x out_w kept, x / 127.5 - 1 -> out [out_h][out_w][3]. Within an
 * fp32 rounding or two of torch per pixel (measured <= 4.6e-5 of 255: its vectorised kernel sums the
 * four products in its own order). */
void ltx2_image_resize_crop(const uint8_t *rgb, int64_t w, int64_t h, int64_t out_h, int64_t out_w, float *out);

/* The tokens the keyframes among imgs append to a stage of grid g (one latent frame each). */
int64_t ltx2_video_cond_extra_tokens(const ltx2_cond_image *imgs, int n, const ltx2_pipe_geometry *g);

/* One stage's conditioning state. */
typedef struct ltx2_video_cond_stage {
    const ltx2_pipe_geometry *g; /* the grid */
    int64_t tokens;              /* grid + ltx2_video_cond_extra_tokens */
    int64_t height, width;       /* the stage's pixel size */
    double fps;
    int frame_div;    /* >= 1: the images' frames divided by it are this stage's */
    float *mask;      /* [tokens] out: 1 - strength on given tokens, 1 elsewhere */
    float *clean;     /* [tokens, C] in: the stage's initial latent (zeros past the grid); out: given
                         tokens written (rounded to the latent dtype) */
    float *positions; /* [3, tokens, 2] in: the grid's; out: the keyframes' after it */
} ltx2_video_cond_stage;

/* Applies the images to one stage, in their order: frame 0 over latent frame 0, keyframes appended
 * after the grid (positions: their latent frame's pixel bounds without the causal fix, shifted by
 * the frame index, time / fps in fp32). */
ltx2_status ltx2_video_cond_apply(ltx2_context *ctx, const ltx2_video_encoder *enc, const ltx2_sem_rules *rules,
                                  const ltx2_cond_image *imgs, int n, const ltx2_video_cond_stage *cs);

#endif
