/* Context lifetime, status names, last-error recording and logging. */
#include "core/context.h"

#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ltx2_version(void) { return "0.1.0"; }

const char *ltx2_status_name(ltx2_status st) {
    switch (st) {
    case LTX2_OK: return "ok";
    case LTX2_ERR_INVALID_ARG: return "invalid argument";
    case LTX2_ERR_IO: return "io";
    case LTX2_ERR_FORMAT: return "format";
    case LTX2_ERR_DTYPE: return "dtype";
    case LTX2_ERR_SHAPE: return "shape";
    case LTX2_ERR_NOT_FOUND: return "not found";
    case LTX2_ERR_OOM: return "out of memory";
    case LTX2_ERR_UNSUPPORTED: return "unsupported";
    case LTX2_ERR_DEVICE: return "device";
    case LTX2_ERR_INTERNAL: return "internal";
    case LTX2_ERR_NUMERIC: return "numeric";
    case LTX2_ERR_CANCELLED: return "cancelled";
    }
    return "unknown";
}

void ltx2_context_params_init(ltx2_context_params *p) {
    memset(p, 0, sizeof(*p));
    p->log_level = LTX2_LOG_INFO;
}

ltx2_context *ltx2_context_create(const ltx2_context_params *p) {
    ltx2_context_params defaults;
    if (!p) {
        ltx2_context_params_init(&defaults);
        p = &defaults;
    }
    ltx2_context *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) return NULL;
    ctx->log_level = p->log_level;
    ctx->log_fn = p->log_fn;
    ctx->log_user = p->log_user;
    ctx->n_threads = p->n_threads;
    if (p->n_threads > 0) omp_set_num_threads(p->n_threads);
    return ctx;
}

void ltx2_context_free(ltx2_context *ctx) {
    if (ctx) free(ctx->scratch);
    free(ctx);
}

void *ltx2_ctx_scratch(ltx2_context *ctx, size_t bytes, size_t align) {
    if (!ctx || bytes == 0 || align == 0 || align > 4096 || (align & (align - 1))) return NULL;
    if (ctx->scratch && ctx->scratch_bytes >= bytes) return ctx->scratch; /* page-aligned: any align fits */
    free(ctx->scratch);
    const size_t page = 4096, size = (bytes + page - 1) / page * page;
    ctx->scratch = aligned_alloc(page, size);
    ctx->scratch_bytes = ctx->scratch ? size : 0;
    return ctx->scratch;
}

const char *ltx2_last_error(const ltx2_context *ctx) { return ctx ? ctx->last_error : ""; }
ltx2_status ltx2_last_status(const ltx2_context *ctx) { return ctx ? ctx->last_status : LTX2_OK; }

void ltx2_clear_error(ltx2_context *ctx) {
    if (!ctx) return;
    ctx->last_status = LTX2_OK;
    ctx->last_error[0] = '\0';
}

static const char *short_path(const char *file) {
    /* Keep "src/io/x.c" rather than the absolute build path. */
    const char *p = strstr(file, "src/");
    if (!p) p = strstr(file, "kernels/");
    return p ? p : file;
}

ltx2_status ltx2_set_error_at(ltx2_context *ctx, ltx2_status st, const char *file, int line,
                              const char *fmt, ...) {
    if (!ctx) return st;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(ctx->last_error, sizeof(ctx->last_error), fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    size_t used = (size_t)n < sizeof(ctx->last_error) ? (size_t)n : sizeof(ctx->last_error) - 1;
    snprintf(ctx->last_error + used, sizeof(ctx->last_error) - used, " [%s:%d]", short_path(file), line);
    ctx->last_status = st;
    return st;
}

ltx2_status ltx2_error_prefix(ltx2_context *ctx, const char *fmt, ...) {
    if (!ctx) return LTX2_ERR_INTERNAL;
    char prefix[LTX2_ERROR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    /* prefix + ": " + old message, cut at the buffer's end (the start says the most). */
    char old[LTX2_ERROR_CAP];
    memcpy(old, ctx->last_error, sizeof(old));
    size_t n = strnlen(prefix, sizeof(ctx->last_error) - 1);
    memcpy(ctx->last_error, prefix, n);
    size_t rest = sizeof(ctx->last_error) - 1 - n;
    size_t m = strnlen(old, sizeof(old));
    const char sep[] = ": ";
    size_t k = rest < 2 ? rest : 2;
    memcpy(ctx->last_error + n, sep, k);
    n += k;
    rest -= k;
    if (m > rest) m = rest;
    memcpy(ctx->last_error + n, old, m);
    ctx->last_error[n + m] = '\0';
    return ctx->last_status;
}

void ltx2_log(ltx2_context *ctx, ltx2_log_level level, const char *fmt, ...) {
    ltx2_log_level max = ctx ? ctx->log_level : LTX2_LOG_INFO;
    if (level > max) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (ctx && ctx->log_fn) {
        ctx->log_fn(level, msg, ctx->log_user);
        return;
    }
    static const char *const tags[] = {"error", "warn", "info", "debug"};
    fprintf(stderr, "ltx2 %s: %s\n", tags[level], msg);
}
