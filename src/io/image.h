/* Conditioning-image input, prepared as ltx-pipelines 1.0.0 does (utils/media_io.py): decode_image()
 * = np.array(PIL.Image.open(path))[..., :3], then preprocess(image, crf) = one H.264 frame encoded
 * and decoded back, so the model sees the same compression artefacts it was trained on. PNGs are
 * read with libpng (8-bit RGB/RGBA bitwise equal to PIL), anything else with FFmpeg. */
#ifndef LTX2_IO_IMAGE_H
#define LTX2_IO_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "ltx2/ltx2.h"

/* Reads an image file as 8-bit RGB, row-major [height][width][3], malloc'ed (*rgb, caller frees).
 * PNG (found by its signature, not the extension) goes through libpng; other formats through
 * FFmpeg. Errors: LTX2_ERR_IO (cannot open/read), LTX2_ERR_INVALID_ARG (not a decodable image,
 * empty, or a side of 0 or over 16384), LTX2_ERR_UNSUPPORTED (a format this build cannot read),
 * LTX2_ERR_OOM. On error *rgb is NULL. */
ltx2_status ltx2_image_read_rgb8(ltx2_context *ctx, const char *path, uint8_t **rgb, int64_t *width,
                                 int64_t *height);

/* ltx-pipelines' preprocess(): crf 0 leaves the image untouched; otherwise the image is cropped to
 * even width and height (top-left kept: image[:h//2*2, :w//2*2]), encoded as one H.264 frame
 * (libx264, preset veryfast, the given crf, yuv420p) and decoded back to RGB; *rgb is replaced
 * (the old buffer freed) and *width, *height updated. crf must be in 0..51. On error the image is
 * left as it was. */
ltx2_status ltx2_image_h264_roundtrip(ltx2_context *ctx, uint8_t **rgb, int64_t *width, int64_t *height,
                                      int crf);

/* true when this build can read formats other than PNG and can run the H.264 round trip (FFmpeg). */
bool ltx2_image_ffmpeg_available(void);

#endif
