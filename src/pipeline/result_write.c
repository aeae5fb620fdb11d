/* The public writers of a generation's result (ltx2.h: ltx2_result_write_mp4 / _wav / _png): the
 * float video and audio converted and handed to the io writers, which write through temp files. */
#include <stdio.h>
#include <stdlib.h>

#include "core/context.h"
#include "io/mp4.h"
#include "io/png.h"
#include "io/wav.h"

/* Metadata: the seed, and the caller's comment. */
#define RESULT_META_KEYS 2
#define SEED_TEXT_CAP 32

static ltx2_status check_video(ltx2_context *ctx, const ltx2_generate_result *r, const char *path, const char *what) {
    if (!r || !path) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: NULL result or path", what);
    if (!r->video || r->frames < 1 || r->height < 1 || r->width < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s %s: the result holds no decoded video", what, path);
    return LTX2_OK;
}

ltx2_status ltx2_result_write_mp4(ltx2_context *ctx, const ltx2_generate_result *r, const char *path,
                                  const char *comment) {
    LTX2_TRY(check_video(ctx, r, path, "write mp4"));
    const int64_t n = r->frames * r->height * r->width * 3;
    uint8_t *rgb = malloc((size_t)n);
    if (!rgb) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "write mp4 %s: %lld bytes of frames", path, (long long)n);
    ltx2_png_frame_to_rgb8(r->video, n, rgb);
    char seed[SEED_TEXT_CAP];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
    const char *keys[RESULT_META_KEYS] = {"seed", "comment"}, *vals[RESULT_META_KEYS] = {seed, comment};
    ltx2_mp4_params mp;
    ltx2_mp4_params_init(&mp);
    mp.width = (int)r->width, mp.height = (int)r->height, mp.frames = (int)r->frames, mp.fps = r->fps;
    if (r->audio) {
        mp.audio_channels = (int)r->audio_channels;
        mp.audio_rate = (int)r->audio_rate;
        mp.audio_samples = r->audio_samples;
    }
    mp.n_meta = comment ? 2 : 1;
    mp.meta_keys = keys;
    mp.meta_values = vals;
    const float *chans[2] = {r->audio, r->audio ? r->audio + r->audio_samples : NULL};
    const ltx2_status st = ltx2_mp4_write(ctx, path, &mp, rgb, chans);
    free(rgb);
    return st;
}

ltx2_status ltx2_result_write_wav(ltx2_context *ctx, const ltx2_generate_result *r, const char *path) {
    if (!r || !path) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "write wav: NULL result or path");
    if (!r->audio || r->audio_channels < 1 || r->audio_samples < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "write wav %s: the result holds no decoded audio", path);
    return ltx2_wav_write(ctx, path, r->audio, r->audio_channels, r->audio_samples, r->audio_rate, LTX2_WAV_PCM16);
}

ltx2_status ltx2_result_write_png(ltx2_context *ctx, const ltx2_generate_result *r, int64_t frame, const char *path,
                                  const char *comment) {
    LTX2_TRY(check_video(ctx, r, path, "write png"));
    if (frame < 0 || frame >= r->frames)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "write png %s: frame %lld of a %lld-frame video", path,
                          (long long)frame, (long long)r->frames);
    const int64_t fsz = r->height * r->width * 3;
    uint8_t *rgb = malloc((size_t)fsz);
    if (!rgb) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "write png %s: %lld bytes", path, (long long)fsz);
    ltx2_png_frame_to_rgb8(r->video + frame * fsz, fsz, rgb);
    char seed[SEED_TEXT_CAP];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
    const ltx2_png_text text[RESULT_META_KEYS] = {{"seed", seed}, {"parameters", comment}};
    const ltx2_status st = ltx2_png_write_rgb8(ctx, path, rgb, r->width, r->height, text, comment ? 2 : 1);
    free(rgb);
    return st;
}
