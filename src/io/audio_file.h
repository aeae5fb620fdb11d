/* An audio file read for audio conditioning, as ltx-pipelines 1.0.0 decode_audio_from_file reads it
 * (media_io.py): the first audio stream, samples scaled to fp32 (int / 2^(bits-1), floats as they
 * are), the window [start, start + max_duration) cut at the sample level
 * (round((start - first frame time) * rate) samples skipped, round(max_duration * rate) kept;
 * Python's round: half to even). A WAV goes through our own reader (wav.h, no FFmpeg needed) and
 * gives exactly PyAV's samples; any other format (FLAC, MP3, AAC, an MP4's audio track, ...) is
 * decoded by FFmpeg, with only the file protocol allowed. Divergences from the reference, on
 * purpose: unsigned 8-bit samples are centred ((u - 128) / 128; PyAV's path divides by 128 only)
 * and 64-bit integers are scaled by 2^63 (passed unscaled there). */
#ifndef LTX2_IO_AUDIO_FILE_H
#define LTX2_IO_AUDIO_FILE_H

#include <stdbool.h>

#include "io/wav.h"
#include "ltx2/ltx2.h"

/* Longest window read (samples per channel): a day at 48 kHz would not fit the int64 maths
 * downstream comfortably and no clip needs more than minutes. */
#define LTX2_AUDIO_FILE_MAX_SAMPLES ((int64_t)1 << 31)

/* Reads [start_s, start_s + max_s) of path (max_s > 0, start_s >= 0) into out (planar
 * [channels][frames] fp32 at the file's rate). A window starting past the end, an empty result or
 * a file without audio is bad input (LTX2_ERR_INVALID_ARG) naming the file. */
ltx2_status ltx2_audio_file_read(ltx2_context *ctx, const char *path, double start_s, double max_s,
                                 ltx2_wav_audio *out);

/* Whether this build decodes formats other than WAV (FFmpeg). */
bool ltx2_audio_file_ffmpeg_available(void);

#endif
