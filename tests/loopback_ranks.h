/* In-process ranks for the parallel tests: one thread per rank of a mesh over one loopback world,
 * each with its own context and communicator, running the test's rank function on its job. A job
 * struct starts with a `loopback_rank` (status and message of that rank); the rest is the test's. */
#ifndef LTX2_TESTS_LOOPBACK_RANKS_H
#define LTX2_TESTS_LOOPBACK_RANKS_H

#include <omp.h>
#include <pthread.h>
#include <stdio.h>

#include "core/context.h"
#include "dist/comm.h"
#include "test_util.h"

/* Ranks abort each other within milliseconds; this only bounds a broken abort path. */
#define LOOPBACK_RANKS_TIMEOUT_MS 30000
/* The largest mesh any parallel test runs. */
#define LOOPBACK_RANKS_MAX 8

typedef struct loopback_rank {
    int rank;
    ltx2_status st;           /* the rank function's result, or the communicator's setup failure */
    char msg[LTX2_ERROR_CAP]; /* the rank's last error when st is not LTX2_OK */
} loopback_rank;

/* What a rank runs; its status lands in job->st, the context's message in job->msg. */
typedef ltx2_status (*loopback_rank_fn)(ltx2_context *ctx, ltx2_comm *comm, void *job);

typedef struct loopback_thread {
    ltx2_loopback_world *world;
    loopback_rank *job;
    loopback_rank_fn fn;
} loopback_thread;

static void *loopback_rank_main(void *arg) {
    const loopback_thread *t = arg;
    loopback_rank *j = t->job;
    omp_set_num_threads(1); /* the ranks are the parallelism: 2 cores are shared by up to 8 of them */
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_comm *c = NULL;
    j->msg[0] = '\0';
    j->st = ctx ? ltx2_loopback_comm(ctx, t->world, j->rank, &c) : LTX2_ERR_OOM;
    if (j->st == LTX2_OK) j->st = t->fn(ctx, c, j);
    if (j->st != LTX2_OK) snprintf(j->msg, sizeof j->msg, "%s", ctx ? ltx2_last_error(ctx) : "no context");
    ltx2_comm_free(c);
    ltx2_context_free(ctx);
    return NULL;
}

/* A per-block hook (the parallel DiT's on_block) that injects a failure on rank *user before
 * block 1, while the other ranks wait in that block's collectives. */
static inline ltx2_status loopback_fail_at_block1(ltx2_context *ctx, int rank, int64_t block, void *user) {
    if (rank == *(const int *)user && block == 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "injected failure on rank %d at block %lld", rank, (long long)block);
    return LTX2_OK;
}

/* Runs fn on every rank of mesh m (data, fsdp, context, tensor). jobs holds the world's ranks
 * consecutively, job_size bytes apart, each already filled in by the caller (rank is set here).
 * Returns how many ranks ended with LTX2_OK; -1 (and a failed check) if the world could not be made. */
static int loopback_ranks_run(ltx2_context *ctx, const int m[4], loopback_rank_fn fn, void *jobs, size_t job_size) {
    ltx2_mesh mesh;
    ltx2_loopback_world *world = NULL;
    if (ltx2_mesh_init(ctx, &mesh, m[0], m[1], m[2], m[3]) != LTX2_OK ||
        ltx2_loopback_world_create(ctx, &mesh, LOOPBACK_RANKS_TIMEOUT_MS, &world) != LTX2_OK) {
        CHECK(0, "mesh %d,%d,%d,%d: %s", m[0], m[1], m[2], m[3], ltx2_last_error(ctx));
        return -1;
    }
    const int P = ltx2_mesh_world_size(&mesh);
    if (P > LOOPBACK_RANKS_MAX) {
        CHECK(0, "mesh %d,%d,%d,%d: %d ranks, at most %d", m[0], m[1], m[2], m[3], P, LOOPBACK_RANKS_MAX);
        ltx2_loopback_world_free(world);
        return -1;
    }
    pthread_t th[LOOPBACK_RANKS_MAX];
    loopback_thread t[LOOPBACK_RANKS_MAX];
    for (int r = 0; r < P; r++) {
        t[r] = (loopback_thread){.world = world, .job = (loopback_rank *)((char *)jobs + (size_t)r * job_size),
                                 .fn = fn};
        t[r].job->rank = r;
        pthread_create(&th[r], NULL, loopback_rank_main, &t[r]);
    }
    int ok = 0;
    for (int r = 0; r < P; r++) {
        pthread_join(th[r], NULL);
        ok += t[r].job->st == LTX2_OK;
    }
    ltx2_loopback_world_free(world);
    return ok;
}

#endif
