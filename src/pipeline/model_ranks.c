/* A model handle's ranks (see model_ranks.h): one thread per rank, started with the handle, that
 * loads its models and shards once and then waits for steps (a generation, or the end). The main
 * thread posts a step under the mutex and waits until every rank has reported it. */
#include "pipeline/model_ranks.h"

#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/context.h"
#include "pipeline/generate_dist.h"
#include "pipeline/pipeline.h"

typedef struct rank_slot {
    ltx2_model_ranks *t;
    int rank;
    pthread_t th;
    bool started;
} rank_slot;

struct ltx2_model_ranks {
    /* what the ranks load, kept for a reload: the handle's paths (borrowed, they outlive the ranks) */
    const char *const *paths;
    int n;
    char *device; /* NULL: auto */
    const char *wdt;
    ltx2_generate_parallel_opts o;
    int P, threads;
    /* the running ranks */
    ltx2_loopback_world *world;
    rank_slot *slots;
    ltx2_rank_outcome *out; /* [P]: each rank's report of the current step */
    pthread_mutex_t mu;
    pthread_cond_t cv_step, cv_done;
    uint64_t step; /* bumped for every step; the load is step 1 */
    int n_done;    /* ranks done with the current step */
    bool quit, broken;
    const ltx2_generate_params *p; /* the current generation's */
    const ltx2_context *caller;    /* the current step's caller, blocked until every rank reports: its logging */
};

static void report(rank_slot *s, ltx2_context *ctx, ltx2_status st) {
    ltx2_model_ranks *t = s->t;
    pthread_mutex_lock(&t->mu);
    ltx2_rank_outcome_set(&t->out[s->rank], ctx, st);
    t->n_done++;
    pthread_cond_signal(&t->cv_done);
    pthread_mutex_unlock(&t->mu);
}

/* This rank's models on its device: the DiT's replicated part and the other models, then its
 * shards of the blocks (collective). */
static ltx2_status rank_load(ltx2_context *ctx, const ltx2_model_ranks *t, ltx2_comm *c, const ltx2_backend *be,
                             ltx2_pipe_models *m, ltx2_dit_parallel **dp) {
    const bool fp8 = !strcmp(t->wdt, "fp8"), cast = !strcmp(t->wdt, "fp8-cast");
    if (fp8) LTX2_TRY(ltx2_backend_require_fp8_gemm(ctx, be, "model load: fp8 DiT weights"));
    LTX2_TRY(ltx2_pipe_models_load_dit_replicated(ctx, t->paths, t->n, be, NULL, m));
    const ltx2_dit_shard_weights kind = fp8 ? LTX2_DIT_SHARDS_FP8 : cast ? LTX2_DIT_SHARDS_FP8_CAST : LTX2_DIT_SHARDS_PLAIN;
    LTX2_TRY(ltx2_dit_parallel_create_sharded_lora(ctx, c, m->dit, m->set->files[0], NULL, NULL, kind, &t->o.dit, dp));
    m->fp8 = fp8; /* the shards' Linears: what a generation's weights dtype must name */
    m->fp8_cast = cast;
    return LTX2_OK;
}

static void *rank_main(void *arg) {
    rank_slot *s = arg;
    ltx2_model_ranks *t = s->t;
    omp_set_num_threads(t->threads); /* this thread's OpenMP team size */
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (ctx) ltx2_rank_logging(ctx, t->caller, s->rank); /* the load's caller: set before this thread started */
    ltx2_comm *c = NULL;
    const ltx2_backend *be = NULL;
    ltx2_pipe_models m;
    memset(&m, 0, sizeof m);
    ltx2_dit_parallel *dp = NULL;
    ltx2_status st = ltx2_loopback_comm(ctx, t->world, s->rank, &c);
    if (st == LTX2_OK && !ctx) st = LTX2_ERR_OOM;
    char desc[256];
    if (st == LTX2_OK) st = ltx2_backend_open_rank(ctx, t->device, s->rank, &be, desc, sizeof desc);
    if (st == LTX2_OK && s->rank == 0) LTX2_LOGI(ctx, "model: %d ranks, rank 0 device %s", t->P, desc);
    if (st == LTX2_OK) st = rank_load(ctx, t, c, be, &m, &dp);
    if (st != LTX2_OK) {
        if (ctx) ltx2_error_prefix(ctx, "rank %d of %d", s->rank, t->P);
        if (c) ltx2_comm_abort(c, ctx ? ltx2_last_error(ctx) : "out of memory"); /* no rank waits for us */
    }
    report(s, ctx, st);
    for (uint64_t seen = 1;;) {
        pthread_mutex_lock(&t->mu);
        while (!t->quit && t->step == seen) pthread_cond_wait(&t->cv_step, &t->mu);
        const bool quit = t->quit;
        seen = t->step;
        const ltx2_generate_params *p = t->p;
        /* the caller of a step waits for it; at the end there is none (its context may be gone) */
        if (ctx && !quit) ltx2_rank_logging(ctx, t->caller, s->rank);
        ltx2_generate_result *res = &t->out[s->rank].result;
        pthread_mutex_unlock(&t->mu);
        if (quit) break;
        ltx2_generate_dist d = {.world = c, .dit = t->o.dit, .be = be, .device_index = s->rank, .dp = dp};
        st = st == LTX2_OK ? ltx2_generate_ranked_models(ctx, p, &d, &m, res) : st;
        report(s, ctx, st);
    }
    ltx2_dit_parallel_free(dp);
    ltx2_pipe_models_free(&m);
    ltx2_backend_free(be);
    ltx2_comm_free(c);
    ltx2_context_free(ctx);
    return NULL;
}

static void wait_done(ltx2_model_ranks *t) {
    pthread_mutex_lock(&t->mu);
    while (t->n_done < t->P) pthread_cond_wait(&t->cv_done, &t->mu);
    pthread_mutex_unlock(&t->mu);
}

/* Ends the ranks (each frees what it holds) and the communicator. */
static void team_stop(ltx2_model_ranks *t) {
    if (!t->slots) return;
    pthread_mutex_lock(&t->mu);
    t->quit = true;
    t->caller = NULL;
    pthread_cond_broadcast(&t->cv_step);
    pthread_mutex_unlock(&t->mu);
    for (int r = 0; r < t->P; r++)
        if (t->slots[r].started) pthread_join(t->slots[r].th, NULL);
    for (int r = 0; r < t->P; r++) ltx2_generate_result_free(&t->out[r].result);
    free(t->slots);
    free(t->out);
    t->slots = NULL;
    t->out = NULL;
    ltx2_loopback_world_free(t->world);
    t->world = NULL;
}

/* Starts the ranks and waits for their load (step 1). */
static ltx2_status team_start(ltx2_context *ctx, ltx2_model_ranks *t) {
    LTX2_TRY(ltx2_loopback_world_create(ctx, &t->o.mesh,
                                        t->o.timeout_ms > 0 ? t->o.timeout_ms : LTX2_GENERATE_LOOPBACK_TIMEOUT_MS,
                                        &t->world));
    t->slots = calloc((size_t)t->P, sizeof *t->slots);
    t->out = calloc((size_t)t->P, sizeof *t->out);
    if (!t->slots || !t->out) {
        free(t->slots), free(t->out);
        t->slots = NULL, t->out = NULL;
        ltx2_loopback_world_free(t->world);
        t->world = NULL;
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "model load: %d rank records", t->P);
    }
    t->step = 1;
    t->n_done = 0;
    t->quit = t->broken = false;
    t->caller = ctx;
    for (int r = 0; r < t->P; r++) {
        rank_slot *s = &t->slots[r];
        s->t = t;
        s->rank = r;
        if (pthread_create(&s->th, NULL, rank_main, s) != 0) {
            /* the ranks already running would wait for this one in their load: stop them, and count
             * the ranks never started as done */
            ltx2_loopback_world_abort(t->world, "a rank thread could not be started");
            pthread_mutex_lock(&t->mu);
            for (int q = r; q < t->P; q++) {
                t->out[q].st = LTX2_ERR_INTERNAL;
                snprintf(t->out[q].msg, sizeof t->out[q].msg, "model load: the thread of rank %d did not start", r);
            }
            t->n_done += t->P - r;
            pthread_mutex_unlock(&t->mu);
            break;
        }
        s->started = true;
    }
    wait_done(t);
    const ltx2_status st = ltx2_rank_outcomes_collect(ctx, t->out, t->P, NULL);
    if (st != LTX2_OK) team_stop(t);
    return st;
}

int ltx2_model_ranks_count(const ltx2_model_ranks *t) { return t ? t->P : 0; }

void ltx2_model_ranks_free(ltx2_model_ranks *t) {
    if (!t) return;
    team_stop(t);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv_step);
    pthread_cond_destroy(&t->cv_done);
    free(t->device);
    free(t);
}

ltx2_status ltx2_model_ranks_load(ltx2_context *ctx, const char *const *paths, int n, const char *device,
                                  const char *wdt, const ltx2_generate_parallel_opts *o, ltx2_model_ranks **out) {
    *out = NULL;
    ltx2_model_ranks *t = calloc(1, sizeof *t);
    if (!t) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "model load: ranks");
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv_step, NULL);
    pthread_cond_init(&t->cv_done, NULL);
    t->o = *o;
    t->wdt = wdt;
    t->P = ltx2_mesh_world_size(&o->mesh);
    t->threads = ltx2_rank_threads(o, t->P);
    t->paths = paths;
    t->n = n;
    if (device && !(t->device = malloc(strlen(device) + 1))) {
        ltx2_model_ranks_free(t);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "model load: device %s", device);
    }
    if (device) memcpy(t->device, device, strlen(device) + 1);
    const ltx2_status st = team_start(ctx, t);
    if (st != LTX2_OK) {
        ltx2_model_ranks_free(t);
        return st;
    }
    *out = t;
    return LTX2_OK;
}

ltx2_status ltx2_model_ranks_generate(ltx2_context *ctx, ltx2_model_ranks *t, const ltx2_generate_params *p,
                                      ltx2_generate_result *result) {
    memset(result, 0, sizeof *result);
    if (t->broken || !t->slots) {
        /* the last call aborted the communicator (or its reload failed): load the ranks again */
        LTX2_LOGI(ctx, "model: loading its %d ranks again after a failed generation", t->P);
        team_stop(t);
        LTX2_TRY(team_start(ctx, t));
    }
    pthread_mutex_lock(&t->mu);
    t->p = p;
    t->caller = ctx;
    t->n_done = 0;
    t->step++;
    pthread_cond_broadcast(&t->cv_step);
    pthread_mutex_unlock(&t->mu);
    wait_done(t);
    const ltx2_status st = ltx2_rank_outcomes_collect(ctx, t->out, t->P, result);
    t->broken = st != LTX2_OK;
    return st;
}
