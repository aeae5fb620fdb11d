/* The multi-rank tiny generation with every rank on its own emulated GPU (tests/emu/), over the
 * loopback communicator (device buffers cross it through host copies): what `ltx2 generate
 * --nproc 2 --device cuda` computes, checked without a GPU. Context 2 (LTX-2.3) and tensor 2
 * (LTX-2.0) against the CPU's single-rank run, per stage, within the single-device tolerances of
 * generate_device_check.h: the final latents, then the decoded video and the waveform against the
 * CPU's decodes of the ranks' own latents. Each rank's device reports free memory, so each plans its
 * share; a rank whose device is too small refuses before any model loads and stops the others.
 * (The DiT's splits alone: test_emu_dit_parallel.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_emu.h"
#include "core/context.h"
#include "generate_device_check.h"
#include "loopback_ranks.h"
#include "pipeline/generate_dist.h"

#define PATH_CAP 1024

static ltx2_context *g_ctx;

typedef struct gen_job {
    loopback_rank lr;
    const ltx2_generate_params *p;
    bool scarce; /* this rank's device has 1 MiB free */
    ltx2_generate_result r;
} gen_job;

/* Device memory the stand-ins report (a GPU's mem_info): ample for the tiny model, and 1 MiB. */
#define EMU_AMPLE_FREE ((size_t)64 << 30)
#define EMU_SCARCE_FREE ((size_t)1 << 20)

static ltx2_status ample(const ltx2_backend *be, ltx2_context *ctx, size_t *free_b, size_t *total_b) {
    (void)be, (void)ctx;
    *free_b = EMU_AMPLE_FREE, *total_b = EMU_AMPLE_FREE;
    return LTX2_OK;
}

static ltx2_status scarce(const ltx2_backend *be, ltx2_context *ctx, size_t *free_b, size_t *total_b) {
    (void)be, (void)ctx;
    *free_b = EMU_SCARCE_FREE, *total_b = EMU_AMPLE_FREE;
    return LTX2_OK;
}

static ltx2_status rank_generate(ltx2_context *ctx, ltx2_comm *c, void *arg) {
    gen_job *j = arg;
    ltx2_backend *emu = NULL;
    ltx2_status st = ltx2_backend_emu_create(ctx, &emu);
    if (st != LTX2_OK) {
        ltx2_comm_abort(c, ltx2_last_error(ctx));
        return st;
    }
    emu->mem_info = j->scarce ? scarce : ample; /* each rank plans its share against its device */
    ltx2_generate_dist d = {.world = c, .be = emu};
    ltx2_dit_parallel_opts_init(&d.dit);
    st = ltx2_generate_ranked(ctx, j->p, &d, &j->r);
    ltx2_backend_free(emu);
    return st;
}

static void check_generate(const char *version, const int mesh[4]) {
    char ckpt[PATH_CAP];
    ltx2_generate_params p;
    gen_device_params(&p, ckpt, sizeof ckpt, version);
    ltx2_generate_result ref;
    memset(&ref, 0, sizeof ref);
    if (ltx2_generate_on(g_ctx, &p, ltx2_backend_cpu(), &ref) != LTX2_OK) {
        CHECK(0, "%s cpu: %s", version, ltx2_last_error(g_ctx));
        return;
    }
    const int P = mesh[0] * mesh[1] * mesh[2] * mesh[3];
    gen_job jobs[LOOPBACK_RANKS_MAX];
    memset(jobs, 0, sizeof jobs);
    for (int r = 0; r < P; r++) jobs[r].p = &p;
    const int ok = loopback_ranks_run(g_ctx, mesh, rank_generate, jobs, sizeof *jobs);
    char v[64];
    snprintf(v, sizeof v, "%s mesh %d,%d,%d,%d", version, mesh[0], mesh[1], mesh[2], mesh[3]);
    CHECK(ok == P, "%s: %d of %d ranks ok: %s", v, ok, P, jobs[0].lr.msg);
    if (ok == P) {
        const ltx2_generate_result *got = &jobs[0].r;
        const int64_t *vs = ref.video_latent_shape, *as = ref.audio_latent_shape;
        stage(v, "video latent (2 ranks)", got->video_latent, ref.video_latent, vs[0] * vs[1] * vs[2] * vs[3] * vs[4],
              GEN_EMU_LATENT_MAX_REL_L2);
        stage(v, "audio latent (2 ranks)", got->audio_latent, ref.audio_latent, as[0] * as[1] * as[2] * as[3],
              GEN_EMU_LATENT_MAX_REL_L2);
        /* the decoders alone: the CPU's decode of the ranks' own latents */
        float *video = NULL, *wav = NULL;
        const bool dec = cpu_decodes(g_ctx, p.checkpoint, got, &video, &wav);
        CHECK(dec, "%s: CPU decodes: %s", v, ltx2_last_error(g_ctx));
        if (dec) {
            stage(v, "decoded video (2 ranks)", got->video, video, got->frames * got->height * got->width * 3,
                  GEN_EMU_VIDEO_MAX_REL_L2);
            stage(v, "waveform (2 ranks)", got->audio, wav, got->audio_channels * got->audio_samples,
                  GEN_EMU_WAVE_MAX_REL_L2);
        }
        free(video);
        free(wav);
    }
    for (int r = 0; r < P; r++) ltx2_generate_result_free(&jobs[r].r);
    ltx2_generate_result_free(&ref);
}

/* Rank 1's device too small: its per-rank memory plan refuses before any model loads, and every
 * rank returns (rank 0 with the world's abort). */
static void check_refusal(void) {
    char ckpt[PATH_CAP];
    ltx2_generate_params p;
    gen_device_params(&p, ckpt, sizeof ckpt, "2.3");
    static const int mesh[4] = {1, 1, 2, 1};
    gen_job jobs[2];
    memset(jobs, 0, sizeof jobs);
    jobs[0].p = jobs[1].p = &p;
    jobs[1].scarce = true;
    const int ok = loopback_ranks_run(g_ctx, mesh, rank_generate, jobs, sizeof *jobs);
    printf("rank 1 with 1 MiB free: %s\n", jobs[1].lr.msg);
    CHECK(ok == 0 && jobs[1].lr.st == LTX2_ERR_OOM && strstr(jobs[1].lr.msg, "not enough device memory") &&
              strstr(jobs[1].lr.msg, "per rank of mesh 1,1,2,1") && strstr(jobs[0].lr.msg, "aborted"),
          "a rank whose device is too small must refuse with its plan and stop the others: %d ok; %s | %s", ok,
          jobs[1].lr.msg, jobs[0].lr.msg);
    for (int r = 0; r < 2; r++) ltx2_generate_result_free(&jobs[r].r);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    check_refusal();
    static const int context2[4] = {1, 1, 2, 1}, tensor2[4] = {1, 1, 1, 2};
    check_generate("2.3", context2);
    check_generate("2.0", tensor2);
    ltx2_context_free(g_ctx);
    return test_finish();
}
