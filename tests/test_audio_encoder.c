/* Audio VAE encoder + its front end against ltx-core / torchaudio: the golden 44.1 kHz stereo
 * waveform (tests/golden/data/audio_enc_<v>.safetensors, from gen_audio_encoder_goldens.py) is
 * resampled to 16 kHz, turned into a log-mel and encoded with the tiny 2.0 / 2.3 encoders, and
 * every recorded stage is compared. Also: the same waveform through a float32 WAV file gives the
 * same latent; the WAV reader's formats (PCM 8/16/24/32, float 32/64, extensible, mono) decode to
 * the expected values; bad inputs (mono, bad or unsupported rates, too-short audio, wrong mel
 * bins, missing / mis-shaped tensors, truncated or malformed WAVs) give clear errors. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "io/wav.h"
#include "model/audio_encoder.h"
#include "golden_stages.h"
#include "test_util.h"

/* fp32 vs fp32, as the decoder goldens (test_audio_golden.c): different summation orders give
 * ~1e-7 relative per layer; 1e-5 catches any layout, padding, tap-order or filter bug (those are
 * of order 1). Every stage meets it, including the resampler, the STFT log-mel (our FFT runs in
 * double, torch's in fp32) and the normalised latent; see PARITY.md. */
#define AUDIO_ENC_REL_L2_TOL 1e-5
#define GOLDEN_INPUT_RATE 44100

static void expect_err(ltx2_context *ctx, ltx2_status st, ltx2_status want, const char *needle, const char *what) {
    CHECK(st == want && strstr(ltx2_last_error(ctx), needle), "%s: status %s, message \"%s\" (want %s with \"%s\")", what,
          ltx2_status_name(st), ltx2_last_error(ctx), ltx2_status_name(want), needle);
}

/* The golden waveform through a float32 WAV file (what `ltx2` would read) gives the same latent. */
static void wav_path(ltx2_context *ctx, const ltx2_audio_encoder *enc, const ltx2_st_file *golden, const float *wave,
                     const int64_t ws[3], const char *dir, const char *v) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/in_%s.wav", dir, v);
    ltx2_status st = ltx2_wav_write(ctx, path, wave, ws[1], ws[2], GOLDEN_INPUT_RATE, LTX2_WAV_FLOAT32);
    CHECK(st == LTX2_OK, "write %s: %s", path, ltx2_last_error(ctx));
    ltx2_wav_audio a;
    st = ltx2_wav_read(ctx, path, &a);
    CHECK(st == LTX2_OK, "read %s: %s", path, ltx2_last_error(ctx));
    if (st != LTX2_OK) return;
    CHECK(a.channels == ws[1] && a.frames == ws[2] && a.sample_rate == GOLDEN_INPUT_RATE && a.is_float && a.bits == 32,
          "%s wav: %lld ch %lld frames %lld Hz", v, (long long)a.channels, (long long)a.frames, (long long)a.sample_rate);
    CHECK(memcmp(a.samples, wave, (size_t)(ws[1] * ws[2]) * sizeof(float)) == 0, "%s wav: float samples differ", v);
    int64_t ls[4];
    const int64_t s3[3] = {1, a.channels, a.frames};
    st = ltx2_audio_encoder_wave_latent_shape(ctx, enc, 1, a.channels, a.frames, a.sample_rate, ls);
    CHECK(st == LTX2_OK, "%s wav latent shape: %s", v, ltx2_last_error(ctx));
    float *lat = st == LTX2_OK ? malloc((size_t)(ls[0] * ls[1] * ls[2] * ls[3]) * sizeof(float)) : NULL;
    if (lat) {
        ltx2_tensor wt = ltx2_tensor_make(a.samples, LTX2_F32, 3, s3), lt = ltx2_tensor_make(lat, LTX2_F32, 4, ls);
        golden_stages dc = {.golden = golden, .version = v, .tol = AUDIO_ENC_REL_L2_TOL};
        st = ltx2_audio_encode_waveform(ctx, enc, &wt, a.sample_rate, &lt, NULL, NULL);
        CHECK(st == LTX2_OK, "%s wav encode: %s", v, ltx2_last_error(ctx));
        if (st == LTX2_OK) golden_stage_check("encoder.out", &lt, &dc);
    }
    free(lat);
    ltx2_wav_audio_free(&a);
    unlink(path);
}

static void bad_inputs(ltx2_context *ctx, const ltx2_st_set *w, const ltx2_audio_encoder_config *cfg,
                       const ltx2_audio_encoder *enc, const char *v) {
    static float buf[2 * 2 * 4800];
    float lat[2 * 8 * 16];
    int64_t ws[3] = {1, 1, 4800}, ls[4] = {1, 2, 8, 16};
    ltx2_tensor wt = ltx2_tensor_make(buf, LTX2_F32, 3, ws), lt = ltx2_tensor_make(lat, LTX2_F32, 4, ls);
    expect_err(ctx, ltx2_audio_encode_waveform(ctx, enc, &wt, 16000, &lt, NULL, NULL), LTX2_ERR_SHAPE, "stereo", "mono");
    ws[1] = 2;
    wt = ltx2_tensor_make(buf, LTX2_F32, 3, ws);
    expect_err(ctx, ltx2_audio_encode_waveform(ctx, enc, &wt, 0, &lt, NULL, NULL), LTX2_ERR_INVALID_ARG, "sample rate",
               "rate 0");
    expect_err(ctx, ltx2_audio_encode_waveform(ctx, enc, &wt, 44101, &lt, NULL, NULL), LTX2_ERR_UNSUPPORTED,
               "share only", "rate 44101");
    ws[2] = 512; /* = n_fft / 2: reflect padding needs more */
    wt = ltx2_tensor_make(buf, LTX2_F32, 3, ws);
    expect_err(ctx, ltx2_audio_encode_waveform(ctx, enc, &wt, 16000, &lt, NULL, NULL), LTX2_ERR_SHAPE, "too short",
               "short wave");
    ws[2] = 4800; /* a latent of the wrong shape */
    wt = ltx2_tensor_make(buf, LTX2_F32, 3, ws);
    ls[2] = 7;
    lt = ltx2_tensor_make(lat, LTX2_F32, 4, ls);
    expect_err(ctx, ltx2_audio_encode_waveform(ctx, enc, &wt, 16000, &lt, NULL, NULL), LTX2_ERR_SHAPE, "[1, 2, 8, 16]",
               "latent shape");
    const int64_t ms[4] = {1, 2, 31, 32}; /* wrong mel bins */
    ltx2_tensor mt = ltx2_tensor_make(buf, LTX2_F32, 4, ms);
    expect_err(ctx, ltx2_audio_encoder_encode(ctx, enc, &mt, &lt, NULL, NULL), LTX2_ERR_SHAPE, "mel", "mel bins");
    ltx2_audio_encoder *e2 = NULL;
    expect_err(ctx, ltx2_audio_encoder_load(ctx, w, "nope.", cfg, &e2), LTX2_ERR_NOT_FOUND,
               "nope.per_channel_statistics.mean-of-means", "missing key");
    ltx2_audio_encoder_config bad = *cfg;
    bad.in_channels = 1;
    expect_err(ctx, ltx2_audio_encoder_load(ctx, w, "audio_vae.", &bad, &e2), LTX2_ERR_SHAPE,
               "audio_vae.encoder.conv_in.conv.weight", "mis-shaped");
    (void)v;
}

static void run_version(ltx2_context *ctx, const char *v, const char *dir) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_st_set *w = NULL;
    ltx2_st_file *golden = NULL;
    ltx2_audio_encoder *enc = NULL;
    float *wave = NULL, *lat = NULL;
    ltx2_audio_encoder_config cfg;
    ltx2_status st = ltx2_st_set_open(ctx, path, &w);
    CHECK(st == LTX2_OK, "%s: %s", path, ltx2_last_error(ctx));
    if (st != LTX2_OK) return;
    st = ltx2_audio_encoder_config_from_file(ctx, w->files[0], &cfg);
    CHECK(st == LTX2_OK, "%s encoder config: %s", v, ltx2_last_error(ctx));
    if (st == LTX2_OK)
        CHECK(cfg.in_channels == 2 && cfg.double_z && cfg.mel.sample_rate == 16000 && cfg.mel.n_fft == 1024 &&
                  cfg.mel.hop == 160 && cfg.mel.n_mels == 64,
              "%s config: in %lld double_z %d rate %lld n_fft %lld hop %lld mels %lld", v, (long long)cfg.in_channels,
              cfg.double_z, (long long)cfg.mel.sample_rate, (long long)cfg.mel.n_fft, (long long)cfg.mel.hop,
              (long long)cfg.mel.n_mels);
    if (st == LTX2_OK) st = ltx2_audio_encoder_load(ctx, w, "audio_vae.", &cfg, &enc);
    CHECK(st == LTX2_OK, "%s encoder load: %s", v, ltx2_last_error(ctx));
    snprintf(path, sizeof(path), "%s/tests/golden/data/audio_enc_%s.safetensors", LTX2_SOURCE_DIR, v);
    if (st == LTX2_OK) st = ltx2_st_open(ctx, path, &golden);
    CHECK(st == LTX2_OK, "%s: %s", path, ltx2_last_error(ctx));
    if (st != LTX2_OK) goto done;
    int64_t ws[4], ls[4];
    int nd = 0;
    wave = golden_stage_copy(golden, "wave.in", ws, &nd);
    CHECK(wave && nd == 3, "%s: golden wave.in", v);
    if (!wave || nd != 3) goto done;
    st = ltx2_audio_encoder_wave_latent_shape(ctx, enc, ws[0], ws[1], ws[2], GOLDEN_INPUT_RATE, ls);
    CHECK(st == LTX2_OK, "%s latent shape: %s", v, ltx2_last_error(ctx));
    if (st != LTX2_OK) goto done;
    lat = malloc((size_t)(ls[0] * ls[1] * ls[2] * ls[3]) * sizeof(float));
    golden_stages dc = {.golden = golden, .version = v, .tol = AUDIO_ENC_REL_L2_TOL};
    ltx2_tensor wt = ltx2_tensor_make(wave, LTX2_F32, 3, ws), lt = ltx2_tensor_make(lat, LTX2_F32, 4, ls);
    st = ltx2_audio_encode_waveform(ctx, enc, &wt, GOLDEN_INPUT_RATE, &lt, golden_stage_check, &dc);
    CHECK(st == LTX2_OK, "%s encode: %s", v, ltx2_last_error(ctx));
    /* every golden except the input must have been compared */
    CHECK(dc.compared == (int)golden->n_tensors - 1, "%s: compared %d of %zu goldens", v, dc.compared,
          golden->n_tensors - 1);
    wav_path(ctx, enc, golden, wave, ws, dir, v);
    bad_inputs(ctx, w, &cfg, enc, v);
done:
    free(wave);
    free(lat);
    ltx2_audio_encoder_free(enc);
    ltx2_st_close(golden);
    ltx2_st_set_close(w);
}

/* ---- WAV reader formats and errors, on hand-made files ---- */

static size_t put_le(uint8_t *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
    return (size_t)bytes;
}

/* RIFF/WAVE with a `LIST` chunk (odd size, padded) before fmt, then data. ext: extensible fmt. */
static size_t make_wav(uint8_t *b, int tag, int ch, int bits, int ext, const uint8_t *payload, size_t n) {
    size_t o = 0;
    memcpy(b, "RIFF", 4), o = 8;
    memcpy(b + o, "WAVE", 4), o += 4;
    memcpy(b + o, "LIST", 4), o += 4;
    o += put_le(b + o, 3, 4);
    memcpy(b + o, "abc\0", 4), o += 4;
    memcpy(b + o, "fmt ", 4), o += 4;
    o += put_le(b + o, ext ? 40 : 16, 4);
    o += put_le(b + o, ext ? 0xFFFE : (uint64_t)tag, 2);
    o += put_le(b + o, (uint64_t)ch, 2);
    o += put_le(b + o, 8000, 4);
    o += put_le(b + o, (uint64_t)(8000 * ch * bits / 8), 4);
    o += put_le(b + o, (uint64_t)(ch * bits / 8), 2);
    o += put_le(b + o, (uint64_t)bits, 2);
    if (ext) {
        static const uint8_t tail[14] = {0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71};
        o += put_le(b + o, 22, 2);
        o += put_le(b + o, (uint64_t)bits, 2);
        o += put_le(b + o, 3, 4);
        o += put_le(b + o, (uint64_t)tag, 2);
        memcpy(b + o, tail, 14), o += 14;
    }
    memcpy(b + o, "data", 4), o += 4;
    o += put_le(b + o, n, 4);
    memcpy(b + o, payload, n), o += n;
    put_le(b + 4, o - 8, 4);
    return o;
}

static void wav_formats(ltx2_context *ctx) {
    uint8_t b[256], p[64];
    ltx2_wav_audio a;
    /* PCM16 stereo: frames (-32768, 16384), (32767, -1) */
    size_t n = 0;
    n += put_le(p + n, 0x8000, 2), n += put_le(p + n, 16384, 2), n += put_le(p + n, 32767, 2), n += put_le(p + n, 0xFFFF, 2);
    size_t sz = make_wav(b, 1, 2, 16, 0, p, n);
    ltx2_status st = ltx2_wav_parse(ctx, b, sz, "pcm16", &a);
    CHECK(st == LTX2_OK && a.channels == 2 && a.frames == 2 && a.sample_rate == 8000 && a.bits == 16 && !a.is_float,
          "pcm16: %s", ltx2_last_error(ctx));
    if (st == LTX2_OK)
        CHECK(a.samples[0] == -1.0f && a.samples[1] == 32767.0f / 32768.0f && a.samples[2] == 0.5f &&
                  a.samples[3] == -1.0f / 32768.0f,
              "pcm16 values %g %g %g %g", a.samples[0], a.samples[1], a.samples[2], a.samples[3]);
    ltx2_wav_audio_free(&a);
    /* PCM24 mono, extensible: -2^23, 2^22 */
    n = 0;
    n += put_le(p + n, 0x800000, 3), n += put_le(p + n, 0x400000, 3);
    sz = make_wav(b, 1, 1, 24, 1, p, n);
    st = ltx2_wav_parse(ctx, b, sz, "pcm24", &a);
    CHECK(st == LTX2_OK && a.channels == 1 && a.frames == 2 && a.samples[0] == -1.0f && a.samples[1] == 0.5f,
          "pcm24: %s", ltx2_last_error(ctx));
    ltx2_wav_audio_free(&a);
    /* PCM32 and 8-bit */
    n = put_le(p, 0xC0000000u, 4);
    sz = make_wav(b, 1, 1, 32, 0, p, n);
    st = ltx2_wav_parse(ctx, b, sz, "pcm32", &a);
    CHECK(st == LTX2_OK && a.frames == 1 && a.samples[0] == -0.5f, "pcm32: %s", ltx2_last_error(ctx));
    ltx2_wav_audio_free(&a);
    p[0] = 0, p[1] = 192;
    sz = make_wav(b, 1, 1, 8, 0, p, 2);
    st = ltx2_wav_parse(ctx, b, sz, "u8", &a);
    CHECK(st == LTX2_OK && a.frames == 2 && a.samples[0] == -1.0f && a.samples[1] == 0.5f, "u8: %s", ltx2_last_error(ctx));
    ltx2_wav_audio_free(&a);
    /* float64 (extensible) */
    const double d = -0.25;
    uint64_t du;
    memcpy(&du, &d, 8);
    n = put_le(p, du, 8);
    sz = make_wav(b, 3, 1, 64, 1, p, n);
    st = ltx2_wav_parse(ctx, b, sz, "f64", &a);
    CHECK(st == LTX2_OK && a.is_float && a.bits == 64 && a.samples[0] == -0.25f, "f64: %s", ltx2_last_error(ctx));
    ltx2_wav_audio_free(&a);
    /* errors */
    n = 0;
    n += put_le(p + n, 1, 2), n += put_le(p + n, 2, 2);
    sz = make_wav(b, 1, 2, 16, 0, p, n);
    expect_err(ctx, ltx2_wav_parse(ctx, b, sz - 2, "trunc", &a), LTX2_ERR_FORMAT, "truncated", "truncated data");
    expect_err(ctx, ltx2_wav_parse(ctx, b, 30, "trunc", &a), LTX2_ERR_FORMAT, "truncated", "truncated header");
    expect_err(ctx, ltx2_wav_parse(ctx, b, 8, "short", &a), LTX2_ERR_FORMAT, "not a RIFF/WAVE", "short");
    sz = make_wav(b, 1, 2, 16, 0, p, 2);
    expect_err(ctx, ltx2_wav_parse(ctx, b, sz, "partial", &a), LTX2_ERR_FORMAT, "whole number", "partial frame");
    sz = make_wav(b, 2, 1, 16, 0, p, 2); /* ADPCM */
    expect_err(ctx, ltx2_wav_parse(ctx, b, sz, "adpcm", &a), LTX2_ERR_UNSUPPORTED, "format code 2", "adpcm");
    sz = make_wav(b, 1, 1, 12, 0, p, 2);
    expect_err(ctx, ltx2_wav_parse(ctx, b, sz, "12bit", &a), LTX2_ERR_UNSUPPORTED, "12-bit", "12-bit");
    sz = make_wav(b, 3, 1, 32, 0, p, 4);
    const float nan = NAN;
    memcpy(b + sz - 4, &nan, 4);
    expect_err(ctx, ltx2_wav_parse(ctx, b, sz, "nan", &a), LTX2_ERR_FORMAT, "non-finite", "nan");
    expect_err(ctx, ltx2_wav_read(ctx, "/nonexistent/x.wav", &a), LTX2_ERR_IO, "/nonexistent/x.wav", "missing file");
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    char dir[] = "/tmp/ltx2_audio_enc_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    wav_formats(ctx);
    run_version(ctx, "2.0", dir);
    run_version(ctx, "2.3", dir);
    rmdir(dir);
    ltx2_context_free(ctx);
    return test_finish();
}
