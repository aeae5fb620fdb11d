/* CPU reference ops (fp32, OpenMP): the oracle every other backend is tested against.
 * Raw-pointer APIs on contiguous row-major data, except the broadcasting binary ops, which take
 * strided ltx2_tensor views. Every function validates its arguments and returns an ltx2_status. */
#ifndef LTX2_CPU_CPU_OPS_H
#define LTX2_CPU_CPU_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/context.h"
#include "core/dtype.h"
#include "backend/op_desc.h"
#include "ltx2/tensor.h"

/* C[M,N] = alpha * A[M,K] * op(B) + beta * C + bias[N] (bias may be NULL; it is not scaled by
 * alpha). Row-major with leading dimensions lda, ldb, ldc (in elements). When beta == 0, C is
 * not read (it may hold garbage/NaN), as in BLAS. */
ltx2_status ltx2_cpu_gemm(ltx2_context *ctx, int64_t M, int64_t N, int64_t K, float alpha,
                          const float *A, int64_t lda, const float *B, int64_t ldb,
                          ltx2_b_layout b_layout, float beta, float *C, int64_t ldc,
                          const float *bias);
/* The same with B in b_dtype: f32, or bf16 (a checkpoint's stored weights, widened exactly while
 * packing: bitwise the f32 result of the same values, at half the resident bytes). */
ltx2_status ltx2_cpu_gemm_wdt(ltx2_context *ctx, int64_t M, int64_t N, int64_t K, float alpha,
                              const float *A, int64_t lda, const void *B, ltx2_dtype b_dtype, int64_t ldb,
                              ltx2_b_layout b_layout, float beta, float *C, int64_t ldc, const float *bias);

/* torch GroupNorm on channels-last x [n, inner, c] (inner: every position of a sample): per sample
 * and group of c/groups consecutive channels, mean and biased variance in double over inner x
 * c/groups values, y = (x - mean) * rstd * weight + bias (NULL: 1 / 0), then SiLU when silu; y may
 * alias x. */
ltx2_status ltx2_cpu_group_norm(ltx2_context *ctx, const float *x, float *y, int64_t n, int64_t inner, int64_t c,
                                int64_t groups, float eps, const float *weight, const float *bias, bool silu);

/* ltx-core BlurDownsample on channels-last frames x [frames, h, w, c] -> y [frames, (h-1)/s+1,
 * (w-1)/s+1, c]: outer([1,4,6,4,1])^2 / 256 per channel, zero padding 2, stride s. */
ltx2_status ltx2_cpu_blur_downsample(ltx2_context *ctx, const float *x, int64_t frames, int64_t h, int64_t w,
                                     int64_t c, int64_t s, float *y);

/* Row-wise over the last dim of x[rows, dim]; y may alias x.
 * RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight            (weight may be NULL = ones)
 * LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias (biased var, as torch; both NULLable) */
/* ss[r] = sum_i x[r, i]^2 (accumulated in double, rounded once); the tensor-parallel RMSNorm's
 * partial statistic. */
ltx2_status ltx2_cpu_row_sumsq(ltx2_context *ctx, const float *x, float *ss, int64_t rows, int64_t dim);
/* st[3 r + 0..2] = the sum (accumulated in double), min and max of row r; NaN never wins a min or max. */
ltx2_status ltx2_cpu_row_stats(ltx2_context *ctx, const float *x, float *st, int64_t rows, int64_t dim);
/* y[r, :] = x[r, :] / sqrt(ss[r] / n + eps) * weight (NULL = 1), the normalisation from a given
 * sum of squares over a row of width n (y may alias x). */
ltx2_status ltx2_cpu_rms_apply(ltx2_context *ctx, const float *x, const float *ss, int64_t n, float *y, int64_t rows,
                               int64_t dim, const float *weight, float eps);
ltx2_status ltx2_cpu_rms_norm(ltx2_context *ctx, const float *x, float *y, int64_t rows,
                              int64_t dim, const float *weight, float eps);
ltx2_status ltx2_cpu_layer_norm(ltx2_context *ctx, const float *x, float *y, int64_t rows,
                                int64_t dim, const float *weight, const float *bias, float eps);

/* Numerically stable softmax over the last dim of x[rows, dim]; y may alias x. */
ltx2_status ltx2_cpu_softmax(ltx2_context *ctx, const float *x, float *y, int64_t rows,
                             int64_t dim);

/* Elementwise activations over n values; y may alias x.
 * gelu_tanh matches torch.nn.functional.gelu(x, approximate='tanh'). */
ltx2_status ltx2_cpu_gelu_tanh(ltx2_context *ctx, const float *x, float *y, int64_t n);
ltx2_status ltx2_cpu_silu(ltx2_context *ctx, const float *x, float *y, int64_t n);
/* The vocoders' pointwise ops (NaN passes through each, as torch's): leaky_relu (x >= 0 ? x :
 * x * slope), tanh, hardtanh (clamp to [-1, 1]), log_floor (log(max(x, floor))), div_scalar
 * (x / d, torch's mean over a stack). */
ltx2_status ltx2_cpu_leaky_relu(ltx2_context *ctx, const float *x, float *y, int64_t n, float slope);
ltx2_status ltx2_cpu_tanh(ltx2_context *ctx, const float *x, float *y, int64_t n);
ltx2_status ltx2_cpu_hardtanh(ltx2_context *ctx, const float *x, float *y, int64_t n);
ltx2_status ltx2_cpu_log_floor(ltx2_context *ctx, const float *x, float *y, int64_t n, float floor_value);
ltx2_status ltx2_cpu_div_scalar(ltx2_context *ctx, const float *x, float *y, int64_t n, float d);

/* BigVGAN SnakeBeta over channels-last x [rows, c]: y = x + inv_beta[ch] * sin(x * alpha[ch])^2,
 * alpha = exp(stored alpha), inv_beta = 1 / (exp(stored beta) + eps) precomputed; y may alias x. */
ltx2_status ltx2_cpu_snake(ltx2_context *ctx, const float *x, float *y, const float *alpha, const float *inv_beta,
                           int64_t rows, int64_t c);
/* y[r, f] = sqrt(x[r, f]^2 + x[r, nf + f]^2) for x [rows, 2*nf] (an STFT's real parts, then its
 * imaginary parts) and y [rows, nf]. */
ltx2_status ltx2_cpu_complex_abs(ltx2_context *ctx, const float *x, float *y, int64_t rows, int64_t nf);

typedef enum ltx2_binary_op { LTX2_BINARY_ADD = 0, LTX2_BINARY_MUL = 1 } ltx2_binary_op;

/* out = a (op) b with numpy broadcasting (shapes aligned at the trailing dim; a size-1 dim or a
 * missing leading dim broadcasts). All three are f32 CPU views with arbitrary strides; out must
 * have exactly the broadcast shape and must not partially overlap a or b. */
ltx2_status ltx2_cpu_binary(ltx2_context *ctx, ltx2_binary_op op, const ltx2_tensor *a,
                            const ltx2_tensor *b, ltx2_tensor *out);


#endif
