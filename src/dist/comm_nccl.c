/* NCCL communicator: one rank per process (or thread) per GPU, sub-communicators per mesh axis by
 * ncclCommSplit, collectives on the communicator's own stream ordered with the caller's compute
 * stream by events (the llm.c pattern). Communicators are non-blocking (config.blocking = 0): every
 * NCCL call that reports ncclInProgress is polled with a deadline, every error becomes an ltx2
 * error naming the statement, and the communicator is aborted (ncclCommAbort) so no later call on
 * it can hang. Collectives on device buffers are asynchronous like NCCL's; on host buffers (the CPU
 * pipeline's) they are staged through device scratch and complete before returning; barrier()
 * waits for completion with the same deadline. Built as stubs returning LTX2_ERR_UNSUPPORTED when the build has no NCCL. */
#define _POSIX_C_SOURCE 200809L /* nanosleep, clock_gettime */
#include "dist/comm.h"

#include "core/context.h"

#ifndef LTX2_HAVE_NCCL

ltx2_status ltx2_comm_nccl_unique_id(ltx2_context *ctx, unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES]) {
    (void)id;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                      "NCCL communicator requested but this build has no NCCL (configure with -DLTX2_CUDA=ON and "
                      "libnccl-dev installed)");
}

ltx2_status ltx2_comm_nccl_init(ltx2_context *ctx, const ltx2_mesh *mesh, int rank, int device,
                                const unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES], ltx2_comm **out) {
    (void)mesh, (void)id;
    if (out) *out = NULL;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                      "NCCL communicator requested (rank %d, device %d) but this build has no NCCL (configure with "
                      "-DLTX2_CUDA=ON and libnccl-dev installed)",
                      rank, device);
}

int ltx2_comm_nccl_version(void) { return 0; }

bool ltx2_comm_nccl_can_share_gpu(void) { return false; }

ltx2_status ltx2_comm_nccl_set_stream(ltx2_comm *c, ltx2_context *ctx, void *cuda_stream) {
    (void)c, (void)cuda_stream;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "NCCL communicator: this build has no NCCL");
}

#else

#include <cuda_runtime.h>
/* nccl.h declares a few `f()` prototypes; keep our warning set clean without hiding our own code. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How often a pending NCCL/CUDA operation is polled: short enough to add no visible latency to a
 * barrier, long enough not to spin a core. */
#define NC_POLL_NS 50000L
/* Send and receive halves of the host-staging scratch start on this boundary (cudaMalloc's). */
#define NC_STAGE_ALIGN 256

typedef struct nc_comm {
    ltx2_comm pub;
    ncclComm_t comm;
    cudaStream_t stream;  /* collectives run here */
    cudaStream_t compute; /* the caller's stream (NULL: legacy default stream) */
    cudaEvent_t ev_compute, ev_done;
    float *barrier_buf;   /* one device float all-reduced by barrier() */
    void *stage;          /* device scratch for collectives on host buffers */
    size_t stage_bytes;
    int device;
    int timeout_ms;
    int aborted;
} nc_comm;

static nc_comm *nc_of(ltx2_comm *c) { return (nc_comm *)c->impl; }

static double nc_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void nc_sleep(void) {
    struct timespec ts = {0, NC_POLL_NS};
    nanosleep(&ts, NULL);
}

static int nc_timeout_ms(void) {
    const char *e = getenv("LTX2_NCCL_TIMEOUT_MS");
    long v = e ? strtol(e, NULL, 10) : 0;
    return v > 0 && v < 1000000000L ? (int)v : LTX2_NCCL_DEFAULT_TIMEOUT_MS;
}

static void nc_abort_comm(nc_comm *nc) {
    if (nc->comm && !nc->aborted) ncclCommAbort(nc->comm);
    nc->aborted = 1;
}

/* Turns an NCCL result into an ltx2 status: ncclInProgress is polled until done or the deadline,
 * anything else but success aborts the communicator. */
static ltx2_status nc_result(nc_comm *nc, ncclComm_t comm, ltx2_context *ctx, ncclResult_t r, const char *stmt,
                             int line) {
    double deadline = nc_now_ms() + (nc ? nc->timeout_ms : nc_timeout_ms());
    while (r == ncclInProgress && comm) {
        if (nc_now_ms() > deadline) {
            if (nc) nc_abort_comm(nc);
            else ncclCommAbort(comm);
            return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "NCCL %s (comm_nccl.c:%d) did not complete within %d ms; comm aborted",
                              stmt, line, nc ? nc->timeout_ms : nc_timeout_ms());
        }
        nc_sleep();
        if (ncclCommGetAsyncError(comm, &r) != ncclSuccess) break;
    }
    if (r == ncclSuccess) return LTX2_OK;
    const char *last = comm ? ncclGetLastError(comm) : "";
    if (nc) nc_abort_comm(nc);
    else if (comm) ncclCommAbort(comm);
    return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "NCCL %s failed (comm_nccl.c:%d): %s%s%s; communicator '%s' aborted",
                      stmt, line, ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "",
                      nc ? nc->pub.label : "new");
}

static ltx2_status nc_cuda(nc_comm *nc, ltx2_context *ctx, cudaError_t e, const char *stmt, int line) {
    if (e == cudaSuccess) return LTX2_OK;
    if (nc) nc_abort_comm(nc);
    return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "CUDA %s failed (comm_nccl.c:%d, device %d): %s", stmt, line,
                      nc ? nc->device : -1, cudaGetErrorString(e));
}

#define NC_NCCL(nc, comm, ctx, call) LTX2_TRY(nc_result((nc), (comm), (ctx), (call), #call, __LINE__))
#define NC_CUDA(nc, ctx, call) LTX2_TRY(nc_cuda((nc), (ctx), (call), #call, __LINE__))

static ncclDataType_t nc_dtype(ltx2_dtype dt) { return dt == LTX2_BF16 ? ncclBfloat16 : ncclFloat32; }

static ltx2_status nc_usable(nc_comm *nc, ltx2_context *ctx, const char *what) {
    if (nc->aborted)
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "%s on NCCL comm '%s' rank %d: communicator was aborted", what,
                          nc->pub.label, nc->pub.rank);
    NC_CUDA(nc, ctx, cudaSetDevice(nc->device));
    /* The collective must see everything the caller queued before it. */
    NC_CUDA(nc, ctx, cudaEventRecord(nc->ev_compute, nc->compute));
    NC_CUDA(nc, ctx, cudaStreamWaitEvent(nc->stream, nc->ev_compute, 0));
    return LTX2_OK;
}

static ltx2_status nc_done(nc_comm *nc, ltx2_context *ctx) {
    NC_CUDA(nc, ctx, cudaEventRecord(nc->ev_done, nc->stream));
    NC_CUDA(nc, ctx, cudaStreamWaitEvent(nc->compute, nc->ev_done, 0));
    return LTX2_OK;
}

/* Bounded wait for everything queued on the collective stream so far (a missing or hung peer
 * aborts the communicator instead of blocking forever). */
static ltx2_status nc_wait(nc_comm *nc, ltx2_context *ctx, const char *what) {
    NC_CUDA(nc, ctx, cudaEventRecord(nc->ev_done, nc->stream));
    double deadline = nc_now_ms() + nc->timeout_ms;
    for (;;) {
        cudaError_t e = cudaEventQuery(nc->ev_done);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) NC_CUDA(nc, ctx, e);
        ncclResult_t ar = ncclSuccess;
        NC_NCCL(nc, nc->comm, ctx, ncclCommGetAsyncError(nc->comm, &ar));
        if (ar != ncclSuccess && ar != ncclInProgress) NC_NCCL(nc, nc->comm, ctx, ar);
        if (nc_now_ms() > deadline) {
            nc_abort_comm(nc);
            return LTX2_ERROR(ctx, LTX2_ERR_DEVICE,
                              "%s on NCCL comm '%s' rank %d: not complete after %d ms (a peer is missing or hung); "
                              "communicator aborted",
                              what, nc->pub.label, nc->pub.rank, nc->timeout_ms);
        }
        nc_sleep();
    }
    return LTX2_OK;
}

typedef enum { NC_ALL_GATHER, NC_REDUCE_SCATTER, NC_ALL_REDUCE, NC_ALL_TO_ALL, NC_BROADCAST } nc_coll;

static const char *const nc_coll_names[] = {"all_gather", "reduce_scatter", "all_reduce", "all_to_all", "broadcast"};

/* True unless p is device (or managed) memory NCCL can address: plain host allocations, and
 * pinned ones too (NCCL does not take those either). */
static bool nc_is_host(const void *p) {
    if (!p) return true;
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError(); /* older runtimes report unregistered host memory as an error */
        return true;
    }
    return a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged;
}

static ltx2_status nc_launch(nc_comm *nc, ltx2_context *ctx, nc_coll k, const void *send, void *recv, size_t count,
                             ltx2_dtype dt, int root) {
    const ncclDataType_t t = nc_dtype(dt);
    switch (k) {
    case NC_ALL_GATHER: NC_NCCL(nc, nc->comm, ctx, ncclAllGather(send, recv, count, t, nc->comm, nc->stream)); break;
    case NC_REDUCE_SCATTER:
        NC_NCCL(nc, nc->comm, ctx, ncclReduceScatter(send, recv, count, t, ncclSum, nc->comm, nc->stream));
        break;
    case NC_ALL_REDUCE:
        NC_NCCL(nc, nc->comm, ctx, ncclAllReduce(send, recv, count, t, ncclSum, nc->comm, nc->stream));
        break;
    case NC_ALL_TO_ALL: NC_NCCL(nc, nc->comm, ctx, ncclAlltoAll(send, recv, count, t, nc->comm, nc->stream)); break;
    case NC_BROADCAST:
        NC_NCCL(nc, nc->comm, ctx, ncclBroadcast(send, recv, count, t, root, nc->comm, nc->stream));
        break;
    }
    return LTX2_OK;
}

/* Device buffers go straight to NCCL, asynchronously, ordered after the caller's compute stream
 * and before its later work. Host buffers (the CPU pipeline's sharded DiT and VAE) are staged:
 * copied into device scratch on the collective stream, reduced there, copied back, and waited for
 * (bounded), so the caller holds the result on return, as with the loopback backend. */
static ltx2_status nc_collective(ltx2_comm *c, ltx2_context *ctx, nc_coll k, const void *send, void *recv,
                                 size_t count, ltx2_dtype dt, int root) {
    nc_comm *nc = nc_of(c);
    const char *what = nc_coll_names[k];
    LTX2_TRY(nc_usable(nc, ctx, what));
    const bool off_root_send = k == NC_BROADCAST && c->rank != root; /* send is ignored there */
    if (!nc_is_host(recv) && (off_root_send || !nc_is_host(send))) {
        LTX2_TRY(nc_launch(nc, ctx, k, send, recv, count, dt, root));
        return nc_done(nc, ctx);
    }
    const size_t es = ltx2_dtype_size(dt), P = (size_t)c->size;
    const size_t sn = (k == NC_REDUCE_SCATTER || k == NC_ALL_TO_ALL) ? P * count : count;
    const size_t rn = (k == NC_ALL_GATHER || k == NC_ALL_TO_ALL) ? P * count : count;
    const size_t s_off = (sn * es + NC_STAGE_ALIGN - 1) / NC_STAGE_ALIGN * NC_STAGE_ALIGN, need = s_off + rn * es;
    if (need > nc->stage_bytes) {
        if (nc->stage) cudaFree(nc->stage);
        nc->stage = NULL;
        nc->stage_bytes = 0;
        NC_CUDA(nc, ctx, cudaMalloc(&nc->stage, need));
        nc->stage_bytes = need;
    }
    char *ds = nc->stage, *dr = ds + s_off;
    if (!off_root_send && send) NC_CUDA(nc, ctx, cudaMemcpyAsync(ds, send, sn * es, cudaMemcpyDefault, nc->stream));
    LTX2_TRY(nc_launch(nc, ctx, k, ds, dr, count, dt, root));
    NC_CUDA(nc, ctx, cudaMemcpyAsync(recv, dr, rn * es, cudaMemcpyDefault, nc->stream));
    return nc_wait(nc, ctx, what);
}

static ltx2_status nc_all_gather(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                 ltx2_dtype dt) {
    return nc_collective(c, ctx, NC_ALL_GATHER, send, recv, count, dt, 0);
}

static ltx2_status nc_reduce_scatter(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                     ltx2_dtype dt) {
    return nc_collective(c, ctx, NC_REDUCE_SCATTER, send, recv, count, dt, 0);
}

static ltx2_status nc_all_reduce(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                 ltx2_dtype dt) {
    return nc_collective(c, ctx, NC_ALL_REDUCE, send, recv, count, dt, 0);
}

static ltx2_status nc_all_to_all(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                 ltx2_dtype dt) {
    return nc_collective(c, ctx, NC_ALL_TO_ALL, send, recv, count, dt, 0);
}

static ltx2_status nc_broadcast(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                ltx2_dtype dt, int root) {
    return nc_collective(c, ctx, NC_BROADCAST, send, recv, count, dt, root);
}

/* A one-float all-reduce, then a bounded wait for it (and all earlier collectives) to finish. */
static ltx2_status nc_barrier(ltx2_comm *c, ltx2_context *ctx) {
    nc_comm *nc = nc_of(c);
    LTX2_TRY(nc_usable(nc, ctx, "barrier"));
    NC_NCCL(nc, nc->comm, ctx, ncclAllReduce(nc->barrier_buf, nc->barrier_buf, 1, ncclFloat32, ncclSum, nc->comm, nc->stream));
    return nc_wait(nc, ctx, "barrier");
}

static const ltx2_comm_ops nc_ops;

/* Wraps an initialised ncclComm_t: its stream, events and barrier scratch. On failure the NCCL
 * communicator is aborted and everything is released. */
static ltx2_status nc_wrap(ltx2_context *ctx, ncclComm_t comm, int device, const ltx2_mesh *mesh, int timeout_ms,
                           cudaStream_t compute, const char *label, ltx2_comm **out) {
    nc_comm *nc = calloc(1, sizeof(*nc));
    if (!nc) {
        ncclCommAbort(comm);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "NCCL comm: out of memory");
    }
    nc->comm = comm;
    nc->device = device;
    nc->timeout_ms = timeout_ms;
    nc->compute = compute;
    nc->pub.ops = &nc_ops;
    nc->pub.impl = nc;
    nc->pub.mesh = *mesh;
    snprintf(nc->pub.label, sizeof(nc->pub.label), "%s", label);
    int rank = 0, size = 0;
    ltx2_status st = nc_result(nc, comm, ctx, ncclCommUserRank(comm, &rank), "ncclCommUserRank", __LINE__);
    if (st == LTX2_OK) st = nc_result(nc, comm, ctx, ncclCommCount(comm, &size), "ncclCommCount", __LINE__);
    if (st == LTX2_OK) st = nc_cuda(nc, ctx, cudaSetDevice(device), "cudaSetDevice", __LINE__);
    if (st == LTX2_OK)
        st = nc_cuda(nc, ctx, cudaStreamCreateWithFlags(&nc->stream, cudaStreamNonBlocking), "cudaStreamCreate", __LINE__);
    if (st == LTX2_OK)
        st = nc_cuda(nc, ctx, cudaEventCreateWithFlags(&nc->ev_compute, cudaEventDisableTiming), "cudaEventCreate", __LINE__);
    if (st == LTX2_OK)
        st = nc_cuda(nc, ctx, cudaEventCreateWithFlags(&nc->ev_done, cudaEventDisableTiming), "cudaEventCreate", __LINE__);
    if (st == LTX2_OK)
        st = nc_cuda(nc, ctx, cudaMalloc((void **)&nc->barrier_buf, sizeof(float)), "cudaMalloc", __LINE__);
    if (st == LTX2_OK) st = nc_cuda(nc, ctx, cudaMemset(nc->barrier_buf, 0, sizeof(float)), "cudaMemset", __LINE__);
    if (st == LTX2_OK && size != ltx2_mesh_world_size(mesh))
        st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "NCCL comm '%s' has %d ranks but its mesh has %d", label, size,
                        ltx2_mesh_world_size(mesh));
    nc->pub.rank = rank;
    nc->pub.size = size;
    if (st != LTX2_OK) {
        nc_abort_comm(nc);
        nc_ops.free(&nc->pub);
        return st;
    }
    *out = &nc->pub;
    return LTX2_OK;
}

static ltx2_status nc_split(ltx2_comm *c, ltx2_context *ctx, int color, int key, const ltx2_mesh *mesh,
                            ltx2_comm **out) {
    nc_comm *nc = nc_of(c);
    *out = NULL;
    if (nc->aborted)
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "split of NCCL comm '%s': communicator was aborted", c->label);
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclComm_t sub = NULL;
    NC_NCCL(nc, nc->comm, ctx, ncclCommSplit(nc->comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &sub, &cfg));
    if (color < 0) return LTX2_OK; /* this rank joins no sub-communicator */
    /* NCCL publishes the new handle only once the split's job has finished ("*newcomm should be
     * NCCL_COMM_NULL until comm split fully complete", init.cc): without this wait a one-rank split
     * came back NULL on an H100 (NCCL 2.28). */
    const double deadline = nc_now_ms() + nc->timeout_ms;
    while (!__atomic_load_n(&sub, __ATOMIC_ACQUIRE)) {
        ncclResult_t r = ncclSuccess;
        if (ncclCommGetAsyncError(nc->comm, &r) != ncclSuccess) r = ncclInternalError;
        if (r != ncclSuccess && r != ncclInProgress) return nc_result(nc, nc->comm, ctx, r, "ncclCommSplit", __LINE__);
        if (nc_now_ms() > deadline) {
            nc_abort_comm(nc);
            return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "NCCL split of comm '%s' published no communicator within %d ms; "
                              "comm aborted", c->label, nc->timeout_ms);
        }
        nc_sleep();
    }
    /* A non-blocking split finishes asynchronously on the new communicator. */
    LTX2_TRY(nc_result(NULL, sub, ctx, ncclInProgress, "ncclCommSplit (completion)", __LINE__));
    return nc_wrap(ctx, sub, nc->device, mesh, nc->timeout_ms, nc->compute, "split", out);
}

static void nc_abort(ltx2_comm *c, const char *reason) {
    (void)reason; /* NCCL has no channel for a reason; peers see their collectives fail or time out. */
    nc_abort_comm(nc_of(c));
}

static void nc_free(ltx2_comm *c) {
    nc_comm *nc = nc_of(c);
    if (nc->comm && !nc->aborted) {
        /* Destroy waits for outstanding work; an aborted communicator is already released. */
        ncclCommDestroy(nc->comm);
    }
    if (nc->barrier_buf) cudaFree(nc->barrier_buf);
    if (nc->stage) cudaFree(nc->stage);
    if (nc->ev_compute) cudaEventDestroy(nc->ev_compute);
    if (nc->ev_done) cudaEventDestroy(nc->ev_done);
    if (nc->stream) cudaStreamDestroy(nc->stream);
    free(nc);
}

static const ltx2_comm_ops nc_ops = {
    .name = "nccl",
    .device_memory = true,
    .all_gather = nc_all_gather,
    .reduce_scatter = nc_reduce_scatter,
    .all_reduce = nc_all_reduce,
    .all_to_all = nc_all_to_all,
    .broadcast = nc_broadcast,
    .barrier = nc_barrier,
    .split = nc_split,
    .abort = nc_abort,
    .free = nc_free,
};

ltx2_status ltx2_comm_nccl_unique_id(ltx2_context *ctx, unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES]) {
    ncclUniqueId uid;
    _Static_assert(sizeof(uid) == LTX2_NCCL_UNIQUE_ID_BYTES, "ncclUniqueId size changed");
    NC_NCCL(NULL, NULL, ctx, ncclGetUniqueId(&uid));
    memcpy(id, &uid, sizeof(uid));
    return LTX2_OK;
}

int ltx2_comm_nccl_version(void) {
    int v = 0;
    return ncclGetVersion(&v) == ncclSuccess ? v : 0;
}

bool ltx2_comm_nccl_can_share_gpu(void) {
    const char *e = getenv("NCCL_MULTI_RANK_GPU_ENABLE");
    return ltx2_comm_nccl_version() >= LTX2_NCCL_SHARED_GPU_VERSION && e && !strcmp(e, "1");
}

ltx2_status ltx2_comm_nccl_init(ltx2_context *ctx, const ltx2_mesh *mesh, int rank, int device,
                                const unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES], ltx2_comm **out) {
    if (!mesh || !id || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "NCCL init: NULL argument");
    *out = NULL;
    int world = ltx2_mesh_world_size(mesh);
    if (rank < 0 || rank >= world)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "NCCL init: rank %d outside [0, %d)", rank, world);
    NC_CUDA(NULL, ctx, cudaSetDevice(device));
    ncclUniqueId uid;
    memcpy(&uid, id, sizeof(uid));
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclComm_t comm = NULL;
    ncclResult_t r = ncclCommInitRankConfig(&comm, world, uid, rank, &cfg);
    if (r != ncclSuccess && r != ncclInProgress) {
        if (comm) ncclCommAbort(comm);
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "NCCL ncclCommInitRankConfig(rank %d of %d, device %d) failed: %s",
                          rank, world, device, ncclGetErrorString(r));
    }
    LTX2_TRY(nc_result(NULL, comm, ctx, r, "ncclCommInitRankConfig", __LINE__));
    return nc_wrap(ctx, comm, device, mesh, nc_timeout_ms(), NULL, "world", out);
}

ltx2_status ltx2_comm_nccl_set_stream(ltx2_comm *c, ltx2_context *ctx, void *cuda_stream) {
    if (!c || c->ops != &nc_ops)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "set_stream: not an NCCL communicator");
    nc_of(c)->compute = (cudaStream_t)cuda_stream;
    return LTX2_OK;
}

#endif
