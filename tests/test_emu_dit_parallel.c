/* The parallel DiT with every rank on its own emulated GPU (tests/emu/: the CUDA kernels on the
 * CPU), collectives over the loopback communicator, which reads host memory only, so every device
 * buffer crosses it through host copies (dit_par_collective): what `ltx2 generate --nproc N
 * --device cuda` runs for each model call, checked without a GPU. The tiny LTX-2.0 and 2.3 DiTs
 * on the golden inputs (an STG-perturbed sample) over data, context (Ulysses and all-gathered
 * K/V), tensor and trillium FSDP meshes, the shards cut from the file onto each rank's device in
 * bf16 (what generate does) and, for one mesh, from a whole copy on the device: against one
 * emulated rank (the same kernels and bf16 weights) and the f32 CPU forward. With fp8 weights (the
 * fp8 golden's scaled Linears kept e4m3 in each rank's shards, fp8 GEMMs on the device): context 2,
 * tensor 2 and trillium's fsdp 2 (a batch split: bitwise one emulated rank) against one emulated
 * rank's fp8 load and the CPU's fp8 forward. Under ThreadSanitizer (CI) a subset races the rank threads' staged
 * exchanges and weight gathers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_emu.h"
#include "core/context.h"
#include "dit_inputs.h"
#include "loopback_ranks.h"
#include "model/dit_parallel.h"
#include "model/dit_weights.h"
#include "test_util.h"

/* Parallel against one emulated rank, both bf16 through the same kernels. Batch and FSDP splits
 * are bitwise (row-local ops; the gathered weights are the gpu profile's shards). A sequence or
 * tensor split runs QK RMSNorm and RoPE as their own ops (the norm spans every head, which the
 * ranks split), rounding q and k to bf16 before the attention kernel, where one device fuses both
 * into the kernel in f32; the tensor split also sums partial products in bf16. Measured 5.2e-3 ..
 * 8.4e-3; a wrong shard, head block or exchange gives rel-L2 of order 1. */
#define PAR_EMU_VS_ONE_MAX_REL_L2 2e-2
/* Against the f32 CPU forward: one device's bf16 error (dit_device_check.h's DIT_DEVICE_MAX_REL_L2,
 * measured 6.0e-3 .. 9.0e-3 here) with the splits' own rounding on top. */
#define PAR_EMU_VS_CPU_MAX_REL_L2 3e-2
/* f32 math on the host would be ~1e-7 from the CPU forward: below this the ranks did not compute
 * in bf16 on their devices. */
#define PAR_EMU_MIN_BF16_REL_L2 1e-4
#define PATH_CAP 1024
/* With fp8 weights, bf16 activations land some quantised inputs in other e4m3 steps than f32 or
 * another split does: one device's bound against the CPU (dit_device_check.h's
 * DIT_DEVICE_FP8_MAX_REL_L2) for both comparisons (measured 0.011 .. 0.028). */
#define PAR_EMU_FP8_MAX_REL_L2 0.04

static ltx2_context *g_ctx;

typedef struct forward_job {
    loopback_rank lr;
    const char *ckpt;               /* shards cut from this file (create_sharded) */
    const ltx2_dit_weights *cpu_w;  /* or, when set, from a whole copy put on the rank's device */
    bool fp8;                       /* the file's scaled fp8 Linears kept fp8 in the shards */
    bool no_fp8_gemm;               /* the rank's device says it has no fp8 GEMM (an sm_80 card) */
    int64_t fp8_linears;            /* out: how many shards the rank kept fp8 */
    const ltx2_dit_forward_params *p;
    ltx2_dit_parallel_opts opts;
    float *out_v, *out_a;
} forward_job;

/* The emulated device's supports() (the same for every emulated device), and it with no fp8 GEMM. */
static bool (*g_emu_supports)(const ltx2_backend *, ltx2_op, ltx2_dtype);
static bool supports_but_fp8_gemm(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt) {
    return op != LTX2_OP_GEMM_FP8 && g_emu_supports(be, op, dt);
}

/* One rank: its own emulated device, its weights there, its forward. */
static ltx2_status rank_forward(ltx2_context *ctx, ltx2_comm *c, void *arg) {
    forward_job *j = arg;
    ltx2_backend *emu = NULL;
    ltx2_st_file *f = NULL;
    ltx2_dit_weights *w = NULL;
    ltx2_dit_parallel *dp = NULL;
    ltx2_dit_config cfg;
    ltx2_status st = ltx2_backend_emu_create(ctx, &emu);
    if (st == LTX2_OK && j->no_fp8_gemm) emu->supports = supports_but_fp8_gemm;
    if (st == LTX2_OK && j->cpu_w) {
        st = ltx2_dit_weights_to(ctx, j->cpu_w, emu, LTX2_BF16, &w);
        if (st == LTX2_OK) st = ltx2_dit_parallel_create(ctx, c, w, &j->opts, &dp);
    } else if (st == LTX2_OK) {
        st = ltx2_st_open(ctx, j->ckpt, &f);
        if (st == LTX2_OK) st = ltx2_dit_config_from_st(ctx, f, &cfg);
        if (st == LTX2_OK) st = ltx2_dit_weights_load_replicated_on(ctx, emu, LTX2_BF16, f, NULL, &cfg, NULL, &w);
        if (st == LTX2_OK)
            st = ltx2_dit_parallel_create_sharded_lora(ctx, c, w, f, NULL, NULL,
                                                       j->fp8 ? LTX2_DIT_SHARDS_FP8 : LTX2_DIT_SHARDS_PLAIN, &j->opts,
                                                       &dp);
    }
    if (st != LTX2_OK) ltx2_comm_abort(c, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        ltx2_dit_parallel_weight_mem wm;
        ltx2_dit_parallel_get_weight_mem(dp, &wm);
        j->fp8_linears = wm.fp8_linears;
        st = ltx2_dit_parallel_forward(ctx, dp, j->p, j->out_v, j->out_a);
    }
    ltx2_dit_parallel_free(dp);
    ltx2_dit_weights_free(w);
    ltx2_st_close(f);
    ltx2_backend_free(emu);
    return st;
}

typedef struct dit_case {
    int mesh[4];
    ltx2_shard_profile profile;
    ltx2_sp_attention sp;
    bool from_copy;
} dit_case;

static void check_dit(const char *version) {
    char ckpt[PATH_CAP], gpath[PATH_CAP];
    snprintf(ckpt, sizeof ckpt, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(gpath, sizeof gpath, "%s/tests/golden/data/dit_blocks_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_dit_weights *cpu_w = NULL, *one_w = NULL;
    ltx2_backend *emu = NULL;
    ltx2_st_file *g = NULL;
    dit_inputs in;
    memset(&in, 0, sizeof in);
    ltx2_status st = ltx2_dit_weights_load_file(g_ctx, ckpt, &cpu_w);
    if (st == LTX2_OK) st = ltx2_backend_emu_create(g_ctx, &emu);
    if (st == LTX2_OK) st = ltx2_dit_weights_to(g_ctx, cpu_w, emu, LTX2_BF16, &one_w);
    if (st == LTX2_OK) st = ltx2_st_open(g_ctx, gpath, &g);
    CHECK(st == LTX2_OK, "%s: setup: %s", version, ltx2_last_error(g_ctx));
    if (st != LTX2_OK || !dit_inputs_load(g_ctx, g, DIT_INPUTS_MASKED, &in)) goto done;
    /* sample 1 skips video self-attention in block 0 (the STG path through the hooks) */
    uint32_t *perturb = calloc((size_t)(in.B * cpu_w->cfg.num_layers), sizeof *perturb);
    int64_t b0 = 0;
    CHECK(perturb && ltx2_dit_perturb_set(g_ctx, perturb, cpu_w->cfg.num_layers, 1, LTX2_DIT_SKIP_VIDEO_SELF_ATTN, &b0,
                                          1) == LTX2_OK,
          "perturbation");
    in.p.perturb = perturb;
    const int64_t nv = in.B * in.video.T * cpu_w->cfg.out_channels, na = in.B * in.audio.T * cpu_w->cfg.audio_out_channels;
    float *cpu_v = malloc((size_t)nv * sizeof(float)), *cpu_a = malloc((size_t)na * sizeof(float));
    float *one_v = malloc((size_t)nv * sizeof(float)), *one_a = malloc((size_t)na * sizeof(float));
    st = ltx2_dit_forward(g_ctx, cpu_w, &in.p, cpu_v, cpu_a);
    if (st == LTX2_OK) st = ltx2_dit_forward(g_ctx, one_w, &in.p, one_v, one_a);
    CHECK(st == LTX2_OK, "%s: reference forwards: %s", version, ltx2_last_error(g_ctx));
    const ltx2_shard_profile G = LTX2_PROFILE_GPU, T = LTX2_PROFILE_TRILLIUM;
#ifdef __SANITIZE_THREAD__
    /* under ThreadSanitizer (minutes per emulated forward): the staged all-to-all and the FSDP
     * weight gathers between the rank threads, on one version */
    const dit_case cases[] = {{{1, 1, 2, 1}, G, LTX2_SP_ULYSSES, false}, {{1, 2, 1, 1}, T, LTX2_SP_AUTO, false}};
#else
    const dit_case cases[] = {
        {{1, 1, 2, 1}, G, LTX2_SP_ULYSSES, false},      {{1, 1, 2, 1}, G, LTX2_SP_ALLGATHER_KV, false},
        {{1, 1, 1, 2}, G, LTX2_SP_AUTO, false},         {{2, 1, 1, 1}, G, LTX2_SP_AUTO, false},
        {{1, 2, 1, 1}, T, LTX2_SP_AUTO, false},         {{1, 1, 2, 2}, G, LTX2_SP_AUTO, false},
        {{1, 1, 2, 1}, G, LTX2_SP_ULYSSES, true},
    };
#endif
    for (size_t k = 0; k < sizeof cases / sizeof cases[0] && st == LTX2_OK && perturb; k++) {
        const dit_case *dc = &cases[k];
        const int P = dc->mesh[0] * dc->mesh[1] * dc->mesh[2] * dc->mesh[3];
        forward_job jobs[LOOPBACK_RANKS_MAX];
        for (int r = 0; r < P; r++) {
            jobs[r] = (forward_job){.ckpt = ckpt, .cpu_w = dc->from_copy ? cpu_w : NULL, .p = &in.p};
            ltx2_dit_parallel_opts_init(&jobs[r].opts);
            jobs[r].opts.profile = dc->profile;
            jobs[r].opts.sp_attention = dc->sp;
            jobs[r].out_v = calloc((size_t)nv, sizeof(float));
            jobs[r].out_a = calloc((size_t)na, sizeof(float));
        }
        const int ok = loopback_ranks_run(g_ctx, dc->mesh, rank_forward, jobs, sizeof *jobs);
        char what[160];
        snprintf(what, sizeof what, "%s mesh %d,%d,%d,%d %s sp=%d%s", version, dc->mesh[0], dc->mesh[1], dc->mesh[2],
                 dc->mesh[3], dc->profile == T ? "trillium" : "gpu", (int)dc->sp, dc->from_copy ? " (from a device copy)" : "");
        CHECK(ok == P, "%s: %d of %d ranks ok: %s", what, ok, P, jobs[0].lr.msg);
        if (ok == P) {
            const double ev = test_rel_l2(jobs[0].out_v, one_v, nv), ea = test_rel_l2(jobs[0].out_a, one_a, na);
            const double cv = test_rel_l2(jobs[0].out_v, cpu_v, nv), ca = test_rel_l2(jobs[0].out_a, cpu_a, na);
            printf("%-52s vs one device: video %.3g audio %.3g; vs cpu: %.3g %.3g\n", what, ev, ea, cv, ca);
            const bool row_local = dc->mesh[2] == 1 && dc->mesh[3] == 1;
            if (row_local)
                CHECK(ev == 0 && ea == 0, "%s: a batch / FSDP split must equal one device: video %.3g audio %.3g", what,
                      ev, ea);
            CHECK(ev <= PAR_EMU_VS_ONE_MAX_REL_L2 && ea <= PAR_EMU_VS_ONE_MAX_REL_L2,
                  "%s: against one emulated rank video %.3g audio %.3g (max %.0e)", what, ev, ea,
                  PAR_EMU_VS_ONE_MAX_REL_L2);
            CHECK(cv <= PAR_EMU_VS_CPU_MAX_REL_L2 && ca <= PAR_EMU_VS_CPU_MAX_REL_L2,
                  "%s: against the CPU video %.3g audio %.3g (max %.0e)", what, cv, ca, PAR_EMU_VS_CPU_MAX_REL_L2);
            /* bf16 on the device, not the CPU's f32: the ranks did not fall back to the host */
            CHECK(cv > PAR_EMU_MIN_BF16_REL_L2, "%s: %.3g from the f32 CPU forward: not a bf16 device run", what, cv);
            for (int r = 1; r < P; r++)
                CHECK(!memcmp(jobs[r].out_v, jobs[0].out_v, (size_t)nv * sizeof(float)) &&
                          !memcmp(jobs[r].out_a, jobs[0].out_a, (size_t)na * sizeof(float)),
                      "%s: rank %d returned another result than rank 0", what, r);
        }
        for (int r = 0; r < P; r++) free(jobs[r].out_v), free(jobs[r].out_a);
    }
    free(perturb);
    free(cpu_v), free(cpu_a), free(one_v), free(one_a);
done:
    dit_inputs_free(&in);
    ltx2_st_close(g);
    ltx2_dit_weights_free(one_w);
    ltx2_dit_weights_free(cpu_w);
    ltx2_backend_free(emu);
}

/* fp8 shards on emulated ranks: context 2 and tensor 2 of the fp8 golden (block 1 e4m3, block 0
 * bf16) against one emulated rank's fp8 load and the CPU's fp8 forward. */
static void check_fp8(const char *version) {
    char ckpt[PATH_CAP];
    snprintf(ckpt, sizeof ckpt, "%s/tests/golden/data/dit_fp8_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_st_file *f = NULL;
    ltx2_backend *emu = NULL;
    ltx2_dit_weights *cpu8 = NULL, *cpud = NULL, *one8 = NULL;
    ltx2_dit_config cfg;
    dit_inputs in;
    memset(&in, 0, sizeof in);
    ltx2_status st = ltx2_st_open(g_ctx, ckpt, &f);
    if (st == LTX2_OK) st = ltx2_dit_config_from_st(g_ctx, f, &cfg);
    if (st == LTX2_OK) st = ltx2_backend_emu_create(g_ctx, &emu);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_fp8(g_ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, NULL, &cpu8);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_on(g_ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, &cpud);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_fp8(g_ctx, emu, LTX2_BF16, f, NULL, &cfg, NULL, &one8);
    CHECK(st == LTX2_OK, "%s fp8: setup: %s", version, ltx2_last_error(g_ctx));
    if (st != LTX2_OK || !dit_inputs_load(g_ctx, f, DIT_INPUTS_MASKED, &in)) goto done;
    const int64_t nv = in.B * in.video.T * cfg.out_channels, na = in.B * in.audio.T * cfg.audio_out_channels;
    int64_t scaled = 0; /* the file's scaled fp8 Linears: each rank keeps a shard of each fp8 */
    for (size_t i = 0; i < f->n_tensors; i++) {
        const size_t l = strlen(f->tensors[i].name);
        scaled += !strncmp(f->tensors[i].name, LTX2_DIT_PREFIX, strlen(LTX2_DIT_PREFIX)) && l > 13 &&
                  !strcmp(f->tensors[i].name + l - 13, ".weight_scale"); /* not the golden's "lora.*" */
    }
    float *ref[3][2]; /* CPU fp8, CPU dequantised, one emulated rank fp8 */
    const ltx2_dit_weights *refw[3] = {cpu8, cpud, one8};
    for (int k = 0; k < 3; k++) {
        ref[k][0] = malloc((size_t)nv * sizeof(float)), ref[k][1] = malloc((size_t)na * sizeof(float));
        if (st == LTX2_OK) st = ltx2_dit_forward(g_ctx, refw[k], &in.p, ref[k][0], ref[k][1]);
    }
    CHECK(st == LTX2_OK, "%s fp8: reference forwards: %s", version, ltx2_last_error(g_ctx));
    /* context 2, tensor 2, and fsdp 2 under trillium (the fp8 codes' pieces gathered as bytes) */
    static const int meshes[3][4] = {{1, 1, 2, 1}, {1, 1, 1, 2}, {1, 2, 1, 1}};
    for (int m = 0; m < 3 && st == LTX2_OK; m++) {
        forward_job jobs[2];
        for (int r = 0; r < 2; r++) {
            jobs[r] = (forward_job){.ckpt = ckpt, .fp8 = true, .p = &in.p};
            ltx2_dit_parallel_opts_init(&jobs[r].opts);
            if (m == 2) jobs[r].opts.profile = LTX2_PROFILE_TRILLIUM;
            jobs[r].out_v = calloc((size_t)nv, sizeof(float));
            jobs[r].out_a = calloc((size_t)na, sizeof(float));
        }
        const int ok = loopback_ranks_run(g_ctx, meshes[m], rank_forward, jobs, sizeof *jobs);
        CHECK(ok == 2, "%s fp8 mesh %d: %s", version, m, jobs[0].lr.msg);
        if (ok == 2) {
            double e[3][2];
            for (int k = 0; k < 3; k++)
                e[k][0] = test_rel_l2(jobs[0].out_v, ref[k][0], nv), e[k][1] = test_rel_l2(jobs[0].out_a, ref[k][1], na);
            printf("%s fp8 mesh %s: vs one emulated fp8 rank video %.3g audio %.3g; vs cpu fp8 %.3g %.3g; vs cpu "
                   "dequantised %.3g %.3g\n", version, m == 2 ? "1,2,1,1 trillium" : m ? "1,1,1,2" : "1,1,2,1",
                   e[2][0], e[2][1], e[0][0], e[0][1],
                   e[1][0], e[1][1]);
            for (int d = 0; d < 2; d++) {
                if (m == 2)
                    CHECK(e[2][d] == 0, "%s fp8 fsdp 2 %s: %.3g from one emulated rank: a batch split must equal it",
                          version, d ? "audio" : "video", e[2][d]);
                CHECK(e[2][d] <= PAR_EMU_FP8_MAX_REL_L2 && e[0][d] <= PAR_EMU_FP8_MAX_REL_L2,
                      "%s fp8 mesh %d %s: %.3g from one emulated rank, %.3g from the CPU (max %.0e)", version, m,
                      d ? "audio" : "video", e[2][d], e[0][d], PAR_EMU_FP8_MAX_REL_L2);
            }
            for (int r = 0; r < 2; r++)
                CHECK(scaled > 0 && jobs[r].fp8_linears == scaled, "%s fp8 mesh %d rank %d: %lld shards kept fp8, the "
                      "file has %lld scaled fp8 Linears", version, m, r, (long long)jobs[r].fp8_linears,
                      (long long)scaled);
        }
        for (int r = 0; r < 2; r++) free(jobs[r].out_v), free(jobs[r].out_a);
    }
    /* a device without an fp8 GEMM is refused before any shard is read, as one device's load is */
    g_emu_supports = emu->supports;
    forward_job nj[2];
    for (int r = 0; r < 2 && st == LTX2_OK; r++) {
        nj[r] = (forward_job){.ckpt = ckpt, .fp8 = true, .no_fp8_gemm = true, .p = &in.p};
        ltx2_dit_parallel_opts_init(&nj[r].opts);
    }
    if (st == LTX2_OK) {
        const int ok = loopback_ranks_run(g_ctx, meshes[0], rank_forward, nj, sizeof *nj);
        CHECK(ok == 0 && strstr(nj[0].lr.msg, "has no fp8 GEMM") && strstr(nj[1].lr.msg, "has no fp8 GEMM"),
              "%s fp8 on a device without an fp8 GEMM: %d ranks ok (%s)", version, ok, nj[0].lr.msg);
        printf("%s fp8 on a device without an fp8 GEMM: %s\n", version, nj[0].lr.msg);
    }
    for (int k = 0; k < 3; k++) free(ref[k][0]), free(ref[k][1]);
done:
    dit_inputs_free(&in);
    ltx2_dit_weights_free(cpu8);
    ltx2_dit_weights_free(cpud);
    ltx2_dit_weights_free(one8);
    ltx2_backend_free(emu);
    ltx2_st_close(f);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
#ifndef __SANITIZE_THREAD__
    check_dit("2.0");
    check_fp8("2.0");
    check_fp8("2.3");
#endif
    check_dit("2.3");
    ltx2_context_free(g_ctx);
    return test_finish();
}
