/* The public API as an application sees it: only the public headers (include/ltx2/). Generates a short clip with
 * the embedded tiny model, with a progress callback and a log callback, checks what comes back and
 * writes it with the public writers (WAV, a PNG frame, MP4 where the build has FFmpeg). Doubles as
 * the example program for the README. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ltx2/ltx2.h"
#include "test_util.h"

typedef struct example_state {
    int last_step, steps, calls;
    int log_lines;
} example_state;

static void on_progress(int step, int steps, double seconds, void *user) {
    example_state *s = user;
    s->last_step = step;
    s->steps = steps;
    s->calls++;
    printf("step %d/%d (%.2f s)\n", step, steps, seconds);
}

static void on_log(ltx2_log_level level, const char *msg, void *user) {
    example_state *s = user;
    s->log_lines++;
    printf("log[%d]: %s\n", (int)level, msg);
}

/* Whether path starts with magic (n bytes) at offset off. */
static int starts_with(const char *path, long off, const char *magic, size_t n) {
    char buf[16] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    const int ok = fseek(f, off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n && memcmp(buf, magic, n) == 0;
    fclose(f);
    return ok;
}

static void write_outputs(ltx2_context *ctx, const ltx2_generate_result *r) {
    char dir[] = "/tmp/ltx2_api_example_XXXXXX", wav[64], png[64], mp4[64];
    if (!mkdtemp(dir)) return;
    snprintf(wav, sizeof wav, "%s/a.wav", dir);
    snprintf(png, sizeof png, "%s/frame_00016.png", dir);
    snprintf(mp4, sizeof mp4, "%s/a.mp4", dir);
    CHECK(ltx2_result_write_wav(ctx, r, wav) == LTX2_OK && starts_with(wav, 0, "RIFF", 4), "write wav: %s",
          ltx2_last_error(ctx));
    ltx2_status st = ltx2_result_write_png(ctx, r, 16, png, "example");
    CHECK((st == LTX2_OK && starts_with(png, 1, "PNG", 3)) || st == LTX2_ERR_UNSUPPORTED, "write png: %s",
          ltx2_last_error(ctx));
    CHECK(ltx2_result_write_png(ctx, r, 17, png, NULL) == LTX2_ERR_INVALID_ARG, "frame 17 of 17 refused");
    st = ltx2_result_write_mp4(ctx, r, mp4, "example");
    CHECK((st == LTX2_OK && starts_with(mp4, 4, "ftyp", 4)) || st == LTX2_ERR_UNSUPPORTED, "write mp4: %s",
          ltx2_last_error(ctx));
    ltx2_generate_result empty;
    memset(&empty, 0, sizeof empty);
    CHECK(ltx2_result_write_wav(ctx, &empty, wav) == LTX2_ERR_INVALID_ARG, "a result without audio is refused");
    unlink(wav), unlink(png), unlink(mp4);
    rmdir(dir);
}

int main(void) {
    example_state state;
    memset(&state, 0, sizeof state);
    ltx2_context_params cp;
    ltx2_context_params_init(&cp);
    cp.log_fn = on_log;
    cp.log_user = &state;
    cp.n_threads = 2;
    ltx2_context *ctx = ltx2_context_create(&cp);
    CHECK(ctx != NULL, "context");

    ltx2_generate_params p;
    ltx2_generate_params_init(&p);
    CHECK(p.seed == 10 && p.frames == 121 && p.height == 512 && p.width == 768, "ltx-pipelines defaults");
    p.checkpoint = LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-2.3.safetensors";
    p.prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_positive.safetensors";
    p.negative_prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_negative.safetensors";
    p.height = 64;
    p.width = 64;
    p.frames = 17;
    p.steps = 3;
    p.seed = 1234;
    p.progress = on_progress;
    p.progress_user = &state;

    ltx2_generate_result r;
    ltx2_status st = ltx2_generate(ctx, &p, &r);
    CHECK(st == LTX2_OK, "generate: %s", ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        CHECK(r.frames == 17 && r.height == 64 && r.width == 64 && r.video, "video %lldx%lldx%lld",
              (long long)r.frames, (long long)r.height, (long long)r.width);
        CHECK(r.audio && r.audio_channels == 2 && r.audio_rate > 0 && r.audio_samples > 0, "audio");
        CHECK(r.seed == 1234 && r.steps == 3 && !strcmp(r.model_version, "2.3"), "result metadata");
        CHECK(state.calls == 3 && state.last_step == 3 && state.steps == 3, "progress called once per step");
        CHECK(state.log_lines > 0, "log callback used");
        CHECK(r.timings.total >= r.timings.denoise && r.timings.denoise > 0, "timings");
        int finite = 1;
        for (int64_t i = 0; i < r.frames * r.height * r.width * 3; i++)
            if (!(r.video[i] == r.video[i])) finite = 0;
        CHECK(finite, "video is finite");
        write_outputs(ctx, &r);
    }
    ltx2_generate_result_free(&r);
    ltx2_generate_result_free(&r); /* freeing twice is safe: the result is zeroed */
    ltx2_context_free(ctx);
    return test_finish();
}
