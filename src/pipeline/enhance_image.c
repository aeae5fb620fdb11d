/* The image of an image-to-video enhancement as the model sees it: ltx-pipelines'
 * generate_enhanced_prompt (decode, resize_aspect_ratio_preserving to a long side of 896, .to(uint8))
 * then Gemma3ImageProcessor (resized to the tower's square with PIL's bilinear filter, rescaled by
 * 1/255, normalised with mean and std 0.5). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/image.h"
#include "pipeline/pipeline.h"

/* ltx-pipelines' image_long_side */
#define ENHANCE_IMAGE_LONG_SIDE 896
/* Gemma3ImageProcessor's rescale_factor, image_mean and image_std */
#define ENHANCE_RESCALE (1.0 / 255.0)
#define ENHANCE_MEAN 0.5f
#define ENHANCE_STD 0.5f
/* Both resizes of the path run an 8-bit separable fixed-point resampler, as their libraries do for
 * uint8 images: PIL's (Resample.c, the processor's) and torch's uint8 interpolate (its AVX kernel
 * ported from Pillow-SIMD, ltx-pipelines' resize of a uint8 tensor). They share the triangle filter
 * centred on (x + 0.5) * scale and differ in two things: PIL widens the filter by the downscale
 * factor (antialiasing) and keeps 22 fractional bits in int32 weights; torch without antialias keeps
 * the support at one pixel and as many fractional bits as int16 weights hold. Each pass rounds to
 * 8 bits (horizontal first, then vertical; a pass whose size does not change is skipped). */
#define PIL_PRECISION_BITS 22
#define TORCH_WEIGHT_LIMIT (1 << 15)

typedef struct resample_coeffs {
    int64_t *first, *count, width; /* width: the most taps of any output */
    int32_t *k;                    /* [out][width] fixed point */
    int bits;                      /* fractional bits of k */
} resample_coeffs;

static double triangle(double x) {
    x = fabs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

/* Fixed point as both libraries round it: half away from zero. */
static int32_t fixed(double v, int bits) { return (int32_t)(v < 0 ? v * (1 << bits) - 0.5 : v * (1 << bits) + 0.5); }

static bool coeffs_make(int64_t in, int64_t out, bool pil, resample_coeffs *c) {
    const double scale = (double)in / (double)out, fscale = pil && scale > 1.0 ? scale : 1.0, support = fscale;
    c->width = (int64_t)ceil(support) * 2 + 1;
    c->first = malloc((size_t)out * sizeof *c->first);
    c->count = malloc((size_t)out * sizeof *c->count);
    c->k = malloc((size_t)(out * c->width) * sizeof *c->k);
    double *w = calloc((size_t)(out * c->width), sizeof *w);
    if (!c->first || !c->count || !c->k || !w) {
        free(w);
        return false;
    }
    double wmax = 0.0;
    for (int64_t xx = 0; xx < out; xx++) {
        const double center = ((double)xx + 0.5) * scale;
        int64_t xmin = (int64_t)(center - support + 0.5), xmax = (int64_t)(center + support + 0.5);
        if (xmin < 0) xmin = 0;
        if (xmax > in) xmax = in;
        xmax -= xmin;
        double ww = 0.0, *wx = w + xx * c->width;
        for (int64_t x = 0; x < xmax; x++) ww += (wx[x] = triangle(((double)(x + xmin) - center + 0.5) / fscale));
        for (int64_t x = 0; x < xmax; x++) {
            if (ww != 0.0) wx[x] /= ww;
            wmax = wx[x] > wmax ? wx[x] : wmax;
        }
        c->first[xx] = xmin, c->count[xx] = xmax;
    }
    /* torch: the most fractional bits (< 22) whose largest weight, doubled, still fits int16 */
    c->bits = PIL_PRECISION_BITS;
    if (!pil)
        for (c->bits = 0; c->bits < PIL_PRECISION_BITS; c->bits++)
            if ((int64_t)(0.5 + wmax * (double)(1 << (c->bits + 1))) >= TORCH_WEIGHT_LIMIT) break;
    for (int64_t i = 0; i < out * c->width; i++) c->k[i] = fixed(w[i], c->bits);
    free(w);
    return true;
}

static void coeffs_free(resample_coeffs *c) { free(c->first), free(c->count), free(c->k); }

/* One pass over RGB rows: along x when horizontal, else along y; dst is dw x dh. */
static void resample_pass(const uint8_t *src, int64_t sw, const resample_coeffs *c, bool horizontal, uint8_t *dst,
                          int64_t dw, int64_t dh) {
    for (int64_t y = 0; y < dh; y++)
        for (int64_t x = 0; x < dw; x++) {
            const int64_t o = horizontal ? x : y, first = c->first[o], n = c->count[o];
            const int32_t *k = c->k + o * c->width;
            for (int ch = 0; ch < 3; ch++) {
                int64_t ss = (int64_t)1 << (c->bits - 1);
                for (int64_t t = 0; t < n; t++) {
                    const int64_t sx = horizontal ? first + t : x, sy = horizontal ? y : first + t;
                    ss += (int64_t)src[(sy * sw + sx) * 3 + ch] * k[t];
                }
                const int64_t v = ss >> c->bits;
                dst[(y * dw + x) * 3 + ch] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
}

/* rgb [h][w][3] -> dst [oh][ow][3] (pil: PIL's BILINEAR; else torch's uint8 bilinear, no antialias). */
static bool resize8(const uint8_t *rgb, int64_t w, int64_t h, int64_t ow, int64_t oh, bool pil, uint8_t *dst) {
    uint8_t *mid = malloc((size_t)(ow * h * 3));
    resample_coeffs cx = {0}, cy = {0};
    const bool ok = mid && coeffs_make(w, ow, pil, &cx) && coeffs_make(h, oh, pil, &cy);
    if (ok) {
        if (w != ow) resample_pass(rgb, w, &cx, true, mid, ow, h);
        else memcpy(mid, rgb, (size_t)(w * h * 3));
        if (h != oh) resample_pass(mid, ow, &cy, false, dst, ow, oh);
        else memcpy(dst, mid, (size_t)(ow * oh * 3));
    }
    coeffs_free(&cx), coeffs_free(&cy);
    free(mid);
    return ok;
}

ltx2_status ltx2_enhance_image_pixels(ltx2_context *ctx, const char *path, int64_t size, float *pixels) {
    uint8_t *rgb = NULL, *big = NULL, *mid = NULL, *sq = NULL;
    int64_t w = 0, h = 0;
    LTX2_TRY(ltx2_image_read_rgb8(ctx, path, &rgb, &w, &h));
    /* resize_aspect_ratio_preserving: Python's int() of the scaled sides; then resize_and_center_crop
     * to them: ceil of the sides at the larger scale, torch's interpolate of the uint8 tensor, the
     * centre kept */
    const double scale = (double)ENHANCE_IMAGE_LONG_SIDE / (double)(w > h ? w : h);
    const int64_t th = (int64_t)((double)h * scale), tw = (int64_t)((double)w * scale);
    const double sh = (double)th / (double)h, sw = (double)tw / (double)w, s = sh > sw ? sh : sw;
    const int64_t nh = (int64_t)ceil((double)h * s), nw = (int64_t)ceil((double)w * s);
    const int64_t top = (nh - th) / 2, left = (nw - tw) / 2;
    ltx2_status st = LTX2_OK;
    if (th < 1 || tw < 1)
        st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: a %lld x %lld image", path, (long long)w, (long long)h);
    if (st == LTX2_OK && (!(big = malloc((size_t)(nh * nw * 3))) || !(mid = malloc((size_t)(th * tw * 3))) ||
                          !(sq = malloc((size_t)(size * size * 3)))))
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: image %s", path);
    if (st == LTX2_OK && !resize8(rgb, w, h, nw, nh, false, big)) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: resize");
    if (st == LTX2_OK) {
        for (int64_t y = 0; y < th; y++) memcpy(mid + y * tw * 3, big + ((y + top) * nw + left) * 3, (size_t)(tw * 3));
        /* Gemma3ImageProcessor: PIL's resize to the tower's square */
        if (!resize8(mid, tw, th, size, size, true, sq)) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: resize");
    }
    for (int64_t i = 0; st == LTX2_OK && i < size * size; i++)
        for (int c = 0; c < 3; c++)
            pixels[c * size * size + i] = ((float)sq[i * 3 + c] * (float)ENHANCE_RESCALE - ENHANCE_MEAN) / ENHANCE_STD;
    free(rgb), free(big), free(mid), free(sq);
    return st;
}
