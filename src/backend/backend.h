/* The one place that picks CPU or CUDA: a small op table per device. Callers use the
 * ltx2_backend_<op>() wrappers, which check shapes, dtypes, devices and supports() once for every
 * backend and then call the table. Tensors are ltx2_tensor views whose data lives on the
 * backend's device (allocate with ltx2_backend_alloc, move data with upload/download). */
#ifndef LTX2_BACKEND_BACKEND_H
#define LTX2_BACKEND_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "core/context.h"
#include "cpu/cpu_ops.h"
#include "ltx2/tensor.h"

typedef enum ltx2_op {
    LTX2_OP_GEMM = 0,   /* y[.., N] = x[.., K] * W^T (+ bias); W [N,K] or [K,N] */
    LTX2_OP_RMS_NORM,   /* over the last dim, optional weight */
    LTX2_OP_LAYER_NORM, /* over the last dim, optional weight and bias */
    LTX2_OP_SOFTMAX,    /* over the last dim */
    LTX2_OP_GELU_TANH,  /* torch gelu(approximate='tanh') */
    LTX2_OP_SILU,
    LTX2_OP_ADD,        /* numpy broadcasting */
    LTX2_OP_MUL,        /* numpy broadcasting */
    LTX2_OP_CONVERT,    /* dtype conversion (f32 <-> bf16); the dtype asked about is the source */
    LTX2_OP_COUNT
} ltx2_op;

/* "gemm", "rms_norm", ... ; NULL for an unknown op. */
const char *ltx2_op_name(ltx2_op op);
/* Parses an op name; returns false when unknown. */
bool ltx2_op_from_name(const char *name, ltx2_op *out);

typedef struct ltx2_backend ltx2_backend;

/* The op table. Op entries receive arguments already validated by the wrappers below. */
struct ltx2_backend {
    const char *name;   /* "cpu" or "cuda" */
    ltx2_device device; /* where its tensors live */
    int device_index;
    void *impl;         /* backend-private state (streams, handles); NULL for the CPU */

    bool (*supports)(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt);
    ltx2_status (*alloc)(const ltx2_backend *be, ltx2_context *ctx, size_t nbytes, void **out);
    void (*free)(const ltx2_backend *be, void *ptr);
    /* host -> device and device -> host, complete on return; copy is device -> device, ordered
     * with the backend's other work. */
    ltx2_status (*upload)(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src,
                          size_t nbytes);
    ltx2_status (*download)(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src,
                            size_t nbytes);
    ltx2_status (*copy)(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src,
                        size_t nbytes);
    /* Waits for all queued work and reports any asynchronous device error. */
    ltx2_status (*sync)(const ltx2_backend *be, ltx2_context *ctx);

    ltx2_status (*gemm)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                        const ltx2_tensor *w, ltx2_b_layout w_layout, const ltx2_tensor *bias,
                        ltx2_tensor *y);
    ltx2_status (*rms_norm)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                            const ltx2_tensor *weight, float eps, ltx2_tensor *y);
    ltx2_status (*layer_norm)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                              const ltx2_tensor *weight, const ltx2_tensor *bias, float eps,
                              ltx2_tensor *y);
    ltx2_status (*softmax)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                           ltx2_tensor *y);
    ltx2_status (*unary)(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                         const ltx2_tensor *x, ltx2_tensor *y);
    ltx2_status (*binary)(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                          const ltx2_tensor *a, const ltx2_tensor *b, ltx2_tensor *y);
    ltx2_status (*convert)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                           ltx2_tensor *y);

    void (*destroy)(ltx2_backend *be); /* NULL for the static CPU backend */
};

/* The CPU backend (OpenMP fp32 reference ops). Static and immutable; never freed. */
const ltx2_backend *ltx2_backend_cpu(void);

/* Creates a CUDA backend on device_index (own stream, cuBLASLt handle and workspace).
 * LTX2_ERR_UNSUPPORTED when this build has no CUDA; LTX2_ERR_DEVICE when no usable device exists
 * (the message says which: no device, bad index, driver error). */
ltx2_status ltx2_backend_cuda_create(ltx2_context *ctx, int device_index, ltx2_backend **out);

/* Frees a backend from *_create (NULL and the CPU backend are ignored). */
void ltx2_backend_free(const ltx2_backend *be);

bool ltx2_backend_supports(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt);

/* ---- validated wrappers (all tensors on be->device, same dtype unless stated) ---- */

/* y = x W^T + bias. x [.., K] and y [.., N] contiguous with the same leading dims; w [N, K]
 * (LTX2_B_NK, torch Linear) or [K, N] (LTX2_B_KN), contiguous; bias [N] or NULL. */
ltx2_status ltx2_backend_gemm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                              const ltx2_tensor *w, ltx2_b_layout w_layout,
                              const ltx2_tensor *bias, ltx2_tensor *y);
/* x, y same shape, contiguous; weight/bias [last dim] or NULL. */
ltx2_status ltx2_backend_rms_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                  const ltx2_tensor *weight, float eps, ltx2_tensor *y);
ltx2_status ltx2_backend_layer_norm(const ltx2_backend *be, ltx2_context *ctx,
                                    const ltx2_tensor *x, const ltx2_tensor *weight,
                                    const ltx2_tensor *bias, float eps, ltx2_tensor *y);
ltx2_status ltx2_backend_softmax(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 ltx2_tensor *y);
/* op is LTX2_OP_GELU_TANH or LTX2_OP_SILU; x, y same shape, contiguous. */
ltx2_status ltx2_backend_unary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                               const ltx2_tensor *x, ltx2_tensor *y);
/* op is LTX2_OP_ADD or LTX2_OP_MUL; any strides; y has the broadcast shape. */
ltx2_status ltx2_backend_binary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                                const ltx2_tensor *a, const ltx2_tensor *b, ltx2_tensor *y);
/* x, y same shape, contiguous, dtypes may differ (f32 <-> bf16). */
ltx2_status ltx2_backend_convert(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 ltx2_tensor *y);

/* Benchmark baseline only (bench/): one cuBLASLt matmul y[M,N] = x[M,K] w[N,K]^T planned once
 * (descriptors + heuristic algorithm, no bias) and launched `iters` times on the backend's stream
 * without syncing. dt is LTX2_F32 or LTX2_BF16. LTX2_ERR_UNSUPPORTED on a non-CUDA backend. */
ltx2_status ltx2_backend_cuda_gemm_baseline(const ltx2_backend *be, ltx2_context *ctx,
                                            ltx2_dtype dt, int64_t M, int64_t N, int64_t K,
                                            const void *x, const void *w, void *y, int iters);

#endif
