/* WAV writer: 16-bit PCM and 32-bit float stereo files are re-read byte by byte and every header
 * field and sample checked (interleaving, clamping, rounding); bad arguments and an unwritable
 * path give clear errors and leave no file behind. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "io/file.h"
#include "io/wav.h"
#include "test_util.h"

#define FRAMES 5000 /* more than one internal write chunk */
#define RATE 48000

static uint32_t get16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const uint8_t *p) { return get16(p) | get16(p + 2) << 16; }

static void check_file(ltx2_context *ctx, const char *path, const float *s, ltx2_wav_format fmt) {
    char *buf = NULL;
    size_t size = 0;
    ltx2_status st = ltx2_file_read_all(ctx, path, &buf, &size);
    CHECK(st == LTX2_OK, "read %s: %s", path, ltx2_last_error(ctx));
    if (st != LTX2_OK) return;
    const uint8_t *b = (const uint8_t *)buf;
    const bool fl = fmt == LTX2_WAV_FLOAT32;
    const uint32_t bytes = fl ? 4 : 2, fmt_size = fl ? 18 : 16, data_off = fl ? 58 : 44;
    const uint32_t data_size = FRAMES * 2 * bytes;
    CHECK(size == data_off + data_size, "size %zu", size);
    CHECK(memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WAVE", 4) == 0 && memcmp(b + 12, "fmt ", 4) == 0, "magic");
    CHECK(get32(b + 4) == size - 8, "riff size %u", get32(b + 4));
    CHECK(get32(b + 16) == fmt_size, "fmt size %u", get32(b + 16));
    CHECK(get16(b + 20) == (fl ? 3u : 1u), "format tag %u", get16(b + 20));
    CHECK(get16(b + 22) == 2, "channels %u", get16(b + 22));
    CHECK(get32(b + 24) == RATE, "rate %u", get32(b + 24));
    CHECK(get32(b + 28) == RATE * 2 * bytes, "byte rate %u", get32(b + 28));
    CHECK(get16(b + 32) == 2 * bytes && get16(b + 34) == 8 * bytes, "align %u bits %u", get16(b + 32), get16(b + 34));
    if (fl) CHECK(memcmp(b + 38, "fact", 4) == 0 && get32(b + 42) == 4 && get32(b + 46) == FRAMES, "fact chunk");
    CHECK(memcmp(b + data_off - 8, "data", 4) == 0 && get32(b + data_off - 4) == data_size, "data chunk");
    int bad = 0;
    for (int f = 0; f < FRAMES; f++)
        for (int c = 0; c < 2; c++) {
            const uint8_t *p = b + data_off + (f * 2 + c) * bytes;
            const float v = s[c * FRAMES + f];
            if (fl) {
                uint32_t u = get32(p);
                float got;
                memcpy(&got, &u, 4);
                bad += got != v;
            } else {
                const float cl = v > 1.0f ? 1.0f : (v < -1.0f ? -1.0f : v);
                bad += (int16_t)get16(p) != (int16_t)lrintf(cl * 32767.0f);
            }
        }
    CHECK(bad == 0, "%d samples differ", bad);
    free(buf);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    char dir[] = "/tmp/ltx2_test_wav_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    float *s = malloc(2 * FRAMES * sizeof(float));
    for (int f = 0; f < FRAMES; f++) {
        s[f] = 1.3f * sinf(0.01f * (float)f); /* left: exceeds [-1, 1] to exercise clamping */
        s[FRAMES + f] = 0.5f * cosf(0.003f * (float)f) - 0.25f;
    }
    char p16[256], pf[256], pbad[256];
    snprintf(p16, sizeof(p16), "%s/a16.wav", dir);
    snprintf(pf, sizeof(pf), "%s/af.wav", dir);
    snprintf(pbad, sizeof(pbad), "%s/missing/x.wav", dir);
    ltx2_status st = ltx2_wav_write(ctx, p16, s, 2, FRAMES, RATE, LTX2_WAV_PCM16);
    CHECK(st == LTX2_OK, "pcm16: %s", ltx2_last_error(ctx));
    if (st == LTX2_OK) check_file(ctx, p16, s, LTX2_WAV_PCM16);
    st = ltx2_wav_write(ctx, pf, s, 2, FRAMES, RATE, LTX2_WAV_FLOAT32);
    CHECK(st == LTX2_OK, "float32: %s", ltx2_last_error(ctx));
    if (st == LTX2_OK) check_file(ctx, pf, s, LTX2_WAV_FLOAT32);
    st = ltx2_wav_write(ctx, pbad, s, 2, FRAMES, RATE, LTX2_WAV_PCM16);
    CHECK(st != LTX2_OK && strstr(ltx2_last_error(ctx), "x.wav"), "unwritable path: %d %s", st, ltx2_last_error(ctx));
    st = ltx2_wav_write(ctx, p16, s, 0, FRAMES, RATE, LTX2_WAV_PCM16);
    CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), "channels 0"), "0 channels: %s", ltx2_last_error(ctx));
    st = ltx2_wav_write(ctx, p16, s, 2, FRAMES, 0, LTX2_WAV_PCM16);
    CHECK(st == LTX2_ERR_INVALID_ARG, "rate 0: %d", st);
    /* only the two good files exist: no temp files left behind */
    char **names = NULL;
    size_t n = 0;
    st = ltx2_dir_list(ctx, dir, &names, &n);
    CHECK(st == LTX2_OK && n == 2, "dir has %zu entries", n);
    for (size_t i = 0; i < n; i++) {
        char *full = ltx2_path_join(dir, names[i]);
        unlink(full);
        free(full);
    }
    ltx2_dir_list_free(names, n);
    rmdir(dir);
    free(s);
    ltx2_context_free(ctx);
    return test_finish();
}
