/* PNG writer (see png.h). libpng reports errors by longjmp: everything that must survive one is
 * volatile or set before the setjmp. */
#define _POSIX_C_SOURCE 200809L
#include "io/png.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"

#ifdef LTX2_HAVE_PNG
#include <png.h>
#endif

/* PNG keywords are 1-79 bytes (PNG spec 11.3.4.3). */
#define PNG_KEY_MAX 79
/* Room for "<path>.tmp". */
#define PNG_PATH_CAP 4096

void ltx2_png_frame_to_rgb8(const float *x, int64_t n, uint8_t *out) {
    for (int64_t i = 0; i < n; i++) {
        float v = (x[i] + 1.0f) / 2.0f;
        v = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
        v = v != v ? 0.0f : v; /* NaN -> 0 (torch's cast is undefined there) */
        out[i] = (uint8_t)(v * 255.0f);
    }
}

#ifdef LTX2_HAVE_PNG

bool ltx2_png_available(void) { return true; }

typedef struct png_err {
    char msg[256];
} png_err;

static void on_error(png_structp p, png_const_charp m) {
    png_err *e = png_get_error_ptr(p);
    snprintf(e->msg, sizeof(e->msg), "%s", m);
    png_longjmp(p, 1);
}

static void on_warning(png_structp p, png_const_charp m) {
    (void)p;
    (void)m;
}

ltx2_status ltx2_png_write_rgb8(ltx2_context *ctx, const char *path, const uint8_t *rgb, int64_t width,
                                int64_t height, const ltx2_png_text *text, int n_text) {
    if (!path || !rgb || (n_text > 0 && !text))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "png: NULL path, pixels or text");
    if (width < 1 || height < 1 || width > PNG_UINT_31_MAX || height > PNG_UINT_31_MAX)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "png %s: bad size %lldx%lld", path, (long long)width,
                          (long long)height);
    for (int i = 0; i < n_text; i++) {
        const size_t kl = text[i].key ? strlen(text[i].key) : 0;
        if (kl < 1 || kl > PNG_KEY_MAX || !text[i].value)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "png %s: text key %d must be 1-%d bytes with a value", path, i,
                              PNG_KEY_MAX);
    }
    char tmp[PNG_PATH_CAP];
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "png: path too long: %s", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return LTX2_ERROR(ctx, LTX2_ERR_IO, "png: cannot create %s: %s", tmp, strerror(errno));
    png_err err = {{0}};
    png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, &err, on_error, on_warning);
    png_infop info = p ? png_create_info_struct(p) : NULL;
    if (!p || !info) {
        png_destroy_write_struct(p ? &p : NULL, NULL);
        fclose(f);
        remove(tmp);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "png %s: libpng structures", path);
    }
    png_textp volatile chunks = NULL;
    if (setjmp(png_jmpbuf(p))) {
        png_destroy_write_struct(&p, &info);
        free(chunks);
        fclose(f);
        remove(tmp);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "png %s: libpng: %s", path, err.msg);
    }
    png_init_io(p, f);
    png_set_IHDR(p, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (n_text > 0) {
        chunks = calloc((size_t)n_text, sizeof(png_text));
        if (!chunks) png_error(p, "out of memory for text chunks");
        for (int i = 0; i < n_text; i++) {
            chunks[i].compression = PNG_TEXT_COMPRESSION_NONE;
            chunks[i].key = (png_charp)text[i].key;
            chunks[i].text = (png_charp)text[i].value;
        }
        png_set_text(p, info, chunks, n_text);
    }
    png_write_info(p, info);
    for (int64_t y = 0; y < height; y++) png_write_row(p, rgb + y * width * 3);
    png_write_end(p, info);
    png_destroy_write_struct(&p, &info);
    free(chunks);
    const int werr = ferror(f);
    if (fclose(f) != 0 || werr) {
        remove(tmp);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "png: writing %s failed", tmp);
    }
    if (rename(tmp, path) != 0) {
        const int e = errno;
        remove(tmp);
        return LTX2_ERROR(ctx, LTX2_ERR_IO, "png: cannot rename %s to %s: %s", tmp, path, strerror(e));
    }
    return LTX2_OK;
}

#else

bool ltx2_png_available(void) { return false; }

ltx2_status ltx2_png_write_rgb8(ltx2_context *ctx, const char *path, const uint8_t *rgb, int64_t width,
                                int64_t height, const ltx2_png_text *text, int n_text) {
    (void)rgb, (void)width, (void)height, (void)text, (void)n_text;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                      "png %s: this build has no libpng (apt-get install libpng-dev, then re-run cmake)",
                      path ? path : "(null)");
}

#endif
