/* ltx2c public C API: context, status codes, last error, logging.
 * Every library function returns an ltx2_status; on failure the context's last error says what and
 * where (file, tensor name, expected vs got). The library never calls exit() or abort(). */
#ifndef LTX2_LTX2_H
#define LTX2_LTX2_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ltx2_status {
    LTX2_OK = 0,
    LTX2_ERR_INVALID_ARG,  /* a caller passed something out of range */
    LTX2_ERR_IO,           /* open/read/write/mmap failed */
    LTX2_ERR_FORMAT,       /* a file is malformed (bad header, bad JSON, offsets out of range) */
    LTX2_ERR_DTYPE,        /* unknown or unsupported dtype */
    LTX2_ERR_SHAPE,        /* shape mismatch or invalid shape */
    LTX2_ERR_NOT_FOUND,    /* a tensor, key or file that should exist does not */
    LTX2_ERR_OOM,          /* allocation failed */
    LTX2_ERR_UNSUPPORTED,  /* valid input this build cannot handle (e.g. no zlib, no CUDA) */
    LTX2_ERR_DEVICE,       /* CUDA / cuBLAS / cuDNN / NCCL failure */
    LTX2_ERR_INTERNAL      /* a bug in ltx2c */
} ltx2_status;

/* Short stable name of a status ("ok", "io", "format", ...). */
const char *ltx2_status_name(ltx2_status st);

typedef enum ltx2_log_level {
    LTX2_LOG_ERROR = 0,
    LTX2_LOG_WARN = 1,
    LTX2_LOG_INFO = 2,
    LTX2_LOG_DEBUG = 3
} ltx2_log_level;

typedef void (*ltx2_log_fn)(ltx2_log_level level, const char *msg, void *user);

typedef struct ltx2_context ltx2_context;

typedef struct ltx2_context_params {
    ltx2_log_level log_level; /* messages above this level are dropped (default INFO) */
    ltx2_log_fn log_fn;       /* NULL: write to stderr */
    void *log_user;
    int n_threads;            /* OpenMP threads; 0 = OpenMP's default */
} ltx2_context_params;

void ltx2_context_params_init(ltx2_context_params *p);
/* Returns NULL only when memory is exhausted. */
ltx2_context *ltx2_context_create(const ltx2_context_params *p);
void ltx2_context_free(ltx2_context *ctx);

/* The last error recorded on this context ("" when none), and its status. */
const char *ltx2_last_error(const ltx2_context *ctx);
ltx2_status ltx2_last_status(const ltx2_context *ctx);
void ltx2_clear_error(ltx2_context *ctx);

const char *ltx2_version(void);

#ifdef __cplusplus
}
#endif
#endif
