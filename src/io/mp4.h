/* MP4 output through libavformat/libavcodec: H.264 video (yuv420p, BT.709, CRF 19 by default) and
 * AAC stereo audio at the vocoder's rate, written to a temporary file that is renamed into place
 * only on success, so a failed or interrupted run never leaves a half file behind. Without FFmpeg
 * (LTX2_HAVE_FFMPEG undefined) every call returns LTX2_ERR_UNSUPPORTED with a message. */
#ifndef LTX2_IO_MP4_H
#define LTX2_IO_MP4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ltx2/ltx2.h"

typedef struct ltx2_mp4_params {
    int width, height;     /* even, > 0 (yuv420p needs even sizes) */
    int frames;            /* > 0 */
    double fps;            /* > 0, e.g. 24 or 25 */
    int crf;               /* x264 constant rate factor; default 19 */
    int audio_channels;    /* 0 = no audio track, else 1 or 2 */
    int audio_rate;        /* Hz, e.g. 24000 or 48000 */
    int64_t audio_samples; /* per channel */
    /* Metadata written into the container (key/value strings, e.g. "seed", "prompt"). */
    size_t n_meta;
    const char *const *meta_keys;
    const char *const *meta_values;
    bool faststart;        /* move the index (moov) to the front for streaming; default true */
} ltx2_mp4_params;

/* Defaults: 24 fps, CRF 19, no audio (48000 Hz when channels are set), faststart on. */
void ltx2_mp4_params_init(ltx2_mp4_params *p);

/* True when this build can write MP4 (built with FFmpeg). */
bool ltx2_mp4_available(void);
/* FFmpeg's log level is process-wide (libx264 prints per-encode statistics at INFO): tools call
 * this once; errors are reported through ltx2 statuses either way. */
void ltx2_mp4_set_quiet(bool quiet);

/* rgb: frames x height x width x 3 bytes (RGB24, row-major). audio: planar float in [-1, 1],
 * audio_channels rows of audio_samples each (may be NULL when audio_channels == 0). */
ltx2_status ltx2_mp4_write(ltx2_context *ctx, const char *path, const ltx2_mp4_params *p,
                           const uint8_t *rgb, const float *const *audio);

#endif
