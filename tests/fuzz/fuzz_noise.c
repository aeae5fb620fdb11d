/* Fuzz target: a noise file as generate reads it (--noise: video_noise [1, C, F', H', W'] and
 * audio_noise [1, z, T', F'] in a .safetensors or .npz) for the tiny models' 9 x 64 x 96 clip. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "pipeline/pipeline.h"

/* The tiny LTX-2 geometry: VAE factors 8 (time) and 32 (space), 8 latent channels, 2 x 16 audio
 * latent (z x F'), 32 audio features per token; 9 frames of 64 x 96 at 24 fps. */
#define FUZZ_FRAMES 9
#define FUZZ_HEIGHT 64
#define FUZZ_WIDTH 96
#define FUZZ_FPS 24.0
#define FUZZ_TIME_FACTOR 8
#define FUZZ_SPACE_FACTOR 32
#define FUZZ_LATENT_CHANNELS 8
#define FUZZ_AUDIO_Z 2
#define FUZZ_AUDIO_FEAT 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const exts[] = {".safetensors", ".npz"};
    char path[64];
    if (!fuzz_write_file(data, size, exts, 2, path, sizeof path)) return 0;
    ltx2_context *ctx = fuzz_context();
    if (!ctx) return 0;
    ltx2_pipe_geometry g;
    ltx2_status st = ltx2_pipe_geometry_make(ctx, FUZZ_FRAMES, FUZZ_HEIGHT, FUZZ_WIDTH, FUZZ_FPS, FUZZ_TIME_FACTOR,
                                             FUZZ_SPACE_FACTOR, FUZZ_LATENT_CHANNELS, FUZZ_AUDIO_Z, FUZZ_AUDIO_FEAT, &g);
    float *video = st == LTX2_OK ? malloc((size_t)(g.video_tokens * g.lc) * sizeof(float)) : NULL;
    float *audio = st == LTX2_OK ? malloc((size_t)(g.at * g.audio_feat) * sizeof(float)) : NULL;
    if (video && audio) {
        st = ltx2_pipe_noise_load(ctx, path, size & 1, &g, video, audio); /* either stage's names */
        fuzz_check_error(ctx, st);
    }
    free(video);
    free(audio);
    unlink(path);
    ltx2_context_free(ctx);
    return 0;
}
