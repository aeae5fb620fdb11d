/* The C seam between src/ and kernels/: extern "C" launchers with plain C types only.
 * Each launcher enqueues work on `stream` (a cudaStream_t passed as void*, NULL = default stream)
 * and returns a cudaError_t as int: 0 on success, else the launch/argument error. They never
 * synchronise; callers check asynchronous errors at their next sync. Pointers are device memory.
 * Tensors are contiguous row-major unless strides are given. */
#ifndef LTX2_KERNELS_H
#define LTX2_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types the kernels accept (storage; all arithmetic is fp32). */
enum { LTX2_KDT_F32 = 0, LTX2_KDT_BF16 = 1 };

enum { LTX2_KUNARY_GELU_TANH = 0, LTX2_KUNARY_SILU = 1 };
enum { LTX2_KBINARY_ADD = 0, LTX2_KBINARY_MUL = 1 };

/* Max dims of a broadcast plan (matches LTX2_MAX_DIMS in include/ltx2/tensor.h). */
#define LTX2_KMAX_DIMS 8

/* Over the last dim of x[rows, dim]; weight/bias have dim elements of the same dtype or are
 * NULL; y may alias x. */
int ltx2_k_rms_norm(void *stream, int dtype, const void *x, void *y, const void *weight,
                    int64_t rows, int64_t dim, float eps);
int ltx2_k_layer_norm(void *stream, int dtype, const void *x, void *y, const void *weight,
                      const void *bias, int64_t rows, int64_t dim, float eps);
int ltx2_k_softmax(void *stream, int dtype, const void *x, void *y, int64_t rows, int64_t dim);

/* y[i] = f(x[i]) for n elements; y may alias x. */
int ltx2_k_unary(void *stream, int dtype, int op, const void *x, void *y, int64_t n);

/* out = a (op) b over an already-broadcast plan: ndim dims of `shape`, per-operand strides in
 * elements (0 = broadcast). All three share dtype. */
int ltx2_k_binary(void *stream, int dtype, int op, const void *a, const void *b, void *out,
                  int ndim, const int64_t *shape, const int64_t *a_strides,
                  const int64_t *b_strides, const int64_t *out_strides);

/* dst[i] = (dst_dtype) src[i]; f32->bf16 rounds to nearest even, NaN stays NaN. */
int ltx2_k_convert(void *stream, int src_dtype, const void *src, int dst_dtype, void *dst,
                   int64_t n);

#ifdef __cplusplus
}
#endif
#endif
