/* conv3d (VAE decoder layers at 768x512x121, bf16 NDHWC, 3x3x3 causal, zeros padding) on the GPU:
 * our implicit-GEMM kernel vs cuDNN cudnnConvolutionForward with NDHWC tensors (when built with
 * cuDNN). cuDNN cannot replicate edge frames, so its input is pre-padded in time (kt-1 extra
 * frames, not timed) and it pads H/W with zeros itself: same FLOPs, same output shape.
 * Roofline: a measured bf16 cuBLASLt GEMM rate (8192^3); FLOPs = 2 * M * c_out * K.
 * CPU-only builds print a skip note. Shapes are the decoder's stages (channels 1024/512/256/128
 * at latent 16x16x24 growing to 121x128x192; approximate, from the config's channel ladder). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "bench.h"
#include "device_util.h"

#ifdef LTX2_HAVE_CUDNN
#include <cudnn.h>
#endif

#define GPU_INNER 10
/* Philox seed of the inputs. */
#define CONV_SEED 5

typedef struct conv_shape {
    const char *name;
    int64_t n, t, h, w, c_in, c_out, k;
    bool quick;
} conv_shape;

static const conv_shape shapes[] = {
    {"dec conv_in 128->1024 16x16x24", 1, 16, 16, 24, 128, 1024, 3, true},
    {"dec res 1024 16x16x24", 1, 16, 16, 24, 1024, 1024, 3, true},
    {"dec res 512 31x32x48", 1, 31, 32, 48, 512, 512, 3, false},
    {"dec res 256 61x64x96", 1, 61, 64, 96, 256, 256, 3, false},
    {"dec res 128 121x128x192", 1, 121, 128, 192, 128, 128, 3, true},
    {"dec conv_out 128->48 121x128x192", 1, 121, 128, 192, 128, 48, 3, false},
    {"1x1x1 512->256 61x64x96", 1, 61, 64, 96, 512, 256, 1, false},
};

typedef struct conv_job {
    const ltx2_backend *be;
    ltx2_context *ctx;
    ltx2_conv3d_desc d;
    ltx2_tensor x, w, b, y;
    ltx2_status st;
#ifdef LTX2_HAVE_CUDNN
    cudnnHandle_t h;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t cd;
    cudnnConvolutionFwdAlgo_t algo;
    void *xpad, *wkc, *ws;
    size_t ws_bytes;
    cudnnStatus_t cst;
#endif
} conv_job;

static void run_ours(void *u) {
    conv_job *j = u;
    for (int i = 0; i < GPU_INNER && j->st == LTX2_OK; i++)
        j->st = ltx2_backend_conv3d(j->be, j->ctx, &j->d, &j->x, &j->w, &j->b, false, &j->y);
    if (j->st == LTX2_OK) j->st = j->be->sync(j->be, j->ctx);
}

#ifdef LTX2_HAVE_CUDNN
static void run_cudnn(void *u) {
    conv_job *j = u;
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < GPU_INNER && j->cst == CUDNN_STATUS_SUCCESS; i++)
        j->cst = cudnnConvolutionForward(j->h, &one, j->xd, j->xpad, j->fd, j->wkc, j->cd, j->algo, j->ws, j->ws_bytes,
                                         &zero, j->yd, j->y.data);
    if (j->st == LTX2_OK) j->st = j->be->sync(j->be, j->ctx);
}

/* Plans cuDNN for the shape: x pre-padded in time, NDHWC ("NHWC" format in 5-D), KTRSC filter. */
static bool cudnn_setup(conv_job *j, const conv_shape *s) {
    const int kp = (int)s->k - 1;
    int xdim[5] = {(int)s->n, (int)s->c_in, (int)(s->t + kp), (int)s->h, (int)s->w};
    int ydim[5] = {(int)s->n, (int)s->c_out, (int)s->t, (int)s->h, (int)s->w};
    int fdim[5] = {(int)s->c_out, (int)s->c_in, (int)s->k, (int)s->k, (int)s->k};
    int pad[3] = {0, (int)s->k / 2, (int)s->k / 2}, str[3] = {1, 1, 1}, dil[3] = {1, 1, 1};
    cudnnStatus_t c = cudnnCreate(&j->h);
    if (c == CUDNN_STATUS_SUCCESS) c = cudnnSetStream(j->h, ltx2_backend_cuda_stream(j->be));
    if (c == CUDNN_STATUS_SUCCESS) c = cudnnCreateTensorDescriptor(&j->xd);
    if (c == CUDNN_STATUS_SUCCESS) c = cudnnCreateTensorDescriptor(&j->yd);
    if (c == CUDNN_STATUS_SUCCESS) c = cudnnCreateFilterDescriptor(&j->fd);
    if (c == CUDNN_STATUS_SUCCESS) c = cudnnCreateConvolutionDescriptor(&j->cd);
    if (c == CUDNN_STATUS_SUCCESS) c = cudnnSetTensorNdDescriptorEx(j->xd, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, 5, xdim);
    if (c == CUDNN_STATUS_SUCCESS) c = cudnnSetTensorNdDescriptorEx(j->yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, 5, ydim);
    if (c == CUDNN_STATUS_SUCCESS) c = cudnnSetFilterNdDescriptor(j->fd, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, 5, fdim);
    if (c == CUDNN_STATUS_SUCCESS)
        c = cudnnSetConvolutionNdDescriptor(j->cd, 3, pad, str, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    if (c == CUDNN_STATUS_SUCCESS) c = cudnnSetConvolutionMathType(j->cd, CUDNN_TENSOR_OP_MATH);
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int n_algo = 0;
    if (c == CUDNN_STATUS_SUCCESS)
        c = cudnnGetConvolutionForwardAlgorithm_v7(j->h, j->xd, j->fd, j->cd, j->yd, 8, &n_algo, perf);
    if (c == CUDNN_STATUS_SUCCESS && n_algo < 1) c = CUDNN_STATUS_NOT_SUPPORTED;
    if (c == CUDNN_STATUS_SUCCESS) {
        j->algo = perf[0].algo;
        c = cudnnGetConvolutionForwardWorkspaceSize(j->h, j->xd, j->fd, j->cd, j->yd, j->algo, &j->ws_bytes);
    }
    j->cst = c;
    if (c != CUDNN_STATUS_SUCCESS) return false;
    int64_t nx = s->n * (s->t + kp) * s->h * s->w * s->c_in, nw = s->c_out * s->k * s->k * s->k * s->c_in;
    j->xpad = bench_dev_randn(j->be, j->ctx, LTX2_BF16, nx, CONV_SEED, 30, 1.0f);
    j->wkc = bench_dev_randn(j->be, j->ctx, LTX2_BF16, nw, CONV_SEED, 31, 0.02f);
    if (j->ws_bytes && j->be->alloc(j->be, j->ctx, j->ws_bytes, &j->ws) != LTX2_OK) j->ws = NULL;
    return j->xpad && j->wkc && (!j->ws_bytes || j->ws);
}

static void cudnn_teardown(conv_job *j) {
    if (j->cd) cudnnDestroyConvolutionDescriptor(j->cd);
    if (j->fd) cudnnDestroyFilterDescriptor(j->fd);
    if (j->yd) cudnnDestroyTensorDescriptor(j->yd);
    if (j->xd) cudnnDestroyTensorDescriptor(j->xd);
    if (j->h) cudnnDestroy(j->h);
    j->be->free(j->be, j->xpad);
    j->be->free(j->be, j->wkc);
    j->be->free(j->be, j->ws);
}
#endif

static void bench_shape(const bench_opts *o, bench_report *r, const ltx2_backend *be, ltx2_context *ctx,
                        const conv_shape *s, double ceil_rate) {
    conv_job j;
    memset(&j, 0, sizeof(j));
    j.be = be;
    j.ctx = ctx;
    j.d = (ltx2_conv3d_desc){.c_in = s->c_in, .c_out = s->c_out, .kt = s->k, .kh = s->k, .kw = s->k, .st = 1, .sh = 1,
                             .sw = 1, .tpad = LTX2_CONV_TPAD_CAUSAL, .spad = LTX2_CONV_SPAD_ZEROS};
    const int64_t K = s->k * s->k * s->k * s->c_in, M = s->n * s->t * s->h * s->w;
    const int64_t xs[5] = {s->n, s->t, s->h, s->w, s->c_in}, ys[5] = {s->n, s->t, s->h, s->w, s->c_out},
                  ws[2] = {K, s->c_out};
    void *px = bench_dev_randn(be, ctx, LTX2_BF16, M * s->c_in, CONV_SEED, 1, 1.0f);
    void *pw = bench_dev_randn(be, ctx, LTX2_BF16, K * s->c_out, CONV_SEED, 2, 0.02f);
    void *pb = bench_dev_randn(be, ctx, LTX2_BF16, s->c_out, CONV_SEED, 3, 0.1f);
    void *py = bench_dev_randn(be, ctx, LTX2_BF16, M * s->c_out, CONV_SEED, 4, 0.0f);
    bench_row row = {.bench = "conv3d", .name = s->name, .device = "cuda", .flops = 2.0 * (double)M * s->c_out * K,
                     .bytes = 2.0 * (double)(M * s->c_in + K * s->c_out + M * s->c_out), .roof_rate = ceil_rate,
                     .roof = "cublaslt_bf16_gemm"};
    if (!px || !pw || !pb || !py) {
        bench_report_note(r, "%s: allocation failed: %s", s->name, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
        goto done;
    }
    j.x = bench_dev_view(px, LTX2_BF16, 5, xs);
    j.w = bench_dev_view(pw, LTX2_BF16, 2, ws);
    j.b = bench_dev_view(pb, LTX2_BF16, 1, &s->c_out);
    j.y = bench_dev_view(py, LTX2_BF16, 5, ys);
#ifdef LTX2_HAVE_CUDNN
    if (cudnn_setup(&j, s)) {
        bench_stats bs = bench_measure(o, run_cudnn, &j, GPU_INNER);
        if (j.cst == CUDNN_STATUS_SUCCESS && j.st == LTX2_OK) {
            row.baseline = "cudnn_conv_fwd";
            row.baseline_s = bs.median_s;
        }
    }
    if (j.cst != CUDNN_STATUS_SUCCESS) bench_report_note(r, "%s: cuDNN: %s", s->name, cudnnGetErrorString(j.cst));
    j.st = LTX2_OK;
    ltx2_clear_error(ctx);
#endif
    row.st = bench_measure(o, run_ours, &j, GPU_INNER);
    if (j.st != LTX2_OK) {
        bench_report_note(r, "%s: %s", s->name, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    } else {
        bench_report_row(r, &row);
    }
done:
#ifdef LTX2_HAVE_CUDNN
    cudnn_teardown(&j);
#endif
    be->free(be, px);
    be->free(be, pw);
    be->free(be, pb);
    be->free(be, py);
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = bench_parse_args(argc, argv, &o, "conv3d (implicit GEMM, bf16 NDHWC) TFLOP/s vs cuDNN\n");
    if (rc >= 0) return rc;
    bench_report r;
    if (!bench_report_open(&r, &o)) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_backend *cuda = NULL;
    if (ltx2_backend_cuda_create(ctx, 0, &cuda) != LTX2_OK) {
        bench_report_note(&r, "conv3d: skipped (%s); the CPU reference is not benchmarked", ltx2_last_error(ctx));
        ltx2_context_free(ctx);
        bench_report_close(&r);
        return 0;
    }
    const double ceil_rate = bench_gemm_ceiling(&o, cuda, ctx, GPU_INNER);
    bench_report_note(&r, "cuda: bf16 cuBLASLt GEMM %d^3 runs at %.1f TFLOP/s (the roofline here)", BENCH_CEIL_GEMM_DIM,
                      ceil_rate * 1e-12);
#ifndef LTX2_HAVE_CUDNN
    bench_report_note(&r, "cuDNN baseline: not built (configure with cuDNN 9 installed)");
#endif
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        if (!o.quick || shapes[i].quick) bench_shape(&o, &r, cuda, ctx, &shapes[i], ceil_rate);
    ltx2_backend_free(cuda);
    ltx2_context_free(ctx);
    bench_report_close(&r);
    return 0;
}
