/* Image conditioning of the video stream (video_cond.h). */
#include "pipeline/video_cond.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/image.h"
#include "pipeline/scheduler.h"

/* x264's 8-bit CRF range (ltx-pipelines passes the user's CRF to libx264). */
#define COND_CRF_MAX 51
/* normalize_latent: x / 127.5 - 1 maps 0..255 onto [-1, 1]. */
#define COND_PIXEL_HALF_RANGE 127.5f

ltx2_status ltx2_cond_images_load(ltx2_context *ctx, const ltx2_image_cond *specs, int n, int64_t frames,
                                  ltx2_cond_image *out) {
    memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof *out);
    ltx2_status st = LTX2_OK;
    for (int i = 0; st == LTX2_OK && i < n; i++) {
        const ltx2_image_cond *s = &specs[i];
        out[i].spec = s;
        if (!s->path) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %d: no path", i + 1);
        } else if (s->frame < 0 || s->frame >= frames) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s at frame %d: outside the clip of %lld frames "
                            "(0..%lld)", s->path, s->frame, (long long)frames, (long long)frames - 1);
        } else if (!(s->strength >= 0.0 && s->strength <= 1.0)) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s: strength %g is outside [0, 1] (1 keeps the frame "
                            "as given, 0 leaves it free)", s->path, s->strength);
        } else if (s->crf < 0 || s->crf > COND_CRF_MAX) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s: CRF %d is outside 0..%d", s->path, s->crf,
                            COND_CRF_MAX);
        }
        for (int j = 0; st == LTX2_OK && j < i; j++)
            if (specs[j].frame == s->frame)
                st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "images %s and %s both condition frame %d: give one",
                                specs[j].path, s->path, s->frame);
        if (st == LTX2_OK) st = ltx2_image_read_rgb8(ctx, s->path, &out[i].rgb, &out[i].w, &out[i].h);
        if (st == LTX2_OK && s->crf) st = ltx2_image_h264_roundtrip(ctx, &out[i].rgb, &out[i].w, &out[i].h, s->crf);
    }
    if (st != LTX2_OK) ltx2_cond_images_free(out, n);
    return st;
}

void ltx2_cond_images_free(ltx2_cond_image *imgs, int n) {
    for (int i = 0; imgs && i < n; i++) {
        free(imgs[i].rgb);
        imgs[i].rgb = NULL;
    }
}

/* torch's bilinear source index for output o (area_pixel_compute_source_index, align_corners False,
 * guard_index_and_lambda): i0, i1 and their weights, all in fp32. */
static void bilinear_index(int64_t o, int64_t in, int64_t out, int64_t *i0, int64_t *i1, float *l0, float *l1) {
    if (in == out) {
        *i0 = *i1 = o;
        *l0 = 1.0f;
        *l1 = 0.0f;
        return;
    }
    const float ratio = (float)in / (float)out;
    /* volatile: each operation rounded as torch's scalar code does, never fused into an FMA (which
     * moves the index by an ulp and a pixel by up to 1e-3) */
    volatile float scaled = ratio * ((float)o + 0.5f);
    float r = scaled - 0.5f;
    if (r < 0.0f) r = 0.0f;
    int64_t k = (int64_t)floorf(r);
    if (k > in - 1) k = in - 1;
    float lam = r - (float)k;
    lam = lam < 0.0f ? 0.0f : lam > 1.0f ? 1.0f : lam;
    *i0 = k;
    *i1 = k + (k < in - 1 ? 1 : 0);
    *l1 = lam;
    *l0 = 1.0f - lam;
}

void ltx2_image_resize_crop(const uint8_t *rgb, int64_t w, int64_t h, int64_t out_h, int64_t out_w, float *out) {
    /* Python floats: the scale and the ceil'ed size are computed in double */
    const double sh = (double)out_h / (double)h, sw = (double)out_w / (double)w, s = sh > sw ? sh : sw;
    const int64_t nh = (int64_t)ceil((double)h * s), nw = (int64_t)ceil((double)w * s);
    const int64_t top = (nh - out_h) / 2, left = (nw - out_w) / 2;
    for (int64_t y = 0; y < out_h; y++) {
        int64_t h0, h1;
        float hl0, hl1;
        bilinear_index(y + top, h, nh, &h0, &h1, &hl0, &hl1);
        for (int64_t x = 0; x < out_w; x++) {
            int64_t w0, w1;
            float wl0, wl1;
            bilinear_index(x + left, w, nw, &w0, &w1, &wl0, &wl1);
            const float w00 = hl0 * wl0, w01 = hl0 * wl1, w10 = hl1 * wl0, w11 = hl1 * wl1;
            for (int c = 0; c < 3; c++) {
                const float a = rgb[(h0 * w + w0) * 3 + c], b = rgb[(h0 * w + w1) * 3 + c];
                const float d = rgb[(h1 * w + w0) * 3 + c], e = rgb[(h1 * w + w1) * 3 + c];
                volatile float p0 = a * w00, p1 = b * w01, p2 = d * w10, p3 = e * w11;
                volatile float v = p0 + p1;
                v = v + p2;
                v = v + p3;
                out[(y * out_w + x) * 3 + c] = v / COND_PIXEL_HALF_RANGE - 1.0f;
            }
        }
    }
}

int64_t ltx2_video_cond_extra_tokens(const ltx2_cond_image *imgs, int n, const ltx2_pipe_geometry *g) {
    int64_t k = 0;
    for (int i = 0; imgs && i < n; i++) k += imgs[i].spec->frame != 0;
    return k * g->lh * g->lw;
}

/* VideoConditionByKeyframeIndex's positions for the tokens [first, first + lh*lw) of a keyframe at
 * pixel frame `frame`: get_pixel_coords of one latent frame (no causal fix), time + frame, then
 * time / fps in fp32 (float32 positions, whatever the pipeline dtype). */
static void keyframe_positions(const ltx2_video_cond_stage *cs, const ltx2_video_encoder *enc, int frame,
                               int64_t first) {
    const ltx2_pipe_geometry *g = cs->g;
    const float fps_f = (float)cs->fps;
    const int64_t T = cs->tokens;
    for (int64_t h = 0, i = first; h < g->lh; h++)
        for (int64_t w = 0; w < g->lw; w++, i++)
            for (int e = 0; e < 2; e++) {
                cs->positions[(0 * T + i) * 2 + e] = (float)(e * enc->time_factor + frame) / fps_f;
                cs->positions[(1 * T + i) * 2 + e] = (float)((h + e) * enc->space_factor);
                cs->positions[(2 * T + i) * 2 + e] = (float)((w + e) * enc->space_factor);
            }
}

ltx2_status ltx2_video_cond_apply(ltx2_context *ctx, const ltx2_video_encoder *enc, const ltx2_sem_rules *rules,
                                  const ltx2_cond_image *imgs, int n, const ltx2_video_cond_stage *cs) {
    const ltx2_pipe_geometry *g = cs->g;
    for (int64_t t = 0; t < cs->tokens; t++) cs->mask[t] = 1.0f;
    const int64_t vshape[5] = {1, 1, cs->height, cs->width, 3};
    int64_t lshape[5];
    LTX2_TRY(ltx2_video_encoder_out_shape(ctx, enc, vshape, lshape));
    if (lshape[2] != g->lh || lshape[3] != g->lw || lshape[4] != g->lc)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "image conditioning: the encoder makes a %lldx%lldx%lld latent frame, "
                          "the video's is %lldx%lldx%lld", (long long)lshape[2], (long long)lshape[3],
                          (long long)lshape[4], (long long)g->lh, (long long)g->lw, (long long)g->lc);
    const int64_t frame_tokens = g->lh * g->lw, nlat = frame_tokens * g->lc;
    float *px = malloc((size_t)(cs->height * cs->width * 3) * sizeof(float)), *lat = malloc((size_t)nlat * sizeof(float));
    ltx2_status st = px && lat ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "image conditioning: %lldx%lld pixels",
                                                      (long long)cs->width, (long long)cs->height);
    int64_t next = g->video_tokens; /* where the next keyframe's tokens go */
    for (int i = 0; st == LTX2_OK && i < n; i++) {
        ltx2_image_resize_crop(imgs[i].rgb, imgs[i].w, imgs[i].h, cs->height, cs->width, px);
        ltx2_tensor vt = ltx2_tensor_make(px, LTX2_F32, 5, vshape), lt = ltx2_tensor_make(lat, LTX2_F32, 5, lshape);
        st = ltx2_video_encoder_encode(ctx, enc, &vt, &lt, NULL, NULL);
        if (st != LTX2_OK) {
            ltx2_error_prefix(ctx, "encoding the image %s", imgs[i].spec->path);
            break;
        }
        ltx2_sched_round_latent(rules, lat, nlat); /* the encoded frame in the latent dtype */
        const int frame = imgs[i].spec->frame / cs->frame_div;
        const int64_t first = frame == 0 ? 0 : next; /* VideoConditionByLatentIndex(0) or appended */
        if (frame != 0) {
            keyframe_positions(cs, enc, frame, first);
            next += frame_tokens;
        }
        memcpy(cs->clean + first * g->lc, lat, (size_t)nlat * sizeof(float));
        const float m = (float)(1.0 - imgs[i].spec->strength); /* a Python float stored in the fp32 mask */
        for (int64_t t = 0; t < frame_tokens; t++) cs->mask[first + t] = m;
    }
    free(px);
    free(lat);
    return st;
}
