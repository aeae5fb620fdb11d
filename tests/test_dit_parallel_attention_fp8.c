/* The parallel DiT with e4m3 attention (ltx2_dit_forward_params.attention_fp8) equals the one-rank
 * forward bit for bit on the CPU, as it does without: a model whose video heads have head dim 128
 * (dit_fp8_attn_model.h) over meshes of data (the batch split), context (Ulysses, and all-gather
 * K/V with 300 tokens padded to 304 over 8 ranks: the padded keys are masked, and the quantisation's
 * statistics leave masked keys out) and both; and fp8 attention does move the output (it is applied
 * on every path). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "dist/comm.h"
#include "dit_fp8_attn_model.h"
#include "loopback_ranks.h"
#include "model/dit_parallel.h"
#include "test_util.h"

static ltx2_context *g_ctx;

typedef struct rank_job {
    loopback_rank lr;
    const f8m_model *m;
    ltx2_dit_parallel_opts opts;
    float *out_v, *out_a;
} rank_job;

static ltx2_status rank_forward(ltx2_context *ctx, ltx2_comm *c, void *arg) {
    rank_job *j = arg;
    ltx2_dit_parallel *dp = NULL;
    ltx2_dit_forward_params p = j->m->p;
    p.attention_fp8 = true;
    ltx2_status st = ltx2_dit_parallel_create(ctx, c, j->m->w, &j->opts, &dp);
    if (st == LTX2_OK) st = ltx2_dit_parallel_forward(ctx, dp, &p, j->out_v, j->out_a);
    ltx2_dit_parallel_free(dp);
    return st;
}

/* Every rank of mesh (d, 1, c, 1) with attention split sp: each rank's whole result must be ref's. */
static void check_mesh(const f8m_model *m, int d, int c, ltx2_sp_attention sp, const float *ref_v, const float *ref_a) {
    const int mesh[4] = {d, 1, c, 1}, P = d * c;
    rank_job jobs[LOOPBACK_RANKS_MAX];
    for (int r = 0; r < P; r++) {
        jobs[r] = (rank_job){.m = m};
        ltx2_dit_parallel_opts_init(&jobs[r].opts);
        jobs[r].opts.sp_attention = sp;
        jobs[r].out_v = calloc((size_t)m->nv, sizeof(float));
        jobs[r].out_a = calloc((size_t)m->na, sizeof(float));
    }
    const int ok = loopback_ranks_run(g_ctx, mesh, rank_forward, jobs, sizeof *jobs);
    CHECK(ok == P, "mesh %d,1,%d,1 sp=%d: %d of %d ranks ok; rank 0: %s", d, c, (int)sp, ok, P, jobs[0].lr.msg);
    int same = 0;
    for (int r = 0; ok == P && r < P; r++) {
        const bool eq = memcmp(jobs[r].out_v, ref_v, (size_t)m->nv * sizeof(float)) == 0 &&
                        memcmp(jobs[r].out_a, ref_a, (size_t)m->na * sizeof(float)) == 0;
        CHECK(eq, "mesh %d,1,%d,1 sp=%d rank %d: not bitwise the one-rank fp8 forward", d, c, (int)sp, r);
        same += eq;
    }
    printf("  mesh %d,1,%d,1 sp=%d: %d of %d ranks bitwise\n", d, c, (int)sp, same, P);
    for (int r = 0; r < P; r++) free(jobs[r].out_v), free(jobs[r].out_a);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    f8m_model m;
    if (!f8m_make(g_ctx, &m)) {
        ltx2_context_free(g_ctx);
        return test_finish();
    }
    float *v0 = malloc((size_t)m.nv * sizeof(float)), *a0 = malloc((size_t)m.na * sizeof(float));
    float *v8 = malloc((size_t)m.nv * sizeof(float)), *a8 = malloc((size_t)m.na * sizeof(float));
    ltx2_status st = ltx2_dit_forward(g_ctx, m.w, &m.p, v0, a0);
    m.p.attention_fp8 = true;
    if (st == LTX2_OK) st = ltx2_dit_forward(g_ctx, m.w, &m.p, v8, a8);
    m.p.attention_fp8 = false;
    CHECK(st == LTX2_OK, "one-rank forwards: %s", ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        CHECK(memcmp(v0, v8, (size_t)m.nv * sizeof(float)) != 0, "fp8 attention left the one-rank output unchanged");
        printf("e4m3 attention over ranks, against the one-rank fp8 forward:\n");
        check_mesh(&m, 2, 1, LTX2_SP_AUTO, v8, a8);
        check_mesh(&m, 1, 2, LTX2_SP_ULYSSES, v8, a8);
        check_mesh(&m, 1, 2, LTX2_SP_ALLGATHER_KV, v8, a8);
        check_mesh(&m, 1, 8, LTX2_SP_AUTO, v8, a8); /* 2 heads over 8: all-gather K/V, 300 -> 304 tokens */
        check_mesh(&m, 2, 2, LTX2_SP_AUTO, v8, a8);
    }
    free(v0), free(a0), free(v8), free(a8);
    f8m_free(&m);
    ltx2_context_free(g_ctx);
    return test_finish();
}
