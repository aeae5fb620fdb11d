/* fp8 DiT weights across ranks (ltx2_dit_parallel_create_sharded_lora with LTX2_DIT_SHARDS_FP8 /
 * _FP8_CAST), on loopback CPU ranks, against one rank's loads of the same file
 * (tests/golden/data/dit_fp8_<v>.safetensors: block 1's Linears scaled e4m3, block 0 bf16):
 *   - kept fp8 (ltx2_dit_weights_load_fp8), plain and with the tiny style + distilled LoRAs: data 2
 *     and context 2 bitwise; tensor 2 and context 2 x tensor 2 within TP_REL_L2 (fp32 summation order
 *     of the row-parallel halves). With LoRAs over tensor 2, each rank's re-quantised shards of block
 *     1's FF are bitwise the block of the whole fused weight, scale included: the amax that sets it is
 *     the whole tensor's, gathered from both halves;
 *   - under trillium's FSDP (pieces of fp8 codes gathered beside bf16 / f32 ones): fsdp 2 and
 *     context 2 bitwise, fsdp 2 x tensor 2 within TP_REL_L2, with LoRAs too;
 *   - fp8-cast (ltx2_dit_weights_load_fp8_cast): context 2 bitwise, tensor 2 within TP_REL_L2;
 *   - refused: fp8-cast with LoRAs, fp8 from a file with none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_config.h"
#include "model/dit_parallel.h"
#include "model/dit_parallel_internal.h"
#include "model/dit_weights.h"
#include "model/lora.h"
#include "dit_inputs.h"
#include "loopback_ranks.h"
#include "test_util.h"

/* Tensor splits sum each row-parallel Linear in two halves: on the tiny models that moves the
 * output by ~2.5e-7 (measured 2.4e-7 .. 2.9e-7; the bf16 / f32 shards move it as much). An fp8 code
 * flipped by that noise in a later quantised input would move it by ~1e-3 (test_dit_fp8_scaled.c):
 * none does on these inputs, and the run is deterministic. A wrong scale or block moves it > 1e-2. */
#define TP_REL_L2 1e-5

static ltx2_context *g_ctx;

typedef struct problem {
    const char *version;
    ltx2_st_file *f;
    ltx2_dit_config cfg;
    dit_inputs in;
    int64_t nv, na;
} problem;

typedef struct job {
    loopback_rank lr;
    const problem *q;
    ltx2_lora_set *loras;
    ltx2_dit_shard_weights kind;
    ltx2_shard_profile profile;
    const ltx2_dit_weights *fused; /* with LoRAs over tensor 2: the whole fused fp8 weights to compare shards with */
    float *v, *a;
    int shard_mismatch; /* block 1 FF shards whose codes or scale differ from the whole's block */
} job;

/* Whether the rank's fp8 shard L of the whole weight W (split over the tensor group: rows when
 * by_rows, else columns) holds exactly the whole's codes of its block and its scale. */
static bool same_block(const ltx2_dit_linear *L, const ltx2_dit_linear *W, int tp_rank, bool by_rows) {
    if (L->w.dtype != LTX2_F8_E4M3 || W->w.dtype != LTX2_F8_E4M3 || L->w_scale != W->w_scale ||
        L->x_scale != W->x_scale)
        return false;
    const uint8_t *l = L->w.data, *w = W->w.data;
    const int64_t r0 = by_rows ? tp_rank * L->out : 0, c0 = by_rows ? 0 : tp_rank * L->in;
    for (int64_t i = 0; i < L->out; i++)
        if (memcmp(l + i * L->in, w + (r0 + i) * W->in + c0, (size_t)L->in)) return false;
    return true;
}

static ltx2_status rank_run(ltx2_context *ctx, ltx2_comm *c, void *arg) {
    job *j = arg;
    const problem *q = j->q;
    ltx2_dit_weights *rep = NULL;
    ltx2_dit_parallel *dp = NULL;
    ltx2_dit_parallel_opts o;
    ltx2_dit_parallel_opts_init(&o);
    o.profile = j->profile;
    ltx2_status st = ltx2_dit_weights_load_replicated_on(ctx, ltx2_backend_cpu(), LTX2_F32, q->f, NULL, &q->cfg,
                                                         j->loras, &rep);
    if (st == LTX2_OK)
        st = ltx2_dit_parallel_create_sharded_lora(ctx, c, rep, q->f, NULL, j->loras, j->kind, &o, &dp);
    if (st == LTX2_OK && j->fused) {
        const ltx2_dit_ff_w *ff = &dp->blocks[1].ff, *wf = &j->fused->blocks[1].ff;
        j->shard_mismatch = !same_block(&ff->proj_in, &wf->proj_in, dp->tp->rank, true) +
                            !same_block(&ff->proj_out, &wf->proj_out, dp->tp->rank, false);
    }
    if (st == LTX2_OK) st = ltx2_dit_parallel_forward(ctx, dp, &q->in.p, j->v, j->a);
    ltx2_dit_parallel_free(dp);
    ltx2_dit_weights_free(rep);
    return st;
}

/* One rank's forward of w: the reference. */
static bool reference(const problem *q, const ltx2_dit_weights *w, float *v, float *a) {
    const ltx2_status st = ltx2_dit_forward(g_ctx, w, &q->in.p, v, a);
    CHECK(st == LTX2_OK, "%s reference forward: %s", q->version, ltx2_last_error(g_ctx));
    return st == LTX2_OK;
}

static double rel(const float *ref, const float *got, int64_t n) {
    ltx2_tensor a = ltx2_tensor_make((void *)ref, LTX2_F32, 1, &n), b = ltx2_tensor_make((void *)got, LTX2_F32, 1, &n);
    ltx2_diff_stats s;
    ltx2_diff(&a, &b, 0.0, 0.0, &s);
    return s.rel_l2;
}

/* Every rank of mesh m against (rv, ra): bitwise, or within TP_REL_L2 when the mesh splits tensor. */
static void check_mesh_profile(const problem *q, const char *what, const int m[4], ltx2_lora_set *loras,
                               ltx2_dit_shard_weights kind, ltx2_shard_profile profile, const ltx2_dit_weights *fused,
                               const float *rv, const float *ra) {
    const int P = m[0] * m[1] * m[2] * m[3];
    job jobs[LOOPBACK_RANKS_MAX];
    memset(jobs, 0, sizeof jobs);
    for (int r = 0; r < P; r++) {
        jobs[r] = (job){.q = q, .loras = loras, .kind = kind, .profile = profile, .fused = fused,
                        .shard_mismatch = -1};
        jobs[r].v = calloc((size_t)q->nv, sizeof(float));
        jobs[r].a = calloc((size_t)q->na, sizeof(float));
    }
    const int ok = loopback_ranks_run(g_ctx, m, rank_run, jobs, sizeof *jobs);
    CHECK(ok == P, "%s %s mesh %d,%d,%d,%d: %d of %d ranks ok (%s)", q->version, what, m[0], m[1], m[2], m[3], ok, P,
          jobs[0].lr.msg);
    double worst = 0;
    for (int r = 0; ok == P && r < P; r++) {
        const double ev = rel(rv, jobs[r].v, q->nv), ea = rel(ra, jobs[r].a, q->na);
        worst = ev > worst ? ev : worst, worst = ea > worst ? ea : worst;
        if (m[3] == 1)
            CHECK(!memcmp(rv, jobs[r].v, (size_t)q->nv * sizeof(float)) &&
                      !memcmp(ra, jobs[r].a, (size_t)q->na * sizeof(float)),
                  "%s %s mesh %d,%d,%d,%d rank %d: not bitwise one rank's (rel-L2 video %.3g audio %.3g)", q->version,
                  what, m[0], m[1], m[2], m[3], r, ev, ea);
        else
            CHECK(ev <= TP_REL_L2 && ea <= TP_REL_L2, "%s %s mesh %d,%d,%d,%d rank %d: rel-L2 video %.3g audio %.3g > %g",
                  q->version, what, m[0], m[1], m[2], m[3], r, ev, ea, TP_REL_L2);
        if (fused)
            CHECK(jobs[r].shard_mismatch == 0, "%s %s rank %d: %d of block 1's FF fp8 shards are not the whole fused "
                  "weight's block (codes or scale)", q->version, what, r, jobs[r].shard_mismatch);
    }
    printf("%s %s mesh %d,%d,%d,%d%s: %s (worst rel-L2 %.3g)%s\n", q->version, what, m[0], m[1], m[2], m[3],
           profile == LTX2_PROFILE_TRILLIUM ? " trillium" : "", m[3] == 1 ? "bitwise one rank" : "within tolerance",
           worst, fused ? "; re-quantised shards are the whole's blocks" : "");
    for (int r = 0; r < P; r++) free(jobs[r].v), free(jobs[r].a);
}

static void check_mesh(const problem *q, const char *what, const int m[4], ltx2_lora_set *loras,
                       ltx2_dit_shard_weights kind, const ltx2_dit_weights *fused, const float *rv, const float *ra) {
    check_mesh_profile(q, what, m, loras, kind, LTX2_PROFILE_GPU, fused, rv, ra);
}

/* One rank of mesh m must fail building with a message holding `want`. */
static void check_refused(const problem *q, const char *what, const int m[4], ltx2_lora_set *loras,
                          ltx2_dit_shard_weights kind, ltx2_shard_profile profile, const char *want) {
    const int P = m[0] * m[1] * m[2] * m[3];
    job jobs[LOOPBACK_RANKS_MAX];
    memset(jobs, 0, sizeof jobs);
    for (int r = 0; r < P; r++) {
        jobs[r] = (job){.q = q, .loras = loras, .kind = kind, .profile = profile};
        jobs[r].v = calloc((size_t)q->nv, sizeof(float));
        jobs[r].a = calloc((size_t)q->na, sizeof(float));
    }
    const int ok = loopback_ranks_run(g_ctx, m, rank_run, jobs, sizeof *jobs);
    int said = 0;
    for (int r = 0; r < P; r++) said += strstr(jobs[r].lr.msg, want) != NULL;
    CHECK(ok == 0 && said > 0, "%s %s: %d ranks built, expected a refusal saying '%s' (%s)", q->version, what, ok, want,
          jobs[0].lr.msg);
    printf("%s %s: refused (%s)\n", q->version, what, jobs[0].lr.msg);
    for (int r = 0; r < P; r++) free(jobs[r].v), free(jobs[r].a);
}

static void run_version(const char *version) {
    problem q = {.version = version};
    char path[1024], lp[2][1024];
    snprintf(path, sizeof path, "%s/tests/golden/data/dit_fp8_%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(lp[0], sizeof lp[0], "%s/weights/tiny/ltx2-tiny-lora-style-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(lp[1], sizeof lp[1], "%s/weights/tiny/ltx2-tiny-lora-distilled-%s.safetensors", LTX2_SOURCE_DIR, version);
    const ltx2_lora_spec specs[2] = {{lp[0], 0.8}, {lp[1], 0.5}};
    ltx2_lora_set *loras = NULL, *loras_ref = NULL;
    ltx2_dit_weights *w8 = NULL, *w8l = NULL, *wc = NULL;
    ltx2_status st = ltx2_st_open(g_ctx, path, &q.f);
    if (st == LTX2_OK) st = ltx2_dit_config_from_st(g_ctx, q.f, &q.cfg);
    if (st == LTX2_OK && !dit_inputs_load(g_ctx, q.f, DIT_INPUTS_MASKED, &q.in)) st = LTX2_ERR_FORMAT;
    if (st == LTX2_OK) st = ltx2_lora_set_open(g_ctx, specs, 2, &loras);
    if (st == LTX2_OK) st = ltx2_lora_set_open(g_ctx, specs, 2, &loras_ref);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_fp8(g_ctx, ltx2_backend_cpu(), LTX2_F32, q.f, NULL, &q.cfg, NULL, &w8);
    if (st == LTX2_OK)
        st = ltx2_dit_weights_load_fp8(g_ctx, ltx2_backend_cpu(), LTX2_F32, q.f, NULL, &q.cfg, loras_ref, &w8l);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_fp8_cast(g_ctx, ltx2_backend_cpu(), LTX2_F32, q.f, NULL, &q.cfg, &wc);
    CHECK(st == LTX2_OK, "%s: setup: %s", version, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) goto done;
    q.nv = q.in.p.batch * q.in.p.video.T * q.cfg.out_channels;
    q.na = q.in.p.batch * q.in.p.audio.T * q.cfg.audio_out_channels;
    float *rv = calloc((size_t)q.nv, sizeof(float)), *ra = calloc((size_t)q.na, sizeof(float));
    static const int data2[4] = {2, 1, 1, 1}, ctx2[4] = {1, 1, 2, 1}, tp2[4] = {1, 1, 1, 2}, ctp[4] = {1, 1, 2, 2},
                     fsdp2[4] = {1, 2, 1, 1}, ftp[4] = {1, 2, 1, 2};
    const ltx2_shard_profile T = LTX2_PROFILE_TRILLIUM;
    if (reference(&q, w8, rv, ra)) {
        check_mesh(&q, "fp8", data2, NULL, LTX2_DIT_SHARDS_FP8, NULL, rv, ra);
        check_mesh(&q, "fp8", ctx2, NULL, LTX2_DIT_SHARDS_FP8, NULL, rv, ra);
        check_mesh(&q, "fp8", tp2, NULL, LTX2_DIT_SHARDS_FP8, NULL, rv, ra);
        check_mesh(&q, "fp8", ctp, NULL, LTX2_DIT_SHARDS_FP8, NULL, rv, ra);
        check_mesh_profile(&q, "fp8", fsdp2, NULL, LTX2_DIT_SHARDS_FP8, T, NULL, rv, ra);
        check_mesh_profile(&q, "fp8", ctx2, NULL, LTX2_DIT_SHARDS_FP8, T, NULL, rv, ra);
        check_mesh_profile(&q, "fp8", ftp, NULL, LTX2_DIT_SHARDS_FP8, T, NULL, rv, ra);
    }
    if (reference(&q, w8l, rv, ra)) {
        check_mesh(&q, "fp8 + LoRAs", ctx2, loras, LTX2_DIT_SHARDS_FP8, w8l, rv, ra);
        check_mesh(&q, "fp8 + LoRAs", tp2, loras, LTX2_DIT_SHARDS_FP8, w8l, rv, ra);
        check_mesh_profile(&q, "fp8 + LoRAs", ftp, loras, LTX2_DIT_SHARDS_FP8, T, NULL, rv, ra);
    }
    if (reference(&q, wc, rv, ra)) {
        check_mesh(&q, "fp8-cast", ctx2, NULL, LTX2_DIT_SHARDS_FP8_CAST, NULL, rv, ra);
        check_mesh(&q, "fp8-cast", tp2, NULL, LTX2_DIT_SHARDS_FP8_CAST, NULL, rv, ra);
    }
    free(rv), free(ra);
    check_refused(&q, "fp8-cast with LoRAs", ctx2, loras, LTX2_DIT_SHARDS_FP8_CAST, LTX2_PROFILE_GPU,
                  "fp8-cast weights take no LoRA");
done:
    ltx2_dit_weights_free(w8);
    ltx2_dit_weights_free(w8l);
    ltx2_dit_weights_free(wc);
    ltx2_lora_set_free(loras);
    ltx2_lora_set_free(loras_ref);
    dit_inputs_free(&q.in);
    ltx2_st_close(q.f);
}

/* A bf16 checkpoint has no scaled fp8 weights: every rank refuses as the single-device fp8 load does. */
static void no_fp8_file(void) {
    problem q = {.version = "2.3 (bf16 file)"};
    char path[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-2.3.safetensors", LTX2_SOURCE_DIR);
    ltx2_status st = ltx2_st_open(g_ctx, path, &q.f);
    if (st == LTX2_OK) st = ltx2_dit_config_from_st(g_ctx, q.f, &q.cfg);
    CHECK(st == LTX2_OK, "%s: %s", path, ltx2_last_error(g_ctx));
    static const int ctx2[4] = {1, 1, 2, 1};
    if (st == LTX2_OK)
        check_refused(&q, "fp8 from a file without any", ctx2, NULL, LTX2_DIT_SHARDS_FP8, LTX2_PROFILE_GPU,
                      "fp8 DiT weights need a pre-quantised checkpoint");
    ltx2_st_close(q.f);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    run_version("2.0");
    run_version("2.3");
    no_fp8_file();
    ltx2_context_free(g_ctx);
    return test_finish();
}
