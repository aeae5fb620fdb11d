/* Resampler and log-mel front end (see audio_mel.h). References: torchaudio 2.x
 * functional/functional.py _get_sinc_resample_kernel / _apply_sinc_resample_kernel, spectrogram,
 * melscale_fbanks (slaney), _hz_to_mel / _mel_to_hz; ltx-core 1.0.0 model/audio_vae/ops.py. */
#include "model/audio_mel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---------------------------------------------------------------------------------------------
 * Resampling
 * ------------------------------------------------------------------------------------------- */

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        const int64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

int64_t ltx2_audio_resample_len(int64_t len, int64_t orig_rate, int64_t new_rate) {
    if (orig_rate == new_rate || orig_rate < 1 || new_rate < 1) return len;
    const int64_t g = gcd64(orig_rate, new_rate), o = orig_rate / g, n = new_rate / g;
    return (len * n + o - 1) / o;
}

/* The polyphase kernel [n][taps], evaluated in fp32 step by step as torchaudio does for an fp32
 * waveform (its kernel dtype follows the waveform), so the taps agree to the last bit or two. */
static void sinc_kernel(int64_t o, int64_t n, int64_t width, double base, float *kern) {
    const int64_t taps = 2 * width + o;
    const float lw = (float)LTX2_RESAMPLE_LOWPASS_WIDTH, pi = (float)M_PI, fbase = (float)base;
    const float scale = (float)(base / (double)o);
    for (int64_t j = 0; j < n; j++)
        for (int64_t k = 0; k < taps; k++) {
            float t = (float)(-j) / (float)n + (float)(k - width) / (float)o;
            t *= fbase;
            t = t < -lw ? -lw : (t > lw ? lw : t);
            const float c = cosf(t * pi / lw / 2.0f);
            const float window = c * c;
            t *= pi;
            const float s = t == 0.0f ? 1.0f : sinf(t) / t;
            kern[j * taps + k] = s * (window * scale);
        }
}

ltx2_status ltx2_audio_resample(ltx2_context *ctx, const float *x, int64_t rows, int64_t len, int64_t orig_rate,
                                int64_t new_rate, float *y) {
    if (!x || !y || rows < 0 || len < 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "resample: NULL buffer or bad size");
    if (orig_rate < 1 || new_rate < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "resample: sample rates must be positive (got %lld -> %lld Hz)",
                          (long long)orig_rate, (long long)new_rate);
    if (orig_rate == new_rate) {
        memcpy(y, x, (size_t)(rows * len) * sizeof(float));
        return LTX2_OK;
    }
    const int64_t g = gcd64(orig_rate, new_rate), o = orig_rate / g, n = new_rate / g;
    const double base = (double)(o < n ? o : n) * LTX2_RESAMPLE_ROLLOFF;
    const int64_t width = (int64_t)ceil(LTX2_RESAMPLE_LOWPASS_WIDTH * (double)o / base);
    const int64_t taps = 2 * width + o;
    if (n * taps > LTX2_RESAMPLE_MAX_KERNEL)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "resample %lld -> %lld Hz: the rates share only a factor %lld, the filter would need %lld x %lld "
                          "taps (limit %d); convert the input to a common rate (e.g. 48000 or 44100 Hz) first",
                          (long long)orig_rate, (long long)new_rate, (long long)g, (long long)n, (long long)taps,
                          LTX2_RESAMPLE_MAX_KERNEL);
    float *kern = malloc((size_t)(n * taps) * sizeof(float));
    if (!kern) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "resample: kernel %lld x %lld", (long long)n, (long long)taps);
    sinc_kernel(o, n, width, base, kern);
    const int64_t out_len = ltx2_audio_resample_len(len, orig_rate, new_rate);
    /* y[i*n + j] = sum_k xpad[i*o + k] kern[j, k], xpad = `width` zeros, x, `width + o` zeros. */
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t m = 0; m < out_len; m++) {
            const int64_t i = m / n, j = m % n, start = i * o - width;
            const float *xr = x + r * len, *kj = kern + j * taps;
            float acc = 0.0f;
            for (int64_t k = 0; k < taps; k++) {
                const int64_t p = start + k;
                if (p >= 0 && p < len) acc += xr[p] * kj[k];
            }
            y[r * out_len + m] = acc;
        }
    free(kern);
    return LTX2_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Log-mel spectrogram
 * ------------------------------------------------------------------------------------------- */

static ltx2_status check_cfg(ltx2_context *ctx, const ltx2_audio_mel_config *c) {
    if (!c) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mel: NULL config");
    if (c->sample_rate < 2 || c->n_fft < 2 || c->hop < 1 || c->n_mels < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mel: bad config (rate %lld, n_fft %lld, hop %lld, mels %lld)",
                          (long long)c->sample_rate, (long long)c->n_fft, (long long)c->hop, (long long)c->n_mels);
    return LTX2_OK;
}

ltx2_status ltx2_audio_mel_frames(ltx2_context *ctx, const ltx2_audio_mel_config *cfg, int64_t len,
                                  int64_t *frames) {
    LTX2_TRY(check_cfg(ctx, cfg));
    if (len <= cfg->n_fft / 2)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "mel: %lld samples is too short: the centered STFT reflect-pads %lld samples, which needs more "
                          "than %lld samples (%.4f s at %lld Hz)",
                          (long long)len, (long long)(cfg->n_fft / 2), (long long)(cfg->n_fft / 2),
                          (double)(cfg->n_fft / 2 + 1) / (double)cfg->sample_rate, (long long)cfg->sample_rate);
    *frames = len / cfg->hop + 1;
    return LTX2_OK;
}

/* Slaney mel scale: linear below 1 kHz (200/3 Hz per mel), logarithmic above. */
#define SLANEY_F_SP (200.0 / 3.0)
#define SLANEY_MIN_LOG_HZ 1000.0
static double slaney_logstep(void) { return log(6.4) / 27.0; }

static double hz_to_mel(double f) {
    const double min_log_mel = SLANEY_MIN_LOG_HZ / SLANEY_F_SP;
    return f >= SLANEY_MIN_LOG_HZ ? min_log_mel + log(f / SLANEY_MIN_LOG_HZ) / slaney_logstep() : f / SLANEY_F_SP;
}

static double mel_to_hz(double m) {
    const double min_log_mel = SLANEY_MIN_LOG_HZ / SLANEY_F_SP;
    return m >= min_log_mel ? SLANEY_MIN_LOG_HZ * exp(slaney_logstep() * (m - min_log_mel)) : SLANEY_F_SP * m;
}

/* fb[f][m], n_freqs = n_fft/2 + 1 (torchaudio melscale_fbanks, norm "slaney"); fp: n_mels + 2
 * scratch for the filter edges. */
static void mel_filterbank(const ltx2_audio_mel_config *c, double *fb, double *fp) {
    const int64_t nf = c->n_fft / 2 + 1, nm = c->n_mels;
    const double m_min = hz_to_mel(0.0), m_max = hz_to_mel((double)c->sample_rate / 2.0);
    for (int64_t i = 0; i < nm + 2; i++) fp[i] = mel_to_hz(m_min + (m_max - m_min) * (double)i / (double)(nm + 1));
    for (int64_t f = 0; f < nf; f++) {
        /* all_freqs = linspace(0, sample_rate // 2, n_freqs) */
        const double hz = nf > 1 ? (double)(c->sample_rate / 2) * (double)f / (double)(nf - 1) : 0.0;
        for (int64_t m = 0; m < nm; m++) {
            const double down = (hz - fp[m]) / (fp[m + 1] - fp[m]);
            const double up = (fp[m + 2] - hz) / (fp[m + 2] - fp[m + 1]);
            double v = down < up ? down : up;
            if (v < 0.0) v = 0.0;
            fb[f * nm + m] = v * 2.0 / (fp[m + 2] - fp[m]);
        }
    }
}

static int is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* In-place iterative radix-2 FFT of re/im[n] (n a power of two); cs/sn hold cos/sin(2 pi k / n). */
static void fft_pow2(double *re, double *im, int64_t n, const double *cs, const double *sn) {
    for (int64_t i = 1, j = 0; i < n; i++) {
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i];
            re[i] = re[j], re[j] = t;
            t = im[i];
            im[i] = im[j], im[j] = t;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        const int64_t half = len / 2, step = n / len;
        for (int64_t s = 0; s < n; s += len)
            for (int64_t k = 0; k < half; k++) {
                const double wr = cs[k * step], wi = -sn[k * step]; /* e^{-2 pi i k / len} */
                const double xr = re[s + k + half] * wr - im[s + k + half] * wi;
                const double xi = re[s + k + half] * wi + im[s + k + half] * wr;
                re[s + k + half] = re[s + k] - xr, im[s + k + half] = im[s + k] - xi;
                re[s + k] += xr, im[s + k] += xi;
            }
    }
}

ltx2_status ltx2_audio_log_mel(ltx2_context *ctx, const ltx2_audio_mel_config *cfg, const float *x, int64_t rows,
                               int64_t len, float *mel) {
    int64_t frames;
    LTX2_TRY(ltx2_audio_mel_frames(ctx, cfg, len, &frames));
    if (!x || !mel || rows < 1) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mel: NULL buffer or rows < 1");
    const int64_t N = cfg->n_fft, nf = N / 2 + 1, nm = cfg->n_mels, pad = N / 2;
    double *fb = malloc((size_t)(nf * nm + nm + 2) * sizeof(double));
    double *win = malloc((size_t)N * sizeof(double)), *cs = malloc((size_t)N * sizeof(double));
    double *sn = malloc((size_t)N * sizeof(double));
    if (!fb || !win || !cs || !sn) {
        free(fb), free(win), free(cs), free(sn);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "mel: tables for n_fft %lld", (long long)N);
    }
    mel_filterbank(cfg, fb, fb + nf * nm);
    for (int64_t k = 0; k < N; k++) {
        cs[k] = cos(2.0 * M_PI * (double)k / (double)N);
        sn[k] = sin(2.0 * M_PI * (double)k / (double)N);
        win[k] = (double)(float)(0.5 - 0.5 * cs[k]); /* torch.hann_window (periodic), an fp32 tensor */
    }
    const int pow2 = is_pow2(N);
    int failed = 0;
#pragma omp parallel
    {
        double *re = malloc((size_t)(2 * N + nf) * sizeof(double));
        double *im = re ? re + N : NULL, *mag = re ? re + 2 * N : NULL;
        if (!re) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for collapse(2) schedule(static)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t t = 0; t < frames; t++) {
                if (!re) continue;
                const float *xr = x + r * len;
                for (int64_t k = 0; k < N; k++) {
                    int64_t p = t * cfg->hop + k - pad; /* reflect: x[-i] = x[i], x[len-1+i] = x[len-1-i] */
                    if (p < 0) p = -p;
                    if (p >= len) p = 2 * (len - 1) - p;
                    re[k] = (double)xr[p] * win[k];
                    im[k] = 0.0;
                }
                if (pow2) {
                    fft_pow2(re, im, N, cs, sn);
                    for (int64_t f = 0; f < nf; f++) mag[f] = hypot(re[f], im[f]);
                } else {
                    for (int64_t f = 0; f < nf; f++) {
                        double ar = 0.0, ai = 0.0;
                        for (int64_t k = 0; k < N; k++) {
                            const int64_t q = (f * k) % N;
                            ar += re[k] * cs[q], ai -= re[k] * sn[q];
                        }
                        mag[f] = hypot(ar, ai);
                    }
                }
                float *out = mel + (r * frames + t) * nm;
                for (int64_t m = 0; m < nm; m++) {
                    double acc = 0.0;
                    for (int64_t f = 0; f < nf; f++) acc += mag[f] * fb[f * nm + m];
                    const float v = (float)acc;
                    out[m] = logf(v > LTX2_AUDIO_MEL_LOG_FLOOR ? v : LTX2_AUDIO_MEL_LOG_FLOOR);
                }
            }
        free(re);
    }
    free(fb), free(win), free(cs), free(sn);
    if (failed) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "mel: per-thread FFT buffers (n_fft %lld)", (long long)N);
    return LTX2_OK;
}
