/* Conditioning-image input (src/io/image.c): the PNG fixtures of tests/data/images/ (RGBA, 16-bit,
 * interlaced, gray, gray + alpha, 4-bit gray, palette with tRNS) read back bitwise equal to what
 * PIL gives (the .rgb files beside them, written by make_images.py); a PNG written here, also
 * under a .jpg name, and the 16384-pixel limit; a JPEG through FFmpeg close to PIL's decode and
 * found by content under a .png name; ltx-pipelines' H.264 round trip (crf 0 untouched, odd sizes
 * cropped to even keeping the top-left, PSNR of a smooth gradient, the 16x16 result against
 * preprocess() itself run in PyAV, crf outside 0..51 refused); and failures (missing file,
 * directory, text named .png, truncated and corrupt PNGs, empty file) that must fail cleanly.
 * Parts needing libpng or FFmpeg are skipped in builds without them. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/file.h"
#include "io/image.h"
#include "io/png.h"
#include "test_util.h"

#define IMAGES_DIR LTX2_SOURCE_DIR "/tests/data/images"
#define PATH_CAP 4096
/* The reader's documented side limit (image.h). */
#define MAX_DIM 16384
/* gradient.jpg decoded by FFmpeg vs PIL (libjpeg-turbo): measured max 5, mean 1.03 codes with
 * FFmpeg 5.1; the bounds leave room for other FFmpeg versions' IDCTs. */
#define JPEG_MAX_DIFF 10
#define JPEG_MEAN_DIFF 2.5
#define JPEG_SIZE 16
/* ltx-pipelines' DEFAULT_IMAGE_CRF. */
#define CRF_DEFAULT 33
/* A smooth 64x48 ramp at CRF 33 comes back at 38.1 dB (measured: FFmpeg 5.1, libx264 164, and
 * the same in PyAV); the bound leaves room for other x264 versions. */
#define GRADIENT_W 64
#define GRADIENT_H 48
#define GRADIENT_MIN_PSNR 34.0
/* The odd image is the 64x48 ramp plus one magenta column and row that the even crop must drop:
 * kept, they would pull the PSNR against the ramp far below the bound. */
#define ODD_W (GRADIENT_W + 1)
#define ODD_H (GRADIENT_H + 1)
/* 16x16 round trip against preprocess() run in PyAV (roundtrip_crf33.rgb). With the same FFmpeg
 * swscale and x264 behaviour it is bitwise equal (it is, with FFmpeg 5.1 / x264 164 here against
 * PyAV 18.1's FFmpeg 8.0 / x264 165); other versions may code the picture a little differently. */
#define PYAV_SIZE 16
#define PYAV_MIN_PSNR 40.0
/* A PSNR this high means the round trip changed nothing (yuv420p alone loses more). */
#define PSNR_IDENTICAL 99.0

typedef struct fixture {
    const char *name;
    int64_t w, h;
} fixture;

static const fixture png_fixtures[] = {
    {"rgba8.png", 7, 5},      {"rgb16.png", 5, 3},  {"adam7.png", 9, 7},  {"gray8.png", 7, 5},
    {"gray_alpha.png", 7, 5}, {"gray4.png", 7, 5},  {"gray16.png", 7, 5}, {"palette.png", 7, 5},
};

static double psnr(const uint8_t *a, const uint8_t *b, size_t n) {
    double se = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = (double)a[i] - b[i];
        se += d * d;
    }
    return se == 0 ? INFINITY : 10.0 * log10(255.0 * 255.0 / (se / (double)n));
}

static int max_abs_diff(const uint8_t *a, const uint8_t *b, size_t n, double *mean) {
    int m = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        const int d = abs((int)a[i] - (int)b[i]);
        m = d > m ? d : m;
        sum += d;
    }
    if (mean) *mean = n ? sum / (double)n : 0;
    return m;
}

static char *fixture_path(const char *name) { return ltx2_path_join(IMAGES_DIR, name); }

/* The bytes of a file in tests/data/images (NULL when missing). */
static uint8_t *read_fixture(ltx2_context *ctx, const char *name, size_t *size) {
    char *path = fixture_path(name);
    char *data = NULL;
    if (!path || ltx2_file_read_all(ctx, path, &data, size) != LTX2_OK) data = NULL;
    free(path);
    return (uint8_t *)data;
}

static bool write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    const bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* The same ramps as make_images.py's round_trip_input(). */
static void draw_round_trip_input(uint8_t *rgb) {
    for (int y = 0; y < PYAV_SIZE; y++)
        for (int x = 0; x < PYAV_SIZE; x++) {
            uint8_t *px = rgb + ((size_t)y * PYAV_SIZE + x) * 3;
            px[0] = (uint8_t)(x * 15 + (x * y * 7) % 11);
            px[1] = (uint8_t)(y * 15 + (x + 3 * y) % 7);
            px[2] = (uint8_t)(255 - 8 * (x + y) + (x * x + y) % 5);
        }
}

/* A smooth ramp (stride in pixels), the content that survives CRF 33 almost untouched. */
static void draw_ramp(uint8_t *rgb, int w, int h, int stride) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *px = rgb + ((size_t)y * stride + x) * 3;
            px[0] = (uint8_t)(x * 255 / (GRADIENT_W - 1));
            px[1] = (uint8_t)(y * 255 / (GRADIENT_H - 1));
            px[2] = (uint8_t)((x + y) * 255 / (GRADIENT_W + GRADIENT_H - 2));
        }
}

/* Reads path and expects status st (output NULL on failure); prints the message. */
static void expect_failure(ltx2_context *ctx, const char *what, const char *path, ltx2_status st, const char *needle) {
    static uint8_t sentinel;
    uint8_t *rgb = &sentinel; /* not NULL, so the reset to NULL on failure is seen */
    int64_t w = -1, h = -1;
    ltx2_clear_error(ctx);
    const ltx2_status got = ltx2_image_read_rgb8(ctx, path, &rgb, &w, &h);
    printf("%s: %s: %s\n", what, ltx2_status_name(got), ltx2_last_error(ctx));
    CHECK(got == st, "%s: status %s, want %s", what, ltx2_status_name(got), ltx2_status_name(st));
    CHECK(rgb == NULL && w == 0 && h == 0, "%s: outputs not reset on failure", what);
    if (got == LTX2_OK) free(rgb);
    if (needle) CHECK(strstr(ltx2_last_error(ctx), needle) != NULL, "%s: message lacks \"%s\"", what, needle);
}

/* ---- PNG (libpng) ---- */

static void check_png_fixtures(ltx2_context *ctx) {
    for (size_t i = 0; i < sizeof(png_fixtures) / sizeof(png_fixtures[0]); i++) {
        const fixture *fx = &png_fixtures[i];
        char *path = fixture_path(fx->name);
        char want_name[256];
        snprintf(want_name, sizeof(want_name), "%s.rgb", fx->name);
        size_t want_size = 0;
        uint8_t *want = read_fixture(ctx, want_name, &want_size);
        uint8_t *rgb = NULL;
        int64_t w = 0, h = 0;
        const ltx2_status st = ltx2_image_read_rgb8(ctx, path, &rgb, &w, &h);
        CHECK(st == LTX2_OK, "%s: %s", fx->name, ltx2_last_error(ctx));
        CHECK(want && want_size == (size_t)(fx->w * fx->h * 3), "%s: expected pixels missing or %zu bytes", want_name,
              want_size);
        CHECK(w == fx->w && h == fx->h, "%s: %lldx%lld, want %lldx%lld", fx->name, (long long)w, (long long)h,
              (long long)fx->w, (long long)fx->h);
        if (st == LTX2_OK && want && w == fx->w && h == fx->h && want_size == (size_t)(w * h * 3)) {
            size_t first = want_size;
            for (size_t k = 0; k < want_size && first == want_size; k++)
                if (rgb[k] != want[k]) first = k;
            CHECK(first == want_size, "%s: byte %zu (pixel %zu, channel %zu) is %d, PIL gives %d", fx->name, first,
                  first / 3, first % 3, first < want_size ? rgb[first] : 0, first < want_size ? want[first] : 0);
            if (first == want_size) printf("%s: %lldx%lld, equal to PIL\n", fx->name, (long long)w, (long long)h);
        }
        free(rgb);
        free(want);
        free(path);
    }
}

/* A PNG written by ltx2_png_write_rgb8 comes back exactly, also when named .jpg (found by its
 * signature); a side over the limit is refused, the limit itself accepted. */
static void check_png_written(ltx2_context *ctx, const char *dir) {
    enum { W = 13, H = 7 };
    uint8_t src[W * H * 3];
    for (size_t i = 0; i < sizeof(src); i++) src[i] = (uint8_t)(i * 37 + 11);
    const char *names[2] = {"written.png", "written_png.jpg"};
    for (int k = 0; k < 2; k++) {
        char *path = ltx2_path_join(dir, names[k]);
        CHECK(path && ltx2_png_write_rgb8(ctx, path, src, W, H, NULL, 0) == LTX2_OK, "write %s: %s", names[k],
              ltx2_last_error(ctx));
        uint8_t *rgb = NULL;
        int64_t w = 0, h = 0;
        CHECK(ltx2_image_read_rgb8(ctx, path, &rgb, &w, &h) == LTX2_OK, "read %s: %s", names[k], ltx2_last_error(ctx));
        CHECK(rgb && w == W && h == H && !memcmp(rgb, src, sizeof(src)), "%s did not come back exactly", names[k]);
        free(rgb);
        remove(path);
        free(path);
    }

    uint8_t *row = calloc((size_t)(MAX_DIM + 1) * 3, 1);
    CHECK(row != NULL, "alloc");
    if (!row) return;
    char *path = ltx2_path_join(dir, "wide.png");
    CHECK(path && ltx2_png_write_rgb8(ctx, path, row, MAX_DIM + 1, 1, NULL, 0) == LTX2_OK, "write wide.png: %s",
          ltx2_last_error(ctx));
    expect_failure(ctx, "16385 pixels wide", path, LTX2_ERR_INVALID_ARG, "16384");
    row[3 * (MAX_DIM - 1)] = 200;
    CHECK(ltx2_png_write_rgb8(ctx, path, row, MAX_DIM, 1, NULL, 0) == LTX2_OK, "write: %s", ltx2_last_error(ctx));
    uint8_t *rgb = NULL;
    int64_t w = 0, h = 0;
    CHECK(ltx2_image_read_rgb8(ctx, path, &rgb, &w, &h) == LTX2_OK, "16384 wide: %s", ltx2_last_error(ctx));
    CHECK(rgb && w == MAX_DIM && h == 1 && rgb[3 * (MAX_DIM - 1)] == 200, "16384 wide read wrong");
    free(rgb);
    remove(path);
    free(path);
    free(row);
}

/* ---- FFmpeg: JPEG and the round trip ---- */

static void check_jpeg(ltx2_context *ctx, const char *dir) {
    char *path = fixture_path("gradient.jpg");
    size_t want_size = 0, jpeg_size = 0;
    uint8_t *want = read_fixture(ctx, "gradient.jpg.rgb", &want_size);
    uint8_t *jpeg = read_fixture(ctx, "gradient.jpg", &jpeg_size);
    uint8_t *rgb = NULL, *again = NULL;
    int64_t w = 0, h = 0;
    CHECK(ltx2_image_read_rgb8(ctx, path, &rgb, &w, &h) == LTX2_OK, "gradient.jpg: %s", ltx2_last_error(ctx));
    CHECK(w == JPEG_SIZE && h == JPEG_SIZE, "gradient.jpg: %lldx%lld", (long long)w, (long long)h);
    CHECK(want && want_size == JPEG_SIZE * JPEG_SIZE * 3, "gradient.jpg.rgb missing");
    if (rgb && want && w == JPEG_SIZE && h == JPEG_SIZE && want_size == JPEG_SIZE * JPEG_SIZE * 3) {
        double mean = 0;
        const int m = max_abs_diff(rgb, want, want_size, &mean);
        printf("gradient.jpg: FFmpeg vs PIL max %d, mean %.3f codes\n", m, mean);
        CHECK(m <= JPEG_MAX_DIFF && mean <= JPEG_MEAN_DIFF,
              "JPEG differs from PIL by max %d mean %.3f (bounds %d, %.1f)", m, mean, JPEG_MAX_DIFF, JPEG_MEAN_DIFF);
    }
    /* The same bytes named .png: still read as a JPEG. */
    char *renamed = ltx2_path_join(dir, "jpeg_inside.png");
    CHECK(jpeg && renamed && write_bytes(renamed, jpeg, jpeg_size), "copy gradient.jpg");
    int64_t w2 = 0, h2 = 0;
    CHECK(ltx2_image_read_rgb8(ctx, renamed, &again, &w2, &h2) == LTX2_OK, "jpeg_inside.png: %s", ltx2_last_error(ctx));
    CHECK(rgb && again && w2 == w && h2 == h && !memcmp(rgb, again, (size_t)(w * h * 3)),
          "a JPEG named .png reads differently");
    /* Cut in half: FFmpeg may conceal and return a picture, or refuse; it must not crash. */
    char *cut = ltx2_path_join(dir, "cut.jpg");
    CHECK(cut && jpeg && write_bytes(cut, jpeg, jpeg_size / 2), "write cut.jpg");
    free(again);
    again = NULL;
    const ltx2_status st = ltx2_image_read_rgb8(ctx, cut, &again, &w2, &h2);
    printf("truncated JPEG: %s %s\n", ltx2_status_name(st), st == LTX2_OK ? "(concealed)" : ltx2_last_error(ctx));
    CHECK(st == LTX2_OK || st == LTX2_ERR_INVALID_ARG, "truncated JPEG: %s", ltx2_status_name(st));
    CHECK(st != LTX2_OK || (again && w2 == JPEG_SIZE && h2 == JPEG_SIZE), "truncated JPEG: concealed picture wrong");
    remove(cut);
    remove(renamed);
    free(cut);
    free(renamed);
    free(again);
    free(rgb);
    free(want);
    free(jpeg);
    free(path);
}

static void check_round_trip(ltx2_context *ctx) {
    /* A smooth ramp at the default CRF. */
    int64_t w = GRADIENT_W, h = GRADIENT_H;
    uint8_t *src = malloc((size_t)w * h * 3), *img = malloc((size_t)w * h * 3);
    CHECK(src && img, "alloc");
    if (!src || !img) {
        free(src);
        free(img);
        return;
    }
    draw_ramp(src, GRADIENT_W, GRADIENT_H, GRADIENT_W);
    memcpy(img, src, (size_t)w * h * 3);
    CHECK(ltx2_image_h264_roundtrip(ctx, &img, &w, &h, CRF_DEFAULT) == LTX2_OK, "ramp: %s", ltx2_last_error(ctx));
    CHECK(w == GRADIENT_W && h == GRADIENT_H, "ramp came back %lldx%lld", (long long)w, (long long)h);
    if (w == GRADIENT_W && h == GRADIENT_H) {
        const double p = psnr(img, src, (size_t)w * h * 3);
        printf("ramp %dx%d at crf %d: PSNR %.2f dB\n", GRADIENT_W, GRADIENT_H, CRF_DEFAULT, p);
        CHECK(p >= GRADIENT_MIN_PSNR, "ramp PSNR %.2f dB < %.1f", p, GRADIENT_MIN_PSNR);
        CHECK(p < PSNR_IDENTICAL, "the round trip left the ramp untouched");
    }
    free(img);

    /* Odd size: the magenta last column and row must be cropped away. */
    w = ODD_W;
    h = ODD_H;
    img = malloc((size_t)w * h * 3);
    CHECK(img != NULL, "alloc");
    if (img) {
        for (int64_t i = 0; i < w * h; i++) img[3 * i] = 255, img[3 * i + 1] = 0, img[3 * i + 2] = 255;
        draw_ramp(img, GRADIENT_W, GRADIENT_H, ODD_W);
        CHECK(ltx2_image_h264_roundtrip(ctx, &img, &w, &h, CRF_DEFAULT) == LTX2_OK, "odd: %s", ltx2_last_error(ctx));
        CHECK(w == GRADIENT_W && h == GRADIENT_H, "%dx%d came back %lldx%lld, want %dx%d", ODD_W, ODD_H, (long long)w,
              (long long)h, GRADIENT_W, GRADIENT_H);
        if (w == GRADIENT_W && h == GRADIENT_H) {
            const double p = psnr(img, src, (size_t)w * h * 3);
            printf("%dx%d cropped to %lldx%lld: PSNR against the top-left crop %.2f dB\n", ODD_W, ODD_H, (long long)w,
                   (long long)h, p);
            CHECK(p >= GRADIENT_MIN_PSNR, "odd-size PSNR %.2f dB < %.1f: not the top-left crop?", p, GRADIENT_MIN_PSNR);
        }
        free(img);
    }
    free(src);

    /* 16x16 against ltx-pipelines' preprocess() in PyAV. */
    size_t want_size = 0;
    uint8_t *want = read_fixture(ctx, "roundtrip_crf33.rgb", &want_size);
    CHECK(want && want_size == PYAV_SIZE * PYAV_SIZE * 3, "roundtrip_crf33.rgb missing");
    w = h = PYAV_SIZE;
    img = malloc(PYAV_SIZE * PYAV_SIZE * 3);
    if (img && want && want_size == PYAV_SIZE * PYAV_SIZE * 3) {
        draw_round_trip_input(img);
        CHECK(ltx2_image_h264_roundtrip(ctx, &img, &w, &h, CRF_DEFAULT) == LTX2_OK, "16x16: %s", ltx2_last_error(ctx));
        CHECK(w == PYAV_SIZE && h == PYAV_SIZE, "16x16 came back %lldx%lld", (long long)w, (long long)h);
        if (w == PYAV_SIZE && h == PYAV_SIZE) {
            double mean = 0;
            const int m = max_abs_diff(img, want, want_size, &mean);
            const double p = psnr(img, want, want_size);
            printf("16x16 crf %d vs PyAV preprocess(): %s, max %d, mean %.3f, PSNR %.2f dB\n", CRF_DEFAULT,
                   m == 0 ? "bitwise equal" : "NOT bitwise equal", m, mean, p);
            CHECK(p >= PYAV_MIN_PSNR, "16x16 PSNR against PyAV %.2f dB < %.1f", p, PYAV_MIN_PSNR);
        }
    }
    free(img);
    free(want);
}

/* ---- checks every build runs ---- */

static void check_round_trip_arguments(ltx2_context *ctx, bool have_ffmpeg) {
    enum { W = 7, H = 5 };
    uint8_t ref[W * H * 3];
    uint8_t *img = malloc(sizeof(ref));
    CHECK(img != NULL, "alloc");
    if (!img) return;
    for (int i = 0; i < W * H * 3; i++) ref[i] = img[i] = (uint8_t)(i * 29);
    uint8_t *const before = img;
    int64_t w = W, h = H;
    CHECK(ltx2_image_h264_roundtrip(ctx, &img, &w, &h, 0) == LTX2_OK, "crf 0: %s", ltx2_last_error(ctx));
    CHECK(img == before && w == W && h == H && !memcmp(img, ref, sizeof(ref)), "crf 0 changed the image");
    const int bad_crf[] = {52, -1};
    for (int i = 0; i < 2; i++) {
        const ltx2_status st = ltx2_image_h264_roundtrip(ctx, &img, &w, &h, bad_crf[i]);
        printf("crf %d: %s\n", bad_crf[i], ltx2_last_error(ctx));
        CHECK(st == LTX2_ERR_INVALID_ARG, "crf %d: %s", bad_crf[i], ltx2_status_name(st));
        CHECK(strstr(ltx2_last_error(ctx), "0..51") != NULL, "crf %d: message lacks the range", bad_crf[i]);
        CHECK(img == before && w == W && h == H && !memcmp(img, ref, sizeof(ref)), "crf %d touched the image",
              bad_crf[i]);
    }
    int64_t one = 1;
    CHECK(ltx2_image_h264_roundtrip(ctx, &img, &one, &h, CRF_DEFAULT) == LTX2_ERR_INVALID_ARG,
          "1-pixel-wide image accepted at crf %d", CRF_DEFAULT);
    int64_t zero = 0;
    CHECK(ltx2_image_h264_roundtrip(ctx, &img, &zero, &h, CRF_DEFAULT) == LTX2_ERR_INVALID_ARG, "width 0 accepted");
    uint8_t *null_img = NULL;
    CHECK(ltx2_image_h264_roundtrip(ctx, &null_img, &w, &h, CRF_DEFAULT) == LTX2_ERR_INVALID_ARG, "NULL accepted");
    if (!have_ffmpeg) {
        const ltx2_status st = ltx2_image_h264_roundtrip(ctx, &img, &w, &h, CRF_DEFAULT);
        printf("no FFmpeg: %s\n", ltx2_last_error(ctx));
        CHECK(st == LTX2_ERR_UNSUPPORTED, "no FFmpeg: %s", ltx2_status_name(st));
        CHECK(strstr(ltx2_last_error(ctx), "CRF 0") != NULL, "no FFmpeg: message lacks the CRF 0 hint");
        CHECK(img == before && w == W && h == H, "failed round trip touched the image");
    }
    free(img);
}

static void check_errors(ltx2_context *ctx, const char *dir, bool have_png, bool have_ffmpeg) {
    char path[PATH_CAP];
    snprintf(path, sizeof(path), "%s/missing.png", dir);
    expect_failure(ctx, "missing file", path, LTX2_ERR_IO, "missing.png");
    expect_failure(ctx, "directory", dir, LTX2_ERR_IO, dir);

    snprintf(path, sizeof(path), "%s/empty.png", dir);
    CHECK(write_bytes(path, "", 0), "write %s", path);
    expect_failure(ctx, "zero-byte file", path, LTX2_ERR_INVALID_ARG, "empty.png");
    remove(path);

    /* Not a PNG signature: FFmpeg probes it and finds no image; without FFmpeg only PNGs are known. */
    snprintf(path, sizeof(path), "%s/x.png", dir);
    const char *text = "this is not an image, only a text file named x.png\n";
    CHECK(write_bytes(path, text, strlen(text)), "write %s", path);
    expect_failure(ctx, "text named .png", path, have_ffmpeg ? LTX2_ERR_INVALID_ARG : LTX2_ERR_UNSUPPORTED, "x.png");
    remove(path);

    /* Damaged PNGs: cut after the signature, inside IHDR, inside IDAT; one IDAT byte flipped (CRC).
     * libpng must refuse each (FFmpeg's PNG decoder, the fallback without libpng, does not check
     * CRCs and may conceal a cut, so only the no-decoder refusal is checked there). */
    size_t n = 0;
    uint8_t *png = read_fixture(ctx, "adam7.png", &n);
    CHECK(png && n > 100, "adam7.png missing");
    const size_t cuts[] = {8, 20, 120};
    for (size_t i = 0; png && n > 100 && i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        if (!have_png && (have_ffmpeg || i > 0)) break;
        snprintf(path, sizeof(path), "%s/cut%zu.png", dir, cuts[i]);
        CHECK(write_bytes(path, png, cuts[i]), "write %s", path);
        char what[64];
        snprintf(what, sizeof(what), "PNG cut at %zu of %zu bytes", cuts[i], n);
        expect_failure(ctx, what, path, have_png ? LTX2_ERR_INVALID_ARG : LTX2_ERR_UNSUPPORTED, "cut");
        remove(path);
    }
    if (png && n > 100 && have_png) {
        png[n - 30] ^= 0x5a; /* inside the IDAT data: its CRC no longer matches */
        snprintf(path, sizeof(path), "%s/crc.png", dir);
        CHECK(write_bytes(path, png, n), "write %s", path);
        expect_failure(ctx, "PNG with a flipped IDAT byte", path, LTX2_ERR_INVALID_ARG, "crc.png");
        remove(path);
    }
    free(png);

    uint8_t *rgb = NULL;
    int64_t w = 0, h = 0;
    CHECK(ltx2_image_read_rgb8(ctx, NULL, &rgb, &w, &h) == LTX2_ERR_INVALID_ARG, "NULL path accepted");
    CHECK(ltx2_image_read_rgb8(ctx, dir, NULL, &w, &h) == LTX2_ERR_INVALID_ARG, "NULL output accepted");
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    CHECK(ctx != NULL, "context");
    if (!ctx) return test_finish();
    char dir[] = "/tmp/ltx2_test_image_io_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    const bool have_png = ltx2_png_available(), have_ffmpeg = ltx2_image_ffmpeg_available();
#ifdef LTX2_HAVE_FFMPEG
    CHECK(have_ffmpeg, "built with FFmpeg but ltx2_image_ffmpeg_available() is false");
#else
    CHECK(!have_ffmpeg, "built without FFmpeg but ltx2_image_ffmpeg_available() is true");
#endif

    check_errors(ctx, dir, have_png, have_ffmpeg);
    check_round_trip_arguments(ctx, have_ffmpeg);
    if (have_png) {
        check_png_fixtures(ctx);
        check_png_written(ctx, dir);
    } else {
        printf("skipped: PNG reading checks (this build has no libpng)\n");
    }
    if (have_ffmpeg) {
        check_jpeg(ctx, dir);
        check_round_trip(ctx);
    } else {
        printf("skipped: JPEG and H.264 round-trip checks (this build has no FFmpeg)\n");
    }

    CHECK(rmdir(dir) == 0, "%s not empty at the end", dir);
    ltx2_context_free(ctx);
    if (!have_png && !have_ffmpeg && test_counts_g.failed == 0)
        return test_skip("no libpng and no FFmpeg: only the refusals could be checked");
    return test_finish();
}
