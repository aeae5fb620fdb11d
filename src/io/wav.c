/* WAV writer (see wav.h). Little-endian fields are written byte by byte so the file is the same
 * on any host. */
#include "io/wav.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/file.h"

#define WAV_MAX_CHANNELS 16
#define WAV_FORMAT_PCM 1
#define WAV_FORMAT_IEEE_FLOAT 3
/* Frames converted per write call (bounded scratch buffer). */
#define WAV_CHUNK_FRAMES 4096

static void put16(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v & 0xff);
    p[1] = (uint8_t)((v >> 8) & 0xff);
}

static void put32(uint8_t *p, uint32_t v) {
    put16(p, v & 0xffff);
    put16(p + 2, v >> 16);
}

ltx2_status ltx2_wav_write(ltx2_context *ctx, const char *path, const float *samples, int64_t channels,
                           int64_t frames, int64_t sample_rate, ltx2_wav_format fmt) {
    if (!path || (!samples && frames > 0))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "wav: NULL path or samples");
    if (channels < 1 || channels > WAV_MAX_CHANNELS || sample_rate < 1 || sample_rate > UINT32_MAX / 8 || frames < 0 ||
        (fmt != LTX2_WAV_PCM16 && fmt != LTX2_WAV_FLOAT32))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "wav %s: bad parameters (channels %lld, rate %lld, frames %lld, format %d)",
                          path, (long long)channels, (long long)sample_rate, (long long)frames, (int)fmt);
    const uint32_t bytes = fmt == LTX2_WAV_PCM16 ? 2 : 4;
    const bool is_float = fmt == LTX2_WAV_FLOAT32;
    const uint64_t data_size = (uint64_t)frames * (uint64_t)channels * bytes;
    const uint32_t fmt_size = is_float ? 18 : 16; /* non-PCM fmt chunks carry cbSize */
    const uint32_t header = 12 + 8 + fmt_size + (is_float ? 12 : 0) + 8;
    if (data_size + header > UINT32_MAX)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "wav %s: %llu data bytes exceed the 4 GiB RIFF limit", path,
                          (unsigned long long)data_size);
    uint8_t h[64];
    memset(h, 0, sizeof(h));
    memcpy(h, "RIFF", 4);
    put32(h + 4, (uint32_t)(header - 8 + data_size));
    memcpy(h + 8, "WAVE", 4);
    memcpy(h + 12, "fmt ", 4);
    put32(h + 16, fmt_size);
    put16(h + 20, is_float ? WAV_FORMAT_IEEE_FLOAT : WAV_FORMAT_PCM);
    put16(h + 22, (uint32_t)channels);
    put32(h + 24, (uint32_t)sample_rate);
    put32(h + 28, (uint32_t)(sample_rate * channels * bytes));
    put16(h + 32, (uint32_t)(channels * bytes));
    put16(h + 34, bytes * 8);
    uint32_t o = 36;
    if (is_float) {
        put16(h + 36, 0); /* cbSize */
        memcpy(h + 38, "fact", 4);
        put32(h + 42, 4);
        put32(h + 46, (uint32_t)frames);
        o = 50;
    }
    memcpy(h + o, "data", 4);
    put32(h + o + 4, (uint32_t)data_size);
    ltx2_file_writer w;
    LTX2_TRY(ltx2_file_writer_open(ctx, path, &w));
    ltx2_status st = ltx2_file_writer_write(ctx, &w, h, header);
    uint8_t *buf = st == LTX2_OK ? malloc((size_t)(WAV_CHUNK_FRAMES * channels * bytes)) : NULL;
    if (st == LTX2_OK && !buf) {
        ltx2_file_writer_abort(&w);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "wav %s: scratch buffer", path);
    }
    for (int64_t f0 = 0; st == LTX2_OK && f0 < frames; f0 += WAV_CHUNK_FRAMES) {
        const int64_t nf = frames - f0 < WAV_CHUNK_FRAMES ? frames - f0 : WAV_CHUNK_FRAMES;
        uint8_t *p = buf;
        for (int64_t f = 0; f < nf; f++)
            for (int64_t c = 0; c < channels; c++, p += bytes) {
                float v = samples[c * frames + f0 + f];
                if (is_float) {
                    uint32_t u;
                    memcpy(&u, &v, 4);
                    put32(p, u);
                } else {
                    if (!(v >= -1.0f)) v = v != v ? 0.0f : -1.0f; /* NaN -> silence */
                    if (v > 1.0f) v = 1.0f;
                    const long q = lrintf(v * 32767.0f);
                    put16(p, (uint32_t)(uint16_t)(int16_t)q);
                }
            }
        st = ltx2_file_writer_write(ctx, &w, buf, (size_t)(nf * channels * bytes));
    }
    free(buf);
    if (st != LTX2_OK) {
        ltx2_error_prefix(ctx, "wav %s", path);
        return st;
    }
    st = ltx2_file_writer_commit(ctx, &w);
    if (st != LTX2_OK) ltx2_error_prefix(ctx, "wav %s", path);
    return st;
}
