/* The scratch-tensor pool of backend_pool.h: a list of buffers with their byte sizes and a stack
 * of the ones taken; release pops the stack, take looks for a free buffer of the exact size
 * first. Plus the host f32 <-> backend tensor copies every model needs. */
#include "backend/backend_pool.h"

#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"

typedef struct pool_buf {
    void *ptr;
    size_t nbytes;
    bool taken;
    bool used; /* taken since the last trim / clear */
} pool_buf;

struct ltx2_bpool {
    const ltx2_backend *be;
    pool_buf *bufs;
    size_t n, cap;
    size_t *stack; /* indices into bufs, in take order */
    size_t depth, stack_cap;
    size_t bytes, peak;
    int64_t allocs;
    int64_t key[LTX2_BPOOL_KEY_MAX]; /* the last run's (ltx2_bpool_begin_run) */
    int nkey;
    bool has_run;
};

ltx2_status ltx2_bpool_create(ltx2_context *ctx, const ltx2_backend *be, ltx2_bpool **out) {
    if (!be || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "backend pool: NULL argument");
    *out = calloc(1, sizeof **out);
    if (!*out) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "backend pool: struct");
    (*out)->be = be;
    return LTX2_OK;
}

void ltx2_bpool_free(ltx2_bpool *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) p->be->free(p->be, p->bufs[i].ptr);
    free(p->bufs);
    free(p->stack);
    free(p);
}

const ltx2_backend *ltx2_bpool_backend(const ltx2_bpool *p) { return p->be; }

static ltx2_status take(ltx2_context *ctx, ltx2_bpool *p, size_t nbytes, void **out) {
    size_t idx = p->n;
    for (size_t i = 0; i < p->n; i++)
        if (!p->bufs[i].taken && p->bufs[i].nbytes == nbytes) {
            idx = i;
            break;
        }
    if (p->depth == p->stack_cap) {
        size_t cap = p->stack_cap ? 2 * p->stack_cap : 64;
        size_t *s = realloc(p->stack, cap * sizeof *s);
        if (!s) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "backend pool: take stack");
        p->stack = s;
        p->stack_cap = cap;
    }
    if (idx == p->n) {
        if (p->n == p->cap) {
            size_t cap = p->cap ? 2 * p->cap : 64;
            pool_buf *b = realloc(p->bufs, cap * sizeof *b);
            if (!b) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "backend pool: buffer list");
            p->bufs = b;
            p->cap = cap;
        }
        void *ptr = NULL;
        LTX2_TRY(p->be->alloc(p->be, ctx, nbytes, &ptr));
        p->bufs[p->n++] = (pool_buf){ptr, nbytes, false, false};
        p->bytes += nbytes;
        p->allocs++;
        if (p->bytes > p->peak) p->peak = p->bytes;
    }
    p->bufs[idx].taken = true;
    p->bufs[idx].used = true;
    p->stack[p->depth++] = idx;
    *out = p->bufs[idx].ptr;
    return LTX2_OK;
}

ltx2_status ltx2_bpool_tensor(ltx2_context *ctx, ltx2_bpool *p, ltx2_dtype dt, int ndim, const int64_t *shape,
                              ltx2_tensor *out) {
    ltx2_tensor t = ltx2_tensor_make(NULL, dt, ndim, shape);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0) return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "backend pool: negative dim %d", i);
    LTX2_TRY(take(ctx, p, ltx2_tensor_nbytes(&t), &t.data));
    t.device = p->be->device;
    *out = t;
    return LTX2_OK;
}

ltx2_status ltx2_bpool_upload_f32(ltx2_context *ctx, ltx2_bpool *p, const float *host, ltx2_dtype dt, int ndim,
                                  const int64_t *shape, ltx2_tensor *out) {
    LTX2_TRY(ltx2_bpool_tensor(ctx, p, dt, ndim, shape, out));
    return ltx2_backend_from_host_f32(ctx, p->be, host, out);
}

ltx2_status ltx2_bpool_rows(ltx2_context *ctx, ltx2_bpool *p, const int64_t *rows, int64_t n, ltx2_tensor *out) {
    LTX2_TRY(ltx2_bpool_tensor(ctx, p, LTX2_I32, 1, &n, out));
    int32_t *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (!tmp) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "backend pool: %lld row indices", (long long)n);
    for (int64_t i = 0; i < n; i++) {
        if (rows[i] < 0 || rows[i] > INT32_MAX) {
            free(tmp);
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "backend pool: row index %lld out of int32 range",
                              (long long)rows[i]);
        }
        tmp[i] = (int32_t)rows[i];
    }
    ltx2_status st = p->be->upload(p->be, ctx, out->data, tmp, (size_t)n * sizeof *tmp);
    free(tmp);
    return st;
}

size_t ltx2_bpool_mark(const ltx2_bpool *p) { return p->depth; }

void ltx2_bpool_release(ltx2_bpool *p, size_t mark) {
    while (p->depth > mark) p->bufs[p->stack[--p->depth]].taken = false;
}

size_t ltx2_bpool_bytes(const ltx2_bpool *p) { return p->bytes; }
size_t ltx2_bpool_peak_bytes(const ltx2_bpool *p) { return p->peak; }
int64_t ltx2_bpool_allocs(const ltx2_bpool *p) { return p->allocs; }

/* Frees every buffer (only_unused: those no take used since the last drop) and compacts the list
 * (nothing is taken: no stack index moves under a taker); the survivors start a new epoch, unused. */
static void drop_buffers(ltx2_bpool *p, bool only_unused) {
    if (p->depth != 0) return; /* a caller bug: the buffers are in use */
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (!only_unused || !p->bufs[i].used) {
            p->be->free(p->be, p->bufs[i].ptr);
            p->bytes -= p->bufs[i].nbytes;
            continue;
        }
        p->bufs[k] = p->bufs[i];
        p->bufs[k++].used = false;
    }
    p->n = k;
}

void ltx2_bpool_clear(ltx2_bpool *p) {
    if (p) drop_buffers(p, false);
}

void ltx2_bpool_trim_unused(ltx2_bpool *p) {
    if (p) drop_buffers(p, true);
}

bool ltx2_bpool_begin_run(ltx2_bpool *p, const int64_t *key, int n) {
    if (n < 0) n = 0;
    if (n > LTX2_BPOOL_KEY_MAX) n = LTX2_BPOOL_KEY_MAX;
    const bool changed = p->has_run && (p->nkey != n || memcmp(p->key, key, (size_t)n * sizeof *key) != 0);
    if (changed) ltx2_bpool_clear(p);
    if (n) memcpy(p->key, key, (size_t)n * sizeof *key);
    p->nkey = n;
    p->has_run = true;
    return changed;
}

void ltx2_bpool_end_run(ltx2_bpool *p, bool ok) {
    ltx2_bpool_release(p, 0);
    if (ok) ltx2_bpool_trim_unused(p);
    else ltx2_bpool_clear(p);
}

ltx2_status ltx2_backend_to_host_f32(ltx2_context *ctx, const ltx2_backend *be, const ltx2_tensor *t, float *dst) {
    if (!ltx2_tensor_is_contiguous(t))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s download: tensor must be contiguous", be->name);
    const size_t n = (size_t)ltx2_tensor_numel(t);
    if (t->dtype == LTX2_F32) return be->download(be, ctx, dst, t->data, n * sizeof(float));
    void *raw = malloc(n ? n * ltx2_dtype_size(t->dtype) : 1);
    if (!raw) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s download: %zu elements", be->name, n);
    ltx2_status st = be->download(be, ctx, raw, t->data, ltx2_tensor_nbytes(t));
    if (st == LTX2_OK) st = ltx2_convert(ctx, dst, LTX2_F32, raw, t->dtype, n);
    free(raw);
    return st;
}

ltx2_status ltx2_backend_from_host_f32(ltx2_context *ctx, const ltx2_backend *be, const float *src, ltx2_tensor *t) {
    if (!ltx2_tensor_is_contiguous(t))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s upload: tensor must be contiguous", be->name);
    const size_t n = (size_t)ltx2_tensor_numel(t);
    if (t->dtype == LTX2_F32) return be->upload(be, ctx, t->data, src, n * sizeof(float));
    void *raw = malloc(n ? n * ltx2_dtype_size(t->dtype) : 1);
    if (!raw) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s upload: %zu elements", be->name, n);
    ltx2_status st = ltx2_convert(ctx, raw, t->dtype, src, LTX2_F32, n);
    if (st == LTX2_OK) st = be->upload(be, ctx, t->data, raw, ltx2_tensor_nbytes(t));
    free(raw);
    return st;
}
