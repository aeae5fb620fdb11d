/* Fuzz target: the WAV reader. Accepted files have every decoded sample read and must fit the
 * input (frames x channels x bytes per sample <= size). */
#include <stdint.h>

#include "fuzz_common.h"
#include "io/wav.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ltx2_context *ctx = fuzz_context();
    if (!ctx) return 0;
    ltx2_wav_audio a;
    ltx2_status st = ltx2_wav_parse(ctx, data, size, "fuzz.wav", &a);
    fuzz_check_error(ctx, st);
    if (st == LTX2_OK) {
        if (a.channels < 1 || a.frames < 0 || a.sample_rate < 1 ||
            (uint64_t)a.frames * (uint64_t)a.channels * (uint64_t)(a.bits / 8) > size)
            abort();
        volatile float sink = 0.0f;
        for (int64_t i = 0; i < a.frames * a.channels; i++) sink += a.samples[i];
        (void)sink;
        ltx2_wav_audio_free(&a);
    }
    ltx2_context_free(ctx);
    return 0;
}
