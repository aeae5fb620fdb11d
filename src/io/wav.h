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

#endif
