/* Image conditioning of the video stream, as ltx-pipelines 1.0.0 prepares and applies it
 * (utils/media_io.py load_image_conditioning, utils/helpers.py combined_image_conditionings,
 * ltx_core/conditioning/types/latent_cond.py VideoConditionByLatentIndex): the image decoded and put
 * through the H.264 round trip once (io/image.h), then per stage resized to the stage's pixel size
 * and centre-cropped, normalised to [-1, 1], VAE-encoded, and its latent frame written over the
 * video tokens of latent frame 0 with denoise mask 1 - strength. Keyframes (an image at a later
 * frame, appended as extra tokens) are not written yet. */
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

/* Reads and pre-processes every image of specs[0..n) (refused here, before any model loads: an
 * unreadable file, a frame other than 0, a strength outside [0, 1], two images for frame 0, a CRF
 * outside 0..51). out[n] is filled; free with ltx2_cond_images_free. */
ltx2_status ltx2_cond_images_load(ltx2_context *ctx, const ltx2_image_cond *specs, int n, ltx2_cond_image *out);
void ltx2_cond_images_free(ltx2_cond_image *imgs, int n);

/* resize_and_center_crop + normalize_latent: rgb [h][w][3] scaled by max(out_h / h, out_w / w) to
 * ceil(h * s) x ceil(w * s) with torch's bilinear interpolation (align_corners False, no
 * antialiasing), the centre out_h x out_w kept, x / 127.5 - 1 -> out [out_h][out_w][3]. Within an
 * fp32 rounding or two of torch per pixel (measured <= 4.6e-5 of 255: its vectorised kernel sums the
 * four products in its own order). */
void ltx2_image_resize_crop(const uint8_t *rgb, int64_t w, int64_t h, int64_t out_h, int64_t out_w, float *out);

/* Applies the images to one stage of geometry g at height x width pixels: clean [Tv, C] (holding the
 * stage's initial latent: zeros, or the upsampled latent) gets each image's latent over latent
 * frame 0 (rounded to the latent dtype), mask [Tv] gets 1 - strength there and 1 elsewhere. */
ltx2_status ltx2_video_cond_apply(ltx2_context *ctx, const ltx2_video_encoder *enc, const ltx2_sem_rules *rules,
                                  const ltx2_cond_image *imgs, int n, const ltx2_pipe_geometry *g, int64_t height,
                                  int64_t width, float *mask, float *clean);

#endif
