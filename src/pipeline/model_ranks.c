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
    ltx2_status st; /* of the last step */
    char msg[LTX2_ERROR_CAP];
    ltx2_generate_result result;
} rank_slot;

struct ltx2_model_ranks {
    /* what the ranks load, kept for a reload */
    char **paths;
    int n;
    char *device; /* NULL: auto */
    const char *wdt;
    ltx2_generate_parallel_opts o;
    int P, threads, loads;
    /* the running ranks */
    ltx2_loopback_world *world;
    rank_slot *slots;
    pthread_mutex_t mu;
    pthread_cond_t cv_step, cv_done;
    uint64_t step; /* bumped for every step; the load is step 1 */
    int n_done;    /* ranks done with the current step */
    bool quit, broken;
    const ltx2_generate_params *p; /* the current generation's */
    /* the caller's logging for the current step (rank 0 at its level, the others warnings only) */
    ltx2_log_fn log_fn;
    void *log_user;
    ltx2_log_level log_level;
};

static void report(rank_slot *s, ltx2_context *ctx, ltx2_status st) {
    ltx2_model_ranks *t = s->t;
    pthread_mutex_lock(&t->mu);
    s->st = st;
    if (st != LTX2_OK) snprintf(s->msg, sizeof s->msg, "%s", ctx ? ltx2_last_error(ctx) : "out of memory");
    t->n_done++;
    pthread_cond_signal(&t->cv_done);
    pthread_mutex_unlock(&t->mu);
}

static void take_logging(const ltx2_model_ranks *t, int rank, ltx2_context *ctx) {
    ctx->log_fn = t->log_fn;
    ctx->log_user = t->log_user;
    ctx->log_level = rank == 0 || t->log_level < LTX2_LOG_WARN ? t->log_level : LTX2_LOG_WARN;
}

/* This rank's models on its device: the DiT's replicated part and the other models, then its
 * shards of the blocks (collective). */
static ltx2_status rank_load(ltx2_context *ctx, const ltx2_model_ranks *t, ltx2_comm *c, const ltx2_backend *be,
                             ltx2_pipe_models *m, ltx2_dit_parallel **dp) {
    const bool fp8 = !strcmp(t->wdt, "fp8"), cast = !strcmp(t->wdt, "fp8-cast");
    if (fp8) LTX2_TRY(ltx2_backend_require_fp8_gemm(ctx, be, "model load: fp8 DiT weights"));
    LTX2_TRY(ltx2_pipe_models_load_dit_replicated(ctx, (const char *const *)t->paths, t->n, be, NULL, m));
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
    ltx2_context_params cp;
    ltx2_context_params_init(&cp);
    ltx2_context *ctx = ltx2_context_create(&cp);
    if (ctx) take_logging(t, s->rank, ctx); /* the load's: set before this thread started */
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
        if (ctx) take_logging(t, s->rank, ctx);
        pthread_mutex_unlock(&t->mu);
        if (quit) break;
        ltx2_generate_dist d = {.world = c, .dit = t->o.dit, .be = be, .device_index = s->rank, .dp = dp};
        ltx2_generate_result_free(&s->result);
        st = st == LTX2_OK ? ltx2_generate_ranked_models(ctx, p, &d, &m, &s->result) : st;
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

/* The step's outcome on ctx: OK, or the reason of the rank where the failure started (the others
 * only say the communicator was aborted). */
static ltx2_status outcome(ltx2_context *ctx, const ltx2_model_ranks *t) {
    int origin = -1;
    for (int r = 0; r < t->P; r++) {
        const rank_slot *s = &t->slots[r];
        if (s->st != LTX2_OK && (origin < 0 || (strstr(t->slots[origin].msg, "communicator aborted") &&
                                                !strstr(s->msg, "communicator aborted"))))
            origin = r;
    }
    if (origin < 0) return LTX2_OK;
    if (ctx) {
        ctx->last_status = t->slots[origin].st;
        snprintf(ctx->last_error, sizeof ctx->last_error, "%s", t->slots[origin].msg);
    }
    return t->slots[origin].st;
}

/* Ends the ranks (each frees what it holds) and the communicator. */
static void team_stop(ltx2_model_ranks *t) {
    if (!t->slots) return;
    pthread_mutex_lock(&t->mu);
    t->quit = true;
    pthread_cond_broadcast(&t->cv_step);
    pthread_mutex_unlock(&t->mu);
    for (int r = 0; r < t->P; r++)
        if (t->slots[r].started) pthread_join(t->slots[r].th, NULL);
    for (int r = 0; r < t->P; r++) ltx2_generate_result_free(&t->slots[r].result);
    free(t->slots);
    t->slots = NULL;
    ltx2_loopback_world_free(t->world);
    t->world = NULL;
}

static void take_caller_logging(ltx2_model_ranks *t, const ltx2_context *ctx) {
    t->log_fn = ctx ? ctx->log_fn : NULL;
    t->log_user = ctx ? ctx->log_user : NULL;
    t->log_level = ctx ? ctx->log_level : LTX2_LOG_INFO;
}

/* Starts the ranks and waits for their load (step 1). */
static ltx2_status team_start(ltx2_context *ctx, ltx2_model_ranks *t) {
    LTX2_TRY(ltx2_loopback_world_create(ctx, &t->o.mesh,
                                        t->o.timeout_ms > 0 ? t->o.timeout_ms : LTX2_GENERATE_LOOPBACK_TIMEOUT_MS,
                                        &t->world));
    t->slots = calloc((size_t)t->P, sizeof *t->slots);
    if (!t->slots) {
        ltx2_loopback_world_free(t->world);
        t->world = NULL;
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "model load: %d rank records", t->P);
    }
    t->step = 1;
    t->n_done = 0;
    t->quit = t->broken = false;
    take_caller_logging(t, ctx);
    for (int r = 0; r < t->P; r++) {
        rank_slot *s = &t->slots[r];
        s->t = t;
        s->rank = r;
        if (pthread_create(&s->th, NULL, rank_main, s) != 0) {
            /* the ranks already running would wait for this one in their load: stop them, and count
             * the ranks never started as done */
            ltx2_comm *c0 = NULL;
            if (ltx2_loopback_comm(ctx, t->world, r, &c0) == LTX2_OK) {
                ltx2_comm_abort(c0, "a rank thread could not be started");
                ltx2_comm_free(c0);
            }
            pthread_mutex_lock(&t->mu);
            for (int q = r; q < t->P; q++) {
                t->slots[q].st = LTX2_ERR_INTERNAL;
                snprintf(t->slots[q].msg, sizeof t->slots[q].msg, "model load: the thread of rank %d did not start", r);
            }
            t->n_done += t->P - r;
            pthread_mutex_unlock(&t->mu);
            break;
        }
        s->started = true;
    }
    wait_done(t);
    t->loads++;
    const ltx2_status st = outcome(ctx, t);
    if (st != LTX2_OK) team_stop(t);
    return st;
}

int ltx2_model_ranks_loads(const ltx2_model_ranks *t) { return t ? t->loads : 0; }
int ltx2_model_ranks_count(const ltx2_model_ranks *t) { return t ? t->P : 0; }

void ltx2_model_ranks_free(ltx2_model_ranks *t) {
    if (!t) return;
    team_stop(t);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv_step);
    pthread_cond_destroy(&t->cv_done);
    for (int i = 0; i < t->n; i++) free(t->paths[i]);
    free(t->paths);
    free(t->device);
    free(t);
}

static char *dup_str(const char *s) {
    if (!s) return NULL;
    const size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
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
    t->threads = o->threads_per_rank > 0 ? o->threads_per_rank : omp_get_max_threads() / t->P;
    if (t->threads < 1) t->threads = 1;
    t->paths = calloc((size_t)n, sizeof *t->paths);
    bool ok = t->paths && (!device || (t->device = dup_str(device)));
    for (int i = 0; ok && i < n; i++) ok = (t->paths[i] = dup_str(paths[i])) != NULL;
    t->n = t->paths ? n : 0;
    if (!ok) {
        ltx2_model_ranks_free(t);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "model load: %s", paths[0]);
    }
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
    take_caller_logging(t, ctx);
    t->n_done = 0;
    t->step++;
    pthread_cond_broadcast(&t->cv_step);
    pthread_mutex_unlock(&t->mu);
    wait_done(t);
    const ltx2_status st = outcome(ctx, t);
    if (st == LTX2_OK) {
        *result = t->slots[0].result;
        memset(&t->slots[0].result, 0, sizeof t->slots[0].result);
    } else {
        t->broken = true;
    }
    for (int r = 0; r < t->P; r++) ltx2_generate_result_free(&t->slots[r].result);
    return st;
}
