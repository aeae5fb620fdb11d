/* Mesh arithmetic (rank <-> coordinates) and the backend-independent collective wrappers that
 * validate arguments before dispatching to a backend's op table. */
#include "dist/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"

static const char *const axis_names[LTX2_AXIS_COUNT] = {"data", "fsdp", "context", "tensor"};

const char *ltx2_mesh_axis_name(ltx2_mesh_axis a) {
    return (a >= 0 && a < LTX2_AXIS_COUNT) ? axis_names[a] : "?";
}

ltx2_status ltx2_mesh_init(ltx2_context *ctx, ltx2_mesh *m, int data, int fsdp, int context, int tensor) {
    const int s[LTX2_AXIS_COUNT] = {data, fsdp, context, tensor};
    long long world = 1;
    for (int a = 0; a < LTX2_AXIS_COUNT; a++) {
        if (s[a] < 1)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mesh axis '%s' has size %d; every axis needs >= 1",
                              axis_names[a], s[a]);
        world *= s[a];
        if (world > LTX2_MESH_MAX_RANKS)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mesh %dx%dx%dx%d has more than %d ranks", data,
                              fsdp, context, tensor, LTX2_MESH_MAX_RANKS);
    }
    for (int a = 0; a < LTX2_AXIS_COUNT; a++) m->size[a] = s[a];
    return LTX2_OK;
}

ltx2_status ltx2_mesh_parse(ltx2_context *ctx, const char *text, ltx2_mesh *out) {
    int v[LTX2_AXIS_COUNT];
    const char *p = text ? text : "";
    for (int a = 0; a < LTX2_AXIS_COUNT; a++) {
        char *end = NULL;
        if (*p < '0' || *p > '9')
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                              "mesh '%s': expected 4 positive integers 'data,fsdp,context,tensor' (e.g. 1,1,8,1)",
                              text ? text : "(null)");
        long x = strtol(p, &end, 10);
        if (x < 1 || x > LTX2_MESH_MAX_RANKS)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mesh '%s': axis '%s' size %ld out of range [1, %d]",
                              text, axis_names[a], x, LTX2_MESH_MAX_RANKS);
        v[a] = (int)x;
        p = end;
        if (a + 1 < LTX2_AXIS_COUNT) {
            if (*p != ',')
                return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                                  "mesh '%s': expected 4 comma-separated sizes 'data,fsdp,context,tensor'", text);
            p++;
        }
    }
    if (*p)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mesh '%s': trailing characters after 4 sizes", text);
    return ltx2_mesh_init(ctx, out, v[0], v[1], v[2], v[3]);
}

int ltx2_mesh_world_size(const ltx2_mesh *m) {
    return m->size[0] * m->size[1] * m->size[2] * m->size[3];
}

int ltx2_mesh_axes_size(const ltx2_mesh *m, unsigned axis_mask) {
    int n = 1;
    for (int a = 0; a < LTX2_AXIS_COUNT; a++)
        if (axis_mask & LTX2_AXIS_BIT(a)) n *= m->size[a];
    return n;
}

void ltx2_mesh_coords(const ltx2_mesh *m, int rank, int coords[LTX2_AXIS_COUNT]) {
    for (int a = LTX2_AXIS_COUNT - 1; a >= 0; a--) {
        coords[a] = rank % m->size[a];
        rank /= m->size[a];
    }
}

int ltx2_mesh_rank(const ltx2_mesh *m, const int coords[LTX2_AXIS_COUNT]) {
    int r = 0;
    for (int a = 0; a < LTX2_AXIS_COUNT; a++) r = r * m->size[a] + coords[a];
    return r;
}

static ltx2_status check_common(ltx2_comm *c, ltx2_context *ctx, const char *op, ltx2_dtype dt) {
    if (!c || !c->ops) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: communicator is NULL", op);
    if (dt != LTX2_F32 && dt != LTX2_BF16)
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "%s on comm '%s': dtype %s not supported (f32 or bf16)", op,
                          c->label, ltx2_dtype_name(dt));
    return LTX2_OK;
}

static ltx2_status check_bufs(ltx2_comm *c, ltx2_context *ctx, const char *op, const void *send, void *recv,
                              size_t count) {
    if (count > 0 && (!send || !recv))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s on comm '%s' rank %d: NULL buffer with count %zu", op,
                          c->label, c->rank, count);
    return LTX2_OK;
}

ltx2_status ltx2_comm_all_gather(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                 ltx2_dtype dt) {
    LTX2_TRY(check_common(c, ctx, "all_gather", dt));
    LTX2_TRY(check_bufs(c, ctx, "all_gather", send, recv, count));
    return c->ops->all_gather(c, ctx, send, recv, count, dt);
}

ltx2_status ltx2_comm_reduce_scatter(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv,
                                     size_t count, ltx2_dtype dt) {
    LTX2_TRY(check_common(c, ctx, "reduce_scatter", dt));
    LTX2_TRY(check_bufs(c, ctx, "reduce_scatter", send, recv, count));
    return c->ops->reduce_scatter(c, ctx, send, recv, count, dt);
}

ltx2_status ltx2_comm_all_reduce(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                 ltx2_dtype dt) {
    LTX2_TRY(check_common(c, ctx, "all_reduce", dt));
    LTX2_TRY(check_bufs(c, ctx, "all_reduce", send, recv, count));
    return c->ops->all_reduce(c, ctx, send, recv, count, dt);
}

ltx2_status ltx2_comm_all_to_all(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                 ltx2_dtype dt) {
    LTX2_TRY(check_common(c, ctx, "all_to_all", dt));
    LTX2_TRY(check_bufs(c, ctx, "all_to_all", send, recv, count));
    return c->ops->all_to_all(c, ctx, send, recv, count, dt);
}

ltx2_status ltx2_comm_broadcast(ltx2_comm *c, ltx2_context *ctx, const void *send, void *recv, size_t count,
                                ltx2_dtype dt, int root) {
    LTX2_TRY(check_common(c, ctx, "broadcast", dt));
    if (root < 0 || root >= c->size)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "broadcast on comm '%s': root %d outside [0, %d)", c->label,
                          root, c->size);
    if (count > 0 && (!recv || (c->rank == root && !send)))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "broadcast on comm '%s' rank %d: NULL buffer with count %zu",
                          c->label, c->rank, count);
    return c->ops->broadcast(c, ctx, send, recv, count, dt, root);
}

ltx2_status ltx2_comm_barrier(ltx2_comm *c, ltx2_context *ctx) {
    if (!c || !c->ops) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "barrier: communicator is NULL");
    return c->ops->barrier(c, ctx);
}

ltx2_status ltx2_comm_split_axes(ltx2_comm *c, ltx2_context *ctx, unsigned axis_mask, ltx2_comm **out) {
    if (!c || !c->ops || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "split_axes: NULL argument");
    *out = NULL;
    if (axis_mask == 0 || (axis_mask & ~LTX2_AXIS_ALL))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "split_axes on comm '%s': axis mask 0x%x names no valid axis",
                          c->label, axis_mask);
    int coords[LTX2_AXIS_COUNT];
    ltx2_mesh_coords(&c->mesh, c->rank, coords);
    /* color: linear index over the axes outside the mask; key: over the axes inside it. */
    int color = 0, key = 0;
    ltx2_mesh sub;
    char label[sizeof(c->label)] = "";
    size_t len = 0;
    for (int a = 0; a < LTX2_AXIS_COUNT; a++) {
        if (axis_mask & LTX2_AXIS_BIT(a)) {
            key = key * c->mesh.size[a] + coords[a];
            sub.size[a] = c->mesh.size[a];
            int n = snprintf(label + len, sizeof(label) - len, "%s%s", len ? "+" : "", axis_names[a]);
            if (n > 0 && (size_t)n < sizeof(label) - len) len += (size_t)n;
        } else {
            color = color * c->mesh.size[a] + coords[a];
            sub.size[a] = 1;
        }
    }
    ltx2_status st = c->ops->split(c, ctx, color, key, &sub, out);
    if (st == LTX2_OK && *out) memcpy((*out)->label, label, sizeof(label));
    return st;
}

ltx2_status ltx2_comm_broadcast_text(ltx2_comm *c, ltx2_context *ctx, const char *text, char **out) {
    if (!c || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "broadcast_text: NULL argument");
    *out = NULL;
    const size_t have = c->rank == 0 && text ? strlen(text) : 0;
    if (have > LTX2_COMM_TEXT_MAX)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "broadcast_text on comm '%s': %zu bytes, at most %zu", c->label,
                          have, LTX2_COMM_TEXT_MAX);
    float len = (float)have;
    LTX2_TRY(ltx2_comm_broadcast(c, ctx, &len, &len, 1, LTX2_F32, 0));
    const size_t n = (size_t)len, words = n / sizeof(float) + 1;
    float *buf = calloc(words, sizeof(float));
    if (!buf) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "broadcast_text: %zu bytes", n);
    if (c->rank == 0 && n) memcpy(buf, text, n);
    ltx2_status st = ltx2_comm_broadcast(c, ctx, buf, buf, words, LTX2_F32, 0);
    if (st == LTX2_OK && n) {
        *out = malloc(n + 1);
        if (!*out) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "broadcast_text: %zu bytes", n);
        } else {
            memcpy(*out, buf, n);
            (*out)[n] = '\0';
        }
    }
    free(buf);
    return st;
}

ltx2_status ltx2_comm_broadcast_chunked(ltx2_comm *c, ltx2_context *ctx, void *buf, size_t count, ltx2_dtype dt,
                                        int root) {
    const size_t es = ltx2_dtype_size(dt);
    for (size_t o = 0; o < count; o += LTX2_COMM_CHUNK) {
        const size_t n = count - o < LTX2_COMM_CHUNK ? count - o : LTX2_COMM_CHUNK;
        char *p = (char *)buf + o * es;
        LTX2_TRY(ltx2_comm_broadcast(c, ctx, p, p, n, dt, root));
    }
    return LTX2_OK;
}

ltx2_status ltx2_comm_count_equal(ltx2_comm *c, ltx2_context *ctx, const void *key, size_t nbytes, int *count) {
    if (!c || !key || !count) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "count_equal: NULL argument");
    if (nbytes == 0 || nbytes > LTX2_COMM_KEY_MAX)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "count_equal on comm '%s': a key of %zu bytes, expected 1 .. %d",
                          c->label, nbytes, LTX2_COMM_KEY_MAX);
    const size_t words = (nbytes + sizeof(float) - 1) / sizeof(float), row = words * sizeof(float);
    float mine[LTX2_COMM_KEY_MAX / sizeof(float)] = {0};
    memcpy(mine, key, nbytes);
    float *all = malloc((size_t)c->size * row);
    if (!all) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "count_equal: %d keys", c->size);
    const ltx2_status st = ltx2_comm_all_gather(c, ctx, mine, all, words, LTX2_F32);
    if (st == LTX2_OK) {
        *count = 0;
        for (int r = 0; r < c->size; r++) *count += !memcmp((const char *)all + (size_t)r * row, mine, row);
    }
    free(all);
    return st;
}

void ltx2_comm_abort(ltx2_comm *c, const char *reason) {
    if (c && c->ops) c->ops->abort(c, reason ? reason : "aborted");
}

void ltx2_comm_free(ltx2_comm *c) {
    if (c && c->ops) c->ops->free(c);
}
