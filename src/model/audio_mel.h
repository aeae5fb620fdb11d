/* The audio VAE's input front end, as ltx-core's AudioProcessor (model/audio_vae/ops.py) runs it
 * before AudioEncoder: torchaudio.functional.resample to the model rate (windowed-sinc,
 * "sinc_interp_hann", lowpass_filter_width 6, rolloff 0.99), then torchaudio MelSpectrogram
 * (periodic Hann window of n_fft, centered STFT with reflect padding, magnitude (power 1), slaney
 * mel scale and slaney area norm, f_min 0, f_max = rate / 2) and log(clamp(mel, 1e-5)). Samples
 * are planar rows (one row per batch item x channel); the mel is [rows, frames, n_mels], i.e. the
 * reference's [B, C, T, mels] after its permute. */
#ifndef LTX2_MODEL_AUDIO_MEL_H
#define LTX2_MODEL_AUDIO_MEL_H

#include <stdint.h>

#include "ltx2/ltx2.h"

/* torchaudio.functional.resample defaults, which ltx-core keeps. */
#define LTX2_RESAMPLE_LOWPASS_WIDTH 6
#define LTX2_RESAMPLE_ROLLOFF 0.99
/* Largest polyphase kernel (phases x taps floats) we build: 44.1/48/22.05/8 kHz need < 10^5; a
 * rate sharing no factor with the target (e.g. 44101 Hz) would need ~10^9, as in torchaudio. */
#define LTX2_RESAMPLE_MAX_KERNEL (1 << 22)

/* Output length ceil(len * new / orig) (len itself when the rates are equal). */
int64_t ltx2_audio_resample_len(int64_t len, int64_t orig_rate, int64_t new_rate);

/* y[r, :] = resample(x[r, :]) for rows r; y holds rows x ltx2_audio_resample_len(len) floats. Equal
 * rates copy. Refuses rates < 1 and rate pairs whose kernel exceeds LTX2_RESAMPLE_MAX_KERNEL. */
ltx2_status ltx2_audio_resample(ltx2_context *ctx, const float *x, int64_t rows, int64_t len, int64_t orig_rate,
                                int64_t new_rate, float *y);

typedef struct ltx2_audio_mel_config {
    int64_t sample_rate; /* model rate (16000): f_max = sample_rate / 2 */
    int64_t n_fft;       /* = win_length (1024) */
    int64_t hop;         /* 160 */
    int64_t n_mels;      /* 64 */
} ltx2_audio_mel_config;

/* log(clamp(., 1e-5)) floor (ltx-core AudioProcessor.waveform_to_mel). */
#define LTX2_AUDIO_MEL_LOG_FLOOR 1e-5f

/* Frames len / hop + 1; refuses len <= n_fft / 2 (reflect padding needs a longer signal). */
ltx2_status ltx2_audio_mel_frames(ltx2_context *ctx, const ltx2_audio_mel_config *cfg, int64_t len,
                                  int64_t *frames);

/* mel[r, t, m] = log(max(sum_f |STFT(x[r])|[f, t] * fb[f, m], 1e-5)). */
ltx2_status ltx2_audio_log_mel(ltx2_context *ctx, const ltx2_audio_mel_config *cfg, const float *x, int64_t rows,
                               int64_t len, float *mel);

#endif
