/* FSDP in the parallel DiT: under MaxDiffusion's trillium profile every block weight's `embed` dim
 * is split over context x fsdp on top of the tensor split, each rank stores only that piece, and
 * each block all-gathers its pieces just before it runs. On the tiny LTX-2.0 and 2.3 checkpoints
 * (golden inputs, batch 2 with an STG-perturbed sample), over meshes of 2, 4 and 8 loopback ranks
 * mixing data, fsdp, context and tensor:
 *   - trillium built from full weights, from the file (create_from_file) and from the file with the
 *     replicated part borrowed (create_sharded, the pipeline's way) give bitwise the same outputs
 *     as the gpu profile on the same mesh (the gathered weights are the gpu profile's shards), hence
 *     bitwise the single-rank forward at tensor = 1 and within TP_REL_L2_TOL at tensor > 1;
 *   - resident block weights are exactly the sum computed here from the config (every weight
 *     matrix and row-parallel bias 1/(T*G), the heads/mlp biases and QK-norm scales 1/T), about
 *     1/(fsdp*context*tensor) of the layers, and the tensor shards they gather to are the gpu
 *     profile's resident floats; the non-block weights stay whole (a stated choice: ~1.5 % of
 *     LTX-2 19B, see src/model/DIT_PARALLEL.md), the same floats as under gpu;
 *   - one weight all-gather per block, moving gathered - resident floats per rank per forward;
 *   - a rank failing before a block (while the others wait in that block's weight gather) ends
 *     every rank with its message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/metrics.h"
#include "dist/comm.h"
#include "model/dit_parallel.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "dit_inputs.h"
#include "loopback_ranks.h"
#include "test_util.h"

#define MAX_RANKS LOOPBACK_RANKS_MAX
#define PATH_CAP 1024
/* Tensor parallelism sums row-parallel GEMMs and the QK-norm's sum of squares in another order than
 * one rank (test_dit_parallel.c measures rel-L2 ~3e-7 on the tiny model); 1e-5 still catches any
 * wrong piece (order-1 errors). FSDP itself adds no error: it is checked bitwise against gpu. */
#define TP_REL_L2_TOL 1e-5
/* Resident block floats x T x G over the whole layers: the heads/mlp biases and QK-norm scales are
 * split by T only, which on the tiny model (widths 64 / 32) costs a few percent at G = 4; 15 % still
 * fails any rank that kept a whole weight matrix or tensor shard. */
#define FSDP_SMALL_TENSOR_SLACK 0.15

static ltx2_context *g_ctx;

/* ---- expected resident floats under trillium, from the config alone ---- */

/* One attention on a rank of tensor T and weight-gather group G: weight matrices and the to_out
 * bias carry `embed` (split T*G or G), Q/K/V/gate biases (heads) and QK norms (norm) only T. */
static int64_t attn_floats(int64_t qdim, int64_t cdim, int64_t heads, int64_t hd, bool gated, int64_t T, int64_t G) {
    const int64_t inner = heads * hd;
    int64_t n = (inner * qdim + 2 * inner * cdim + qdim * inner) / (T * G); /* q, k, v, out weights */
    n += (3 * inner + 2 * inner) / T + qdim / G;                            /* q/k/v biases, norms, out bias */
    if (gated) n += heads * qdim / (T * G) + heads / T;
    return n;
}

static int64_t ff_floats(int64_t D, int64_t T, int64_t G) {
    return (4 * D * D + D * 4 * D) / (T * G) + 4 * D / T + D / G; /* net.0, net.2 weights; biases */
}

static int64_t expected_resident(const ltx2_dit_config *c, int64_t T, int64_t G) {
    const int64_t Dv = c->inner_dim, Da = c->audio_inner_dim, H = c->heads, d = c->head_dim;
    const int64_t Ha = c->audio_heads, da = c->audio_head_dim;
    const bool g = c->apply_gated_attention;
    const int64_t per = attn_floats(Dv, Dv, H, d, g, T, G) + attn_floats(Dv, c->cross_attention_dim, H, d, g, T, G) +
                        attn_floats(Da, Da, Ha, da, g, T, G) +
                        attn_floats(Da, c->audio_cross_attention_dim, Ha, da, g, T, G) +
                        attn_floats(Dv, Da, Ha, da, g, T, G) + attn_floats(Da, Dv, Ha, da, g, T, G) +
                        ff_floats(Dv, T, G) + ff_floats(Da, T, G);
    return per * c->num_layers;
}

/* ---- the problem: golden inputs, sample 1 skipping video self-attention in block 0 ---- */

typedef struct problem {
    dit_inputs in; /* in.p gets the perturbation */
    uint32_t *perturb;
    float *ref_v, *ref_a;
    int64_t nv, na;
} problem;

static void problem_free(problem *q) {
    dit_inputs_free(&q->in);
    free(q->perturb), free(q->ref_v), free(q->ref_a);
}

static bool load_problem(const char *version, const ltx2_dit_weights *w, problem *q) {
    memset(q, 0, sizeof *q);
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/tests/golden/data/dit_blocks_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_st_file *f = NULL;
    if (ltx2_st_open(g_ctx, path, &f) != LTX2_OK) {
        CHECK(0, "open %s: %s", path, ltx2_last_error(g_ctx));
        return false;
    }
    bool ok = dit_inputs_load(g_ctx, f, DIT_INPUTS_MASKED, &q->in);
    CHECK(ok, "%s: golden inputs missing", path);
    if (ok) {
        const int64_t B = q->in.B, Tv = q->in.video.T, Ta = q->in.audio.T;
        const int64_t L = w->cfg.num_layers, blk0 = 0;
        q->perturb = calloc((size_t)(B * L), sizeof(uint32_t));
        CHECK(B >= 2 && ltx2_dit_perturb_set(g_ctx, q->perturb, L, 1, LTX2_DIT_SKIP_VIDEO_SELF_ATTN, &blk0, 1) ==
                            LTX2_OK,
              "perturbation: %s", ltx2_last_error(g_ctx));
        q->in.p.perturb = q->perturb;
        q->nv = B * Tv * w->cfg.out_channels;
        q->na = B * Ta * w->cfg.audio_out_channels;
        q->ref_v = malloc((size_t)q->nv * sizeof(float));
        q->ref_a = malloc((size_t)q->na * sizeof(float));
        const ltx2_status st = ltx2_dit_forward(g_ctx, w, &q->in.p, q->ref_v, q->ref_a);
        CHECK(st == LTX2_OK, "reference forward: %s", ltx2_last_error(g_ctx));
        ok = st == LTX2_OK;
    }
    ltx2_st_close(f);
    return ok;
}

/* ---- the ranks ---- */

/* The builds every rank runs in turn, each followed by a forward. */
enum { RUN_GPU_FULL, RUN_TRI_FULL, RUN_TRI_FILE, RUN_TRI_SHARDED, RUN_COUNT };
static const char *const run_names[RUN_COUNT] = {"gpu from full", "trillium from full", "trillium from file",
                                                 "trillium sharded"};

typedef struct rank_job {
    loopback_rank lr;
    const ltx2_dit_weights *full, *rep;
    const ltx2_st_file *f;
    const problem *q;
    int fail_rank; /* rank whose on_block fails before block 1 (-1: none; then only RUN_TRI_FULL) */
    float *v[RUN_COUNT], *a[RUN_COUNT];
    ltx2_dit_parallel_weight_mem mem[RUN_COUNT];
    ltx2_dit_parallel_stats stats[RUN_COUNT];
    int failed_run;
} rank_job;

static ltx2_status rank_runs(ltx2_context *ctx, ltx2_comm *c, void *arg) {
    rank_job *j = arg;
    ltx2_status st = LTX2_OK;
    for (int k = 0; st == LTX2_OK && k < RUN_COUNT; k++) {
        if (j->fail_rank >= 0 && k != RUN_TRI_FULL) continue;
        if (!j->rep && k == RUN_TRI_SHARDED) continue;
        ltx2_dit_parallel_opts opts;
        ltx2_dit_parallel_opts_init(&opts);
        opts.profile = k == RUN_GPU_FULL ? LTX2_PROFILE_GPU : LTX2_PROFILE_TRILLIUM;
        if (j->fail_rank >= 0) {
            opts.on_block = loopback_fail_at_block1;
            opts.on_block_user = &j->fail_rank;
        }
        ltx2_dit_parallel *dp = NULL;
        j->failed_run = k;
        if (k == RUN_TRI_FILE)
            st = ltx2_dit_parallel_create_from_file(ctx, c, j->f, NULL, &j->full->cfg, &opts, &dp);
        else if (k == RUN_TRI_SHARDED)
            st = ltx2_dit_parallel_create_sharded(ctx, c, j->rep, j->f, NULL, &opts, &dp);
        else
            st = ltx2_dit_parallel_create(ctx, c, j->full, &opts, &dp);
        if (st == LTX2_OK) {
            ltx2_dit_parallel_get_weight_mem(dp, &j->mem[k]);
            st = ltx2_dit_parallel_forward(ctx, dp, &j->q->in.p, j->v[k], j->a[k]);
            ltx2_dit_parallel_get_stats(dp, &j->stats[k]);
        }
        ltx2_dit_parallel_free(dp);
    }
    return st;
}

/* Runs every rank of mesh m; returns the rank count (0 if the world could not be made). */
static int run_mesh(const int m[4], const ltx2_dit_weights *full, const ltx2_dit_weights *rep, const ltx2_st_file *f,
                    const problem *q, int fail_rank, rank_job *jobs) {
    const int P = m[0] * m[1] * m[2] * m[3];
    for (int r = 0; r < P; r++) {
        jobs[r] = (rank_job){.full = full, .rep = rep, .f = f, .q = q, .fail_rank = fail_rank};
        for (int k = 0; k < RUN_COUNT; k++) {
            jobs[r].v[k] = calloc((size_t)q->nv, sizeof(float));
            jobs[r].a[k] = calloc((size_t)q->na, sizeof(float));
        }
    }
    return loopback_ranks_run(g_ctx, m, rank_runs, jobs, sizeof *jobs) < 0 ? 0 : P;
}

static void free_jobs(rank_job *jobs, int P) {
    for (int r = 0; r < P; r++)
        for (int k = 0; k < RUN_COUNT; k++) free(jobs[r].v[k]), free(jobs[r].a[k]);
}

static double rel_l2(const float *ref, const float *out, int64_t n) {
    ltx2_tensor a = ltx2_tensor_make((void *)ref, LTX2_F32, 1, &n), b = ltx2_tensor_make((void *)out, LTX2_F32, 1, &n);
    ltx2_diff_stats st;
    ltx2_diff(&a, &b, 0.0, 0.0, &st);
    return st.rel_l2;
}

static bool same(const float *a, const float *b, int64_t n) { return memcmp(a, b, (size_t)n * sizeof(float)) == 0; }

static void check_mesh(const char *version, const ltx2_dit_weights *full, const ltx2_dit_weights *rep,
                       const ltx2_st_file *f, const problem *q, int d, int fs, int c, int t) {
    const int m[4] = {d, fs, c, t}, G = fs * c;
    const int64_t L = full->cfg.num_layers;
    char what[96];
    snprintf(what, sizeof what, "%s mesh %d,%d,%d,%d%s", version, d, fs, c, t, rep ? " (+sharded)" : "");
    rank_job jobs[MAX_RANKS];
    const int P = run_mesh(m, full, rep, f, q, -1, jobs);
    const int64_t want = expected_resident(&full->cfg, t, G);
    for (int r = 0; r < P; r++) {
        const rank_job *j = &jobs[r];
        CHECK(j->lr.st == LTX2_OK, "%s rank %d, %s: %s", what, r, run_names[j->failed_run], j->lr.msg);
        if (j->lr.st != LTX2_OK) continue;
        const int last = rep ? RUN_TRI_SHARDED : RUN_TRI_FILE;
        /* FSDP changes no arithmetic: every trillium build is bitwise gpu on the same mesh */
        for (int k = RUN_TRI_FULL; k <= last; k++)
            CHECK(same(j->v[k], j->v[RUN_GPU_FULL], q->nv) && same(j->a[k], j->a[RUN_GPU_FULL], q->na),
                  "%s rank %d: %s differs from gpu on the same mesh (rel-L2 video %.3g audio %.3g)", what, r,
                  run_names[k], rel_l2(j->v[RUN_GPU_FULL], j->v[k], q->nv), rel_l2(j->a[RUN_GPU_FULL], j->a[k], q->na));
        /* and so equals the unsharded forward as every mesh does */
        const double ev = rel_l2(q->ref_v, j->v[RUN_TRI_FILE], q->nv), ea = rel_l2(q->ref_a, j->a[RUN_TRI_FILE], q->na);
        if (t == 1)
            CHECK(same(j->v[RUN_TRI_FILE], q->ref_v, q->nv) && same(j->a[RUN_TRI_FILE], q->ref_a, q->na),
                  "%s rank %d: trillium not bitwise the single-rank forward (rel-L2 video %.3g audio %.3g)", what, r,
                  ev, ea);
        else
            CHECK(ev <= TP_REL_L2_TOL && ea <= TP_REL_L2_TOL, "%s rank %d: rel-L2 video %.3g audio %.3g > %.0e", what,
                  r, ev, ea, TP_REL_L2_TOL);
        /* resident weights */
        const ltx2_dit_parallel_weight_mem *g = &j->mem[RUN_GPU_FULL];
        for (int k = RUN_TRI_FULL; k <= last; k++) {
            const ltx2_dit_parallel_weight_mem *w = &j->mem[k];
            CHECK(w->shard_floats == want, "%s rank %d %s: resident block floats %lld, expected %lld", what, r,
                  run_names[k], (long long)w->shard_floats, (long long)want);
            CHECK(w->gathered_floats == g->shard_floats && w->layer_full_floats == g->layer_full_floats,
                  "%s rank %d %s: gathered %lld / layers %lld, gpu holds %lld / %lld", what, r, run_names[k],
                  (long long)w->gathered_floats, (long long)w->layer_full_floats, (long long)g->shard_floats,
                  (long long)g->layer_full_floats);
            /* the scratch holds one block's split tensors whole: F / L, where the resident floats keep F / G */
            CHECK(w->fsdp_parts == G && (G == 1 ? w->scratch_floats == 0
                                                : w->scratch_floats * L * (G - 1) ==
                                                      (w->gathered_floats - w->shard_floats) * G),
                  "%s rank %d %s: fsdp parts %d (want %d), scratch %lld of %lld gathered", what, r, run_names[k],
                  w->fsdp_parts, G, (long long)w->scratch_floats, (long long)w->gathered_floats);
            CHECK((double)w->shard_floats * t * G <= (double)w->layer_full_floats * (1.0 + FSDP_SMALL_TENSOR_SLACK),
                  "%s rank %d %s: %lld resident of %lld layer floats is not about 1/%d", what, r, run_names[k],
                  (long long)w->shard_floats, (long long)w->layer_full_floats, t * G);
            /* the non-block weights stay whole under trillium: the same floats as under gpu */
            CHECK(w->replicated_floats == g->replicated_floats && w->replicated_floats > 0,
                  "%s rank %d %s: replicated floats %lld, gpu %lld", what, r, run_names[k],
                  (long long)w->replicated_floats, (long long)g->replicated_floats);
            const ltx2_dit_parallel_stats *s = &j->stats[k];
            CHECK(s->n_weight_gather == (G > 1 ? L : 0) && s->weight_sent_elems == w->gathered_floats - w->shard_floats,
                  "%s rank %d %s: %lld weight gathers sending %lld floats, expected %lld sending %lld", what, r,
                  run_names[k], (long long)s->n_weight_gather, (long long)s->weight_sent_elems,
                  (long long)(G > 1 ? L : 0), (long long)(w->gathered_floats - w->shard_floats));
            CHECK(s->n_all_gather == j->stats[RUN_GPU_FULL].n_all_gather &&
                      s->n_all_to_all == j->stats[RUN_GPU_FULL].n_all_to_all &&
                      s->n_all_reduce == j->stats[RUN_GPU_FULL].n_all_reduce &&
                      s->sent_elems - s->weight_sent_elems == j->stats[RUN_GPU_FULL].sent_elems,
                  "%s rank %d %s: activation collectives differ from gpu's", what, r, run_names[k]);
        }
        CHECK(j->stats[RUN_GPU_FULL].n_weight_gather == 0 && g->fsdp_parts == 1 && g->scratch_floats == 0,
              "%s rank %d: gpu profile gathered weights", what, r);
    }
    if (P > 0 && jobs[0].lr.st == LTX2_OK) {
        const ltx2_dit_parallel_weight_mem *w = &jobs[0].mem[RUN_TRI_FILE];
        printf("  %s trillium: %s; resident block floats %lld = 1/%.2f of %lld (gpu: %lld), scratch %lld, %lld "
               "weight floats sent per forward, replicated %lld kept whole\n",
               what, t == 1 ? "bitwise" : "bitwise gpu, within tolerance of one rank", (long long)w->shard_floats,
               (double)w->layer_full_floats / (double)w->shard_floats, (long long)w->layer_full_floats,
               (long long)w->gathered_floats, (long long)w->scratch_floats,
               (long long)jobs[0].stats[RUN_TRI_FILE].weight_sent_elems, (long long)w->replicated_floats);
    }
    free_jobs(jobs, P);
}

/* Rank 1 fails before block 1 while the others already wait in block 1's weight gather. */
static void check_failure(const char *version, const ltx2_dit_weights *full, const problem *q) {
    const int m[4] = {1, 2, 2, 1};
    rank_job jobs[MAX_RANKS];
    const int P = run_mesh(m, full, NULL, NULL, q, 1, jobs);
    for (int r = 0; r < P; r++) {
        const rank_job *j = &jobs[r];
        const ltx2_status want = r == 1 ? LTX2_ERR_INTERNAL : LTX2_ERR_DEVICE;
        CHECK(j->lr.st == want && strstr(j->lr.msg, "injected failure on rank 1"),
              "%s FSDP rank failure, rank %d: status %d, message '%s'", version, r, (int)j->lr.st, j->lr.msg);
    }
    if (P > 0) printf("  %s rank 1 failed at block 1; rank 0 says: %s\n", version, jobs[0].lr.msg);
    free_jobs(jobs, P);
}

static void run_version(const char *version) {
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_st_file *f = NULL;
    ltx2_dit_config cfg;
    ltx2_dit_weights *full = NULL, *rep = NULL;
    ltx2_status st = ltx2_st_open(g_ctx, path, &f);
    if (st == LTX2_OK) st = ltx2_dit_config_from_st(g_ctx, f, &cfg);
    if (st == LTX2_OK) st = ltx2_dit_weights_load(g_ctx, f, NULL, &cfg, &full);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_replicated(g_ctx, f, NULL, &cfg, &rep);
    CHECK(st == LTX2_OK, "load %s: %s", path, ltx2_last_error(g_ctx));
    problem q;
    memset(&q, 0, sizeof q);
    if (st == LTX2_OK && load_problem(version, full, &q)) {
        /* the tiny widths (64 video, 32 audio, 4 heads) divide by every G and T below */
        static const int meshes[][4] = {{1, 2, 1, 1}, {1, 1, 2, 1}, {1, 2, 2, 1}, {1, 2, 1, 2}, {2, 1, 2, 1},
                                        {1, 1, 1, 2}, {2, 2, 2, 1}, {1, 2, 2, 2}, {1, 1, 8, 1}};
        for (size_t k = 0; k < sizeof meshes / sizeof meshes[0]; k++) {
            const int *m = meshes[k];
            check_mesh(version, full, k == 2 ? rep : NULL, f, &q, m[0], m[1], m[2], m[3]);
        }
        check_failure(version, full, &q);
    }
    problem_free(&q);
    ltx2_dit_weights_free(rep);
    ltx2_dit_weights_free(full);
    ltx2_st_close(f);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    run_version("2.0");
    run_version("2.3");
    ltx2_context_free(g_ctx);
    return test_finish();
}
