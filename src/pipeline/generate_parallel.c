/* Multi-rank generation launchers (see generate_parallel.h): loopback threads and one process of
 * an environment-described NCCL job. */
#include "pipeline/generate_parallel.h"

#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/context.h"
#include "pipeline/generate_dist.h"

void ltx2_generate_parallel_opts_init(ltx2_generate_parallel_opts *o) {
    memset(o, 0, sizeof *o);
    for (int a = 0; a < LTX2_AXIS_COUNT; a++) o->mesh.size[a] = 1;
    ltx2_dit_parallel_opts_init(&o->dit);
}

_Static_assert(LTX2_RANK_MSG_CAP == LTX2_ERROR_CAP, "a rank's reason holds its context's whole error");

int ltx2_rank_threads(const ltx2_generate_parallel_opts *o, int P) {
    const int n = o->threads_per_rank > 0 ? o->threads_per_rank : omp_get_max_threads() / P;
    return n < 1 ? 1 : n;
}

void ltx2_rank_logging(ltx2_context *ctx, const ltx2_context *parent, int rank) {
    if (!parent) return;
    ctx->log_fn = parent->log_fn;
    ctx->log_user = parent->log_user;
    ctx->log_level = rank == 0 || parent->log_level < LTX2_LOG_WARN ? parent->log_level : LTX2_LOG_WARN;
}

void ltx2_rank_outcome_set(ltx2_rank_outcome *o, ltx2_context *ctx, ltx2_status st) {
    o->st = st;
    if (st != LTX2_OK)
        snprintf(o->msg, sizeof o->msg, "%s", ctx ? ltx2_last_error(ctx) : "out of memory for the rank's context");
}

ltx2_status ltx2_rank_outcomes_collect(ltx2_context *ctx, ltx2_rank_outcome *o, int P, ltx2_generate_result *result) {
    int origin = -1;
    for (int r = 0; r < P; r++)
        if (o[r].st != LTX2_OK && (origin < 0 || (strstr(o[origin].msg, "communicator aborted") &&
                                                  !strstr(o[r].msg, "communicator aborted"))))
            origin = r;
    ltx2_status st = LTX2_OK;
    if (origin >= 0) {
        st = o[origin].st;
        if (ctx) {
            ctx->last_status = st;
            snprintf(ctx->last_error, sizeof ctx->last_error, "%s", o[origin].msg);
        }
    } else if (result) {
        *result = o[0].result;
        memset(&o[0].result, 0, sizeof o[0].result);
    }
    for (int r = 0; r < P; r++) ltx2_generate_result_free(&o[r].result);
    return st;
}

typedef struct rank_job {
    ltx2_loopback_world *world;
    int rank, threads;
    const ltx2_generate_params *p;
    const ltx2_generate_parallel_opts *o;
    const ltx2_context *parent;
    ltx2_rank_outcome *out;
} rank_job;

static void *rank_main(void *arg) {
    rank_job *j = arg;
    omp_set_num_threads(j->threads); /* per-thread setting: this rank's OpenMP team size */
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) {
        ltx2_rank_outcome_set(j->out, NULL, LTX2_ERR_OOM);
        return NULL;
    }
    ltx2_rank_logging(ctx, j->parent, j->rank);
    ltx2_comm *c = NULL;
    ltx2_status st = ltx2_loopback_comm(ctx, j->world, j->rank, &c);
    if (st == LTX2_OK) {
        /* each thread its own GPU while there are enough (ltx2_backend_open_rank) */
        ltx2_generate_dist d = {.world = c, .dit = j->o->dit, .device_index = j->rank};
        st = ltx2_generate_ranked(ctx, j->p, &d, &j->out->result);
    }
    ltx2_rank_outcome_set(j->out, ctx, st);
    ltx2_comm_free(c);
    ltx2_context_free(ctx);
    return NULL;
}

ltx2_status ltx2_generate_loopback(ltx2_context *ctx, const ltx2_generate_params *p,
                                   const ltx2_generate_parallel_opts *o, ltx2_generate_result *result) {
    if (!p || !o || !result) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel generate: NULL argument");
    memset(result, 0, sizeof *result);
    ltx2_mesh mesh;
    LTX2_TRY(ltx2_mesh_init(ctx, &mesh, o->mesh.size[0], o->mesh.size[1], o->mesh.size[2], o->mesh.size[3]));
    const int P = ltx2_mesh_world_size(&mesh);
    ltx2_loopback_world *world = NULL;
    LTX2_TRY(ltx2_loopback_world_create(ctx, &mesh, o->timeout_ms > 0 ? o->timeout_ms : LTX2_GENERATE_LOOPBACK_TIMEOUT_MS,
                                        &world));
    rank_job *jobs = calloc((size_t)P, sizeof *jobs);
    ltx2_rank_outcome *outs = calloc((size_t)P, sizeof *outs);
    pthread_t *th = calloc((size_t)P, sizeof *th);
    bool *started = calloc((size_t)P, sizeof *started);
    ltx2_status st = jobs && outs && th && started
                         ? LTX2_OK
                         : LTX2_ERROR(ctx, LTX2_ERR_OOM, "parallel generate: %d rank records", P);
    const int threads = ltx2_rank_threads(o, P);
    for (int r = 0; r < P && st == LTX2_OK; r++) {
        jobs[r] = (rank_job){.world = world, .rank = r, .threads = threads, .p = p, .o = o, .parent = ctx,
                             .out = &outs[r]};
        if (pthread_create(&th[r], NULL, rank_main, &jobs[r]) != 0) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "parallel generate: cannot start the thread of rank %d", r);
            ltx2_loopback_world_abort(world, "a rank thread could not be started"); /* the others wait for it */
            break;
        }
        started[r] = true;
    }
    for (int r = 0; r < P && th; r++)
        if (started[r]) pthread_join(th[r], NULL);
    if (outs) {
        const ltx2_status ranks_st = ltx2_rank_outcomes_collect(st == LTX2_OK ? ctx : NULL, outs, P,
                                                                st == LTX2_OK ? result : NULL);
        if (st == LTX2_OK) st = ranks_st;
    }
    free(jobs);
    free(outs);
    free(th);
    free(started);
    ltx2_loopback_world_free(world);
    return st;
}

ltx2_status ltx2_generate_env_rank(ltx2_context *ctx, const ltx2_generate_params *p,
                                   const ltx2_generate_parallel_opts *o, const ltx2_dist_env *env,
                                   ltx2_generate_result *result) {
    if (!p || !o || !env || !result) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel generate: NULL argument");
    memset(result, 0, sizeof *result);
    const int P = ltx2_mesh_world_size(&o->mesh);
    if (P != env->world_size)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel generate: the mesh %d,%d,%d,%d has %d ranks but "
                          "LTX2_WORLD_SIZE is %d", o->mesh.size[0], o->mesh.size[1], o->mesh.size[2], o->mesh.size[3], P,
                          env->world_size);
    if (p->device && !strncmp(p->device, "cuda:", 5))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "rank %d of %d: --device %s would put every process on one GPU; "
                          "each process rank computes on the GPU of its local rank: use --device cuda",
                          env->rank, env->world_size, p->device);
#ifndef LTX2_HAVE_NCCL
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "rank %d of %d: multi-process generation needs the NCCL communicator, "
                      "which this build lacks (configure with -DLTX2_CUDA=ON and NCCL installed); on one machine use "
                      "--nproc N without LTX2_WORLD_SIZE for in-process ranks", env->rank, env->world_size);
#else
    unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES];
    memset(id, 0, sizeof id);
    if (env->comm_id[0]) {
        LTX2_TRY(ltx2_comm_nccl_unique_id(ctx, id)); /* NCCL_COMM_ID: every rank derives the same id */
    } else {
        if (env->rank == 0) LTX2_TRY(ltx2_comm_nccl_unique_id(ctx, id));
        LTX2_TRY(ltx2_dist_rendezvous(ctx, env->rendezvous, env->rank, env->world_size, id, sizeof id, 0));
    }
    /* one GPU per local rank, round-robin when there are more ranks than GPUs (NCCL >= 2.30 with
     * NCCL_MULTI_RANK_GPU_ENABLE=1 accepts several ranks on one GPU); the rank computes there too,
     * unless --device cpu */
    const int n_dev = ltx2_backend_cuda_device_count();
    if (n_dev < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "rank %d of %d: no usable CUDA device for its NCCL communicator",
                          env->rank, env->world_size);
    const int gpu = env->local_rank % n_dev;
    const ltx2_backend *be = NULL;
    char desc[256];
    LTX2_TRY(ltx2_backend_open_rank(ctx, p->device, gpu, &be, desc, sizeof desc));
    ltx2_comm *c = NULL;
    ltx2_status st = ltx2_comm_nccl_init(ctx, &o->mesh, env->rank, gpu, id, &c);
    /* device buffers go to NCCL as they are: its stream waits for the rank's compute stream */
    void *stream = ltx2_backend_cuda_stream(be);
    if (st == LTX2_OK && stream) st = ltx2_comm_nccl_set_stream(c, ctx, stream);
    if (st == LTX2_OK) {
        if (env->rank == 0) LTX2_LOGI(ctx, "generate: rank 0 device %s", desc);
        ltx2_generate_dist d = {.world = c, .dit = o->dit, .be = be, .device_index = gpu};
        st = ltx2_generate_ranked(ctx, p, &d, result);
    }
    ltx2_comm_free(c);
    ltx2_backend_free(be);
    return st;
#endif
}
