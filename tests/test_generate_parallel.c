/* Multi-rank generation on loopback threads equals the single-rank ltx2_generate: the tiny LTX-2.0
 * model (64x96, 9 frames, 2 steps, CFG + STG + modality: 4 passes per call) over data, context
 * (ragged 3), mixed data x context meshes - bitwise for latents, video and audio, with the video
 * VAE both untiled and tiled (tiles spread over ranks) - and tensor meshes within a stated
 * tolerance; the trillium profile (FSDP: DiT weights split over context x fsdp, gathered per
 * block) bitwise without tensor, within the tolerance with it. A rank failing mid-denoise ends
 * every rank with its reason and no result. Then the CLI: `ltx2 generate --nproc 2` and
 * `--nproc 4 --mesh 1,2,2,1 --sharding trillium` write the same WAV/PNG bytes as one rank, bad
 * --nproc / --mesh / --sharding values exit 2 before any work, and an injected rank failure exits
 * non-zero leaving no output file. Image (with a keyframe) and audio conditioning and the two-stage
 * pipeline with LoRAs across ranks are bitwise one rank's (tensor: within the tolerance). From a text
 * prompt, rank 0 alone runs Gemma and the others receive its hidden states: a rank whose own
 * encoder path is wrong still gets them, bitwise one rank's encoding. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/context.h"
#include "loopback_ranks.h"
#include "pipeline/generate_parallel.h"
#include "pipeline/generate_text.h"
#include "io/png.h"
#include "test_util.h"
#include "tiny_gen_params.h"

/* Tensor parallelism changes fp32 summation order inside the DiT (test_dit_parallel.c measures
 * ~1e-7 rel-L2 per forward); two Euler steps of 4 guided passes and the decoders carry that to
 * about 1.5e-6 here (fp32 latents). 1e-4 leaves room for other CPUs while still catching any wrong
 * shard (those give errors of order 1). */
#define TP_GEN_REL_L2_TOL 1e-4
#define PATH_CAP 2048

static void base_params(ltx2_generate_params *p) {
    tiny_gen_params(p, LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-2.0.safetensors");
    p->device = "cpu"; /* the CPU engine against the goldens, also on a machine with a GPU */
    p->latent_bf16 = 0; /* fp32 latents: bf16 rounding per step would hide tensor-parallel differences */
}

/* Compares every output; tol 0 means bitwise. */
static void compare(const char *what, const ltx2_generate_result *a, const ltx2_generate_result *ref, double tol) {
    const int64_t nvl = ref->video_latent_shape[0] * ref->video_latent_shape[1] * ref->video_latent_shape[2] *
                        ref->video_latent_shape[3] * ref->video_latent_shape[4];
    const int64_t nal = ref->audio_latent_shape[0] * ref->audio_latent_shape[1] * ref->audio_latent_shape[2] *
                        ref->audio_latent_shape[3];
    const int64_t nv = ref->frames * ref->height * ref->width * 3, na = ref->audio_channels * ref->audio_samples;
    CHECK(a->video && a->audio && a->frames == ref->frames && a->audio_samples == ref->audio_samples,
          "%s: outputs missing or of another shape", what);
    if (!a->video || !a->audio || a->frames != ref->frames || a->audio_samples != ref->audio_samples) return;
    const float *x[4] = {a->video_latent, a->audio_latent, a->video, a->audio};
    const float *y[4] = {ref->video_latent, ref->audio_latent, ref->video, ref->audio};
    const int64_t n[4] = {nvl, nal, nv, na};
    const char *names[4] = {"video latent", "audio latent", "video", "audio"};
    for (int i = 0; i < 4; i++) {
        if (tol == 0) {
            CHECK(memcmp(x[i], y[i], (size_t)n[i] * sizeof(float)) == 0, "%s: %s not bitwise equal (rel-L2 %.3g)", what,
                  names[i], test_rel_l2(x[i], y[i], n[i]));
        } else {
            const double e = test_rel_l2(x[i], y[i], n[i]);
            CHECK(e <= tol, "%s: %s rel-L2 %.3g > %.0e", what, names[i], e, tol);
            printf("%s: %s rel-L2 %.2g\n", what, names[i], e);
        }
    }
}

/* p over loopback ranks on mesh m (data, fsdp, context, tensor, then 1 for trillium) against the
 * one-rank ref: bitwise, or within TP_GEN_REL_L2_TOL when tensor splits. label starts the line. */
static void compare_mesh(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_generate_result *ref,
                         const int m[5], const char *label, const char *suffix) {
    ltx2_generate_parallel_opts o;
    ltx2_generate_parallel_opts_init(&o);
    o.mesh = (ltx2_mesh){{m[0], m[1], m[2], m[3]}};
    if (m[4]) o.dit.profile = LTX2_PROFILE_TRILLIUM;
    char what[128];
    snprintf(what, sizeof what, "%smesh %d,%d,%d,%d%s%s", label, m[0], m[1], m[2], m[3], m[4] ? " trillium" : "",
             suffix);
    ltx2_generate_result r;
    if (ltx2_generate_loopback(ctx, p, &o, &r) != LTX2_OK) {
        CHECK(0, "%s: %s", what, ltx2_last_error(ctx));
        return;
    }
    compare(what, &r, ref, m[3] > 1 ? TP_GEN_REL_L2_TOL : 0.0);
    printf("%s: %s\n", what, m[3] > 1 ? "within tolerance" : "bitwise equal");
    ltx2_generate_result_free(&r);
}

static void check_meshes(ltx2_context *ctx, int tile_px) {
    ltx2_generate_params p;
    base_params(&p);
    p.vae_tile_px = tile_px;
    ltx2_generate_result ref;
    if (ltx2_generate(ctx, &p, &ref) != LTX2_OK) {
        CHECK(0, "single-rank generate: %s", ltx2_last_error(ctx));
        return;
    }
    /* d, f, c, t, then 1 for trillium: FSDP (the DiT's embed dim split over context x fsdp, gathered
     * per block) computes on the same weights as gpu, so it is as exact as gpu on that mesh */
    static const int meshes[][5] = {{2, 1, 1, 1, 0}, {1, 1, 2, 1, 0}, {4, 1, 1, 1, 0}, {1, 1, 3, 1, 0},
                                    {2, 1, 2, 1, 0}, {1, 1, 4, 1, 0}, {1, 1, 1, 2, 0}, {2, 1, 1, 2, 0},
                                    {1, 2, 1, 1, 1}, {1, 2, 2, 1, 1}, {1, 2, 1, 2, 1}};
    for (size_t i = 0; i < sizeof meshes / sizeof meshes[0]; i++) {
        const int *m = meshes[i];
        if (tile_px && (m[3] > 1 || m[4])) continue; /* the tiled decode is DiT-independent: one pass suffices */
        compare_mesh(ctx, &p, &ref, m, "", tile_px ? " tiled VAE" : "");
    }
    ltx2_generate_result_free(&ref);
}

/* Conditioned and two-stage runs across ranks: every rank decodes and encodes the images (an image
 * at frame 0 and a keyframe, whose tokens are appended to the video's and split with them) or
 * reads the audio itself, and the sharded DiT sees the whole conditioned latent; the two-stage
 * pipeline with a user LoRA fuses the adapters into each rank's shards (and the distilled LoRA
 * into stage 2's, read again), bitwise the whole weight's blocks. Bitwise one rank's over context,
 * data x context and trillium (FSDP) meshes; tensor within TP_GEN_REL_L2_TOL. */
static void check_conditioned(ltx2_context *ctx) {
    const ltx2_image_cond imgs[2] = {{LTX2_SOURCE_DIR "/tests/golden/data/i2v_image.png", 0, 1.0, 0},
                                     {LTX2_SOURCE_DIR "/tests/golden/data/i2v_image.png", 16, 0.8, 0}};
    const ltx2_lora_spec style = {LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-lora-style-2.0.safetensors", 0.8};
    static const char *const kinds[3] = {"image + keyframe", "audio-to-video", "two-stage + LoRA"};
    for (int k = 0; k < 3; k++) {
        ltx2_generate_params p;
        base_params(&p);
        p.frames = 17;
        if (k == 0) {
            p.images = imgs;
            p.n_images = 2;
        } else if (k == 1) {
            p.audio = LTX2_SOURCE_DIR "/tests/golden/data/a2vid_input.wav";
        } else {
            p.frames = 9;
            p.height = p.width = 128;
            p.pipeline = LTX2_PIPELINE_TWO_STAGE;
            p.spatial_upsampler = LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-upsampler-spatial-x2.safetensors";
            p.distilled_lora = (ltx2_lora_spec){LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-lora-distilled-2.0.safetensors",
                                                1.0};
            p.loras = &style;
            p.n_loras = 1;
        }
        ltx2_generate_result ref;
        if (ltx2_generate(ctx, &p, &ref) != LTX2_OK) {
            CHECK(0, "%s, one rank: %s", kinds[k], ltx2_last_error(ctx));
            continue;
        }
        /* data, fsdp, context, tensor, trillium */
        static const int meshes[4][5] = {{1, 1, 2, 1, 0}, {2, 1, 2, 1, 0}, {1, 2, 1, 1, 1}, {1, 1, 1, 2, 0}};
        for (int m = 0; m < 4; m++) {
            if (k < 2 && (meshes[m][4] || meshes[m][3] > 1)) continue; /* their weights are the plain run's */
            char label[64];
            snprintf(label, sizeof label, "%s, ", kinds[k]);
            compare_mesh(ctx, &p, &ref, meshes[m], label, "");
        }
        ltx2_generate_result_free(&ref);
    }
}

static ltx2_status fail_rank1_block1(ltx2_context *ctx, int rank, int64_t block, void *user) {
    (void)user;
    if (rank == 1 && block == 1) return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "injected failure on rank 1 at block 1");
    return LTX2_OK;
}

static void check_failure(ltx2_context *ctx) {
    ltx2_generate_params p;
    base_params(&p);
    ltx2_generate_parallel_opts o;
    ltx2_generate_parallel_opts_init(&o);
    o.mesh = (ltx2_mesh){{1, 1, 3, 1}};
    o.dit.on_block = fail_rank1_block1;
    ltx2_generate_result r;
    const ltx2_status st = ltx2_generate_loopback(ctx, &p, &o, &r);
    CHECK(st != LTX2_OK && r.video == NULL && r.video_latent == NULL, "injected failure: status %d", (int)st);
    CHECK(strstr(ltx2_last_error(ctx), "injected failure on rank 1") != NULL, "failure message: '%s'",
          ltx2_last_error(ctx));
    ltx2_clear_error(ctx);
}

/* ---- CLI ---- */

static int run_cli(const char *dir, const char *env, const char *args) {
    char cmd[4 * PATH_CAP];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s/ltx2' generate %s >stdout.txt 2>stderr.txt", dir, env ? env : "",
             LTX2_BINARY_DIR, args);
    const int status = system(cmd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool exists(const char *dir, const char *name) {
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat sb;
    return stat(path, &sb) == 0;
}

static bool same_file(const char *dir, const char *a, const char *b) {
    char pa[PATH_CAP], pb[PATH_CAP];
    snprintf(pa, sizeof pa, "%s/%s", dir, a);
    snprintf(pb, sizeof pb, "%s/%s", dir, b);
    FILE *fa = fopen(pa, "rb"), *fb = fopen(pb, "rb");
    bool same = fa && fb;
    while (same) {
        const int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = false;
        if (ca == EOF || cb == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

static bool stderr_has(const char *dir, const char *needle) {
    char path[PATH_CAP], buf[8192];
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

static void check_cli(void) {
    char dir[] = "/tmp/ltx2_gen_par_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    /* --device cpu: ranks compute on the CPU, so the single-rank run must too on a GPU machine */
    const char *small = "--device cpu --height 64 --width 96 --frames 9 --steps 2";
    /* frames are compared too where this build writes PNG (not on a GPU machine without libpng) */
    const bool png = ltx2_png_available();
    char args[1024];
    snprintf(args, sizeof args, "%s --wav one.wav%s", small, png ? " --png-dir one" : "");
    CHECK(run_cli(dir, NULL, args) == 0, "single-rank CLI run failed");
    snprintf(args, sizeof args, "%s --nproc 2 --wav two.wav%s", small, png ? " --png-dir two" : "");
    CHECK(run_cli(dir, NULL, args) == 0, "--nproc 2 failed");
    /* every rank computes where --device says, also on a machine with a GPU (not auto's choice) */
    CHECK(stderr_has(dir, "rank 0 device cpu") && !stderr_has(dir, "auto:"),
          "--device cpu --nproc 2: rank 0 must open the CPU as asked (see stderr.txt)");
    snprintf(args, sizeof args, "%s --nproc 4 --mesh 2,1,2,1 --sharding gpu --vae-tile 64 --wav four.wav", small);
    CHECK(run_cli(dir, NULL, args) == 0, "--nproc 4 --mesh 2,1,2,1 failed");
    snprintf(args, sizeof args, "%s --nproc 4 --mesh 1,2,2,1 --sharding trillium --wav tri.wav%s", small,
             png ? " --png-dir tri" : "");
    CHECK(run_cli(dir, NULL, args) == 0, "--nproc 4 --mesh 1,2,2,1 --sharding trillium failed");
    snprintf(args, sizeof args, "%s --vae-tile 64 --wav onet.wav", small);
    CHECK(run_cli(dir, NULL, args) == 0, "single-rank tiled CLI run failed");
    CHECK(same_file(dir, "one.wav", "two.wav") &&
              (!png || (same_file(dir, "one/frame_00000.png", "two/frame_00000.png") &&
                        same_file(dir, "one/frame_00008.png", "two/frame_00008.png"))),
          "--nproc 2 outputs differ from the single-rank ones");
    CHECK(same_file(dir, "onet.wav", "four.wav"), "--nproc 4 WAV differs from the single-rank one");
    CHECK(same_file(dir, "one.wav", "tri.wav") &&
              (!png || (same_file(dir, "one/frame_00000.png", "tri/frame_00000.png") &&
                        same_file(dir, "one/frame_00008.png", "tri/frame_00008.png"))),
          "--sharding trillium (FSDP) outputs differ from the single-rank ones");

    /* one process per rank: runs where the build has NCCL and a GPU (two ranks may share it), and
     * must then equal the single-rank output bitwise; elsewhere it is refused before any work */
    {
        snprintf(args, sizeof args, "%s --nproc 2 --launch processes --wav proc.wav", small);
        const int prc = run_cli(dir, "NCCL_MULTI_RANK_GPU_ENABLE=1", args);
        if (prc == 2 && stderr_has(dir, "--launch processes")) {
            CHECK(!exists(dir, "proc.wav"), "refused --launch processes left output behind");
            printf("--launch processes: refused here (no NCCL in the build, or no GPU)\n");
        } else {
            CHECK(prc == 0 && same_file(dir, "one.wav", "proc.wav"),
                  "--nproc 2 --launch processes: exit %d, or its WAV differs from the single-rank one", prc);
        }
    }

    /* refusals: exit 2 before any work, nothing written */
    static const struct {
        const char *flags, *needle;
    } bad[] = {{"--nproc 0", "integer in [1, "},
               {"--nproc 100000", "--nproc expects an integer in [1, "},
               {"--mesh 1,2", "--mesh"},
               {"--mesh 0,1,1,1", "--mesh"},
               {"--nproc 4 --mesh 1,1,2,1", "has 2 ranks"},
               {"--nproc 2 --sharding bogus", "--sharding"},
               {"--nproc 2 --launch bogus", "--launch"},
               {"--nproc x", "integer"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "%s %s --wav bad.wav%s", small, bad[i].flags, png ? " --png-dir badpng" : "");
        const int rc = run_cli(dir, NULL, args);
        CHECK(rc == 2 && stderr_has(dir, bad[i].needle), "'%s': exit %d (want 2), stderr lacks '%s'", bad[i].flags, rc,
              bad[i].needle);
        CHECK(!exists(dir, "bad.wav") && !exists(dir, "badpng"), "'%s' left output behind", bad[i].flags);
    }
#ifndef LTX2_HAVE_NCCL
    {
        const int erc = run_cli(dir, "LTX2_RANK=0 LTX2_WORLD_SIZE=2 LTX2_RENDEZVOUS=127.0.0.1:1", "--wav bad.wav");
        CHECK(erc == 2 && stderr_has(dir, "needs NCCL") && !exists(dir, "bad.wav"),
              "env-launched rank without NCCL: exit %d", erc);
    }
#endif
    CHECK(run_cli(dir, "LTX2_FAULT_INJECT=1", "--nproc 2 --wav bad.wav") == 2 && stderr_has(dir, "RANK:BLOCK"),
          "malformed LTX2_FAULT_INJECT accepted");

    /* a rank failing mid-run: every rank stops, no output file */
    snprintf(args, sizeof args, "%s --nproc 2 --wav bad.wav%s", small, png ? " --png-dir badpng" : "");
    const int rc = run_cli(dir, "LTX2_FAULT_INJECT=1:1", args);
    CHECK(rc != 0 && stderr_has(dir, "injected failure"), "injected failure: exit %d", rc);
    CHECK(!exists(dir, "bad.wav") && !exists(dir, "badpng"), "injected failure left output behind");

    char cmd[PATH_CAP + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* ---- the text stage across ranks ---- */

#define TEXT_PROMPT "a red fox runs through fresh snow at dawn"

typedef struct text_job {
    loopback_rank lr;
    ltx2_generate_params p;
    ltx2_pipe_text tp, tn;
    char *enhanced;
} text_job;

static ltx2_status text_rank(ltx2_context *ctx, ltx2_comm *c, void *arg) {
    text_job *j = arg;
    return ltx2_gen_text_ranked(ctx, &j->p, true, c, NULL, &j->tp, &j->tn, &j->enhanced);
}

static bool same_text(const ltx2_pipe_text *a, const ltx2_pipe_text *b) {
    return a->hidden && b->hidden && a->S == b->S && a->D == b->D && a->L == b->L && !memcmp(a->mask, b->mask, (size_t)a->S) &&
           !memcmp(a->hidden, b->hidden, (size_t)(a->S * a->D * a->L) * sizeof(float));
}

/* 3 ranks encode a prompt and the default negative prompt: only rank 0 opens the encoder (ranks 1
 * and 2 are given a path that does not exist), and every rank holds one rank's encoding, bitwise. */
static void check_text_ranks(ltx2_context *ctx) {
    ltx2_generate_params p;
    base_params(&p);
    p.prompt_embeds = p.negative_prompt_embeds = NULL;
    p.prompt = TEXT_PROMPT;
    p.text_encoder = LTX2_SOURCE_DIR "/weights/tiny/gemma";
    ltx2_pipe_text rp = {0}, rn = {0};
    char *enh = NULL;
    ltx2_status st = ltx2_gen_text_ranked(ctx, &p, true, NULL, NULL, &rp, &rn, &enh);
    CHECK(st == LTX2_OK, "one rank's encoding: %s", ltx2_last_error(ctx));
    text_job jobs[3];
    memset(jobs, 0, sizeof jobs);
    for (int r = 0; r < 3; r++) {
        jobs[r].p = p;
        if (r) jobs[r].p.text_encoder = LTX2_SOURCE_DIR "/weights/tiny/no-such-gemma";
    }
    static const int mesh[4] = {1, 1, 3, 1};
    const int ok = st == LTX2_OK ? loopback_ranks_run(ctx, mesh, text_rank, jobs, sizeof *jobs) : 0;
    CHECK(ok == 3, "text across 3 ranks: %d ok (%s | %s)", ok, jobs[0].lr.msg, jobs[1].lr.msg);
    for (int r = 0; ok == 3 && r < 3; r++)
        CHECK(same_text(&jobs[r].tp, &rp) && same_text(&jobs[r].tn, &rn) && !jobs[r].enhanced,
              "rank %d: the prompt's hidden states are not one rank's encoding", r);
    if (ok == 3)
        printf("text across 3 ranks: rank 0 encoded %lld + %lld tokens, ranks 1-2 (no encoder of their own) hold "
               "them bitwise\n", (long long)rp.S, (long long)rn.S);
    for (int r = 0; r < 3; r++) {
        ltx2_pipe_text_free(&jobs[r].tp);
        ltx2_pipe_text_free(&jobs[r].tn);
        free(jobs[r].enhanced);
    }
    ltx2_pipe_text_free(&rp);
    ltx2_pipe_text_free(&rn);
    free(enh);
}

int main(void) {
    ltx2_context *ctx = test_context_quiet();
    if (!ctx) return 1;
    check_meshes(ctx, 0);
    check_meshes(ctx, 64);
    check_conditioned(ctx);
    check_failure(ctx);
    check_text_ranks(ctx);
    check_cli();
    ltx2_context_free(ctx);
    return test_finish();
}
