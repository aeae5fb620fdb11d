/* The pipelines with two stages against their goldens (fp32, tiny checkpoints, the tiny x2
 * upsampler, the golden's four noise draws fed back as --noise), for LTX-2.0 and LTX-2.3:
 * - distilled: tests/golden/gen_distilled_golden.py (DistilledPipeline's steps);
 * - two-stage: tests/golden/gen_two_stage_golden.py (TI2VidTwoStagesPipeline's steps: guided stage 1
 *   with a user LoRA, stage 2 with it and the distilled LoRA);
 * - the x1.5 and temporal x2 upsamplers: tests/golden/gen_upsampler_scales_golden.py (the distilled
 *   steps on the stage-1 clip two_stage_clip.h defines; the temporal one with two images).
 * Each checks stage 1's final latent, the upsampled latent, the final latents, the decoded video
 * and the waveform. Also: Philox's stage-2 streams, the timings, and every refusal before heavy
 * work. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/npy.h"
#include "io/safetensors.h"
#include "ltx2/ltx2.h"
#include "pipeline_golden.h"
#include "test_util.h"

/* As test_generate's E2E_REL_L2_TOL: fp32 against fp32, 11 steps and three models; differences
 * come only from summation order (measured ~1e-6), a wrong rule (sigma, mix, statistics, size)
 * moves the outputs by > 1e-2. */
#define TWO_STAGE_REL_L2_TOL 1e-4

#define TINY_DIR LTX2_SOURCE_DIR "/weights/tiny"
#define UPSAMPLER_X2 TINY_DIR "/ltx2-tiny-upsampler-spatial-x2.safetensors"
/* gen_two_stage_golden.py's settings: 2 guided steps, the tiny DiT's last block for STG, the style
 * LoRA at 0.8 in both stages, the distilled LoRA at ltx-pipelines' default strength 1 in stage 2 */
#define TWO_STAGE_STEPS 2
#define TWO_STAGE_STG_BLOCK 1
#define USER_LORA_STRENGTH 0.8
#define DISTILLED_LORA_STRENGTH 1.0

static void base_params(ltx2_generate_params *p, const char *ckpt) {
    ltx2_generate_params_init(p);
    p->device = "cpu";
    p->checkpoint = ckpt;
    p->pipeline = LTX2_PIPELINE_DISTILLED;
    p->spatial_upsampler = UPSAMPLER_X2;
    p->prompt_embeds = TINY_DIR "/prompt_embeds_positive.safetensors";
    p->height = 128;
    p->width = 128;
    p->frames = 9;
    p->fps = 24.0;
    p->latent_bf16 = 0; /* the golden runs in fp32 */
}

static void rm_dir(const char *dir) {
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* The two-stage pipeline's settings on top of base_params (user LoRA and distilled LoRA paths in
 * the caller's buffers). */
static void two_stage_params(ltx2_generate_params *p, const char *v, ltx2_lora_spec *user, char *user_path,
                             char *distilled_path, size_t cap) {
    snprintf(user_path, cap, "%s/ltx2-tiny-lora-style-%s.safetensors", TINY_DIR, v);
    snprintf(distilled_path, cap, "%s/ltx2-tiny-lora-distilled-%s.safetensors", TINY_DIR, v);
    p->pipeline = LTX2_PIPELINE_TWO_STAGE;
    p->negative_prompt_embeds = TINY_DIR "/prompt_embeds_negative.safetensors";
    p->steps = TWO_STAGE_STEPS;
    p->stg_block = TWO_STAGE_STG_BLOCK;
    *user = (ltx2_lora_spec){user_path, USER_LORA_STRENGTH};
    p->loras = user;
    p->n_loras = 1;
    p->distilled_lora = (ltx2_lora_spec){distilled_path, DISTILLED_LORA_STRENGTH};
}

/* The decoded waveform against the golden's. */
static void check_waveform(const ltx2_st_file *f, const char *what, const ltx2_generate_result *r) {
    const int64_t nw = r->audio_channels * r->audio_samples;
    const float *gw = golden_tensor(f, "waveform", nw);
    CHECK(gw != NULL && r->audio, "%s: golden waveform (%lld x %lld)", what, (long long)r->audio_channels,
          (long long)r->audio_samples);
    if (gw && r->audio) {
        const double e = test_rel_l2(r->audio, gw, nw);
        CHECK(e <= TWO_STAGE_REL_L2_TOL, "%s: waveform rel-L2 %.3g", what, e);
        printf("%s: waveform rel-L2 %.3g\n", what, e);
    }
}

static void check_version(ltx2_context *ctx, const char *v, ltx2_generate_pipeline pl) {
    const bool two = pl == LTX2_PIPELINE_TWO_STAGE;
    const char *ckpt_version = v;
    char ckpt[1024], gold[1024], dump[] = "/tmp/ltx2_two_stage_XXXXXX", upath[1024], dpath[1024], vv[32];
    snprintf(ckpt, sizeof ckpt, "%s/ltx2-tiny-%s.safetensors", TINY_DIR, v);
    snprintf(gold, sizeof gold, "%s/tests/golden/data/%s_%s.safetensors", LTX2_SOURCE_DIR,
             two ? "two_stage" : "distilled", v);
    snprintf(vv, sizeof vv, "%s %s", v, two ? "two-stage" : "distilled");
    v = vv; /* every message names the pipeline */
    ltx2_st_file *f = NULL;
    if (ltx2_st_open(ctx, gold, &f) != LTX2_OK) {
        CHECK(0, "open %s: %s", gold, ltx2_last_error(ctx));
        return;
    }
    CHECK(mkdtemp(dump) != NULL, "mkdtemp");
    ltx2_generate_params p;
    ltx2_lora_spec user;
    base_params(&p, ckpt);
    if (two) two_stage_params(&p, ckpt_version, &user, upath, dpath, sizeof upath);
    p.noise = gold;
    p.dump_dir = dump;
    ltx2_generate_result r;
    ltx2_status st = ltx2_generate(ctx, &p, &r);
    CHECK(st == LTX2_OK, "%s: generate: %s", v, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        const int64_t *ls = r.video_latent_shape; /* [1, F', H', W', C] */
        CHECK(ls[1] == 2 && ls[2] == 4 && ls[3] == 4 && ls[4] == 8, "%s: final video latent grid %lldx%lldx%lld", v,
              (long long)ls[1], (long long)ls[2], (long long)ls[3]);
        const int steps1 = two ? TWO_STAGE_STEPS : 8;
        CHECK(r.steps == steps1 + 3, "%s: %d steps run, expected %d + 3", v, r.steps, steps1);
        /* each stage on its own first: a miss names the stage that is wrong */
        char last1[64];
        snprintf(last1, sizeof last1, "stage_1_step_%03d_video", steps1 - 1);
        pg_check_dump(ctx, f, v, dump, last1, "stage_1_video_latent", 8, TWO_STAGE_REL_L2_TOL);
        pg_check_dump(ctx, f, v, dump, "upsampled_video_latent", "upsampled_video_latent", 8, TWO_STAGE_REL_L2_TOL);
        pg_check_cl(f, v, "video_latent", r.video_latent, ls[4], TWO_STAGE_REL_L2_TOL);
        pg_check_audio_latent(f, v, &r, TWO_STAGE_REL_L2_TOL);
        CHECK(r.frames == 9 && r.height == 128 && r.width == 128, "%s: video %lldx%lldx%lld", v, (long long)r.frames,
              (long long)r.height, (long long)r.width);
        if (r.video) pg_check_cl(f, v, "video", r.video, 3, TWO_STAGE_REL_L2_TOL);
        check_waveform(f, v, &r);
        CHECK(r.timings.upsample > 0 && r.timings.denoise > 0 && r.timings.total >= r.timings.denoise,
              "%s: timings (upsample %g, denoise %g, total %g)", v, r.timings.upsample, r.timings.denoise,
              r.timings.total);
        printf("%s: pipeline %.2f s (load %.2f s, denoise %.2f s, upsample %.3f s)\n", v, r.timings.total,
               r.timings.load, r.timings.denoise, r.timings.upsample);
    }
    ltx2_generate_result_free(&r);
    rm_dir(dump);
    ltx2_st_close(f);
}

/* The other latent upsamplers (tests/golden/gen_upsampler_scales_golden.py, the distilled steps):
 * x1.5 with stage 1 at two thirds of 192x96x9; temporal x2 with stage 1 at 96x64x9 @ 12 fps for
 * 96x64x17 @ 24 and an image at frame 0 and a keyframe at frame 16 (stage 1's 8). */
#define SCALE_IMAGE LTX2_SOURCE_DIR "/tests/golden/data/i2v_image.png"
static void check_scale(ltx2_context *ctx, const char *v, bool temporal) {
    char ckpt[1024], gold[1024], dump[] = "/tmp/ltx2_ups_scale_XXXXXX", what[48];
    snprintf(ckpt, sizeof ckpt, "%s/ltx2-tiny-%s.safetensors", TINY_DIR, v);
    snprintf(gold, sizeof gold, "%s/tests/golden/data/upsampler_%s_%s.safetensors", LTX2_SOURCE_DIR,
             temporal ? "temporal" : "x1.5", v);
    snprintf(what, sizeof what, "%s %s upsampler", v, temporal ? "temporal" : "x1.5");
    ltx2_st_file *f = NULL;
    if (ltx2_st_open(ctx, gold, &f) != LTX2_OK) {
        CHECK(0, "open %s: %s", gold, ltx2_last_error(ctx));
        return;
    }
    CHECK(mkdtemp(dump) != NULL, "mkdtemp");
    /* gen_upsampler_scales_golden.py's image settings (CRF 0: no H.264 round trip) */
    const ltx2_image_cond img[2] = {{SCALE_IMAGE, 0, 0.9, 0}, {SCALE_IMAGE, 16, 0.7, 0}};
    ltx2_generate_params p;
    base_params(&p, ckpt);
    p.spatial_upsampler = temporal ? TINY_DIR "/ltx2-tiny-upsampler-temporal-x2.safetensors"
                                   : TINY_DIR "/ltx2-tiny-upsampler-spatial-x1.5.safetensors";
    p.height = temporal ? 64 : 96;
    p.width = temporal ? 96 : 192;
    p.frames = temporal ? 17 : 9;
    if (temporal) {
        p.images = img;
        p.n_images = 2;
    }
    p.noise = gold;
    p.dump_dir = dump;
    ltx2_generate_result r;
    const ltx2_status st = ltx2_generate(ctx, &p, &r);
    CHECK(st == LTX2_OK, "%s: generate: %s", what, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        const int64_t *ls = r.video_latent_shape, want[3] = {temporal ? 3 : 2, temporal ? 2 : 3, temporal ? 3 : 6};
        CHECK(ls[1] == want[0] && ls[2] == want[1] && ls[3] == want[2], "%s: final video latent grid %lldx%lldx%lld",
              what, (long long)ls[1], (long long)ls[2], (long long)ls[3]);
        CHECK(r.frames == p.frames && r.height == p.height && r.width == p.width && r.fps == p.fps,
              "%s: video %lldx%lldx%lld @ %g", what, (long long)r.frames, (long long)r.height, (long long)r.width,
              r.fps);
        pg_check_dump(ctx, f, what, dump, "stage_1_step_007_video", "stage_1_video_latent", 8, TWO_STAGE_REL_L2_TOL);
        pg_check_dump(ctx, f, what, dump, "upsampled_video_latent", "upsampled_video_latent", 8, TWO_STAGE_REL_L2_TOL);
        pg_check_cl(f, what, "video_latent", r.video_latent, ls[4], TWO_STAGE_REL_L2_TOL);
        pg_check_audio_latent(f, what, &r, TWO_STAGE_REL_L2_TOL);
        check_waveform(f, what, &r);
        printf("%s: pipeline %.2f s\n", what, r.timings.total);
    }
    ltx2_generate_result_free(&r);
    rm_dir(dump);
    ltx2_st_close(f);
}

/* Philox: stage 2 draws its own streams, so the same seed reproduces the run and another changes it;
 * the bf16 latents of ltx-pipelines' default run too. */
static void check_philox(ltx2_context *ctx) {
    ltx2_generate_params p;
    base_params(&p, TINY_DIR "/ltx2-tiny-2.3.safetensors");
    p.decode_video = 0;
    p.latent_bf16 = -1;
    ltx2_generate_result a, b, c;
    p.seed = 5;
    ltx2_status s1 = ltx2_generate(ctx, &p, &a);
    ltx2_status s2 = ltx2_generate(ctx, &p, &b);
    p.seed = 6;
    ltx2_status s3 = ltx2_generate(ctx, &p, &c);
    CHECK(s1 == LTX2_OK && s2 == LTX2_OK && s3 == LTX2_OK, "philox runs: %s", ltx2_last_error(ctx));
    if (s1 == LTX2_OK && s2 == LTX2_OK && s3 == LTX2_OK) {
        const size_t n = (size_t)(a.video_latent_shape[1] * a.video_latent_shape[2] * a.video_latent_shape[3] *
                                  a.video_latent_shape[4]);
        CHECK(!memcmp(a.video_latent, b.video_latent, n * sizeof(float)), "same seed, same latent");
        CHECK(memcmp(a.video_latent, c.video_latent, n * sizeof(float)), "another seed, another latent");
        CHECK(a.audio && a.audio_samples > 0, "bf16 distilled run decodes audio");
    }
    ltx2_generate_result_free(&a);
    ltx2_generate_result_free(&b);
    ltx2_generate_result_free(&c);
}

static void check_refusals(ltx2_context *ctx) {
    const char *ckpt = TINY_DIR "/ltx2-tiny-2.0.safetensors";
    ltx2_generate_params p;
    base_params(&p, ckpt);
    p.spatial_upsampler = NULL;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"no upsampler", "--spatial-upsampler-path", LTX2_ERR_INVALID_ARG});
    base_params(&p, ckpt);
    p.steps = 8;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"steps set", "fixed sigmas", LTX2_ERR_INVALID_ARG});
    base_params(&p, ckpt);
    p.width = 96;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"width not a multiple of 64", "multiples of 64", LTX2_ERR_INVALID_ARG});
    base_params(&p, ckpt);
    p.semantics = LTX2_GENERATE_SEM_DIFFUSERS;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"diffusers semantics", "ltx-core", LTX2_ERR_UNSUPPORTED});
    base_params(&p, ckpt);
    p.spatial_upsampler = TINY_DIR "/ltx2-tiny-upsampler-temporal-x2.safetensors";
    pg_expect_refusal(ctx, &p, &(pg_refusal){"temporal upsampler, 9 frames", "16k + 1", LTX2_ERR_INVALID_ARG});
    p.frames = 17;
    const ltx2_image_cond odd = {LTX2_SOURCE_DIR "/tests/golden/data/i2v_image.png", 5, 1.0, 0};
    p.images = &odd;
    p.n_images = 1;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"temporal upsampler, image on frame 5", "even frame", LTX2_ERR_INVALID_ARG});
    base_params(&p, ckpt);
    p.spatial_upsampler = TINY_DIR "/ltx2-tiny-upsampler-spatial-x1.5.safetensors";
    pg_expect_refusal(ctx, &p, &(pg_refusal){"x1.5 upsampler, 128x128", "multiples of 96", LTX2_ERR_INVALID_ARG});
    base_params(&p, ckpt);
    p.spatial_upsampler = TINY_DIR "/no-such-upsampler.safetensors";
    pg_expect_refusal(ctx, &p, &(pg_refusal){"missing upsampler file", "no-such-upsampler", LTX2_ERR_IO});
    base_params(&p, ckpt);
    p.spatial_upsampler = ckpt; /* a file, but not an upsampler */
    pg_expect_refusal(ctx, &p, &(pg_refusal){"not an upsampler", "latent upsampler", LTX2_ERR_NOT_FOUND});
    base_params(&p, ckpt);
    p.pipeline = LTX2_PIPELINE_ONE_STAGE;
    p.negative_prompt_embeds = TINY_DIR "/prompt_embeds_negative.safetensors";
    pg_expect_refusal(ctx, &p, &(pg_refusal){"upsampler on one stage", "one-stage pipeline", LTX2_ERR_INVALID_ARG});
    char upath[1024], dpath[1024];
    ltx2_lora_spec user;
    base_params(&p, ckpt);
    two_stage_params(&p, "2.0", &user, upath, dpath, sizeof upath);
    p.distilled_lora.path = NULL;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"two-stage without the distilled LoRA", "--distilled-lora", LTX2_ERR_INVALID_ARG});
    two_stage_params(&p, "2.0", &user, upath, dpath, sizeof upath);
    p.distilled_lora.path = UPSAMPLER_X2;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"an upsampler as the distilled LoRA", "not a LoRA pair", LTX2_ERR_INVALID_ARG});
    two_stage_params(&p, "2.0", &user, upath, dpath, sizeof upath);
    p.width = 96;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"two-stage width 96", "multiples of 64", LTX2_ERR_INVALID_ARG});
    base_params(&p, ckpt);
    p.distilled_lora = (ltx2_lora_spec){dpath, 1.0};
    pg_expect_refusal(ctx, &p, &(pg_refusal){"distilled LoRA on the distilled pipeline", "two-stage pipeline's stage 2",
                               LTX2_ERR_INVALID_ARG});
    base_params(&p, ckpt);
    p.noise = LTX2_SOURCE_DIR "/tests/golden/data/e2e_2.0.safetensors"; /* stage 1's names only */
    p.height = 128; /* stage 1 at 64x96: the e2e noise's grid */
    p.width = 192;
    pg_expect_refusal(ctx, &p, &(pg_refusal){"noise file without stage 2", "stage_2_video_noise", LTX2_ERR_NOT_FOUND});
}

/* #15 item 5: the distilled run replayed from its own --dump (contexts, both stages' sigmas and
 * noise draws injected) is the same run bit for bit; injected sigmas set the steps; bad sigmas are
 * refused. */
static void check_replay(ltx2_context *ctx) {
    char dump[] = "/tmp/ltx2_replay_XXXXXX";
    CHECK(mkdtemp(dump) != NULL, "mkdtemp");
    ltx2_generate_params p;
    base_params(&p, TINY_DIR "/ltx2-tiny-2.3.safetensors");
    p.decode_video = 0;
    p.latent_bf16 = -1; /* the default run: bf16 latents, Philox noise */
    p.seed = 3;
    p.dump_dir = dump;
    ltx2_generate_result a, b;
    ltx2_status s1 = ltx2_generate(ctx, &p, &a);
    base_params(&p, TINY_DIR "/ltx2-tiny-2.3.safetensors");
    p.decode_video = 0;
    p.latent_bf16 = -1;
    p.prompt_embeds = NULL;
    p.context = p.sigmas = p.noise = dump;
    ltx2_status s2 = ltx2_generate(ctx, &p, &b);
    CHECK(s1 == LTX2_OK && s2 == LTX2_OK, "dump / replay: %s", ltx2_last_error(ctx));
    if (s1 == LTX2_OK && s2 == LTX2_OK) {
        const int64_t *ls = a.video_latent_shape;
        const size_t nv = (size_t)(ls[1] * ls[2] * ls[3] * ls[4]), nw = (size_t)(a.audio_channels * a.audio_samples);
        CHECK(b.steps == a.steps && !memcmp(a.video_latent, b.video_latent, nv * sizeof(float)) &&
                  b.audio_samples == a.audio_samples && !memcmp(a.audio, b.audio, nw * sizeof(float)),
              "the replayed distilled run differs (steps %d / %d)", a.steps, b.steps);
    }
    ltx2_generate_result_free(&b);
    /* two stage-1 sigmas of our own: one step, a different run */
    char path[1100];
    snprintf(path, sizeof path, "%s/mine.npy", dump);
    float mine[2] = {1.0f, 0.0f};
    const int64_t n2 = 2;
    ltx2_tensor t = ltx2_tensor_make(mine, LTX2_F32, 1, &n2);
    p.sigmas = path;
    p.context = p.noise = NULL;
    p.prompt_embeds = TINY_DIR "/prompt_embeds_positive.safetensors";
    CHECK(ltx2_npy_write(ctx, path, &t) == LTX2_OK, "write %s", path);
    s2 = ltx2_generate(ctx, &p, &b);
    CHECK(s2 == LTX2_OK && b.steps == 1 + 3, "one injected stage-1 step: %d steps, %s", b.steps, ltx2_last_error(ctx));
    if (s1 == LTX2_OK && s2 == LTX2_OK) {
        const int64_t *ls = a.video_latent_shape;
        CHECK(memcmp(a.video_latent, b.video_latent, (size_t)(ls[1] * ls[2] * ls[3] * ls[4]) * sizeof(float)),
              "other sigmas, the same run");
    }
    ltx2_generate_result_free(&b);
    static const float bad[3][3] = {{1.0f, 0.0f, 0.5f}, {1.5f, 0.5f, 0.0f}, {1.0f, 0.0f, 0.0f}};
    const int64_t n3 = 3;
    for (int i = 0; i < 3; i++) {
        memcpy(mine, bad[i], 2 * sizeof(float));
        float v[3];
        memcpy(v, bad[i], sizeof v);
        t = ltx2_tensor_make(v, LTX2_F32, 1, &n3);
        CHECK(ltx2_npy_write(ctx, path, &t) == LTX2_OK, "write %s", path);
        pg_expect_refusal(ctx, &p, &(pg_refusal){"bad sigmas", "the sigmas must fall", LTX2_ERR_INVALID_ARG});
    }
    ltx2_generate_result_free(&a);
    rm_dir(dump);
}

int main(void) {
    ltx2_context *ctx = test_context_quiet();
    if (!ctx) return 1;
    check_version(ctx, "2.0", LTX2_PIPELINE_DISTILLED);
    check_version(ctx, "2.3", LTX2_PIPELINE_DISTILLED);
    check_version(ctx, "2.0", LTX2_PIPELINE_TWO_STAGE);
    check_version(ctx, "2.3", LTX2_PIPELINE_TWO_STAGE);
    check_scale(ctx, "2.0", false);
    check_scale(ctx, "2.3", false);
    check_scale(ctx, "2.0", true);
    check_scale(ctx, "2.3", true);
    check_philox(ctx);
    check_replay(ctx);
    check_refusals(ctx);
    ltx2_context_free(ctx);
    return test_finish();
}
