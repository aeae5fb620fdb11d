/* The parallel DiT on the loopback communicator equals the single-rank CPU forward: the tiny
 * LTX-2.0 and LTX-2.3 checkpoints on the golden inputs of dit_blocks_<v>.safetensors, over meshes
 * of 1-8 ranks mixing data (ragged batch of 3), context (Ulysses and all-gather K/V, ragged and
 * padded token counts) and tensor (heads 4 -> up to 4 ranks), with STG perturbations; profiles gpu,
 * ironwood (trillium's FSDP: tests/test_dit_fsdp.c; here only its refusal of a context x fsdp group
 * that does not divide the model widths); a rank failing mid-run ends every rank with its message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/metrics.h"
#include "dist/comm.h"
#include "model/dit_parallel.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "dit_inputs.h"
#include "loopback_ranks.h"
#include "test_util.h"

/* Tensor parallelism sums the row-parallel GEMMs and the QK-norm's sum of squares in a different
 * order than one rank does: fp32 rounding only, measured rel-L2 around 1e-7 on the tiny model;
 * 1e-5 leaves room for other CPUs' FMA choices while still catching any wrong slice (those give
 * rel-L2 of order 1). Batch and sequence splits must be bitwise. */
#define TP_REL_L2_TOL 1e-5
#define MAX_RANKS LOOPBACK_RANKS_MAX

static ltx2_context *g_ctx;

/* A problem: inputs (owned) and the single-rank reference outputs. */
typedef struct problem {
    int64_t B, Tv, Ta, S, Cv, Ca, Wv, Wa, L;
    float *v_lat, *v_pos, *v_ts, *v_sig, *v_ctx, *a_lat, *a_pos, *a_ts, *a_sig, *a_ctx;
    uint8_t *mask;
    uint32_t *perturb;
    ltx2_dit_forward_params p;
    float *ref_v, *ref_a;
    int64_t nv, na;
} problem;

static void problem_free(problem *q) {
    free(q->v_lat), free(q->v_pos), free(q->v_ts), free(q->v_sig), free(q->v_ctx);
    free(q->a_lat), free(q->a_pos), free(q->a_ts), free(q->a_sig), free(q->a_ctx);
    free(q->mask), free(q->perturb), free(q->ref_v), free(q->ref_a);
}

/* Golden batch of 2 -> batch of 3 (third = first with halved latents and another sigma) and the
 * first Tv video tokens (Tv <= 18), so batch and sequence splits are ragged. Sample 1 skips video
 * self-attention in block 0 and v2a in block 1 (STG / isolation paths). */
static bool make_problem(const ltx2_dit_weights *w, const char *version, int64_t Tv, problem *q) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/golden/data/dit_blocks_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_st_file *f = NULL;
    if (ltx2_st_open(g_ctx, path, &f) != LTX2_OK) {
        CHECK(0, "open %s: %s", path, ltx2_last_error(g_ctx));
        return false;
    }
    memset(q, 0, sizeof *q);
    dit_inputs in;
    bool ok = dit_inputs_load(g_ctx, f, DIT_INPUTS_MASKED, &in);
    CHECK(ok, "%s: golden inputs missing", path);
    if (ok) {
        const float *vl = in.video.latent, *vp = in.video.positions, *vt = in.video.timesteps, *vs = in.video.sigma;
        const float *vc = in.video.context, *al = in.audio.latent, *ap = in.audio.positions;
        const float *at = in.audio.timesteps, *as = in.audio.sigma, *ac = in.audio.context;
        const int64_t B0 = in.B, T0 = in.video.T, B = 3;
        q->B = B, q->Tv = Tv, q->Ta = in.audio.T, q->S = in.S, q->Cv = in.video.C;
        q->Ca = in.audio.C, q->Wv = in.video.W, q->Wa = in.audio.W, q->L = w->cfg.num_layers;
        CHECK(B0 == 2 && Tv <= T0, "golden batch %lld, tokens %lld", (long long)B0, (long long)T0);
        q->v_lat = malloc((size_t)(B * Tv * q->Cv) * sizeof(float));
        q->v_pos = malloc((size_t)(B * 3 * Tv * 2) * sizeof(float));
        q->v_ts = malloc((size_t)(B * Tv) * sizeof(float));
        q->v_sig = malloc((size_t)B * sizeof(float));
        q->v_ctx = malloc((size_t)(B * q->S * q->Wv) * sizeof(float));
        q->a_lat = malloc((size_t)(B * q->Ta * q->Ca) * sizeof(float));
        q->a_pos = malloc((size_t)(B * q->Ta * 2) * sizeof(float));
        q->a_ts = malloc((size_t)(B * q->Ta) * sizeof(float));
        q->a_sig = malloc((size_t)B * sizeof(float));
        q->a_ctx = malloc((size_t)(B * q->S * q->Wa) * sizeof(float));
        q->mask = malloc((size_t)(B * q->S));
        for (int64_t b = 0; b < B; b++) {
            const int64_t s = b < 2 ? b : 0;
            const float k = b < 2 ? 1.0f : 0.5f;
            for (int64_t t = 0; t < Tv; t++) {
                for (int64_t c = 0; c < q->Cv; c++)
                    q->v_lat[(b * Tv + t) * q->Cv + c] = k * vl[(s * T0 + t) * q->Cv + c];
                q->v_ts[b * Tv + t] = b < 2 ? vt[s * T0 + t] : 0.25f;
                for (int64_t ax = 0; ax < 3; ax++)
                    memcpy(q->v_pos + ((b * 3 + ax) * Tv + t) * 2, vp + ((s * 3 + ax) * T0 + t) * 2, 2 * sizeof(float));
            }
            q->v_sig[b] = b < 2 ? vs[s] : 0.25f;
            q->a_sig[b] = b < 2 ? as[s] : 0.25f;
            memcpy(q->v_ctx + b * q->S * q->Wv, vc + s * q->S * q->Wv, (size_t)(q->S * q->Wv) * sizeof(float));
            memcpy(q->a_ctx + b * q->S * q->Wa, ac + s * q->S * q->Wa, (size_t)(q->S * q->Wa) * sizeof(float));
            for (int64_t i = 0; i < q->Ta * q->Ca; i++) q->a_lat[b * q->Ta * q->Ca + i] = k * al[s * q->Ta * q->Ca + i];
            memcpy(q->a_pos + b * q->Ta * 2, ap + s * q->Ta * 2, (size_t)(q->Ta * 2) * sizeof(float));
            for (int64_t t = 0; t < q->Ta; t++) q->a_ts[b * q->Ta + t] = b < 2 ? at[s * q->Ta + t] : 0.25f;
            for (int64_t i = 0; i < q->S; i++) q->mask[b * q->S + i] = in.mask[s * q->S + i];
        }
        q->perturb = calloc((size_t)(B * q->L), sizeof(uint32_t));
        int64_t b0 = 0, b1 = q->L > 1 ? 1 : 0;
        CHECK(ltx2_dit_perturb_set(g_ctx, q->perturb, q->L, 1, LTX2_DIT_SKIP_VIDEO_SELF_ATTN, &b0, 1) == LTX2_OK, "perturb");
        CHECK(ltx2_dit_perturb_set(g_ctx, q->perturb, q->L, 1, LTX2_DIT_SKIP_V2A_CROSS_ATTN, &b1, 1) == LTX2_OK, "perturb");
        ltx2_dit_forward_params_init(&q->p);
        q->p.batch = B;
        q->p.perturb = q->perturb;
        q->p.video = (ltx2_dit_modality){q->v_lat, q->v_pos, q->v_ts, q->v_sig, q->v_ctx, q->mask, Tv, q->S};
        q->p.audio = (ltx2_dit_modality){q->a_lat, q->a_pos, q->a_ts, q->a_sig, q->a_ctx, q->mask, q->Ta, q->S};
        q->nv = B * Tv * w->cfg.out_channels;
        q->na = B * q->Ta * w->cfg.audio_out_channels;
        q->ref_v = malloc((size_t)q->nv * sizeof(float));
        q->ref_a = malloc((size_t)q->na * sizeof(float));
        ltx2_status st = ltx2_dit_forward(g_ctx, w, &q->p, q->ref_v, q->ref_a);
        CHECK(st == LTX2_OK, "reference forward: %s", ltx2_last_error(g_ctx));
        ok = st == LTX2_OK;
    }
    dit_inputs_free(&in);
    ltx2_st_close(f);
    return ok;
}

typedef struct rank_job {
    loopback_rank lr;
    const ltx2_dit_weights *w;
    const problem *q;
    ltx2_dit_parallel_opts opts;
    int fail_rank; /* rank whose on_block fails (-1: none) */
    float *out_v, *out_a;
} rank_job;

static ltx2_status rank_forward(ltx2_context *ctx, ltx2_comm *c, void *arg) {
    rank_job *j = arg;
    if (j->fail_rank >= 0) {
        j->opts.on_block = loopback_fail_at_block1;
        j->opts.on_block_user = &j->fail_rank;
    }
    ltx2_dit_parallel *dp = NULL;
    ltx2_status st = ltx2_dit_parallel_create(ctx, c, j->w, &j->opts, &dp);
    if (st == LTX2_OK) st = ltx2_dit_parallel_forward(ctx, dp, &j->q->p, j->out_v, j->out_a);
    ltx2_dit_parallel_free(dp);
    return st;
}

/* Runs every rank; returns the number of ranks that succeeded. */
static int run_mesh(const ltx2_dit_weights *w, const problem *q, const int m[4], const ltx2_dit_parallel_opts *opts,
                    int fail_rank, rank_job *jobs) {
    const int P = m[0] * m[1] * m[2] * m[3];
    for (int r = 0; r < P; r++) {
        jobs[r] = (rank_job){.w = w, .q = q, .opts = *opts, .fail_rank = fail_rank};
        jobs[r].out_v = calloc((size_t)q->nv, sizeof(float));
        jobs[r].out_a = calloc((size_t)q->na, sizeof(float));
    }
    return loopback_ranks_run(g_ctx, m, rank_forward, jobs, sizeof *jobs);
}

static void free_jobs(rank_job *jobs, int P) {
    for (int r = 0; r < P; r++) free(jobs[r].out_v), free(jobs[r].out_a);
}

static double rel_l2(const float *ref, const float *out, int64_t n) {
    ltx2_tensor a = ltx2_tensor_make((void *)ref, LTX2_F32, 1, &n), b = ltx2_tensor_make((void *)out, LTX2_F32, 1, &n);
    ltx2_diff_stats st;
    ltx2_diff(&a, &b, 0.0, 0.0, &st);
    return st.rel_l2;
}

static void check_mesh(const char *version, const ltx2_dit_weights *w, const problem *q, int d, int f, int c, int t,
                       ltx2_shard_profile prof, ltx2_sp_attention sp) {
    const int m[4] = {d, f, c, t}, P = d * f * c * t;
    ltx2_dit_parallel_opts opts;
    ltx2_dit_parallel_opts_init(&opts);
    opts.profile = prof;
    opts.sp_attention = sp;
    rank_job jobs[MAX_RANKS];
    int ok = run_mesh(w, q, m, &opts, -1, jobs);
    char what[160];
    snprintf(what, sizeof what, "%s Tv=%lld mesh %d,%d,%d,%d %s sp=%d", version, (long long)q->Tv, d, f, c, t,
             ltx2_shard_profile_name(prof), (int)sp);
    CHECK(ok == P, "%s: %d of %d ranks ok; rank 0: %s", what, ok, P, jobs[0].lr.msg);
    for (int r = 0; ok == P && r < P; r++) {
        if (t == 1) {
            CHECK(memcmp(jobs[r].out_v, q->ref_v, (size_t)q->nv * sizeof(float)) == 0, "%s rank %d: video not bitwise "
                  "(rel-L2 %.3g)", what, r, rel_l2(q->ref_v, jobs[r].out_v, q->nv));
            CHECK(memcmp(jobs[r].out_a, q->ref_a, (size_t)q->na * sizeof(float)) == 0, "%s rank %d: audio not bitwise "
                  "(rel-L2 %.3g)", what, r, rel_l2(q->ref_a, jobs[r].out_a, q->na));
        } else {
            double ev = rel_l2(q->ref_v, jobs[r].out_v, q->nv), ea = rel_l2(q->ref_a, jobs[r].out_a, q->na);
            CHECK(ev <= TP_REL_L2_TOL && ea <= TP_REL_L2_TOL, "%s rank %d: rel-L2 video %.3g audio %.3g > %.0e", what,
                  r, ev, ea, TP_REL_L2_TOL);
            if (r == 0) printf("  %s: rel-L2 video %.2g audio %.2g\n", what, ev, ea);
        }
        /* every rank holds the same whole result */
        CHECK(memcmp(jobs[r].out_v, jobs[0].out_v, (size_t)q->nv * sizeof(float)) == 0, "%s: rank %d differs from 0",
              what, r);
    }
    free_jobs(jobs, P);
}

static void check_failure(const ltx2_dit_weights *w, const problem *q) {
    const int m[4] = {1, 1, 2, 2};
    ltx2_dit_parallel_opts opts;
    ltx2_dit_parallel_opts_init(&opts);
    rank_job jobs[MAX_RANKS];
    int ok = run_mesh(w, q, m, &opts, 1, jobs);
    CHECK(ok == 0, "rank failure: %d ranks still reported success", ok);
    CHECK(jobs[1].lr.st == LTX2_ERR_INTERNAL && strstr(jobs[1].lr.msg, "injected failure on rank 1"),
          "failing rank: status %d, message '%s'", (int)jobs[1].lr.st, jobs[1].lr.msg);
    for (int r = 0; r < 4; r++)
        if (r != 1)
            CHECK(jobs[r].lr.st == LTX2_ERR_DEVICE && strstr(jobs[r].lr.msg, "injected failure on rank 1"),
                  "rank %d after rank 1 failed: status %d, message '%s'", r, (int)jobs[r].lr.st, jobs[r].lr.msg);
    free_jobs(jobs, 4);

    /* trillium shards embed over context x fsdp (FSDP, tests/test_dit_fsdp.c); a group that does not
     * divide the widths (64 video, 32 audio) is refused on every rank, naming a tensor and the profile */
    const int m2[4] = {1, 3, 1, 1};
    opts.profile = LTX2_PROFILE_TRILLIUM;
    ok = run_mesh(w, q, m2, &opts, -1, jobs);
    CHECK(ok == 0, "trillium at fsdp=3: %d ranks ok", ok);
    for (int r = 0; r < 3; r++)
        CHECK(strstr(jobs[r].lr.msg, "does not divide") && strstr(jobs[r].lr.msg, "transformer_blocks.") &&
                  strstr(jobs[r].lr.msg, "trillium"),
              "trillium at fsdp=3, rank %d: '%s'", r, jobs[r].lr.msg);
    printf("  trillium at fsdp=3 refused: %s\n", jobs[0].lr.msg);
    free_jobs(jobs, 3);
}

static void run_version(const char *version) {
    char path[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_dit_weights *w = NULL;
    if (ltx2_dit_weights_load_file(g_ctx, path, &w) != LTX2_OK) {
        CHECK(0, "load %s: %s", path, ltx2_last_error(g_ctx));
        return;
    }
    CHECK(w->cfg.heads == 4 && w->cfg.audio_heads == 4, "tiny heads %lld / %lld", (long long)w->cfg.heads,
          (long long)w->cfg.audio_heads);
    const ltx2_shard_profile G = LTX2_PROFILE_GPU, I = LTX2_PROFILE_IRONWOOD;
    /* 18 tokens: even at context 2, padded at 4 (20) and 8 (24); 17 tokens: padded at 2 */
    const int64_t token_counts[2] = {18, 17};
    for (int k = 0; k < 2; k++) {
        problem q;
        if (!make_problem(w, version, token_counts[k], &q)) {
            problem_free(&q);
            continue;
        }
        check_mesh(version, w, &q, 1, 1, 1, 1, G, LTX2_SP_AUTO);
        check_mesh(version, w, &q, 1, 1, 2, 1, G, LTX2_SP_ULYSSES);
        check_mesh(version, w, &q, 1, 1, 2, 1, G, LTX2_SP_ALLGATHER_KV);
        if (k == 0) {
            check_mesh(version, w, &q, 2, 1, 1, 1, G, LTX2_SP_AUTO);
            check_mesh(version, w, &q, 1, 2, 1, 1, I, LTX2_SP_AUTO);
            check_mesh(version, w, &q, 1, 1, 4, 1, G, LTX2_SP_ULYSSES);
            check_mesh(version, w, &q, 1, 1, 8, 1, G, LTX2_SP_AUTO); /* 4 heads: all-gather K/V */
            check_mesh(version, w, &q, 4, 1, 2, 1, G, LTX2_SP_AUTO); /* batch 3 over 4: padded batch */
            check_mesh(version, w, &q, 1, 1, 1, 2, G, LTX2_SP_AUTO);
            check_mesh(version, w, &q, 1, 1, 1, 2, I, LTX2_SP_AUTO);
            check_mesh(version, w, &q, 1, 1, 1, 4, G, LTX2_SP_AUTO);
            check_mesh(version, w, &q, 2, 1, 2, 2, G, LTX2_SP_AUTO);
            check_mesh(version, w, &q, 1, 1, 2, 4, I, LTX2_SP_AUTO);
            check_failure(w, &q);
        } else {
            check_mesh(version, w, &q, 1, 1, 4, 2, G, LTX2_SP_AUTO);
        }
        problem_free(&q);
    }
    ltx2_dit_weights_free(w);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    run_version("2.0");
    run_version("2.3");
    ltx2_context_free(g_ctx);
    return test_finish();
}
