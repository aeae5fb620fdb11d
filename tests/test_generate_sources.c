/* Every checkpoint source gives the single file's result bit for bit: the tiny LTX-2.0 and 2.3 as a
 * diffusers directory (transformer/, connectors/, vae/, audio_vae/, vocoder/) and LTX-2.3 as split
 * component files (weights/tiny/split-2.3, made by tests/golden/gen_tiny_split.py), through the
 * one-stage pipeline and the distilled one (its upsampler, stage-2 DiT and, with libpng, the video
 * encoder of image conditioning), the split files also through the model handle
 * (ltx2_model_load_files); the diffusers directory's latent_upsampler/ folder, found by itself or
 * named, in place of the upsampler file; and a split set missing a component, or holding one twice,
 * is refused naming it. The CPU, tiny sizes. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/png.h"
#include "ltx2/ltx2.h"
#include "test_util.h"

#define TINY LTX2_SOURCE_DIR "/weights/tiny/"
#define SPLIT TINY "split-2.3/"

static const char *const k_split[] = {SPLIT "transformer.safetensors", SPLIT "connectors.safetensors",
                                      SPLIT "video_vae.safetensors", SPLIT "audio_vae.safetensors"};
#define N_SPLIT ((int)(sizeof k_split / sizeof k_split[0]))

static void params(ltx2_generate_params *p, bool distilled) {
    ltx2_generate_params_init(p);
    p->device = "cpu";
    p->prompt_embeds = TINY "prompt_embeds_positive.safetensors";
    p->negative_prompt_embeds = TINY "prompt_embeds_negative.safetensors";
    p->steps = 2, p->height = 64, p->width = 96, p->frames = 9;
    p->stg_block = 1;
    if (distilled) {
        p->pipeline = LTX2_PIPELINE_DISTILLED;
        p->spatial_upsampler = TINY "ltx2-tiny-upsampler-spatial-x2.safetensors";
        p->steps = 0, p->height = p->width = 128;
    }
}

static bool same(const float *a, const float *b, int64_t n) {
    return (!a && !b) || (a && b && memcmp(a, b, (size_t)n * sizeof(float)) == 0);
}

static void compare(const char *what, const ltx2_generate_result *got, const ltx2_generate_result *ref) {
    const int64_t *vs = ref->video_latent_shape, *as = ref->audio_latent_shape;
    CHECK(same(got->video_latent, ref->video_latent, vs[0] * vs[1] * vs[2] * vs[3] * vs[4]) &&
              same(got->audio_latent, ref->audio_latent, as[0] * as[1] * as[2] * as[3]) &&
              got->frames == ref->frames && same(got->video, ref->video, ref->frames * ref->height * ref->width * 3) &&
              got->audio_samples == ref->audio_samples &&
              same(got->audio, ref->audio, ref->audio_channels * ref->audio_samples),
          "%s: not bitwise the single file's result", what);
}

/* The diffusers directory's own latent_upsampler/ (diffusers' LTX2LatentUpsamplerModel folder, the
 * same tiny x2 weights): found without --spatial-upsampler-path, and named as a folder. */
static void diffusers_upsampler(ltx2_context *ctx, const ltx2_generate_params *p, const char *dir, const char *what,
                                const ltx2_generate_result *ref) {
    char folder[600], how[320];
    snprintf(folder, sizeof folder, "%s/latent_upsampler", dir);
    const char *paths[2] = {NULL, folder};
    for (int k = 0; k < 2; k++) {
        ltx2_generate_params q = *p;
        q.spatial_upsampler = paths[k];
        snprintf(how, sizeof how, "%s, its latent_upsampler/ %s", what, k ? "named" : "found");
        ltx2_generate_result got;
        const ltx2_status st = ltx2_generate(ctx, &q, &got);
        CHECK(st == LTX2_OK, "%s: %s", how, ltx2_last_error(ctx));
        if (st != LTX2_OK) continue;
        compare(how, &got, ref);
        printf("%s: bitwise equal\n", how);
        ltx2_generate_result_free(&got);
    }
}

/* One pipeline from the single file, then from the other sources of the same weights. */
static void run(ltx2_context *ctx, const char *v, bool distilled, bool image, bool audio) {
    const ltx2_image_cond img = {LTX2_SOURCE_DIR "/tests/golden/data/i2v_image.png", 0, 0.9, 0};
    char single[512], dir[512], what[160];
    snprintf(single, sizeof single, TINY "ltx2-tiny-%s.safetensors", v);
    snprintf(dir, sizeof dir, TINY "ltx2-tiny-diffusers-%s", v);
    ltx2_generate_params p;
    params(&p, distilled);
    if (image) p.images = &img, p.n_images = 1;
    if (audio) p.audio = LTX2_SOURCE_DIR "/tests/golden/data/a2vid_input.wav"; /* the audio encoder too */
    p.checkpoint = single;
    ltx2_generate_result ref, got;
    ltx2_status st = ltx2_generate(ctx, &p, &ref);
    CHECK(st == LTX2_OK, "%s single file: %s", v, ltx2_last_error(ctx));
    if (st != LTX2_OK) return;
    for (int src = 0; src < 2; src++) {
        if (src == 1 && strcmp(v, "2.3") != 0) continue; /* split files: 2.3 only (kept small) */
        p.checkpoint = src == 0 ? dir : NULL;
        p.checkpoint_files = src == 1 ? k_split : NULL;
        p.n_checkpoint_files = src == 1 ? N_SPLIT : 0;
        snprintf(what, sizeof what, "%s %s%s%s from %s", v, distilled ? "distilled" : "one-stage",
                 image ? " + image" : "", audio ? " + audio" : "", src == 0 ? "the diffusers directory" : "split files");
        st = ltx2_generate(ctx, &p, &got);
        CHECK(st == LTX2_OK, "%s: %s", what, ltx2_last_error(ctx));
        if (st != LTX2_OK) continue;
        compare(what, &got, &ref);
        printf("%s: bitwise equal (model %s)\n", what, got.model_version);
        ltx2_generate_result_free(&got);
        if (src == 0 && distilled) diffusers_upsampler(ctx, &p, dir, what, &ref);
        if (src != 1) continue;
        /* the same split files through the model handle (loaded once, checkpoint left unset) */
        ltx2_model *model = NULL;
        st = ltx2_model_load_files(ctx, k_split, N_SPLIT, "cpu", &model);
        CHECK(st == LTX2_OK, "%s, model handle: load: %s", what, ltx2_last_error(ctx));
        if (st != LTX2_OK) continue;
        ltx2_generate_params q = p;
        q.checkpoint_files = NULL, q.n_checkpoint_files = 0;
        st = ltx2_generate_model(ctx, model, &q, &got);
        CHECK(st == LTX2_OK, "%s, model handle: %s", what, ltx2_last_error(ctx));
        if (st == LTX2_OK) {
            snprintf(what + strlen(what), sizeof what - strlen(what), " through the model handle");
            compare(what, &got, &ref);
            printf("%s: bitwise equal\n", what);
            ltx2_generate_result_free(&got);
        }
        /* parameters naming another checkpoint are refused */
        q.checkpoint = single;
        st = ltx2_generate_model(ctx, model, &q, &got);
        CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), "other split files"),
              "model handle: another checkpoint accepted (%d): %s", (int)st, ltx2_last_error(ctx));
        if (st == LTX2_OK) ltx2_generate_result_free(&got);
        ltx2_clear_error(ctx);
        ltx2_model_free(model);
    }
    ltx2_generate_result_free(&ref);
}

static void refused(ltx2_context *ctx, const char *what, const char *const *files, int n, const char *needle) {
    ltx2_generate_params p;
    params(&p, false);
    p.checkpoint_files = files;
    p.n_checkpoint_files = n;
    ltx2_generate_result r;
    const ltx2_status st = ltx2_generate(ctx, &p, &r);
    CHECK(st != LTX2_OK && strstr(ltx2_last_error(ctx), needle), "%s: want an error with \"%s\", got %d: %s", what,
          needle, (int)st, ltx2_last_error(ctx));
    if (st == LTX2_OK) ltx2_generate_result_free(&r);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    run(ctx, "2.0", false, false, false);
    run(ctx, "2.3", false, false, false);
    run(ctx, "2.3", true, ltx2_png_available(), false);
    run(ctx, "2.3", false, false, true);
    refused(ctx, "no audio VAE", k_split, N_SPLIT - 1, "no audio VAE, vocoder in the given files");
    const char *const dup[] = {k_split[0], k_split[1], k_split[2], k_split[3], SPLIT "video_vae.safetensors"};
    refused(ctx, "the video VAE twice", dup, 5, "the video VAE is in both");
    const char *const with_single[] = {TINY "ltx2-tiny-2.3.safetensors", k_split[2]};
    refused(ctx, "a single file and a split VAE", with_single, 2, "is in both");
    ltx2_context_free(ctx);
    return test_finish();
}
