/* The public model handle (ltx2_model_load + ltx2_generate_model): models loaded once give, call
 * after call, bitwise what ltx2_generate gives with the same parameters (two seeds, then the first
 * again: nothing a call leaves behind changes the next), the calls after the load report no load
 * time, and a handle refuses a different checkpoint, a LoRA (fused at load) and NULL arguments; the
 * distilled pipeline with an image runs on a handle too. Tiny LTX-2.0 and 2.3 on the CPU. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/png.h"
#include "ltx2/ltx2.h"
#include "test_util.h"

/* A call on loaded models spends only the geometry and guidance set-up before its text stage: far
 * under this (the tiny load itself takes ~0.1 s, a real one minutes). */
#define PRELOADED_MAX_LOAD_S 0.005

static void params(ltx2_generate_params *p, const char *ckpt, uint64_t seed) {
    ltx2_generate_params_init(p);
    p->device = "cpu";
    p->checkpoint = ckpt;
    p->prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_positive.safetensors";
    p->negative_prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_negative.safetensors";
    p->steps = 2, p->height = 64, p->width = 96, p->frames = 9;
    p->stg_block = 1;
    p->seed = seed;
}

static bool same(const float *a, const float *b, int64_t n) { return a && b && memcmp(a, b, (size_t)n * sizeof(float)) == 0; }

static void compare(const char *what, const ltx2_generate_result *got, const ltx2_generate_result *ref) {
    const int64_t *vs = ref->video_latent_shape, *as = ref->audio_latent_shape;
    CHECK(same(got->video_latent, ref->video_latent, vs[0] * vs[1] * vs[2] * vs[3] * vs[4]) &&
              same(got->audio_latent, ref->audio_latent, as[0] * as[1] * as[2] * as[3]) &&
              same(got->video, ref->video, ref->frames * ref->height * ref->width * 3) &&
              got->audio_samples == ref->audio_samples &&
              same(got->audio, ref->audio, ref->audio_channels * ref->audio_samples),
          "%s: not bitwise ltx2_generate's result", what);
}

static void check_version(ltx2_context *ctx, const char *v) {
    char ckpt[1024];
    snprintf(ckpt, sizeof ckpt, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_model *model = NULL;
    ltx2_status st = ltx2_model_load(ctx, ckpt, "cpu", &model);
    CHECK(st == LTX2_OK, "%s load: %s", v, ltx2_last_error(ctx));
    if (st != LTX2_OK) return;
    const uint64_t seeds[3] = {10, 11, 10};
    for (int i = 0; i < 3; i++) {
        ltx2_generate_params p;
        params(&p, ckpt, seeds[i]);
        ltx2_generate_result ref, got;
        st = ltx2_generate(ctx, &p, &ref);
        CHECK(st == LTX2_OK, "%s generate: %s", v, ltx2_last_error(ctx));
        p.checkpoint = i == 1 ? NULL : ckpt; /* NULL: the model's own */
        p.device = "cuda";                   /* ignored: the model's device runs */
        const ltx2_status st2 = ltx2_generate_model(ctx, model, &p, &got);
        CHECK(st2 == LTX2_OK, "%s generate_model (seed %llu): %s", v, (unsigned long long)seeds[i], ltx2_last_error(ctx));
        if (st == LTX2_OK && st2 == LTX2_OK) {
            char what[64];
            snprintf(what, sizeof what, "%s call %d (seed %llu)", v, i + 1, (unsigned long long)seeds[i]);
            compare(what, &got, &ref);
            printf("%s: load %.3f s per ltx2_generate, %.4f s per ltx2_generate_model\n", what, ref.timings.load,
                   got.timings.load);
            CHECK(got.timings.load < PRELOADED_MAX_LOAD_S, "%s: %.4f s of load time on loaded models", what,
                  got.timings.load);
            ltx2_generate_result_free(&got);
        }
        ltx2_generate_result_free(&ref);
    }
    ltx2_generate_params p;
    ltx2_generate_result r;
    /* the distilled pipeline with an image on the same handle: its encoder joins the loaded models on
     * the first such call; each call equals ltx2_generate's */
    if (ltx2_png_available()) {
        const ltx2_image_cond img = {LTX2_SOURCE_DIR "/tests/golden/data/i2v_image.png", 0, 0.9, 0};
        for (int i = 0; i < 2; i++) {
            params(&p, ckpt, 10 + (uint64_t)i);
            p.pipeline = LTX2_PIPELINE_DISTILLED;
            p.spatial_upsampler = LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-upsampler-spatial-x2.safetensors";
            p.steps = 0, p.height = p.width = 128;
            p.images = &img;
            p.n_images = 1;
            ltx2_generate_result ref, got;
            st = ltx2_generate(ctx, &p, &ref);
            const ltx2_status st2 = ltx2_generate_model(ctx, model, &p, &got);
            CHECK(st == LTX2_OK && st2 == LTX2_OK, "%s distilled + image on the handle: %s", v, ltx2_last_error(ctx));
            if (st == LTX2_OK && st2 == LTX2_OK) compare("distilled + image", &got, &ref);
            if (st2 == LTX2_OK) ltx2_generate_result_free(&got);
            if (st == LTX2_OK) ltx2_generate_result_free(&ref);
        }
    }
    /* LoRAs are fused as the DiT loads: a handle's DiT is loaded already */
    const ltx2_lora_spec lora = {LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-lora-style-2.0.safetensors", 1.0};
    params(&p, ckpt, 10);
    p.loras = &lora;
    p.n_loras = 1;
    st = ltx2_generate_model(ctx, model, &p, &r);
    CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(ctx), "LoRAs are fused"), "%s: a LoRA on a handle: %s",
          v, ltx2_last_error(ctx));
    params(&p, LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-2.0.safetensors.other", 10);
    st = ltx2_generate_model(ctx, model, &p, &r);
    CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), "was loaded from"),
          "%s: another checkpoint must be refused: %s", v, ltx2_last_error(ctx));
    CHECK(ltx2_generate_model(ctx, NULL, &p, &r) == LTX2_ERR_INVALID_ARG, "%s: NULL model refused", v);
    ltx2_model_free(model);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    check_version(ctx, "2.0");
    check_version(ctx, "2.3");
    ltx2_model *m = NULL;
    CHECK(ltx2_model_load(ctx, "/nonexistent.safetensors", "cpu", &m) != LTX2_OK && !m,
          "a missing checkpoint fails to load: %s", ltx2_last_error(ctx));
    ltx2_model_free(NULL);
    ltx2_context_free(ctx);
    return test_finish();
}
