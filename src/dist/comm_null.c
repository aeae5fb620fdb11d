/* The null communicator (comm.h ltx2_comm_null): one rank of a mesh that exchanges nothing. Every
 * collective returns at once and leaves recv as it was; a split gives this rank's sub-communicator
 * from the mesh alone (ltx2_comm_split_axes keys ranks row-major over the split's axes, so the key
 * is the new rank). The memory planner runs each rank's forward on it, one rank after another, on
 * a planning backend whose values are never read: the ranks' allocations are counted without
 * moving a byte. */
#include <stdio.h>
#include <stdlib.h>

#include "core/context.h"
#include "dist/comm.h"

static ltx2_status null_moves(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                              ltx2_dtype dt) {
    (void)c, (void)ctx, (void)send, (void)recv, (void)count, (void)dt;
    return LTX2_OK;
}

static ltx2_status null_broadcast(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                  ltx2_dtype dt, int root) {
    (void)root;
    return null_moves(c, ctx, send, recv, count, dt);
}

static ltx2_status null_barrier(ltx2_comm *c, ltx2_context *ctx) {
    (void)c, (void)ctx;
    return LTX2_OK;
}

static ltx2_status null_split(ltx2_comm *c, ltx2_context *ctx, int color, int key, const ltx2_mesh *mesh,
                              ltx2_comm **out) {
    *out = NULL;
    if (color < 0) return LTX2_OK;
    const int n = ltx2_mesh_world_size(mesh);
    if (key < 0 || key >= n)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "null comm '%s': split key %d outside a %d-rank mesh", c->label,
                          key, n);
    return ltx2_comm_null(ctx, mesh, key, out);
}

static void null_abort(ltx2_comm *c, const char *reason) { (void)c, (void)reason; }

static void null_free(ltx2_comm *c) { free(c); }

static const ltx2_comm_ops null_ops = {
    .name = "null",
    .device_memory = true, /* it touches no buffer, so any memory will do */
    .all_gather = null_moves,
    .reduce_scatter = null_moves,
    .all_reduce = null_moves,
    .all_to_all = null_moves,
    .broadcast = null_broadcast,
    .barrier = null_barrier,
    .split = null_split,
    .abort = null_abort,
    .free = null_free,
};

ltx2_status ltx2_comm_null(ltx2_context *ctx, const ltx2_mesh *mesh, int rank, ltx2_comm **out) {
    if (!mesh || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "null comm: NULL argument");
    *out = NULL;
    const int n = ltx2_mesh_world_size(mesh);
    if (rank < 0 || rank >= n)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "null comm: rank %d of a %d-rank mesh", rank, n);
    ltx2_comm *c = calloc(1, sizeof *c);
    if (!c) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "null comm: a handle");
    c->ops = &null_ops;
    c->rank = rank;
    c->size = n;
    c->mesh = *mesh;
    c->impl = c;
    snprintf(c->label, sizeof c->label, "null");
    *out = c;
    return LTX2_OK;
}
