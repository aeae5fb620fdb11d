/* WAV reader (see wav.h): walks the RIFF chunks of a file held in memory with every offset checked
 * against the buffer, so hostile input can only produce an error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/file.h"
#include "io/wav.h"

#define WAV_MAX_CHANNELS 16
#define WAV_FORMAT_PCM 1
#define WAV_FORMAT_IEEE_FLOAT 3
#define WAV_FORMAT_EXTENSIBLE 0xFFFE
#define WAV_FMT_MIN 16        /* PCMWAVEFORMAT */
#define WAV_FMT_EXTENSIBLE 40 /* WAVEFORMATEXTENSIBLE: + cbSize, valid bits, mask, GUID */

/* KSDATAFORMAT_SUBTYPE_{PCM,IEEE_FLOAT} = {format code}-0000-0010-8000-00AA00389B71 */
static const uint8_t wav_guid_tail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80,
                                          0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};

static uint32_t get16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const uint8_t *p) { return get16(p) | get16(p + 2) << 16; }

void ltx2_wav_audio_free(ltx2_wav_audio *a) {
    if (!a) return;
    free(a->samples);
    memset(a, 0, sizeof(*a));
}

/* One interleaved sample at p -> fp32, scaled like ltx-pipelines' _audio_frame_to_float (the
 * integer is first rounded to fp32, then divided by a power of two, which is exact). */
static float wav_sample(const uint8_t *p, int bits, int is_float) {
    if (is_float) {
        if (bits == 32) {
            uint32_t u = get32(p);
            float f;
            memcpy(&f, &u, sizeof(f));
            return f;
        }
        uint64_t u = (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
        double d;
        memcpy(&d, &u, sizeof(d));
        return (float)d;
    }
    switch (bits) {
    case 8: return (float)((int32_t)p[0] - 128) / 128.0f;
    case 16: return (float)(int16_t)(uint16_t)get16(p) / 32768.0f;
    case 24: {
        int32_t v = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16);
        if (v & 0x800000) v -= 0x1000000;
        return (float)v / 8388608.0f;
    }
    default: return (float)(int32_t)get32(p) / 2147483648.0f;
    }
}

typedef struct wav_fmt {
    uint32_t tag, channels, rate, block_align, bits;
} wav_fmt;

static ltx2_status parse_fmt(ltx2_context *ctx, const uint8_t *p, uint32_t n, const char *label, wav_fmt *f) {
    if (n < WAV_FMT_MIN)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: fmt chunk is %u bytes, expected >= %d", label, n, WAV_FMT_MIN);
    f->tag = get16(p);
    f->channels = get16(p + 2);
    f->rate = get32(p + 4);
    f->block_align = get16(p + 12);
    f->bits = get16(p + 14);
    if (f->tag == WAV_FORMAT_EXTENSIBLE) {
        if (n < WAV_FMT_EXTENSIBLE)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: WAVE_FORMAT_EXTENSIBLE fmt chunk is %u bytes, expected %d",
                              label, n, WAV_FMT_EXTENSIBLE);
        if (memcmp(p + 26, wav_guid_tail, sizeof(wav_guid_tail)) != 0)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "wav %s: unknown WAVE_FORMAT_EXTENSIBLE sub-format", label);
        f->tag = get16(p + 24);
    }
    if (f->tag != WAV_FORMAT_PCM && f->tag != WAV_FORMAT_IEEE_FLOAT)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "wav %s: format code %u is not supported (only PCM = 1 and IEEE float = 3)", label, f->tag);
    const bool bits_ok = f->tag == WAV_FORMAT_PCM ? (f->bits == 8 || f->bits == 16 || f->bits == 24 || f->bits == 32)
                                                  : (f->bits == 32 || f->bits == 64);
    if (!bits_ok)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "wav %s: %u-bit %s samples are not supported", label, f->bits,
                          f->tag == WAV_FORMAT_PCM ? "PCM" : "float");
    if (f->channels < 1 || f->channels > WAV_MAX_CHANNELS)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "wav %s: %u channels, expected 1..%d", label, f->channels,
                          WAV_MAX_CHANNELS);
    if (f->rate < 1) return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: sample rate 0", label);
    if (f->block_align != f->channels * (f->bits / 8))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: block align %u, expected %u channels x %u bytes", label,
                          f->block_align, f->channels, f->bits / 8);
    return LTX2_OK;
}

ltx2_status ltx2_wav_parse(ltx2_context *ctx, const uint8_t *data, size_t size, const char *label,
                           ltx2_wav_audio *out) {
    if (!out || (!data && size > 0)) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "wav: NULL argument");
    memset(out, 0, sizeof(*out));
    if (!label) label = "(memory)";
    if (size < 12 || memcmp(data, "RIFF", 4) != 0 || memcmp(data + 8, "WAVE", 4) != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: not a RIFF/WAVE file (%zu bytes)", label, size);
    wav_fmt f = {0};
    bool have_fmt = false;
    size_t off = 12;
    while (off < size) {
        if (size - off < 8)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: truncated chunk header at byte %zu", label, off);
        const uint8_t *h = data + off;
        const uint32_t n = get32(h + 4);
        const size_t body = off + 8;
        if (memcmp(h, "data", 4) == 0) {
            if (!have_fmt) return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: data chunk before the fmt chunk", label);
            if (n > size - body)
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: truncated: data chunk says %u bytes, file has %zu", label,
                                  n, size - body);
            if (n % f.block_align != 0)
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: data size %u is not a whole number of %u-byte frames",
                                  label, n, f.block_align);
            const int64_t frames = n / f.block_align, ch = f.channels;
            float *s = malloc((size_t)(frames * ch > 0 ? frames * ch : 1) * sizeof(float));
            if (!s) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "wav %s: %lld frames", label, (long long)frames);
            const int bps = (int)f.bits / 8, is_float = f.tag == WAV_FORMAT_IEEE_FLOAT;
            for (int64_t i = 0; i < frames; i++)
                for (int64_t c = 0; c < ch; c++) {
                    const float v = wav_sample(data + body + (size_t)(i * f.block_align) + (size_t)(c * bps),
                                               (int)f.bits, is_float);
                    if (!isfinite(v)) {
                        free(s);
                        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: non-finite sample at frame %lld, channel %lld",
                                          label, (long long)i, (long long)c);
                    }
                    s[c * frames + i] = v;
                }
            *out = (ltx2_wav_audio){.samples = s, .channels = ch, .frames = frames, .sample_rate = f.rate,
                                    .bits = (int)f.bits, .is_float = is_float};
            return LTX2_OK;
        }
        if (n > size - body)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: truncated: chunk '%.4s' says %u bytes, file has %zu", label,
                              (const char *)h, n, size - body);
        if (memcmp(h, "fmt ", 4) == 0) {
            if (have_fmt) return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: two fmt chunks", label);
            LTX2_TRY(parse_fmt(ctx, data + body, n, label, &f));
            have_fmt = true;
        }
        off = body + n + (n & 1u); /* chunks are padded to an even size; n <= size - body, no overflow */
    }
    return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "wav %s: no %s chunk", label, have_fmt ? "data" : "fmt");
}

ltx2_status ltx2_wav_read(ltx2_context *ctx, const char *path, ltx2_wav_audio *out) {
    if (!path || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "wav: NULL path or output");
    char *buf = NULL;
    size_t size = 0;
    LTX2_TRY(ltx2_file_read_all(ctx, path, &buf, &size));
    ltx2_status st = ltx2_wav_parse(ctx, (const uint8_t *)buf, size, path, out);
    free(buf);
    return st;
}
