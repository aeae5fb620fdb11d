/* The NCCL communicator against the loopback one: the same collectives (all_gather,
 * reduce_scatter, all_reduce, all_to_all, broadcast, an axis sub-communicator's all_reduce; f32
 * and bf16) on the same per-rank inputs, on device buffers and on host buffers (which comm_nccl
 * stages through device scratch, as the CPU pipeline's sharded DiT hands it), with 1 rank and with
 * 2 ranks as threads sharing GPU 0
 * (NCCL_MULTI_RANK_GPU_ENABLE=1, NCCL >= 2.30), then a rank that aborts while its peer waits in a
 * collective: the peer must return an error within the timeout, not hang.
 * f32 results must be bitwise equal (with one or two ranks every sum is a single commutative
 * addition); bf16 sums within one bf16 ulp (NCCL rounds per step, loopback once). Skips (77)
 * without NCCL in the build or without a CUDA device. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "dist/comm.h"
#include "test_util.h"

#ifndef LTX2_HAVE_NCCL
int main(void) {
    printf("skipped: this build has no NCCL (configure with CUDA and NCCL present)\n");
    return 77;
}
#else
#include <cuda_runtime.h>
#include <nccl.h>

/* Elements per rank block: odd, so no collective hides a partial-vector tail. */
#define BLOCK 1001
/* How many results each rank records (see run_rank). */
#define N_RESULTS 12
/* Peer wait of the NCCL ranks: generous for the collectives (a first NCCL init on a fresh machine
 * takes seconds), short for the abort case, which waits it out. */
#define RUN_TIMEOUT_MS "60000"
#define ABORT_TIMEOUT_MS "8000"
/* One bf16 ulp relative to the value (2^-7 at the top of a binade, 2^-8 at the bottom). */
#define BF16_REL_ULP 0.0078125
/* The first NCCL that runs several ranks on one GPU (NCCL_MULTI_RANK_GPU_ENABLE), as ncclGetVersion
 * encodes it (major * 10000 + minor * 100 + patch). */
#define NCCL_MULTI_RANK_GPU_VERSION 23000

typedef struct result {
    float *v;
    size_t n;
} result;

typedef struct rank_job {
    int rank;
    ltx2_mesh mesh;
    bool nccl;
    bool device_bufs;                   /* nccl: device buffers (else host ones, staged by comm_nccl) */
    const unsigned char *id;            /* NCCL unique id (nccl) */
    ltx2_loopback_world *world;         /* loopback */
    pthread_barrier_t *setup;           /* every rank has its buffers before any collective */
    cudaStream_t compute;               /* this rank's compute stream (nccl) */
    result res[N_RESULTS];
    ltx2_status st;
    char msg[512];
} rank_job;

static float input_value(int rank, int which, size_t i) {
    return sinf(0.37f * (float)i + 1.7f * (float)which) * (float)(1 + rank) + 0.25f * (float)rank;
}

/* Host staging of one buffer: f32 values, or bf16 when dt says so (converted in place). */
typedef struct buf {
    void *host;
    void *dev; /* NULL on the loopback backend: collectives use host */
    size_t n;
    ltx2_dtype dt;
} buf;

static size_t esize(ltx2_dtype dt) { return dt == LTX2_BF16 ? 2 : 4; }

static ltx2_status buf_make(ltx2_context *ctx, buf *b, size_t n, ltx2_dtype dt, int rank, int which, bool dev) {
    memset(b, 0, sizeof *b);
    b->n = n;
    b->dt = dt;
    float *f = malloc(n * sizeof(float));
    b->host = malloc(n * esize(dt));
    if (!f || !b->host) {
        free(f);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "test buffer");
    }
    for (size_t i = 0; i < n; i++) f[i] = which < 0 ? 0.0f : input_value(rank, which, i);
    ltx2_status st = ltx2_convert(ctx, b->host, dt, f, LTX2_F32, n);
    free(f);
    if (st != LTX2_OK || !dev) return st;
    if (cudaMalloc(&b->dev, n * esize(dt)) != cudaSuccess ||
        cudaMemcpy(b->dev, b->host, n * esize(dt), cudaMemcpyHostToDevice) != cudaSuccess)
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "test buffer upload");
    return LTX2_OK;
}

static void *ptr(const buf *b) { return b->dev ? b->dev : b->host; }

static void buf_free(buf *b) {
    if (b->dev) cudaFree(b->dev);
    free(b->host);
}

/* Downloads b (if on the device) and keeps it as f32. */
static ltx2_status keep(ltx2_context *ctx, rank_job *j, int slot, const buf *b) {
    if (b->dev && cudaStreamSynchronize(j->compute) != cudaSuccess)
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "test compute stream sync");
    if (b->dev && cudaMemcpy(b->host, b->dev, b->n * esize(b->dt), cudaMemcpyDeviceToHost) != cudaSuccess)
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "test download");
    result *r = &j->res[slot];
    r->n = b->n;
    r->v = malloc(b->n * sizeof(float));
    if (!r->v) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "test result");
    return ltx2_convert(ctx, r->v, LTX2_F32, b->host, b->dt, b->n);
}

/* Every collective once per dtype, recording the outputs in slots 0..N_RESULTS-1. */
static ltx2_status run_collectives(ltx2_context *ctx, rank_job *j, ltx2_comm *c) {
    const int P = c->size;
    const ltx2_dtype dts[2] = {LTX2_F32, LTX2_BF16};
    buf in[2][3], out[2][5];
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    ltx2_status st = LTX2_OK;
    for (int d = 0; d < 2 && st == LTX2_OK; d++) {
        st = buf_make(ctx, &in[d][0], BLOCK, dts[d], j->rank, 1 + d, j->device_bufs);
        if (st == LTX2_OK) st = buf_make(ctx, &in[d][1], (size_t)P * BLOCK, dts[d], j->rank, 3 + d, j->device_bufs);
        if (st == LTX2_OK) st = buf_make(ctx, &in[d][2], BLOCK, dts[d], j->rank, 5 + d, j->device_bufs);
        const size_t on[5] = {(size_t)P * BLOCK, BLOCK, BLOCK, (size_t)P * BLOCK, BLOCK};
        for (int o = 0; o < 5 && st == LTX2_OK; o++) st = buf_make(ctx, &out[d][o], on[o], dts[d], j->rank, -1, j->device_bufs);
    }
    ltx2_comm *sub = NULL;
    pthread_barrier_wait(j->setup); /* no rank touches the default stream once collectives run */
    for (int d = 0; d < 2 && st == LTX2_OK; d++) {
        st = ltx2_comm_all_gather(c, ctx, ptr(&in[d][0]), ptr(&out[d][0]), BLOCK, dts[d]);
        if (st == LTX2_OK) st = ltx2_comm_reduce_scatter(c, ctx, ptr(&in[d][1]), ptr(&out[d][1]), BLOCK, dts[d]);
        if (st == LTX2_OK) st = ltx2_comm_all_reduce(c, ctx, ptr(&in[d][2]), ptr(&out[d][2]), BLOCK, dts[d]);
        if (st == LTX2_OK) st = ltx2_comm_all_to_all(c, ctx, ptr(&in[d][1]), ptr(&out[d][3]), BLOCK, dts[d]);
        if (st == LTX2_OK) st = ltx2_comm_broadcast(c, ctx, ptr(&in[d][0]), ptr(&out[d][4]), BLOCK, dts[d], P - 1);
    }
    /* the sub-communicator along the mesh's last non-trivial axis, then an all_reduce in place */
    unsigned axes = 0;
    for (int a = LTX2_AXIS_COUNT - 1; a >= 0 && !axes; a--)
        if (j->mesh.size[a] > 1) axes = LTX2_AXIS_BIT(a);
    if (!axes) axes = LTX2_AXIS_BIT(LTX2_AXIS_TENSOR);
    if (st == LTX2_OK) st = ltx2_comm_split_axes(c, ctx, axes, &sub);
    if (st == LTX2_OK) st = ltx2_comm_all_reduce(sub, ctx, ptr(&in[0][0]), ptr(&in[0][0]), BLOCK, LTX2_F32);
    if (st == LTX2_OK) st = ltx2_comm_barrier(c, ctx);
    for (int d = 0; d < 2 && st == LTX2_OK; d++)
        for (int o = 0; o < 5 && st == LTX2_OK; o++) st = keep(ctx, j, d * 5 + o, &out[d][o]);
    if (st == LTX2_OK) st = keep(ctx, j, 10, &in[0][0]);
    if (st == LTX2_OK) {
        float sz = (float)sub->size;
        buf b = {.host = &sz, .n = 1, .dt = LTX2_F32};
        st = keep(ctx, j, 11, &b);
    }
    if (st != LTX2_OK) ltx2_comm_abort(c, ltx2_last_error(ctx));
    ltx2_comm_free(sub);
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < 3; i++) buf_free(&in[d][i]);
        for (int o = 0; o < 5; o++) buf_free(&out[d][o]);
    }
    return st;
}

static void *rank_main(void *arg) {
    rank_job *j = arg;
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_comm *c = NULL;
    cudaStream_t compute = NULL;
    j->st = j->nccl ? ltx2_comm_nccl_init(ctx, &j->mesh, j->rank, 0, j->id, &c)
                    : ltx2_loopback_comm(ctx, j->world, j->rank, &c);
    /* Ranks sharing a process must not order their collectives through the one legacy default
     * stream: rank 0's "wait for collective k" would sit in front of rank 1's launch of k. */
    if (j->st == LTX2_OK && j->nccl) {
        if (cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking) != cudaSuccess)
            j->st = LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "test compute stream");
        else
            j->st = ltx2_comm_nccl_set_stream(c, ctx, compute);
    }
    j->compute = compute;
    if (j->st == LTX2_OK) {
        j->st = run_collectives(ctx, j, c);
    } else {
        pthread_barrier_wait(j->setup); /* keep the peers' setup barrier whole */
    }
    if (j->st != LTX2_OK) snprintf(j->msg, sizeof j->msg, "%s", ltx2_last_error(ctx));
    ltx2_comm_free(c);
    if (compute) cudaStreamDestroy(compute);
    ltx2_context_free(ctx);
    return NULL;
}

/* Runs P ranks on one backend; jobs[r].res hold the outputs. */
static bool run_world(ltx2_context *ctx, const ltx2_mesh *mesh, bool nccl, bool device_bufs, rank_job *jobs) {
    const int P = ltx2_mesh_world_size(mesh);
    unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES];
    ltx2_loopback_world *w = NULL;
    if (nccl ? ltx2_comm_nccl_unique_id(ctx, id) != LTX2_OK
             : ltx2_loopback_world_create(ctx, mesh, 0, &w) != LTX2_OK) {
        CHECK(false, "%s world: %s", nccl ? "nccl" : "loopback", ltx2_last_error(ctx));
        return false;
    }
    pthread_barrier_t setup;
    pthread_barrier_init(&setup, NULL, (unsigned)P);
    pthread_t th[2];
    for (int r = 0; r < P; r++) {
        memset(&jobs[r], 0, sizeof jobs[r]);
        jobs[r] = (rank_job){.rank = r, .mesh = *mesh, .nccl = nccl, .device_bufs = device_bufs, .id = id, .world = w,
                             .setup = &setup};
        pthread_create(&th[r], NULL, rank_main, &jobs[r]);
    }
    bool ok = true;
    for (int r = 0; r < P; r++) {
        pthread_join(th[r], NULL);
        CHECK(jobs[r].st == LTX2_OK, "%s P=%d rank %d: %s", nccl ? "nccl" : "loopback", P, r, jobs[r].msg);
        ok = ok && jobs[r].st == LTX2_OK;
    }
    pthread_barrier_destroy(&setup);
    if (w) ltx2_loopback_world_free(w);
    return ok;
}

static void free_results(rank_job *jobs, int P) {
    for (int r = 0; r < P; r++)
        for (int s = 0; s < N_RESULTS; s++) free(jobs[r].res[s].v);
}

static const char *const result_names[N_RESULTS] = {
    "f32 all_gather", "f32 reduce_scatter", "f32 all_reduce", "f32 all_to_all", "f32 broadcast",
    "bf16 all_gather", "bf16 reduce_scatter", "bf16 all_reduce", "bf16 all_to_all", "bf16 broadcast",
    "f32 sub-comm all_reduce", "sub-comm size"};

static void compare_worlds(const ltx2_mesh *mesh, const rank_job *nc, const rank_job *lb) {
    const int P = ltx2_mesh_world_size(mesh);
    for (int r = 0; r < P; r++)
        for (int s = 0; s < N_RESULTS; s++) {
            const result *a = &nc[r].res[s], *b = &lb[r].res[s];
            const bool is_sum = s == 1 || s == 2 || s == 6 || s == 7 || s == 10;
            const bool bf16 = s >= 5 && s < 10;
            size_t bad = 0;
            for (size_t i = 0; i < a->n && i < b->n; i++) {
                const double tol = bf16 && is_sum ? BF16_REL_ULP * fabs((double)b->v[i]) : 0.0;
                bad += fabs((double)a->v[i] - (double)b->v[i]) > tol;
            }
            CHECK(a->n == b->n && bad == 0, "P=%d rank %d %s: %zu of %zu elements differ from loopback", P, r,
                  result_names[s], bad, b->n);
        }
}

/* Rank 1 aborts its world; rank 0, blocked in a barrier, must come back with an error. */
typedef struct abort_job {
    int rank;
    ltx2_mesh mesh;
    const unsigned char *id;
    ltx2_status st;
    char msg[512];
} abort_job;

static void *abort_main(void *arg) {
    abort_job *j = arg;
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_comm *c = NULL;
    j->st = ltx2_comm_nccl_init(ctx, &j->mesh, j->rank, 0, j->id, &c);
    if (j->st == LTX2_OK) {
        if (j->rank == 1) ltx2_comm_abort(c, "test: rank 1 gives up");
        else j->st = ltx2_comm_barrier(c, ctx);
    }
    snprintf(j->msg, sizeof j->msg, "%s", j->st == LTX2_OK ? "" : ltx2_last_error(ctx));
    ltx2_comm_free(c);
    ltx2_context_free(ctx);
    return NULL;
}

int main(void) {
    int n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev < 1) {
        printf("skipped: no CUDA device\n");
        return 77;
    }
    setenv("NCCL_MULTI_RANK_GPU_ENABLE", "1", 0); /* two ranks on GPU 0 (NCCL >= 2.30) */
    setenv("LTX2_NCCL_TIMEOUT_MS", RUN_TIMEOUT_MS, 0); /* a broken run fails in a minute, not ten */
    ltx2_context *ctx = ltx2_context_create(NULL);
    /* NCCL before 2.30 refuses two ranks on one GPU ("Duplicate GPU detected", invalid usage; seen
     * with 2.28 on a one-GPU H100): two-rank worlds then need two devices. */
    int nccl_version = 0;
    ncclGetVersion(&nccl_version);
    const int max_ranks = nccl_version >= NCCL_MULTI_RANK_GPU_VERSION ? 2 : n_dev;
    const int meshes[3][4] = {{1, 1, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2}};
    for (int m = 0; m < 3; m++) {
        ltx2_mesh mesh;
        CHECK(ltx2_mesh_init(ctx, &mesh, meshes[m][0], meshes[m][1], meshes[m][2], meshes[m][3]) == LTX2_OK, "mesh");
        const int P = ltx2_mesh_world_size(&mesh);
        if (P > max_ranks) {
            printf("mesh %d,%d,%d,%d: not run: %d ranks on %d GPU(s) need NCCL >= 2.30 (this is %d)\n", meshes[m][0],
                   meshes[m][1], meshes[m][2], meshes[m][3], P, n_dev, nccl_version);
            continue;
        }
        rank_job nc[2], nh[2], lb[2];
        const bool ok_lb = run_world(ctx, &mesh, false, false, lb);
        const bool ok_nc = run_world(ctx, &mesh, true, true, nc), ok_nh = run_world(ctx, &mesh, true, false, nh);
        if (ok_nc && ok_lb) compare_worlds(&mesh, nc, lb);
        if (ok_nh && ok_lb) compare_worlds(&mesh, nh, lb); /* host buffers: comm_nccl stages them */
        printf("mesh %d,%d,%d,%d: nccl device buffers %s, nccl host buffers %s, loopback %s\n", meshes[m][0],
               meshes[m][1], meshes[m][2], meshes[m][3], ok_nc ? "ran" : "FAILED", ok_nh ? "ran" : "FAILED",
               ok_lb ? "ran" : "FAILED");
        free_results(nc, ok_nc ? P : 0);
        free_results(nh, ok_nh ? P : 0);
        free_results(lb, ok_lb ? P : 0);
    }
    /* abort: a short peer timeout, so a missing propagation ends in an error, not a hang */
    setenv("LTX2_NCCL_TIMEOUT_MS", ABORT_TIMEOUT_MS, 1);
    if (max_ranks < 2) {
        printf("abort: not run: 2 ranks on %d GPU(s) need NCCL >= 2.30 (this is %d)\n", n_dev, nccl_version);
    } else {
        ltx2_mesh mesh;
        unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES];
        CHECK(ltx2_mesh_init(ctx, &mesh, 1, 1, 2, 1) == LTX2_OK && ltx2_comm_nccl_unique_id(ctx, id) == LTX2_OK,
              "abort setup: %s", ltx2_last_error(ctx));
        abort_job aj[2] = {{.rank = 0, .mesh = mesh, .id = id}, {.rank = 1, .mesh = mesh, .id = id}};
        pthread_t th[2];
        for (int r = 0; r < 2; r++) pthread_create(&th[r], NULL, abort_main, &aj[r]);
        for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
        CHECK(aj[0].st == LTX2_ERR_DEVICE && aj[0].msg[0], "rank 0 after its peer aborted: status %s, '%s'",
              ltx2_status_name(aj[0].st), aj[0].msg);
        printf("abort: rank 0 returned '%s'\n", aj[0].msg);
    }
    ltx2_context_free(ctx);
    return test_finish();
}
#endif
