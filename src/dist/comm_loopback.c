/* Loopback communicator: P virtual ranks as threads of one process, with NCCL's semantics, so
 * sharded code paths ("sharded == unsharded") are testable on a CPU. All shared state lives in a
 * world object: one mutex + condition variable, and one rendezvous record per (sub)communicator.
 *
 * A collective runs in two phases per communicator:
 *   A. every rank posts its arguments (op, count, dtype, root, send pointer) and waits for all;
 *      the last to arrive checks that all ranks called the same collective;
 *   B. each rank computes its own result into a private scratch buffer, reading the others' send
 *      buffers, then waits for all (so nobody reuses a send buffer still being read), and finally
 *      copies scratch into recv. Any aliasing of send and recv is therefore safe.
 * Sums use a fixed order: out[i] = (((x_0[i] + x_1[i]) + x_2[i]) + ...) + x_{P-1}[i], ranks in
 * communicator order, accumulated in f32 (bf16 inputs are widened, the sum rounded once), so
 * every rank gets bitwise the same result and tests can reproduce it serially.
 * Waits time out (world timeout) and abort the world; abort wakes every waiting rank. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/context.h"
#include "core/dtype.h"
#include "dist/comm.h"

typedef enum lb_op {
    LB_ALL_GATHER = 0,
    LB_REDUCE_SCATTER,
    LB_ALL_REDUCE,
    LB_ALL_TO_ALL,
    LB_BROADCAST,
    LB_BARRIER,
    LB_SPLIT
} lb_op;

static const char *const lb_op_names[] = {"all_gather", "reduce_scatter", "all_reduce", "all_to_all",
                                          "broadcast",  "barrier",        "split"};

typedef struct lb_slot {
    lb_op op;
    size_t count;
    ltx2_dtype dt;
    int root;
    const void *send;
    int color, key;
    const char *label;
} lb_slot;

typedef struct lb_group {
    struct lb_group *next; /* world's list of every group, for freeing */
    int size;
    int arrived;
    unsigned long gen;     /* bumped each time all `size` ranks have arrived */
    int reading;           /* ranks still reading other ranks' send buffers in the current collective */
    lb_slot *slots;
    struct lb_group **split_group; /* result of the last split, per member */
    int *split_rank;
} lb_group;

struct ltx2_loopback_world {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int timeout_ms;
    int aborted;
    char reason[LTX2_ERROR_CAP / 2];
    ltx2_mesh mesh;
    lb_group *groups;
    lb_group *world_group;
};

typedef struct lb_comm {
    ltx2_comm pub;
    ltx2_loopback_world *w;
    lb_group *g;
} lb_comm;

static lb_comm *lb_of(ltx2_comm *c) { return (lb_comm *)c->impl; }

static lb_group *lb_group_new(ltx2_loopback_world *w, int size) {
    lb_group *g = calloc(1, sizeof(*g));
    if (!g) return NULL;
    g->size = size;
    g->slots = calloc((size_t)size, sizeof(*g->slots));
    g->split_group = calloc((size_t)size, sizeof(*g->split_group));
    g->split_rank = calloc((size_t)size, sizeof(*g->split_rank));
    if (!g->slots || !g->split_group || !g->split_rank) {
        free(g->slots);
        free(g->split_group);
        free(g->split_rank);
        free(g);
        return NULL;
    }
    g->next = w->groups;
    w->groups = g;
    return g;
}

/* Caller holds w->mu. The first reason wins: later failures are usually consequences. */
static void lb_abort_locked(ltx2_loopback_world *w, const char *fmt, ...) LTX2_PRINTF(2, 3);
static void lb_abort_locked(ltx2_loopback_world *w, const char *fmt, ...) {
    if (!w->aborted) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->reason, sizeof(w->reason), fmt, ap);
        va_end(ap);
        w->aborted = 1;
    }
    pthread_cond_broadcast(&w->cv);
}

static ltx2_status lb_aborted_error(ltx2_comm *c, ltx2_context *ctx, const char *what) {
    lb_comm *lc = lb_of(c);
    return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "%s on loopback comm '%s' rank %d: communicator aborted: %s", what,
                      c->label, c->rank, lc->w->reason);
}

/* Runs as the last rank arrives in phase A (lock held): checks that every rank called the same
 * collective with the same arguments, and for split builds the new groups. */
static void lb_on_all_posted(ltx2_loopback_world *w, lb_group *g) {
    const lb_slot *s0 = &g->slots[0];
    for (int r = 1; r < g->size; r++) {
        const lb_slot *s = &g->slots[r];
        if (s->op != s0->op || s->count != s0->count || s->dt != s0->dt || s->root != s0->root) {
            lb_abort_locked(w,
                            "collective mismatch on comm '%s': rank 0 called %s(count %zu, %s, root %d) but rank %d "
                            "called %s(count %zu, %s, root %d)",
                            s0->label, lb_op_names[s0->op], s0->count, ltx2_dtype_name(s0->dt), s0->root, r,
                            lb_op_names[s->op], s->count, ltx2_dtype_name(s->dt), s->root);
            return;
        }
    }
    if (s0->op != LB_SPLIT) return;
    for (int r = 0; r < g->size; r++) g->split_group[r] = NULL;
    for (int r = 0; r < g->size; r++) {
        int color = g->slots[r].color;
        if (color < 0 || g->split_group[r]) continue;
        int n = 0;
        for (int j = 0; j < g->size; j++) n += g->slots[j].color == color;
        lb_group *ng = lb_group_new(w, n);
        if (!ng) {
            lb_abort_locked(w, "out of memory creating a sub-communicator of %d ranks", n);
            return;
        }
        /* Rank in the new group: order by (key, old rank). */
        for (int j = 0; j < g->size; j++) {
            if (g->slots[j].color != color) continue;
            int pos = 0;
            for (int k = 0; k < g->size; k++) {
                if (g->slots[k].color != color) continue;
                if (g->slots[k].key < g->slots[j].key || (g->slots[k].key == g->slots[j].key && k < j)) pos++;
            }
            g->split_group[j] = ng;
            g->split_rank[j] = pos;
        }
    }
}

/* Lock held. Counts this rank in and waits until all ranks of the group have arrived, the world
 * aborts, or the timeout passes (which aborts the world). */
static ltx2_status lb_arrive_wait(ltx2_comm *c, ltx2_context *ctx, const char *what, int run_on_last,
                                  int starts_reading) {
    lb_comm *lc = lb_of(c);
    ltx2_loopback_world *w = lc->w;
    lb_group *g = lc->g;
    if (w->aborted) return lb_aborted_error(c, ctx, what);
    unsigned long my_gen = g->gen;
    if (++g->arrived == g->size) {
        g->arrived = 0;
        if (run_on_last) lb_on_all_posted(w, g);
        if (!w->aborted) {
            g->gen++; /* a mismatch found above fails this collective on every rank */
            /* every rank now reads the others' send buffers, counted from here (not when each
             * wakes) so an abort cannot slip in between */
            if (starts_reading) g->reading = g->size;
        }
        pthread_cond_broadcast(&w->cv);
    } else {
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += w->timeout_ms / 1000;
        deadline.tv_nsec += (long)(w->timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        while (g->gen == my_gen && !w->aborted) {
            int rc = pthread_cond_timedwait(&w->cv, &w->mu, &deadline);
            if (rc == ETIMEDOUT && g->gen == my_gen && !w->aborted) {
                lb_abort_locked(w, "rank %d of comm '%s' timed out after %d ms in %s (%d of %d ranks arrived)",
                                c->rank, c->label, w->timeout_ms, what, g->arrived, g->size);
            }
        }
    }
    /* A collective that completed before the abort still succeeded; the abort shows at the next call. */
    if (g->gen == my_gen && w->aborted) return lb_aborted_error(c, ctx, what);
    return LTX2_OK;
}

static void lb_sum(void *dst, const lb_group *g, size_t offset, size_t count, ltx2_dtype dt) {
    if (dt == LTX2_F32) {
        float *o = dst;
        for (size_t i = 0; i < count; i++) {
            float acc = ((const float *)g->slots[0].send)[offset + i];
            for (int r = 1; r < g->size; r++) acc += ((const float *)g->slots[r].send)[offset + i];
            o[i] = acc;
        }
    } else {
        uint16_t *o = dst;
        for (size_t i = 0; i < count; i++) {
            float acc = ltx2_bf16_to_f32(((const uint16_t *)g->slots[0].send)[offset + i]);
            for (int r = 1; r < g->size; r++) acc += ltx2_bf16_to_f32(((const uint16_t *)g->slots[r].send)[offset + i]);
            o[i] = ltx2_f32_to_bf16(acc);
        }
    }
}

/* Lock held. Waits until no rank of g is between the two rendezvous of a collective (reading the
 * others' send buffers). Reading never blocks, so this ends. */
static void lb_wait_readers_locked(ltx2_loopback_world *w, lb_group *g) {
    while (g->reading > 0) pthread_cond_wait(&w->cv, &w->mu);
}

static ltx2_status lb_collective(ltx2_comm *c, ltx2_context *ctx, lb_op op, const void *send, void *recv,
                                 size_t count, ltx2_dtype dt, int root) {
    lb_comm *lc = lb_of(c);
    ltx2_loopback_world *w = lc->w;
    lb_group *g = lc->g;
    const char *what = lb_op_names[op];
    size_t es = ltx2_dtype_size(dt);
    size_t P = (size_t)c->size, me = (size_t)c->rank;
    size_t out_count = (op == LB_ALL_GATHER || op == LB_ALL_TO_ALL) ? P * count : count;
    if (count && out_count / count != (op == LB_ALL_GATHER || op == LB_ALL_TO_ALL ? P : 1))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s on comm '%s': count %zu overflows", what, c->label, count);

    pthread_mutex_lock(&w->mu);
    /* An aborted world must not see this rank's new buffers in its slot: a rank still reading the
     * previous collective's slots would read them. */
    if (w->aborted) {
        pthread_mutex_unlock(&w->mu);
        return lb_aborted_error(c, ctx, what);
    }
    g->slots[me] = (lb_slot){.op = op, .count = count, .dt = dt, .root = root, .send = send, .label = c->label};
    ltx2_status st = lb_arrive_wait(c, ctx, what, 1, 1);
    pthread_mutex_unlock(&w->mu);
    if (st != LTX2_OK) return st;

    void *scratch = out_count ? malloc(out_count * es) : NULL;
    if (out_count && !scratch) {
        pthread_mutex_lock(&w->mu);
        g->reading--;
        lb_abort_locked(w, "rank %d of comm '%s': out of memory (%zu bytes) in %s", c->rank, c->label,
                        out_count * es, what);
        lb_wait_readers_locked(w, g);
        pthread_mutex_unlock(&w->mu);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s on comm '%s': no memory for %zu bytes", what, c->label, out_count * es);
    }
    unsigned char *o = scratch;
    switch (out_count ? op : LB_BARRIER) { /* nothing to move when count is 0 */
    case LB_ALL_GATHER:
        for (size_t r = 0; r < P; r++) memcpy(o + r * count * es, g->slots[r].send, count * es);
        break;
    case LB_ALL_TO_ALL:
        for (size_t r = 0; r < P; r++)
            memcpy(o + r * count * es, (const unsigned char *)g->slots[r].send + me * count * es, count * es);
        break;
    case LB_BROADCAST:
        if (count) memcpy(o, g->slots[root].send, count * es);
        break;
    case LB_ALL_REDUCE: lb_sum(o, g, 0, count, dt); break;
    case LB_REDUCE_SCATTER: lb_sum(o, g, me * count, count, dt); break;
    default: break;
    }

    pthread_mutex_lock(&w->mu);
    g->reading--;
    pthread_cond_broadcast(&w->cv);
    st = lb_arrive_wait(c, ctx, what, 0, 0);
    /* After an abort a rank leaves without the second rendezvous; it must not return (and let its
     * caller free the send buffer) while another rank is still reading that buffer. */
    if (st != LTX2_OK) lb_wait_readers_locked(w, g);
    pthread_mutex_unlock(&w->mu);
    if (st == LTX2_OK && out_count) memcpy(recv, scratch, out_count * es);
    free(scratch);
    return st;
}

static ltx2_status lb_all_gather(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                 ltx2_dtype dt) {
    return lb_collective(c, ctx, LB_ALL_GATHER, send, recv, count, dt, 0);
}
static ltx2_status lb_reduce_scatter(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                     ltx2_dtype dt) {
    return lb_collective(c, ctx, LB_REDUCE_SCATTER, send, recv, count, dt, 0);
}
static ltx2_status lb_all_reduce(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                 ltx2_dtype dt) {
    return lb_collective(c, ctx, LB_ALL_REDUCE, send, recv, count, dt, 0);
}
static ltx2_status lb_all_to_all(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                 ltx2_dtype dt) {
    return lb_collective(c, ctx, LB_ALL_TO_ALL, send, recv, count, dt, 0);
}
static ltx2_status lb_broadcast(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                ltx2_dtype dt, int root) {
    return lb_collective(c, ctx, LB_BROADCAST, send, recv, count, dt, root);
}

static ltx2_status lb_barrier(ltx2_comm *c, ltx2_context *ctx) {
    lb_comm *lc = lb_of(c);
    pthread_mutex_lock(&lc->w->mu);
    lc->g->slots[c->rank] = (lb_slot){.op = LB_BARRIER, .dt = LTX2_F32, .label = c->label};
    ltx2_status st = lb_arrive_wait(c, ctx, "barrier", 1, 0);
    pthread_mutex_unlock(&lc->w->mu);
    return st;
}

static const ltx2_comm_ops lb_ops;

static lb_comm *lb_comm_new(ltx2_loopback_world *w, lb_group *g, int rank, const ltx2_mesh *mesh, const char *label) {
    lb_comm *lc = calloc(1, sizeof(*lc));
    if (!lc) return NULL;
    lc->w = w;
    lc->g = g;
    lc->pub.ops = &lb_ops;
    lc->pub.rank = rank;
    lc->pub.size = g->size;
    lc->pub.mesh = *mesh;
    lc->pub.impl = lc;
    snprintf(lc->pub.label, sizeof(lc->pub.label), "%s", label);
    return lc;
}

static ltx2_status lb_split(ltx2_comm *c, ltx2_context *ctx, int color, int key, const ltx2_mesh *mesh,
                            ltx2_comm **out) {
    lb_comm *lc = lb_of(c);
    ltx2_loopback_world *w = lc->w;
    *out = NULL;
    pthread_mutex_lock(&w->mu);
    lc->g->slots[c->rank] =
        (lb_slot){.op = LB_SPLIT, .dt = LTX2_F32, .color = color < 0 ? -1 : color, .key = key, .label = c->label};
    ltx2_status st = lb_arrive_wait(c, ctx, "split", 1, 0);
    lb_group *ng = st == LTX2_OK ? lc->g->split_group[c->rank] : NULL;
    int nr = st == LTX2_OK ? lc->g->split_rank[c->rank] : 0;
    pthread_mutex_unlock(&w->mu);
    if (st != LTX2_OK || !ng) return st;
    if (ltx2_mesh_world_size(mesh) != ng->size)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "split of comm '%s' rank %d: the new communicator has %d ranks but its mesh has %d", c->label,
                          c->rank, ng->size, ltx2_mesh_world_size(mesh));
    lb_comm *nc = lb_comm_new(w, ng, nr, mesh, "split");
    if (!nc) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "split of comm '%s': no memory for a handle", c->label);
    *out = &nc->pub;
    return LTX2_OK;
}

static void lb_abort(ltx2_comm *c, const char *reason) {
    lb_comm *lc = lb_of(c);
    pthread_mutex_lock(&lc->w->mu);
    lb_abort_locked(lc->w, "rank %d of comm '%s' aborted: %s", c->rank, c->label, reason);
    pthread_mutex_unlock(&lc->w->mu);
}

static void lb_free(ltx2_comm *c) { free(lb_of(c)); }

static const ltx2_comm_ops lb_ops = {
    .name = "loopback",
    .device_memory = false,
    .all_gather = lb_all_gather,
    .reduce_scatter = lb_reduce_scatter,
    .all_reduce = lb_all_reduce,
    .all_to_all = lb_all_to_all,
    .broadcast = lb_broadcast,
    .barrier = lb_barrier,
    .split = lb_split,
    .abort = lb_abort,
    .free = lb_free,
};

ltx2_status ltx2_loopback_world_create(ltx2_context *ctx, const ltx2_mesh *mesh, int timeout_ms,
                                       ltx2_loopback_world **out) {
    if (!mesh || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "loopback world: NULL argument");
    *out = NULL;
    ltx2_mesh m;
    LTX2_TRY(ltx2_mesh_init(ctx, &m, mesh->size[0], mesh->size[1], mesh->size[2], mesh->size[3]));
    ltx2_loopback_world *w = calloc(1, sizeof(*w));
    if (!w) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "loopback world: out of memory");
    w->mesh = m;
    w->timeout_ms = timeout_ms > 0 ? timeout_ms : LTX2_LOOPBACK_DEFAULT_TIMEOUT_MS;
    pthread_condattr_t ca;
    int ok = pthread_mutex_init(&w->mu, NULL) == 0;
    if (ok) {
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        ok = pthread_cond_init(&w->cv, &ca) == 0;
        pthread_condattr_destroy(&ca);
        if (!ok) pthread_mutex_destroy(&w->mu);
    }
    if (!ok) {
        free(w);
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "loopback world: pthread mutex/condvar init failed");
    }
    w->world_group = lb_group_new(w, ltx2_mesh_world_size(&m));
    if (!w->world_group) {
        ltx2_loopback_world_free(w);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "loopback world: out of memory");
    }
    *out = w;
    return LTX2_OK;
}

ltx2_status ltx2_loopback_comm(ltx2_context *ctx, ltx2_loopback_world *w, int rank, ltx2_comm **out) {
    if (!w || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "loopback comm: NULL argument");
    *out = NULL;
    if (rank < 0 || rank >= w->world_group->size)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "loopback comm: rank %d outside [0, %d)", rank,
                          w->world_group->size);
    lb_comm *lc = lb_comm_new(w, w->world_group, rank, &w->mesh, "world");
    if (!lc) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "loopback comm: out of memory");
    *out = &lc->pub;
    return LTX2_OK;
}

void ltx2_loopback_world_abort(ltx2_loopback_world *w, const char *reason) {
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    lb_abort_locked(w, "the launcher aborted: %s", reason);
    pthread_mutex_unlock(&w->mu);
}

void ltx2_loopback_world_free(ltx2_loopback_world *w) {
    if (!w) return;
    lb_group *g = w->groups;
    while (g) {
        lb_group *next = g->next;
        free(g->slots);
        free(g->split_group);
        free(g->split_rank);
        free(g);
        g = next;
    }
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
