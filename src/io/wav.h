/* WAV (RIFF/WAVE) writer for the generated audio: planar stereo (or any channel count) fp32
 * samples -> interleaved 16-bit PCM (clamped to [-1, 1], rounded to nearest) or 32-bit IEEE float
 * (WAVE_FORMAT_IEEE_FLOAT with the `fact` chunk float files need). Written to a temp file then
 * renamed, so a failed write never leaves a partial file. */
#ifndef LTX2_IO_WAV_H
#define LTX2_IO_WAV_H

#include <stdint.h>

#include "ltx2/ltx2.h"

typedef enum ltx2_wav_format { LTX2_WAV_PCM16 = 0, LTX2_WAV_FLOAT32 = 1 } ltx2_wav_format;

/* samples: planar [channels][frames] fp32 (what the vocoder produces for one batch item).
 * Refuses channels outside 1..16, sample_rate < 1, frames < 0 and data sizes past 4 GiB. */
ltx2_status ltx2_wav_write(ltx2_context *ctx, const char *path, const float *samples, int64_t channels,
                           int64_t frames, int64_t sample_rate, ltx2_wav_format fmt);

/* ---- Reader (for audio conditioning): RIFF/WAVE with a `fmt ` chunk of PCM 8/16/24/32-bit or IEEE
 * float 32/64-bit, plain or WAVE_FORMAT_EXTENSIBLE, 1..16 channels; other chunks are skipped.
 * Samples become fp32 in [-1, 1) the way ltx-pipelines' decode_audio_from_file scales them:
 * int / 2^(bits-1) (8-bit: (u - 128) / 128); float samples are passed through unchanged. A data
 * chunk that runs past the end of the file is an error (a truncated file), not silently cut. */
typedef struct ltx2_wav_audio {
    float *samples;      /* planar [channels][frames], malloc'd; free with ltx2_wav_audio_free */
    int64_t channels, frames, sample_rate;
    int bits;            /* bits per sample in the file */
    int is_float;        /* 1 for IEEE float files */
} ltx2_wav_audio;

/* Parses a whole WAV file held in memory; `label` names it in errors. */
ltx2_status ltx2_wav_parse(ltx2_context *ctx, const uint8_t *data, size_t size, const char *label,
                           ltx2_wav_audio *out);
ltx2_status ltx2_wav_read(ltx2_context *ctx, const char *path, ltx2_wav_audio *out);
void ltx2_wav_audio_free(ltx2_wav_audio *a);

#endif
