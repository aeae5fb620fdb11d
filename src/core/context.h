/* The one context struct that holds all mutable library state (last error, logging settings), and
 * the error/log helpers every module uses. */
#ifndef LTX2_CORE_CONTEXT_H
#define LTX2_CORE_CONTEXT_H

#include "ltx2/ltx2.h"

/* Long enough for a path, a tensor name and an expected-vs-got clause. */
#define LTX2_ERROR_CAP 1024

struct ltx2_context {
    ltx2_status last_status;
    char last_error[LTX2_ERROR_CAP];
    ltx2_log_level log_level;
    ltx2_log_fn log_fn;
    void *log_user;
    int n_threads;
    /* Working memory kept between calls (ltx2_ctx_scratch): the CPU GEMM's packing buffers. Fresh
     * pages for them on every call cost a page fault each, ~8% of an FFN-sized GEMM. */
    void *scratch;
    size_t scratch_bytes;
};

#if defined(__GNUC__)
#define LTX2_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LTX2_PRINTF(a, b)
#endif

/* Records st and the formatted message (with the source location appended) on ctx and returns st,
 * so callers write `return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "...", ...)`. ctx may be NULL. */
ltx2_status ltx2_set_error_at(ltx2_context *ctx, ltx2_status st, const char *file, int line,
                              const char *fmt, ...) LTX2_PRINTF(5, 6);
#define LTX2_ERROR(ctx, st, ...) ltx2_set_error_at((ctx), (st), __FILE__, __LINE__, __VA_ARGS__)

/* Prepends "<context>: " to the current error message, for callers that add where it happened
 * (e.g. which file was being loaded). Returns the current status. */
ltx2_status ltx2_error_prefix(ltx2_context *ctx, const char *fmt, ...) LTX2_PRINTF(2, 3);

#define LTX2_TRY(expr)                         \
    do {                                       \
        ltx2_status ltx2_try_st_ = (expr);     \
        if (ltx2_try_st_ != LTX2_OK) return ltx2_try_st_; \
    } while (0)

/* ctx's scratch memory, at least `bytes`, aligned to `align` (a power of two dividing 4096); its
 * contents are undefined and it stays ctx's (valid until the next call or ltx2_context_free). NULL
 * when ctx is NULL or memory is short: the caller allocates for itself. One user at a time: a
 * context is one thread's. */
void *ltx2_ctx_scratch(ltx2_context *ctx, size_t bytes, size_t align);

void ltx2_log(ltx2_context *ctx, ltx2_log_level level, const char *fmt, ...) LTX2_PRINTF(3, 4);
#define LTX2_LOGE(ctx, ...) ltx2_log((ctx), LTX2_LOG_ERROR, __VA_ARGS__)
#define LTX2_LOGW(ctx, ...) ltx2_log((ctx), LTX2_LOG_WARN, __VA_ARGS__)
#define LTX2_LOGI(ctx, ...) ltx2_log((ctx), LTX2_LOG_INFO, __VA_ARGS__)
#define LTX2_LOGD(ctx, ...) ltx2_log((ctx), LTX2_LOG_DEBUG, __VA_ARGS__)

#endif
