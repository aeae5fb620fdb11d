/* 8-bit RGB PNG frames via libpng, with tEXt chunks (e.g. the generation parameters). Files are
 * written to "<path>.tmp" and renamed into place, so a failed write never leaves a half file.
 * Without LTX2_HAVE_PNG (libpng not found at configure time) every call returns
 * LTX2_ERR_UNSUPPORTED. */
#ifndef LTX2_IO_PNG_H
#define LTX2_IO_PNG_H

#include <stdbool.h>
#include <stdint.h>

#include "ltx2/ltx2.h"

typedef struct ltx2_png_text {
    const char *key;   /* 1-79 Latin-1 characters, as the PNG spec requires */
    const char *value;
} ltx2_png_text;

/* true when this build can write PNGs. */
bool ltx2_png_available(void);

/* rgb: height x width x 3 bytes, row-major. */
ltx2_status ltx2_png_write_rgb8(ltx2_context *ctx, const char *path, const uint8_t *rgb, int64_t width,
                                int64_t height, const ltx2_png_text *text, int n_text);

/* ltx-core's uint8 conversion of a decoded frame: trunc(clamp((x + 1) / 2, 0, 1) * 255), for
 * n floats (HWC, RGB). */
void ltx2_png_frame_to_rgb8(const float *x, int64_t n, uint8_t *out);

#endif
