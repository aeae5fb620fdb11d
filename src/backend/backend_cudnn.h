/* The CUDA backend's conv3d through cuDNN (LTX2_CONV3D_IMPL=cudnn), beside its own kernels: the
 * VAE's convolutions at cuDNN's rate (bench_conv3d measured our kernels at 0.27-0.40 of its time on
 * the decoder's shapes), for a GPU run to time the whole decode both ways. Its scratch (a padded
 * copy of x, the transposed weight, cuDNN's workspace) is not in the memory plan, which prices
 * the kernels: an opt-in to time, not yet a default. Private to src/backend/backend_cuda.c, the
 * only other file of the CUDA backend. */
#ifndef LTX2_BACKEND_BACKEND_CUDNN_H
#define LTX2_BACKEND_BACKEND_CUDNN_H

#include "backend/backend.h"

typedef struct ltx2_cudnn_conv ltx2_cudnn_conv;

/* A cuDNN handle (and a cuBLASLt one for the weight transpose) on device dev, enqueueing on stream
 * (a cudaStream_t); LTX2_ERR_UNSUPPORTED in a build without cuDNN. */
ltx2_status ltx2_cudnn_conv_create(ltx2_context *ctx, int dev, void *stream, ltx2_cudnn_conv **out);
void ltx2_cudnn_conv_free(ltx2_cudnn_conv *c);

/* Whether the cuDNN path takes this conv: bf16, zero spatial padding (cuDNN has no reflection) and
 * tensors within its int sizes. The caller runs its kernel otherwise. */
bool ltx2_cudnn_conv3d_takes(const ltx2_conv3d_desc *d, const ltx2_tensor *x, const ltx2_tensor *y);

/* y = conv3d(x) + bias (bias [c_out] or NULL; no activation: the caller applies it with its op):
 * x [N, T, H, W, c_in] and y [N, To, Ho, Wo, c_out] bf16, w the packed [kt*kh*kw*c_in, c_out]
 * weight. y is first filled with the bias and the conv blends onto it (beta 1), so conv + bias is
 * rounded to bf16 once, as the kernel rounds it. The temporal padding (edge or zero frames) is
 * made in a stream-ordered scratch copy of x and the weight is transposed to cuDNN's
 * [c_out][kt][kh][kw][c_in] in another; both are freed after the conv. */
ltx2_status ltx2_cudnn_conv3d(ltx2_cudnn_conv *c, ltx2_context *ctx, const ltx2_conv3d_desc *d, const ltx2_tensor *x,
                              const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y);

#endif
