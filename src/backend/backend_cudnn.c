/* backend_cudnn.h: conv3d through cuDNN's convolution forward (NDHWC bf16, fp32 accumulation,
 * tensor-op math), one plan (descriptors + heuristic algorithm) cached per shape. cuDNN pads only
 * with zeros, so the VAE's temporal padding (copies of the edge frames, or zero frames) is made in
 * a padded copy of x first, and cuDNN pads H and W with zeros itself. */
#include "backend/backend_cudnn.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef LTX2_HAVE_CUDNN

ltx2_status ltx2_cudnn_conv_create(ltx2_context *ctx, int dev, void *stream, ltx2_cudnn_conv **out) {
    (void)dev, (void)stream;
    *out = NULL;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "LTX2_CONV3D_IMPL=cudnn: this build has no cuDNN (configure with "
                      "cuDNN 9 installed)");
}

void ltx2_cudnn_conv_free(ltx2_cudnn_conv *c) { (void)c; }

bool ltx2_cudnn_conv3d_takes(const ltx2_conv3d_desc *d, const ltx2_tensor *x, const ltx2_tensor *y) {
    (void)d, (void)x, (void)y;
    return false;
}

ltx2_status ltx2_cudnn_conv3d(ltx2_cudnn_conv *c, ltx2_context *ctx, const ltx2_conv3d_desc *d, const ltx2_tensor *x,
                              const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y) {
    (void)c, (void)d, (void)x, (void)w, (void)bias, (void)y;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "cuDNN conv3d: this build has no cuDNN");
}

#else

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

/* Shapes a decode's convolutions take (the 19B decoder has about 15); more evict round-robin. */
#define CUDNN_PLAN_CACHE 32
/* Algorithms the heuristic may offer, and the most workspace one may take (skipped beyond). */
#define CUDNN_ALGO_QUERY 8
#define CUDNN_WORKSPACE_MAX ((size_t)1 << 30)
/* The plan key: n, padded t, h, w, c_in, c_out, kt, kh, kw, st, sh, sw. */
#define CUDNN_KEY_LEN 12

typedef struct cudnn_plan {
    bool valid;
    int64_t key[CUDNN_KEY_LEN];
    cudnnTensorDescriptor_t xd, yd, bd; /* bd: the bias as [1, c_out, 1, 1, 1] */
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t cd;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws_bytes;
} cudnn_plan;

struct ltx2_cudnn_conv {
    int dev;
    cudaStream_t stream;
    cudnnHandle_t h;
    cublasLtHandle_t lt;
    cublasLtMatrixTransformDesc_t tr; /* the weight transpose */
    cudnn_plan plans[CUDNN_PLAN_CACHE];
    int next_plan;
};

/* A failed call of any of the three libraries: the message names the call and the library's text. */
#define CALL_FAIL(what, text)                                                                                   \
    do {                                                                                                       \
        st = LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "cuDNN conv3d (device %d): %s: %s", c->dev, what, text);           \
        goto done;                                                                                             \
    } while (0)
#define DNN_TRY(call)                                                                                          \
    do {                                                                                                       \
        cudnnStatus_t s_ = (call);                                                                             \
        if (s_ != CUDNN_STATUS_SUCCESS) CALL_FAIL(#call, cudnnGetErrorString(s_));                             \
    } while (0)
#define RT_TRY(call)                                                                                           \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) CALL_FAIL(#call, cudaGetErrorString(e_));                                       \
    } while (0)
#define LT_TRY(call)                                                                                           \
    do {                                                                                                       \
        cublasStatus_t b_ = (call);                                                                            \
        if (b_ != CUBLAS_STATUS_SUCCESS) CALL_FAIL(#call, cublasLtGetStatusString(b_));                        \
    } while (0)

static void plan_release(cudnn_plan *p) {
    if (p->cd) cudnnDestroyConvolutionDescriptor(p->cd);
    if (p->fd) cudnnDestroyFilterDescriptor(p->fd);
    if (p->yd) cudnnDestroyTensorDescriptor(p->yd);
    if (p->bd) cudnnDestroyTensorDescriptor(p->bd);
    if (p->xd) cudnnDestroyTensorDescriptor(p->xd);
    memset(p, 0, sizeof *p);
}

ltx2_status ltx2_cudnn_conv_create(ltx2_context *ctx, int dev, void *stream, ltx2_cudnn_conv **out) {
    *out = NULL;
    ltx2_cudnn_conv *c = calloc(1, sizeof *c);
    if (!c) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cuDNN conv3d");
    ltx2_status st = LTX2_OK;
    c->dev = dev;
    c->stream = (cudaStream_t)stream;
    RT_TRY(cudaSetDevice(dev));
    DNN_TRY(cudnnCreate(&c->h));
    DNN_TRY(cudnnSetStream(c->h, c->stream));
    LT_TRY(cublasLtCreate(&c->lt));
    LT_TRY(cublasLtMatrixTransformDescCreate(&c->tr, CUDA_R_32F));
    const cublasOperation_t t = CUBLAS_OP_T;
    LT_TRY(cublasLtMatrixTransformDescSetAttribute(c->tr, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &t, sizeof t));
done:
    if (st != LTX2_OK) {
        ltx2_cudnn_conv_free(c);
        return st;
    }
    *out = c;
    return LTX2_OK;
}

void ltx2_cudnn_conv_free(ltx2_cudnn_conv *c) {
    if (!c) return;
    for (int i = 0; i < CUDNN_PLAN_CACHE; i++) plan_release(&c->plans[i]);
    if (c->tr) cublasLtMatrixTransformDescDestroy(c->tr);
    if (c->lt) cublasLtDestroy(c->lt);
    if (c->h) cudnnDestroy(c->h);
    free(c);
}

bool ltx2_cudnn_conv3d_takes(const ltx2_conv3d_desc *d, const ltx2_tensor *x, const ltx2_tensor *y) {
    int64_t front, back;
    ltx2_conv3d_tpad_amounts(d, &front, &back);
    const int64_t padded = x->shape[0] * (x->shape[1] + front + back) * x->shape[2] * x->shape[3] * x->shape[4];
    return d->spad == LTX2_CONV_SPAD_ZEROS && x->dtype == LTX2_BF16 && y->dtype == LTX2_BF16 && padded <= INT32_MAX &&
           ltx2_tensor_numel(y) <= INT32_MAX;
}

/* The plan for the shape, built on a miss: NDHWC tensors (cuDNN's 5-D "NHWC" format with dims in
 * N, C, D, H, W order), no temporal padding (x arrives padded), H / W padded kh/2, kw/2 with zeros. */
static ltx2_status plan_get(ltx2_cudnn_conv *c, ltx2_context *ctx, const int64_t key[CUDNN_KEY_LEN],
                            const int64_t yshape[5], cudnn_plan **out) {
    for (int i = 0; i < CUDNN_PLAN_CACHE; i++)
        if (c->plans[i].valid && !memcmp(c->plans[i].key, key, sizeof c->plans[i].key)) {
            *out = &c->plans[i];
            return LTX2_OK;
        }
    cudnn_plan *p = &c->plans[c->next_plan];
    c->next_plan = (c->next_plan + 1) % CUDNN_PLAN_CACHE;
    plan_release(p);
    ltx2_status st = LTX2_OK;
    const int n = (int)key[0], tp = (int)key[1], h = (int)key[2], w = (int)key[3], ci = (int)key[4], co = (int)key[5];
    const int xdim[5] = {n, ci, tp, h, w}, fdim[5] = {co, ci, (int)key[6], (int)key[7], (int)key[8]};
    const int ydim[5] = {(int)yshape[0], (int)yshape[4], (int)yshape[1], (int)yshape[2], (int)yshape[3]};
    const int pad[3] = {0, (int)key[7] / 2, (int)key[8] / 2}, str[3] = {(int)key[9], (int)key[10], (int)key[11]};
    const int dil[3] = {1, 1, 1}, bdim[5] = {1, co, 1, 1, 1};
    int got[5] = {0};
    DNN_TRY(cudnnCreateTensorDescriptor(&p->xd));
    DNN_TRY(cudnnCreateTensorDescriptor(&p->yd));
    DNN_TRY(cudnnCreateTensorDescriptor(&p->bd));
    DNN_TRY(cudnnSetTensorNdDescriptorEx(p->bd, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, 5, bdim));
    DNN_TRY(cudnnCreateFilterDescriptor(&p->fd));
    DNN_TRY(cudnnCreateConvolutionDescriptor(&p->cd));
    DNN_TRY(cudnnSetTensorNdDescriptorEx(p->xd, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, 5, xdim));
    DNN_TRY(cudnnSetTensorNdDescriptorEx(p->yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, 5, ydim));
    DNN_TRY(cudnnSetFilterNdDescriptor(p->fd, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, 5, fdim));
    DNN_TRY(cudnnSetConvolutionNdDescriptor(p->cd, 3, pad, str, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    DNN_TRY(cudnnSetConvolutionMathType(p->cd, CUDNN_TENSOR_OP_MATH));
    DNN_TRY(cudnnGetConvolutionNdForwardOutputDim(p->cd, p->xd, p->fd, 5, got));
    if (memcmp(got, ydim, sizeof got) != 0) {
        st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "cuDNN conv3d: output [%d, %d, %d, %d, %d] (N, C, T, H, W) for a "
                        "[%d, %d, %d, %d, %d] y", got[0], got[1], got[2], got[3], got[4], ydim[0], ydim[1], ydim[2],
                        ydim[3], ydim[4]);
        goto done;
    }
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_ALGO_QUERY];
    int n_algo = 0;
    DNN_TRY(cudnnGetConvolutionForwardAlgorithm_v7(c->h, p->xd, p->fd, p->cd, p->yd, CUDNN_ALGO_QUERY, &n_algo, perf));
    int pick = -1;
    for (int i = 0; i < n_algo && pick < 0; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= CUDNN_WORKSPACE_MAX) pick = i;
    if (pick < 0) {
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "cuDNN conv3d: no algorithm for x [%d, %d, %d, %d, %d] (N, C, T, "
                        "H, W) and a %dx%dx%d kernel to %d channels within %zu MiB of workspace", n, ci, tp, h, w,
                        fdim[2], fdim[3], fdim[4], co, CUDNN_WORKSPACE_MAX >> 20);
        goto done;
    }
    p->algo = perf[pick].algo;
    p->ws_bytes = perf[pick].memory;
    memcpy(p->key, key, sizeof p->key);
    p->valid = true;
    *out = p;
done:
    if (st != LTX2_OK) plan_release(p);
    return st;
}

/* xp [N, T + front + back, H, W, C] from x [N, T, H, W, C]: the frames in between, and in front and
 * behind copies of the edge frames or zeros (ltx2_conv3d_tpad_zeros). */
static ltx2_status pad_time(ltx2_cudnn_conv *c, ltx2_context *ctx, const ltx2_conv3d_desc *d, const ltx2_tensor *x,
                            int64_t front, int64_t back, char *xp) {
    ltx2_status st = LTX2_OK;
    const int64_t N = x->shape[0], T = x->shape[1];
    const size_t frame = (size_t)(x->shape[2] * x->shape[3] * x->shape[4]) * 2, body = (size_t)T * frame;
    const bool zeros = ltx2_conv3d_tpad_zeros(d);
    for (int64_t n = 0; n < N; n++) {
        const char *src = (const char *)x->data + (size_t)n * body;
        char *dst = xp + (size_t)n * (size_t)(T + front + back) * frame;
        for (int64_t f = 0; f < front; f++) {
            if (zeros) RT_TRY(cudaMemsetAsync(dst + (size_t)f * frame, 0, frame, c->stream));
            else RT_TRY(cudaMemcpyAsync(dst + (size_t)f * frame, src, frame, cudaMemcpyDeviceToDevice, c->stream));
        }
        RT_TRY(cudaMemcpyAsync(dst + (size_t)front * frame, src, body, cudaMemcpyDeviceToDevice, c->stream));
        for (int64_t f = 0; f < back; f++) {
            char *b = dst + (size_t)(front + T + f) * frame;
            if (zeros) RT_TRY(cudaMemsetAsync(b, 0, frame, c->stream));
            else RT_TRY(cudaMemcpyAsync(b, src + body - frame, frame, cudaMemcpyDeviceToDevice, c->stream));
        }
    }
done:
    return st;
}

ltx2_status ltx2_cudnn_conv3d(ltx2_cudnn_conv *c, ltx2_context *ctx, const ltx2_conv3d_desc *d, const ltx2_tensor *x,
                              const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y) {
    if (!ltx2_cudnn_conv3d_takes(d, x, y))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "cuDNN conv3d: not a bf16 zero-padded conv within int sizes");
    ltx2_status st = LTX2_OK;
    int64_t front, back;
    ltx2_conv3d_tpad_amounts(d, &front, &back);
    const int64_t tp = x->shape[1] + front + back, K = d->kt * d->kh * d->kw * d->c_in;
    const int64_t key[CUDNN_KEY_LEN] = {x->shape[0], tp, x->shape[2], x->shape[3], d->c_in, d->c_out,
                                        d->kt, d->kh, d->kw, d->st, d->sh, d->sw};
    void *xp = NULL, *wk = NULL, *ws = NULL;
    cublasLtMatrixLayout_t la = NULL, lc = NULL;
    cudnn_plan *p = NULL;
    RT_TRY(cudaSetDevice(c->dev));
    if ((st = plan_get(c, ctx, key, y->shape, &p)) != LTX2_OK) goto done;
    const void *xin = x->data;
    if (front + back > 0) {
        RT_TRY(cudaMallocAsync(&xp, (size_t)(x->shape[0] * tp * x->shape[2] * x->shape[3] * d->c_in) * 2, c->stream));
        if ((st = pad_time(c, ctx, d, x, front, back, xp)) != LTX2_OK) goto done;
        xin = xp;
    }
    /* [K][c_out] row-major is column-major c_out x K (ld c_out); its transpose, column-major K x c_out
     * (ld K), is [c_out][K] row-major: [c_out][kt][kh][kw][c_in], cuDNN's NDHWC filter */
    RT_TRY(cudaMallocAsync(&wk, (size_t)(K * d->c_out) * 2, c->stream));
    LT_TRY(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, (uint64_t)d->c_out, (uint64_t)K, d->c_out));
    LT_TRY(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, (uint64_t)K, (uint64_t)d->c_out, K));
    const float one = 1.0f, zero = 0.0f;
    LT_TRY(cublasLtMatrixTransform(c->lt, c->tr, &one, w->data, la, &zero, NULL, NULL, wk, lc, c->stream));
    if (p->ws_bytes) RT_TRY(cudaMallocAsync(&ws, p->ws_bytes, c->stream));
    /* y = bias (broadcast), then y = conv + y in the conv's fp32 epilogue */
    if (bias) DNN_TRY(cudnnAddTensor(c->h, &one, p->bd, bias->data, &zero, p->yd, y->data));
    DNN_TRY(cudnnConvolutionForward(c->h, &one, p->xd, xin, p->fd, wk, p->cd, p->algo, ws, p->ws_bytes,
                                    bias ? &one : &zero, p->yd, y->data));
done:
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (la) cublasLtMatrixLayoutDestroy(la);
    /* stream-ordered: freed once the conv queued before has run */
    if (ws) cudaFreeAsync(ws, c->stream);
    if (wk) cudaFreeAsync(wk, c->stream);
    if (xp) cudaFreeAsync(xp, c->stream);
    return st;
}

#endif
