/* Audio-to-video against tests/golden/gen_a2vid_golden.py (fp32, tiny checkpoints, the golden's noise
 * fed back), LTX-2.0 and LTX-2.3:
 * - two-stage: A2VidPipelineTwoStage's steps (guided stage 1 with the audio held, the x2 upsampler,
 *   stage 2 with the distilled LoRA);
 * - one-stage: the same audio rule in the one-stage pipeline;
 * - two-stage with an image at frame 0 too (2.3): the masked video loop beside the held audio.
 * Each checks the encoded audio (before the cut), the held audio latent, the stage latents, the
 * decoded video, and that the output audio is the file's window itself. Also: a mono file runs as
 * its channel twice, another window changes the video, the model handle gives the same run, FFmpeg's
 * path reads a FLAC copy as the WAV reader reads the WAV, and the refusals before heavy work. */
#define _DEFAULT_SOURCE /* mkstemps */
#define _DEFAULT_SOURCE /* mkstemps */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/audio_file.h"
#include "io/png.h"
#include "io/wav.h"
#include "ltx2/ltx2.h"
#include "pipeline_golden.h"
#include "test_util.h"

/* As the other pipeline goldens: fp32 against fp32, differences from summation order only (the
 * audio front end's resampler and STFT included: measured ~1e-6); a wrong rule (a timestep, a
 * context, a noise scale) moves the video by > 1e-2. */
#define A2VID_REL_L2_TOL 1e-4

#define TINY_DIR LTX2_SOURCE_DIR "/weights/tiny"
#define GOLDEN_DIR LTX2_SOURCE_DIR "/tests/golden/data"
#define INPUT_WAV GOLDEN_DIR "/a2vid_input.wav"
#define INPUT_FLAC GOLDEN_DIR "/a2vid_input.flac" /* the same samples */
/* gen_a2vid_golden.py's settings */
#define A2VID_STEPS 2
#define A2VID_STG_BLOCK 1
#define A2VID_START_S 0.1
#define A2VID_SIZE 128
#define A2VID_FRAMES 9

static void base_params(ltx2_generate_params *p, const char *v, bool two, char *ckpt, char *dpath, size_t cap) {
    snprintf(ckpt, cap, "%s/ltx2-tiny-%s.safetensors", TINY_DIR, v);
    snprintf(dpath, cap, "%s/ltx2-tiny-lora-distilled-%s.safetensors", TINY_DIR, v);
    ltx2_generate_params_init(p);
    p->device = "cpu";
    p->checkpoint = ckpt;
    p->pipeline = two ? LTX2_PIPELINE_TWO_STAGE : LTX2_PIPELINE_ONE_STAGE;
    if (two) {
        p->spatial_upsampler = TINY_DIR "/ltx2-tiny-upsampler-spatial-x2.safetensors";
        p->distilled_lora = (ltx2_lora_spec){dpath, 1.0};
    }
    p->prompt_embeds = TINY_DIR "/prompt_embeds_positive.safetensors";
    p->negative_prompt_embeds = TINY_DIR "/prompt_embeds_negative.safetensors";
    p->steps = A2VID_STEPS;
    p->stg_block = A2VID_STG_BLOCK;
    p->height = p->width = A2VID_SIZE;
    p->frames = A2VID_FRAMES;
    p->fps = 24.0;
    p->latent_bf16 = 0;
    p->audio = INPUT_WAV;
    p->audio_start_time = A2VID_START_S;
}

static void rm_dir(const char *dir) {
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* The dumped encoded latent (torch layout already) against the golden's. */
static void check_encoded(ltx2_context *ctx, const ltx2_st_file *f, const char *what, const char *dump) {
    char path[1200];
    snprintf(path, sizeof path, "%s/encoded_audio_latent.npy", dump);
    ltx2_array a;
    if (ltx2_npy_read(ctx, path, &a) != LTX2_OK) {
        CHECK(0, "%s: read %s: %s", what, path, ltx2_last_error(ctx));
        return;
    }
    const int64_t n = ltx2_tensor_numel(&a.t);
    const float *ref = golden_tensor(f, "encoded_audio_latent", n);
    CHECK(ref != NULL, "%s: golden encoded_audio_latent of %lld values", what, (long long)n);
    if (ref) {
        const double e = test_rel_l2(a.t.data, ref, n);
        CHECK(e <= A2VID_REL_L2_TOL, "%s: encoded audio rel-L2 %.3g", what, e);
        printf("%s: encoded_audio_latent rel-L2 %.3g\n", what, e);
    }
    ltx2_array_free(&a);
}

static void check_version(ltx2_context *ctx, const char *v, bool two, bool image) {
    char ckpt[1024], dpath[1024], gold[1024], what[64], dump[] = "/tmp/ltx2_a2vid_XXXXXX";
    snprintf(gold, sizeof gold, "%s/a2vid_%s%s_%s.safetensors", GOLDEN_DIR, image ? "image_" : "",
             two ? "two_stage" : "one_stage", v);
    snprintf(what, sizeof what, "%s a2vid %s%s", v, two ? "two-stage" : "one-stage", image ? " + image" : "");
    /* gen_i2v_golden.py's image at frame 0, strength 0.9, CRF 0 (no H.264 round trip) */
    const ltx2_image_cond img = {GOLDEN_DIR "/i2v_image.png", 0, 0.9, 0};
    ltx2_st_file *f = NULL;
    if (ltx2_st_open(ctx, gold, &f) != LTX2_OK) {
        CHECK(0, "open %s: %s", gold, ltx2_last_error(ctx));
        return;
    }
    CHECK(mkdtemp(dump) != NULL, "mkdtemp");
    ltx2_generate_params p;
    base_params(&p, v, two, ckpt, dpath, sizeof ckpt);
    p.noise = gold;
    p.dump_dir = dump;
    if (image) p.images = &img, p.n_images = 1;
    ltx2_generate_result r;
    const ltx2_status st = ltx2_generate(ctx, &p, &r);
    CHECK(st == LTX2_OK, "%s: generate: %s", what, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        check_encoded(ctx, f, what, dump);
        pg_check_audio_latent(f, what, &r, A2VID_REL_L2_TOL);
        if (two) {
            char last1[64];
            snprintf(last1, sizeof last1, "stage_1_step_%03d_video", A2VID_STEPS - 1);
            pg_check_dump(ctx, f, what, dump, last1, "stage_1_video_latent", 8, A2VID_REL_L2_TOL);
            pg_check_dump(ctx, f, what, dump, "upsampled_video_latent", "upsampled_video_latent", 8, A2VID_REL_L2_TOL);
        }
        pg_check_cl(f, what, "video_latent", r.video_latent, r.video_latent_shape[4], A2VID_REL_L2_TOL);
        if (two && !image && r.video) pg_check_cl(f, what, "video", r.video, 3, A2VID_REL_L2_TOL);
        /* the output audio: the WAV's window, bit for bit, at the file's rate */
        const int64_t nw = r.audio_channels * r.audio_samples;
        const float *gw = golden_tensor(f, "audio_input", nw);
        CHECK(gw && r.audio && r.audio_channels == 2 && r.audio_rate == 44100,
              "%s: output audio %lld x %lld at %lld Hz", what, (long long)r.audio_channels, (long long)r.audio_samples,
              (long long)r.audio_rate);
        if (gw && r.audio)
            CHECK(!memcmp(gw, r.audio, (size_t)nw * sizeof(float)), "%s: the output audio is not the input's window",
                  what);
    }
    ltx2_generate_result_free(&r);
    rm_dir(dump);
    ltx2_st_close(f);
}

/* A mono file is its channel twice; a later window changes the video (the audio is used). */
static void check_mono_and_window(ltx2_context *ctx) {
    char ckpt[1024], dpath[1024], mono[] = "/tmp/ltx2_a2vid_mono_XXXXXX.wav", dual[] = "/tmp/ltx2_a2vid_dual_XXXXXX.wav";
    ltx2_wav_audio in;
    if (ltx2_wav_read(ctx, INPUT_WAV, &in) != LTX2_OK) {
        CHECK(0, "read %s: %s", INPUT_WAV, ltx2_last_error(ctx));
        return;
    }
    int fm = mkstemps(mono, 4), fd = mkstemps(dual, 4);
    CHECK(fm >= 0 && fd >= 0, "mkstemps");
    close(fm);
    close(fd);
    float *twice = malloc((size_t)(2 * in.frames) * sizeof(float));
    memcpy(twice, in.samples, (size_t)in.frames * sizeof(float));
    memcpy(twice + in.frames, in.samples, (size_t)in.frames * sizeof(float));
    CHECK(ltx2_wav_write(ctx, mono, in.samples, 1, in.frames, in.sample_rate, LTX2_WAV_FLOAT32) == LTX2_OK &&
              ltx2_wav_write(ctx, dual, twice, 2, in.frames, in.sample_rate, LTX2_WAV_FLOAT32) == LTX2_OK,
          "write the test WAVs: %s", ltx2_last_error(ctx));
    ltx2_generate_params p;
    base_params(&p, "2.0", false, ckpt, dpath, sizeof ckpt);
    p.decode_video = 0;
    ltx2_generate_result a, b, c;
    p.audio = mono;
    const ltx2_status s1 = ltx2_generate(ctx, &p, &a);
    p.audio = dual;
    const ltx2_status s2 = ltx2_generate(ctx, &p, &b);
    /* the model handle: the audio encoder joins the loaded models, the run is the same bit for bit */
    ltx2_model *model = NULL;
    ltx2_generate_result h;
    memset(&h, 0, sizeof h);
    ltx2_status sh = ltx2_model_load(ctx, ckpt, "cpu", &model);
    if (sh == LTX2_OK) {
        ltx2_generate_params q = p;
        q.checkpoint = NULL;
        sh = ltx2_generate_model(ctx, model, &q, &h);
    }
    CHECK(sh == LTX2_OK, "model handle with audio: %s", ltx2_last_error(ctx));
    p.audio_start_time = A2VID_START_S + 0.2;
    const ltx2_status s3 = ltx2_generate(ctx, &p, &c);
    CHECK(s1 == LTX2_OK && s2 == LTX2_OK && s3 == LTX2_OK, "mono / window runs: %s", ltx2_last_error(ctx));
    if (s1 == LTX2_OK && s2 == LTX2_OK && s3 == LTX2_OK) {
        const size_t n = (size_t)(a.video_latent_shape[1] * a.video_latent_shape[2] * a.video_latent_shape[3] *
                                  a.video_latent_shape[4]);
        CHECK(!memcmp(a.video_latent, b.video_latent, n * sizeof(float)), "mono and its channel twice differ");
        CHECK(a.audio_channels == 1 && b.audio_channels == 2, "output channels %lld / %lld",
              (long long)a.audio_channels, (long long)b.audio_channels);
        CHECK(memcmp(b.video_latent, c.video_latent, n * sizeof(float)), "another audio window, the same video");
        if (sh == LTX2_OK)
            CHECK(!memcmp(b.video_latent, h.video_latent, n * sizeof(float)) && h.audio_channels == 2,
                  "the model handle's a2vid run differs from ltx2_generate's");
    }
    ltx2_generate_result_free(&h);
    ltx2_model_free(model);
    ltx2_generate_result_free(&a);
    ltx2_generate_result_free(&b);
    ltx2_generate_result_free(&c);
    free(twice);
    ltx2_wav_audio_free(&in);
    unlink(mono);
    unlink(dual);
}

/* FFmpeg's path (any format but WAV) reads the same window of the FLAC copy as the WAV reader does
 * of the WAV, bit for bit (the generator checked that decode_audio_from_file agrees). */
static void check_ffmpeg_path(ltx2_context *ctx) {
    if (!ltx2_audio_file_ffmpeg_available()) {
        printf("no FFmpeg in this build: the FLAC path is not checked\n");
        return;
    }
    const double max_s = (double)A2VID_FRAMES / 24.0;
    ltx2_wav_audio w, f;
    const ltx2_status s1 = ltx2_audio_file_read(ctx, INPUT_WAV, A2VID_START_S, max_s, &w);
    const ltx2_status s2 = ltx2_audio_file_read(ctx, INPUT_FLAC, A2VID_START_S, max_s, &f);
    CHECK(s1 == LTX2_OK && s2 == LTX2_OK, "read the WAV and the FLAC: %s", ltx2_last_error(ctx));
    if (s1 == LTX2_OK && s2 == LTX2_OK) {
        CHECK(w.channels == f.channels && w.frames == f.frames && w.sample_rate == f.sample_rate,
              "FLAC window %lld x %lld at %lld Hz, WAV %lld x %lld at %lld Hz", (long long)f.channels,
              (long long)f.frames, (long long)f.sample_rate, (long long)w.channels, (long long)w.frames,
              (long long)w.sample_rate);
        if (w.frames == f.frames && w.channels == f.channels)
            CHECK(!memcmp(w.samples, f.samples, (size_t)(w.channels * w.frames) * sizeof(float)),
                  "the FLAC's samples differ from the WAV's");
    }
    ltx2_wav_audio_free(&w);
    ltx2_wav_audio_free(&f);
}

static void check_refusals(ltx2_context *ctx) {
    char ckpt[1024], dpath[1024];
    ltx2_generate_params p;
    base_params(&p, "2.0", false, ckpt, dpath, sizeof ckpt);
    p.audio_start_time = 0.6; /* 0.2 s left of 0.8, the clip lasts 0.375 s */
    pg_expect_refusal(ctx, &p, &(pg_refusal){"audio shorter than the clip", "give a longer audio", LTX2_ERR_INVALID_ARG});
    base_params(&p, "2.0", false, ckpt, dpath, sizeof ckpt);
    p.audio_start_time = 5.0;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"start past the end", "nothing to read", LTX2_ERR_INVALID_ARG});
    base_params(&p, "2.0", false, ckpt, dpath, sizeof ckpt);
    p.audio_max_duration = 0.1;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"maximum duration under the clip", "maximum duration", LTX2_ERR_INVALID_ARG});
    base_params(&p, "2.0", false, ckpt, dpath, sizeof ckpt);
    p.audio = TINY_DIR "/no-such-audio.wav";
    pg_expect_refusal(ctx, &p, &(pg_refusal){"missing file", "no such file", LTX2_ERR_INVALID_ARG});
    base_params(&p, "2.0", false, ckpt, dpath, sizeof ckpt);
    p.audio = TINY_DIR "/README.md"; /* not audio */
#ifdef LTX2_HAVE_FFMPEG
    pg_expect_refusal(ctx, &p, &(pg_refusal){"not an audio file", "README.md", LTX2_ERR_INVALID_ARG});
#else
    pg_expect_refusal(ctx, &p, &(pg_refusal){"not a WAV, no FFmpeg", "no FFmpeg", LTX2_ERR_UNSUPPORTED});
#endif
    base_params(&p, "2.0", false, ckpt, dpath, sizeof ckpt);
    p.audio_start_time = -1;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"negative start", "must be >= 0", LTX2_ERR_INVALID_ARG});
    base_params(&p, "2.0", false, ckpt, dpath, sizeof ckpt);
    p.semantics = LTX2_GENERATE_SEM_DIFFUSERS;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"diffusers semantics", "ltx-core", LTX2_ERR_UNSUPPORTED});
}

int main(void) {
    ltx2_context *ctx = test_context_quiet();
    if (!ctx) return 1;
    check_version(ctx, "2.0", true, false);
    check_version(ctx, "2.3", true, false);
    check_version(ctx, "2.0", false, false);
    check_version(ctx, "2.3", false, false);
    if (ltx2_png_available()) check_version(ctx, "2.3", true, true); /* the image and the audio together */
    else printf("image + audio: skipped (built without libpng)\n");
    check_mono_and_window(ctx);
    check_ffmpeg_path(ctx);
    check_refusals(ctx);
    ltx2_context_free(ctx);
    return test_finish();
}
