/* The multi-rank tiny generation with every rank on its own device, over loopback threads (device
 * buffers cross the loopback communicator through host copies): what `ltx2 generate --nproc N
 * --device cuda` computes. Shared by test_emu_generate_parallel (emulated GPUs) and
 * test_generate_parallel_cuda (real ones). Against the CPU's single-rank run, per stage, within
 * the single-device tolerances of generate_device_check.h: the final latents, then the decoded
 * video and the waveform against the CPU's decodes of the ranks' own latents; also with fp8 DiT
 * weights (each rank's shards of the scaled Linears e4m3) against the CPU's fp8 run. Each rank's device
 * reports free memory, so each plans its share; a rank whose device is too small refuses before any
 * model loads and stops the others. */
#ifndef LTX2_TESTS_GENERATE_PARALLEL_DEVICE_CHECK_H
#define LTX2_TESTS_GENERATE_PARALLEL_DEVICE_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "device_mem_stub.h"
#include "fp8_tiny_checkpoint.h"
#include "generate_device_check.h"
#include "loopback_ranks.h"
#include "pipeline/generate_dist.h"

/* The device of rank `rank`, made and owned by the rank's thread; scarce: one whose free memory
 * reads 1 MiB (mem_stub_scarce, device_mem_stub.h). */
typedef ltx2_status (*gen_par_backend_fn)(ltx2_context *ctx, int rank, bool scarce, ltx2_backend **out);

/* A device id every rank reports: they all compute on one device. */
static inline ltx2_status gen_par_one_device(const ltx2_backend *be, ltx2_context *ctx,
                                             unsigned char out[LTX2_DEVICE_ID_BYTES]) {
    (void)be, (void)ctx;
    memset(out, 0x5a, LTX2_DEVICE_ID_BYTES);
    return LTX2_OK;
}

/* A device's supports() without the fp8 GEMM: the emulator's, or a real GPU's, say what they
 * support for every device of their kind, so the first wrapped one is kept. */
static bool (*gen_par_supports)(const ltx2_backend *, ltx2_op, ltx2_dtype);
static inline bool gen_par_no_fp8_gemm(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt) {
    return op != LTX2_OP_GEMM_FP8 && gen_par_supports(be, op, dt);
}

typedef struct gen_job {
    loopback_rank lr;
    const ltx2_generate_params *p;
    gen_par_backend_fn make;
    bool scarce;     /* this rank's device has 1 MiB free */
    bool one_device; /* this rank's device reports gen_par_one_device's id */
    bool no_fp8_gemm; /* this rank's device says it has no fp8 GEMM (an sm_80 card) */
    ltx2_generate_result r;
} gen_job;

static inline ltx2_status gen_par_rank(ltx2_context *ctx, ltx2_comm *c, void *arg) {
    gen_job *j = arg;
    ltx2_backend *dev = NULL;
    ltx2_status st = j->make(ctx, j->lr.rank, j->scarce, &dev);
    if (st != LTX2_OK) {
        ltx2_comm_abort(c, ltx2_last_error(ctx));
        return st;
    }
    if (j->one_device) dev->device_id = gen_par_one_device;
    if (j->no_fp8_gemm) dev->supports = gen_par_no_fp8_gemm;
    ltx2_generate_dist d = {.world = c, .be = dev};
    ltx2_dit_parallel_opts_init(&d.dit);
    st = ltx2_generate_ranked(ctx, j->p, &d, &j->r);
    ltx2_backend_free(dev);
    return st;
}

/* p on mesh over loopback threads, each rank on make's device, against the CPU's single-rank run
 * per stage; version labels the lines. */
static inline void gen_par_vs_cpu(ltx2_context *ctx, gen_par_backend_fn make, const ltx2_generate_params *pp,
                                  const char *version, const int mesh[4], double latent_tol) {
    const ltx2_generate_params p = *pp;
    ltx2_generate_result ref;
    memset(&ref, 0, sizeof ref);
    if (ltx2_generate_on(ctx, &p, ltx2_backend_cpu(), &ref) != LTX2_OK) {
        CHECK(0, "%s cpu: %s", version, ltx2_last_error(ctx));
        return;
    }
    const int P = mesh[0] * mesh[1] * mesh[2] * mesh[3];
    gen_job jobs[LOOPBACK_RANKS_MAX];
    memset(jobs, 0, sizeof jobs);
    for (int r = 0; r < P; r++) jobs[r].p = &p, jobs[r].make = make;
    const int ok = loopback_ranks_run(ctx, mesh, gen_par_rank, jobs, sizeof *jobs);
    char v[64];
    snprintf(v, sizeof v, "%s mesh %d,%d,%d,%d", version, mesh[0], mesh[1], mesh[2], mesh[3]);
    CHECK(ok == P, "%s: %d of %d ranks ok: %s", v, ok, P, jobs[0].lr.msg);
    if (ok == P) {
        const ltx2_generate_result *got = &jobs[0].r;
        const int64_t *vs = ref.video_latent_shape, *as = ref.audio_latent_shape;
        stage(v, "video latent (2 ranks)", got->video_latent, ref.video_latent, vs[0] * vs[1] * vs[2] * vs[3] * vs[4],
              latent_tol);
        stage(v, "audio latent (2 ranks)", got->audio_latent, ref.audio_latent, as[0] * as[1] * as[2] * as[3],
              latent_tol);
        /* the decoders alone: the CPU's decode of the ranks' own latents */
        float *video = NULL, *wav = NULL;
        const bool dec = cpu_decodes(ctx, p.checkpoint, got, &video, &wav);
        CHECK(dec, "%s: CPU decodes: %s", v, ltx2_last_error(ctx));
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

/* The tiny generation of `version` on mesh against the CPU (gen_par_vs_cpu). */
static inline void generate_parallel_device_check(ltx2_context *ctx, gen_par_backend_fn make, const char *version,
                                                  const int mesh[4]) {
    char ckpt[1024];
    ltx2_generate_params p;
    gen_device_params(&p, ckpt, sizeof ckpt, version);
    gen_par_vs_cpu(ctx, make, &p, version, mesh, GEN_EMU_LATENT_MAX_REL_L2);
}

/* fp8 weights on a device against the CPU's fp8 run: the bf16 activations land some quantised
 * inputs in other e4m3 steps (the DiT forward's bound grows from bf16's 0.02 to 0.04,
 * dit_device_check.h), and two steps of four guided passes carry that into the latents: measured
 * 0.060 (video) and 0.097 (audio) on 2 emulated ranks, against bf16's 0.019 .. 0.046. The decoders
 * run on the ranks' own latents, so their bounds stay. */
#define GEN_PAR_FP8_LATENT_MAX_REL_L2 0.2

/* The same with fp8 DiT weights (--weights-dtype fp8) from the pre-quantised tiny 2.3 checkpoint:
 * each rank keeps its shards of the scaled Linears e4m3 and runs them as fp8 GEMMs on its device,
 * against the CPU's fp8 run. */
static inline void generate_parallel_device_check_fp8(ltx2_context *ctx, gen_par_backend_fn make, const int mesh[4]) {
    char dir[] = "/tmp/ltx2_gen_par_fp8_XXXXXX", ckpt[1024], path[256];
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    snprintf(path, sizeof path, "%s/ltx2-tiny-2.3-fp8.safetensors", dir);
    if (fp8_tiny_checkpoint_write(ctx, path)) {
        ltx2_generate_params p;
        gen_device_params(&p, ckpt, sizeof ckpt, "2.3");
        p.checkpoint = path;
        p.weights_dtype = "fp8";
        gen_par_vs_cpu(ctx, make, &p, "2.3 fp8", mesh, GEN_PAR_FP8_LATENT_MAX_REL_L2);
        /* ranks whose devices have no fp8 GEMM: refused before any work */
        ltx2_backend *probe = NULL;
        if (make(ctx, 0, false, &probe) == LTX2_OK) gen_par_supports = probe->supports;
        ltx2_backend_free(probe);
        gen_job jobs[2];
        memset(jobs, 0, sizeof jobs);
        for (int r = 0; r < 2; r++) jobs[r] = (gen_job){.p = &p, .make = make, .no_fp8_gemm = true};
        const int ok = gen_par_supports ? loopback_ranks_run(ctx, mesh, gen_par_rank, jobs, sizeof *jobs) : -1;
        printf("2.3 fp8 on devices without an fp8 GEMM: %s\n", jobs[0].lr.msg);
        CHECK(ok == 0 && strstr(jobs[0].lr.msg, "--weights-dtype fp8") && strstr(jobs[0].lr.msg, "has no fp8 GEMM") &&
                  jobs[0].r.video == NULL,
              "ranks without an fp8 GEMM must refuse --weights-dtype fp8 before any work: %d ok; %s", ok,
              jobs[0].lr.msg);
        for (int r = 0; r < 2; r++) ltx2_generate_result_free(&jobs[r].r);
        unlink(path);
    }
    rmdir(dir);
}

/* Rank 1's device too small: its per-rank memory plan refuses before any model loads, and every
 * rank returns (rank 0 with the world's abort). */
static inline void generate_parallel_device_refusal(ltx2_context *ctx, gen_par_backend_fn make) {
    char ckpt[1024];
    ltx2_generate_params p;
    gen_device_params(&p, ckpt, sizeof ckpt, "2.3");
    static const int mesh[4] = {1, 1, 2, 1};
    gen_job jobs[2];
    memset(jobs, 0, sizeof jobs);
    jobs[0].p = jobs[1].p = &p;
    jobs[0].make = jobs[1].make = make;
    jobs[1].scarce = true;
    const int ok = loopback_ranks_run(ctx, mesh, gen_par_rank, jobs, sizeof *jobs);
    printf("rank 1 with 1 MiB free: %s\n", jobs[1].lr.msg);
    CHECK(ok == 0 && jobs[1].lr.st == LTX2_ERR_OOM && strstr(jobs[1].lr.msg, "not enough device memory") &&
              strstr(jobs[1].lr.msg, "per rank of mesh 1,1,2,1") && strstr(jobs[0].lr.msg, "aborted"),
          "a rank whose device is too small must refuse with its plan and stop the others: %d ok; %s | %s", ok,
          jobs[1].lr.msg, jobs[0].lr.msg);
    for (int r = 0; r < 2; r++) ltx2_generate_result_free(&jobs[r].r);
    /* both ranks on one device (equal ids): each plans against half of its free memory, and says so */
    memset(jobs, 0, sizeof jobs);
    for (int r = 0; r < 2; r++)
        jobs[r] = (gen_job){.p = &p, .make = make, .scarce = true, .one_device = true};
    loopback_ranks_run(ctx, mesh, gen_par_rank, jobs, sizeof *jobs);
    printf("2 ranks on one device with 1 MiB free: %s\n", jobs[0].lr.msg);
    int shared = 0;
    for (int r = 0; r < 2; r++) shared += strstr(jobs[r].lr.msg, "0.0 GiB free for this rank (2 ranks share the device)") != NULL;
    CHECK(jobs[0].lr.st == LTX2_ERR_OOM && jobs[1].lr.st == LTX2_ERR_OOM && shared >= 1,
          "ranks on one device must each plan against their share: %s | %s", jobs[0].lr.msg, jobs[1].lr.msg);
    for (int r = 0; r < 2; r++) ltx2_generate_result_free(&jobs[r].r);
}

/* The refusal, then context 2 (LTX-2.3) and tensor 2 (LTX-2.0); main's exit code. */
static inline int generate_parallel_device_main(gen_par_backend_fn make) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    static const int context2[4] = {1, 1, 2, 1}, tensor2[4] = {1, 1, 1, 2};
    generate_parallel_device_refusal(ctx, make);
    generate_parallel_device_check(ctx, make, "2.3", context2);
    generate_parallel_device_check(ctx, make, "2.0", tensor2);
    generate_parallel_device_check_fp8(ctx, make, context2);
    ltx2_context_free(ctx);
    return test_finish();
}

#endif
