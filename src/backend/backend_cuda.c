/* The CUDA op table: the memory runtime (cudaMalloc, copies on one stream), cuBLASLt for GEMM
 * (bf16 / f32 / fp8 in, fp32 accumulate, bias / GELU / residual epilogues, a workspace, plans
 * cached per shape), and every other op through backend_kernels.c over the real kernels (conv3d
 * optionally through cuDNN: backend_cudnn.c). With that file, the only C code besides the NCCL
 * communicator that includes CUDA headers. Built as a stub that reports LTX2_ERR_UNSUPPORTED when
 * the build has no CUDA.
 * A CUDA backend is used from one host thread at a time (its plan cache is not locked). */
#include "backend/backend.h"

#include <stdio.h>

#ifndef LTX2_HAVE_CUDA

ltx2_status ltx2_backend_cuda_create(ltx2_context *ctx, int device_index, ltx2_backend **out) {
    if (out) *out = NULL;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                      "CUDA backend requested (device %d) but this build has no CUDA "
                      "(configure with -DLTX2_CUDA=ON and nvcc on PATH)",
                      device_index);
}

void *ltx2_backend_cuda_stream(const ltx2_backend *be) {
    (void)be;
    return NULL;
}

int ltx2_backend_cuda_device_count(void) { return 0; }

int ltx2_backend_cuda_device_count_why(char *why, size_t cap) {
    if (why && cap) snprintf(why, cap, "this build has no CUDA");
    return 0;
}

int64_t ltx2_backend_cuda_gemm_plans_built(const ltx2_backend *be) {
    (void)be;
    return -1;
}

void ltx2_backend_cuda_describe(const ltx2_backend *be, char *buf, size_t cap) {
    snprintf(buf, cap, "%s", be ? be->name : "cuda");
}

#else

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_cudnn.h"
#include "backend/backend_kernels.h"
#include "backend/cuda_gemm_layout.h"

/* cuBLASLt workspace: NVIDIA recommends 32 MiB on Hopper so split-K / stream-K algorithms are
 * available; smaller devices lose nothing but memory. */
#define CUDA_GEMM_WORKSPACE_BYTES ((size_t)32 << 20)
/* Cached GEMM plans (descriptors + heuristic algorithm) per shape, dtype, epilogue and alignment,
 * evicted round-robin. A 2.0 DiT call has about 8 distinct keys inside its blocks (video and audio
 * attention, FF up / down, the two audio-video projections) and 26 GEMM calls around them (run5's
 * profile: timestep and AdaLN tables, patchify, caption and output projections), many of other
 * shapes. Round-robin eviction with more keys than slots misses every key on every call (each miss
 * a cuBLASLt heuristic query on the host, at the call's start while the GPU waits), so the cache
 * holds several calls' worth; whether 16 was too few is not measured. A plan is a few descriptors. */
#define CUDA_GEMM_PLAN_CACHE 64
/* cuBLASLt assumes 256-byte aligned operands unless told otherwise; we tell it the real alignment
 * (a power of two up to this) so offset views still get a valid algorithm. */
#define CUDA_GEMM_MAX_ALIGN 256

/* Every CUDA / cuBLASLt call goes through these: on failure they record the error name, the
 * failing statement, the device and (via LTX2_ERROR) file:line, and return LTX2_ERR_DEVICE. */
#define CUDA_CHECK(ctx, dev, stmt)                                                                 \
    do {                                                                                           \
        cudaError_t cuda_e_ = (stmt);                                                              \
        if (cuda_e_ != cudaSuccess)                                                                \
            return LTX2_ERROR((ctx), LTX2_ERR_DEVICE, "CUDA error %s (%s) in `%s` on device %d",   \
                              cudaGetErrorName(cuda_e_), cudaGetErrorString(cuda_e_), #stmt, (dev)); \
    } while (0)
/* Variants that record the error into `st` and jump to `done:` so the caller can clean up. */
#define CUDA_TRY(ctx, dev, stmt)                                                                   \
    do {                                                                                           \
        cudaError_t cuda_e_ = (stmt);                                                              \
        if (cuda_e_ != cudaSuccess) {                                                              \
            st = LTX2_ERROR((ctx), LTX2_ERR_DEVICE, "CUDA error %s (%s) in `%s` on device %d",     \
                            cudaGetErrorName(cuda_e_), cudaGetErrorString(cuda_e_), #stmt, (dev)); \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)
#define CUBLAS_TRY(ctx, dev, stmt)                                                                 \
    do {                                                                                           \
        cublasStatus_t cublas_s_ = (stmt);                                                         \
        if (cublas_s_ != CUBLAS_STATUS_SUCCESS) {                                                  \
            st = LTX2_ERROR((ctx), LTX2_ERR_DEVICE, "cuBLASLt error %s (%d) in `%s` on device %d", \
                            cublasLtGetStatusString(cublas_s_), (int)cublas_s_, #stmt, (dev));     \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

typedef struct gemm_plan {
    bool valid;
    /* key */
    cudaDataType_t dt;
    int64_t M, N, K;
    ltx2_b_layout layout;
    bool has_bias;
    unsigned align;        /* of x, w, y (and the residual) */
    unsigned bias_align;   /* of the bias pointer the heuristic saw (0 without a bias) */
    bool gelu;             /* GELU (tanh) epilogue */
    cudaDataType_t dt_out; /* C / D type: dt, or bf16 for fp8 inputs */
    /* value */
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    bool a_is_w; /* cuBLASLt's A is w (B is x); see cuda_gemm_layout.h */
} gemm_plan;

typedef struct cuda_impl {
    ltx2_kernel_rt rt; /* first: backend_kernels.c reads it through be->impl */
    int cc; /* compute capability major * 10 + minor */
    cudaStream_t stream;
    cublasLtHandle_t lt;
    void *workspace;
    gemm_plan plans[CUDA_GEMM_PLAN_CACHE];
    int next_plan;      /* round-robin eviction */
    int64_t plans_built; /* misses, for bench_step */
    /* LTX2_CONV3D_IMPL=cudnn: conv3d through cuDNN, the kernel's conv3d for what it does not take */
    ltx2_cudnn_conv *cudnn;
    ltx2_status (*kernel_conv3d)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d,
                                 const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, bool silu,
                                 ltx2_tensor *y);
} cuda_impl;

static cuda_impl *impl_of(const ltx2_backend *be) { return (cuda_impl *)be->impl; }

/* ---- the kernel runtime (backend_kernels.h) ---- */

static ltx2_status cuda_enter(const ltx2_backend *be, ltx2_context *ctx) {
    const int dev = impl_of(be)->rt.dev;
    CUDA_CHECK(ctx, dev, cudaSetDevice(dev));
    return LTX2_OK;
}

static ltx2_status cuda_scratch(const ltx2_backend *be, ltx2_context *ctx, size_t nbytes, void **out) {
    cuda_impl *ci = impl_of(be);
    CUDA_CHECK(ctx, ci->rt.dev, cudaMallocAsync(out, nbytes, ci->stream));
    return LTX2_OK;
}

static void cuda_scratch_free(const ltx2_backend *be, void *p) {
    cudaFreeAsync(p, impl_of(be)->stream); /* an error here is sticky: the next checked call reports it */
}

static const char *cuda_error_text(int err) { return cudaGetErrorName((cudaError_t)err); }

/* cuBLASLt fp8 (e4m3) matmuls need Ada / Hopper tensor cores (compute capability 8.9+). */
#define CUDA_FP8_MIN_CC 89

static bool cuda_supports(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt) {
    if (op == LTX2_OP_GEMM_FP8) return dt == LTX2_F8_E4M3 && be->impl && impl_of(be)->cc >= CUDA_FP8_MIN_CC;
    /* e4m3 attention (ltx2_attn_args.fp8): the sm_90a kernel with its pre-pass, on a 9.x device of a
     * build carrying it, unless LTX2_ATTN_IMPL / LTX2_ATTN_PREP force another kernel or layout */
    if (op == LTX2_OP_ATTENTION && dt == LTX2_F8_E4M3) {
        const cuda_impl *ci = be->impl ? impl_of(be) : NULL;
        return ci && ci->cc / 10 == 9 && ci->rt.k->attention_wgmma_available() &&
               ltx2_kernel_fp8_attention_allowed(&ci->rt);
    }
    /* the tensor-core kernels (attention, conv3d) are bf16 only */
    if (op == LTX2_OP_ATTENTION || op == LTX2_OP_CONV3D) return dt == LTX2_BF16;
    return op >= 0 && op < LTX2_OP_COUNT && (dt == LTX2_F32 || dt == LTX2_BF16);
}

static ltx2_status cuda_alloc(const ltx2_backend *be, ltx2_context *ctx, size_t nbytes, void **out) {
    cuda_impl *ci = impl_of(be);
    *out = NULL;
    CUDA_CHECK(ctx, ci->rt.dev, cudaSetDevice(ci->rt.dev));
    CUDA_CHECK(ctx, ci->rt.dev, cudaMalloc(out, nbytes ? nbytes : 1));
    return LTX2_OK;
}

static ltx2_status cuda_mem_info(const ltx2_backend *be, ltx2_context *ctx, size_t *free_bytes, size_t *total_bytes) {
    const int dev = impl_of(be)->rt.dev;
    CUDA_CHECK(ctx, dev, cudaSetDevice(dev));
    CUDA_CHECK(ctx, dev, cudaMemGetInfo(free_bytes, total_bytes));
    return LTX2_OK;
}

static ltx2_status cuda_device_id(const ltx2_backend *be, ltx2_context *ctx, unsigned char out[LTX2_DEVICE_ID_BYTES]) {
    const int dev = impl_of(be)->rt.dev;
    struct cudaDeviceProp prop;
    CUDA_CHECK(ctx, dev, cudaGetDeviceProperties(&prop, dev));
    _Static_assert(sizeof prop.uuid.bytes == LTX2_DEVICE_ID_BYTES, "a CUDA UUID is the device id");
    memcpy(out, prop.uuid.bytes, LTX2_DEVICE_ID_BYTES);
    return LTX2_OK;
}

static void cuda_free(const ltx2_backend *be, void *ptr) {
    if (!ptr) return;
    cudaSetDevice(impl_of(be)->rt.dev);
    cudaFree(ptr); /* errors here are sticky and surface at the next checked call */
}

static ltx2_status cuda_upload(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src,
                               size_t nbytes) {
    cuda_impl *ci = impl_of(be);
    if (!nbytes) return LTX2_OK;
    CUDA_CHECK(ctx, ci->rt.dev, cudaSetDevice(ci->rt.dev));
    CUDA_CHECK(ctx, ci->rt.dev, cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, ci->stream));
    CUDA_CHECK(ctx, ci->rt.dev, cudaStreamSynchronize(ci->stream));
    return LTX2_OK;
}

static ltx2_status cuda_download(const ltx2_backend *be, ltx2_context *ctx, void *dst,
                                 const void *src, size_t nbytes) {
    cuda_impl *ci = impl_of(be);
    if (!nbytes) return LTX2_OK;
    CUDA_CHECK(ctx, ci->rt.dev, cudaSetDevice(ci->rt.dev));
    CUDA_CHECK(ctx, ci->rt.dev, cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, ci->stream));
    CUDA_CHECK(ctx, ci->rt.dev, cudaStreamSynchronize(ci->stream));
    return LTX2_OK;
}

static ltx2_status cuda_copy(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src,
                             size_t nbytes) {
    cuda_impl *ci = impl_of(be);
    if (!nbytes) return LTX2_OK;
    CUDA_CHECK(ctx, ci->rt.dev, cudaSetDevice(ci->rt.dev));
    CUDA_CHECK(ctx, ci->rt.dev, cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, ci->stream));
    return LTX2_OK;
}

static ltx2_status cuda_copy_2d(const ltx2_backend *be, ltx2_context *ctx, void *dst, size_t dpitch,
                                const void *src, size_t spitch, size_t width, size_t rows) {
    cuda_impl *ci = impl_of(be);
    if (!width || !rows) return LTX2_OK;
    CUDA_CHECK(ctx, ci->rt.dev, cudaSetDevice(ci->rt.dev));
    CUDA_CHECK(ctx, ci->rt.dev,
               cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDeviceToDevice, ci->stream));
    return LTX2_OK;
}

static ltx2_status cuda_sync(const ltx2_backend *be, ltx2_context *ctx) {
    cuda_impl *ci = impl_of(be);
    CUDA_CHECK(ctx, ci->rt.dev, cudaSetDevice(ci->rt.dev));
    CUDA_CHECK(ctx, ci->rt.dev, cudaStreamSynchronize(ci->stream));
    CUDA_CHECK(ctx, ci->rt.dev, cudaGetLastError());
    return LTX2_OK;
}

/* ---- GEMM (cuBLASLt) ----
 * Row-major y[M,N] = x[M,K] op(w) is, in cuBLASLt's column-major terms, y^T[N,M] = op(w)^T x^T
 * (A = w, B = x, D = y); cuda_gemm_layout.h derives every transpose and layout and is tested by
 * tests/test_layout_gemm.c. The bias epilogue adds a vector along D's rows, i.e. along our N. */

static void gemm_plan_release(gemm_plan *p) {
    if (p->lc) cublasLtMatrixLayoutDestroy(p->lc);
    if (p->lb) cublasLtMatrixLayoutDestroy(p->lb);
    if (p->la) cublasLtMatrixLayoutDestroy(p->la);
    if (p->op) cublasLtMatmulDescDestroy(p->op);
    memset(p, 0, sizeof(*p));
}

static unsigned ptr_align(const void *p) {
    unsigned a = CUDA_GEMM_MAX_ALIGN;
    while (a > 1 && ((uintptr_t)p % a) != 0) a >>= 1;
    return a;
}

static const char *gemm_dt_name(cudaDataType_t dt) {
    return dt == CUDA_R_16BF ? "bf16" : dt == CUDA_R_8F_E4M3 ? "fp8 e4m3" : "f32";
}

/* bias: the bias pointer of the call the plan is built for (NULL: no bias epilogue). cuBLASLt's
 * heuristic "depend[s] on its value to determine expected pointer alignment" (cublasLt.h,
 * CUBLASLT_MATMUL_DESC_BIAS_POINTER), so it is set before the query and its alignment is part of
 * the plan's key. */
static ltx2_status gemm_plan_build_ex(cuda_impl *ci, ltx2_context *ctx, cudaDataType_t dt, cudaDataType_t dt_out,
                                      int64_t M, int64_t N, int64_t K, ltx2_b_layout layout, const void *bias,
                                      bool gelu, unsigned align, gemm_plan *p) {
    ltx2_status st = LTX2_OK;
    cublasLtMatmulPreference_t pref = NULL;
    const bool has_bias = bias != NULL;
    const ltx2_lt_gemm g = ltx2_lt_gemm_rowmajor(M, N, K, layout);
    memset(p, 0, sizeof(*p));
    p->gelu = gelu;
    p->dt_out = dt_out;
    p->dt = dt;
    p->M = M;
    p->N = N;
    p->K = K;
    p->layout = layout;
    p->has_bias = has_bias;
    p->align = align;
    p->bias_align = has_bias ? ptr_align(bias) : 0;
    p->a_is_w = g.a_is_w;
    /* Pure fp32 accumulation for both dtypes (no TF32), so f32 matches the CPU reference. */
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    if (has_bias || gelu) {
        /* cuBLASLt's GELU epilogues are the tanh approximation (checked against the tanh reference
         * by an f32 op-harness case whose tolerance is below the erf/tanh gap) */
        cublasLtEpilogue_t epi = gelu ? (has_bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU)
                                      : CUBLASLT_EPILOGUE_BIAS;
        CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    }
    if (has_bias) {
        CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &dt_out,
                                                                sizeof(dt_out)));
        CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                                sizeof(bias)));
    }
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatrixLayoutCreate(&p->la, dt, g.a.rows, g.a.cols, g.a.ld));
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatrixLayoutCreate(&p->lb, dt, g.b.rows, g.b.cols, g.b.ld));
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatrixLayoutCreate(&p->lc, dt_out, g.c.rows, g.c.cols, g.c.ld));

    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = CUDA_GEMM_WORKSPACE_BYTES;
    uint32_t al = align;
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al, sizeof(al)));
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al, sizeof(al)));
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al, sizeof(al)));
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al, sizeof(al)));
    /* Split-K: partial sums add up in fp32 only (INPLACE and OUTPUT_TYPE add them in the output
     * dtype), and not at all under a bias or GELU epilogue into bf16: measured on an H100
     * (cuBLASLt 13.0, algorithm 24 at M37 N71 K129 and M50 N33 K300, every split count 3..29 even
     * with the fp32 COMPUTE_TYPE reduction) the epilogue then sees the sum already rounded to bf16,
     * up to 140 bf16 ulps off on outputs that cancel; the same algorithm unsplit was within 1 ulp. */
    uint32_t red = (has_bias || gelu) && dt_out == CUDA_R_16BF ? CUBLASLT_REDUCTION_SCHEME_NONE
                                                               : CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &red, sizeof(red)));

    cublasLtMatmulHeuristicResult_t heur;
    int n_found = 0;
    memset(&heur, 0, sizeof(heur));
    /* No algorithm comes back as CUBLAS_STATUS_NOT_SUPPORTED or as a count of 0 (or a failed
     * result state); all three are "this shape / alignment is not supported", not a device fault. */
    cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(ci->lt, p->op, p->la, p->lb, p->lc, p->lc, pref, 1, &heur,
                                                       &n_found);
    if (hs != CUBLAS_STATUS_SUCCESS && hs != CUBLAS_STATUS_NOT_SUPPORTED)
        CUBLAS_TRY(ctx, ci->rt.dev, hs);
    if (hs == CUBLAS_STATUS_NOT_SUPPORTED || n_found < 1 || heur.state != CUBLAS_STATUS_SUCCESS) {
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                        "cuBLASLt has no algorithm for gemm M=%lld N=%lld K=%lld (%s, weight %s, align %u, bias "
                        "align %u%s) on device %d: %s",
                        (long long)M, (long long)N, (long long)K, gemm_dt_name(dt),
                        layout == LTX2_B_NK ? "[N,K]" : "[K,N]", align, p->bias_align, gelu ? ", GELU" : "",
                        ci->rt.dev, cublasLtGetStatusString(hs != CUBLAS_STATUS_SUCCESS ? hs : heur.state));
        goto done;
    }
    p->algo = heur.algo;
    p->valid = true;
done:
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (st != LTX2_OK) gemm_plan_release(p);
    return st;
}

/* The cached plan for this call, built on a miss; sets the call's bias pointer on it. */
static ltx2_status gemm_plan_get_ex(cuda_impl *ci, ltx2_context *ctx, cudaDataType_t dt, cudaDataType_t dt_out,
                                    int64_t M, int64_t N, int64_t K, ltx2_b_layout layout, const void *bias, bool gelu,
                                    unsigned align, gemm_plan **out) {
    ltx2_status st = LTX2_OK;
    const bool has_bias = bias != NULL;
    const unsigned bias_align = has_bias ? ptr_align(bias) : 0;
    for (int i = 0; i < CUDA_GEMM_PLAN_CACHE; i++) {
        gemm_plan *p = &ci->plans[i];
        if (p->valid && p->dt == dt && p->dt_out == dt_out && p->M == M && p->N == N && p->K == K &&
            p->layout == layout && p->has_bias == has_bias && p->gelu == gelu && p->align == align &&
            p->bias_align == bias_align) {
            if (has_bias)
                CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                                        sizeof(bias)));
            *out = p;
            return LTX2_OK;
        }
    }
    gemm_plan *slot = &ci->plans[ci->next_plan];
    ci->next_plan = (ci->next_plan + 1) % CUDA_GEMM_PLAN_CACHE;
    ci->plans_built++;
    if (slot->valid) gemm_plan_release(slot);
    LTX2_TRY(gemm_plan_build_ex(ci, ctx, dt, dt_out, M, N, K, layout, bias, gelu, align, slot));
    *out = slot;
done:
    return st;
}

/* The A and B pointers of cublasLtMatmul for x and w (see cuda_gemm_layout.h). */
static const void *gemm_a(const gemm_plan *p, const void *x, const void *w) { return p->a_is_w ? w : x; }
static const void *gemm_b(const gemm_plan *p, const void *x, const void *w) { return p->a_is_w ? x : w; }

static ltx2_status cuda_gemm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                             const ltx2_tensor *w, ltx2_b_layout w_layout, const ltx2_tensor *bias,
                             ltx2_tensor *y) {
    cuda_impl *ci = impl_of(be);
    ltx2_status st = LTX2_OK;
    int64_t K = x->shape[x->ndim - 1];
    int64_t N = y->shape[y->ndim - 1];
    int64_t M = 1;
    for (int i = 0; i + 1 < x->ndim; i++) M *= x->shape[i];
    if (M == 0 || N == 0) return LTX2_OK;
    if (K == 0) {
        /* No product: y = bias (or 0). cuBLASLt rejects K == 0. */
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "cuda gemm: K == 0 is not supported (x has an empty last dim)");
    }
    cudaDataType_t dt = x->dtype == LTX2_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    unsigned align = ptr_align(x->data);
    unsigned a2 = ptr_align(w->data), a3 = ptr_align(y->data);
    if (a2 < align) align = a2;
    if (a3 < align) align = a3;
    CUDA_CHECK(ctx, ci->rt.dev, cudaSetDevice(ci->rt.dev));
    gemm_plan *p = NULL;
    LTX2_TRY(gemm_plan_get_ex(ci, ctx, dt, dt, M, N, K, w_layout, bias ? bias->data : NULL, false, align, &p));
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmul(ci->lt, p->op, &alpha, gemm_a(p, x->data, w->data), p->la,
                                            gemm_b(p, x->data, w->data), p->lb, &beta, y->data, p->lc, y->data, p->lc,
                                            &p->algo, ci->workspace, CUDA_GEMM_WORKSPACE_BYTES, ci->stream));
done:
    return st;
}

/* ---- memory-bound ops: kernels/ launchers ---- */







/* ---- attention, RoPE, VAE ops ---- */






/* ---- fused DiT elementwise, GEMM epilogues, fp8 ---- */




/* y = act(alpha x W^T + bias) + residual: the residual is cuBLASLt's C with beta = 1 (C may be
 * D itself: an in-place residual add); fp8 folds the two per-tensor scales into alpha. With a bf16
 * output cuBLASLt adds C to the product already rounded to bf16 (measured on an H100; see
 * tests/test_ops_fused.c): two roundings, like a separate GEMM and add. */
static ltx2_status cuda_gemm_ex(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *w,
                                const ltx2_gemm_ex_args *a, ltx2_tensor *y) {
    cuda_impl *ci = impl_of(be);
    ltx2_status st = LTX2_OK;
    const int64_t K = x->shape[x->ndim - 1], N = y->shape[y->ndim - 1], M = ltx2_tensor_numel(x) / K;
    const bool fp8 = x->dtype == LTX2_F8_E4M3;
    cudaDataType_t dt = fp8 ? CUDA_R_8F_E4M3 : x->dtype == LTX2_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    cudaDataType_t dt_out = fp8 ? CUDA_R_16BF : dt;
    unsigned align = ptr_align(x->data), a2 = ptr_align(w->data), a3 = ptr_align(y->data);
    if (a2 < align) align = a2;
    if (a3 < align) align = a3;
    if (a->residual) {
        unsigned a4 = ptr_align(a->residual->data);
        if (a4 < align) align = a4;
    }
    if (fp8) {
        /* cuBLAS's FP8 requirements (cublasLtMatmul): "TN" operands and 16-byte aligned pointers
         * and leading dimensions; checked here so the error names the rule, not just "no algorithm" */
        const ltx2_lt_gemm g = ltx2_lt_gemm_rowmajor(M, N, K, a->w_layout);
        const int out_bytes = 2; /* bf16 C / D */
        if (!ltx2_lt_gemm_fp8_ok(&g, 1, 1, out_bytes) || align < LTX2_LT_FP8_ALIGN_BYTES)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "cuda fp8 gemm M=%lld N=%lld K=%lld (weight %s, pointer align %u): cuBLASLt fp8 needs "
                              "w as [N, K], K a multiple of %d, N a multiple of %d and %d-byte aligned pointers",
                              (long long)M, (long long)N, (long long)K, a->w_layout == LTX2_B_NK ? "[N,K]" : "[K,N]",
                              align, LTX2_LT_FP8_ALIGN_BYTES, LTX2_LT_FP8_ALIGN_BYTES / out_bytes,
                              LTX2_LT_FP8_ALIGN_BYTES);
    }
    CUDA_CHECK(ctx, ci->rt.dev, cudaSetDevice(ci->rt.dev));
    gemm_plan *p = NULL;
    LTX2_TRY(gemm_plan_get_ex(ci, ctx, dt, dt_out, M, N, K, a->w_layout, a->bias ? a->bias->data : NULL, a->gelu, align,
                              &p));
    const float alpha = fp8 ? a->x_scale * a->w_scale : 1.0f, beta = a->residual ? 1.0f : 0.0f;
    /* C == D (in place, same descriptor) or a separate C with D's layout and type: both are
     * cublasLtMatmul's supported forms. */
    const void *c = a->residual ? a->residual->data : y->data;
    CUBLAS_TRY(ctx, ci->rt.dev, cublasLtMatmul(ci->lt, p->op, &alpha, gemm_a(p, x->data, w->data), p->la,
                                            gemm_b(p, x->data, w->data), p->lb, &beta, c, p->lc, y->data, p->lc,
                                            &p->algo, ci->workspace, CUDA_GEMM_WORKSPACE_BYTES, ci->stream));
done:
    return st;
}


int ltx2_backend_cuda_device_count(void) { return ltx2_backend_cuda_device_count_why(NULL, 0); }

int ltx2_backend_cuda_device_count_why(char *why, size_t cap) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) n = 0;
    if (n < 1 && why && cap) snprintf(why, cap, "%s", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return n;
}

void ltx2_backend_cuda_describe(const ltx2_backend *be, char *buf, size_t cap) {
    struct cudaDeviceProp prop;
    const int dev = be && be->impl ? impl_of(be)->rt.dev : 0;
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        snprintf(buf, cap, "cuda:%d", dev);
        return;
    }
    snprintf(buf, cap, "cuda:%d (%s, compute capability %d.%d, %.1f GiB)", dev, prop.name, prop.major, prop.minor,
             (double)prop.totalGlobalMem / (double)(1ull << 30));
}

int64_t ltx2_backend_cuda_gemm_plans_built(const ltx2_backend *be) {
    /* this backend's own table, not one that wraps or imitates it (the profiler, the planner) */
    if (!be || be->sync != cuda_sync || !be->impl) return -1;
    return impl_of(be)->plans_built;
}

void *ltx2_backend_cuda_stream(const ltx2_backend *be) {
    if (!be || be->device != LTX2_DEVICE_CUDA || !be->impl) return NULL;
    return impl_of(be)->stream;
}

/* conv3d + bias through cuDNN, then SiLU as the backend's op (cuDNN's fused bias-activation has no
 * SiLU): the output is rounded to bf16 after the conv + bias and after the SiLU, where the kernel
 * rounds once at the end. */
static ltx2_status cuda_conv3d_cudnn(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d,
                                     const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, bool silu,
                                     ltx2_tensor *y) {
    cuda_impl *ci = impl_of(be);
    if (!ltx2_cudnn_conv3d_takes(d, x, y)) return ci->kernel_conv3d(be, ctx, d, x, w, bias, silu, y);
    LTX2_TRY(ltx2_cudnn_conv3d(ci->cudnn, ctx, d, x, w, bias, y));
    return silu ? ltx2_backend_unary(be, ctx, LTX2_OP_SILU, y, y) : LTX2_OK;
}

static void cuda_destroy(ltx2_backend *be) {
    if (!be) return;
    cuda_impl *ci = impl_of(be);
    if (ci) {
        cudaSetDevice(ci->rt.dev);
        if (ci->stream) cudaStreamSynchronize(ci->stream);
        ltx2_cudnn_conv_free(ci->cudnn);
        for (int i = 0; i < CUDA_GEMM_PLAN_CACHE; i++)
            if (ci->plans[i].valid) gemm_plan_release(&ci->plans[i]);
        if (ci->workspace) cudaFree(ci->workspace);
        if (ci->lt) cublasLtDestroy(ci->lt);
        if (ci->stream) cudaStreamDestroy(ci->stream);
        free(ci);
    }
    free(be);
}

ltx2_status ltx2_backend_cuda_create(ltx2_context *ctx, int device_index, ltx2_backend **out) {
    if (!out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cuda backend: out is NULL");
    *out = NULL;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "no usable CUDA device: cudaGetDeviceCount failed with %s (%s)",
                          cudaGetErrorName(e), cudaGetErrorString(e));
    if (count == 0) return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "no CUDA device present");
    if (device_index < 0 || device_index >= count)
        return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "CUDA device index %d out of range (%d device%s present)",
                          device_index, count, count == 1 ? "" : "s");

    ltx2_status st = LTX2_OK;
    ltx2_backend *be = calloc(1, sizeof(*be));
    cuda_impl *ci = calloc(1, sizeof(*ci));
    if (!be || !ci) {
        free(be);
        free(ci);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cuda backend: out of host memory");
    }
    ci->rt.dev = device_index;
    ci->rt.k = ltx2_k_table_get();
    ci->rt.enter = cuda_enter;
    ci->rt.scratch = cuda_scratch;
    ci->rt.scratch_free = cuda_scratch_free;
    ci->rt.error_text = cuda_error_text;
    be->name = "cuda";
    be->device = LTX2_DEVICE_CUDA;
    be->device_index = device_index;
    be->impl = ci;
    be->supports = cuda_supports;
    be->fp8_gemm_out = LTX2_BF16;
    be->alloc = cuda_alloc;
    be->free = cuda_free;
    be->upload = cuda_upload;
    be->download = cuda_download;
    be->copy = cuda_copy;
    be->sync = cuda_sync;
    be->mem_info = cuda_mem_info;
    be->device_id = cuda_device_id;
    be->copy_2d = cuda_copy_2d;
    be->gemm = cuda_gemm;
    be->gemm_ex = cuda_gemm_ex;
    be->destroy = cuda_destroy;
    ltx2_backend_kernels_fill(be);

    CUDA_TRY(ctx, device_index, cudaSetDevice(device_index));
    {
        int major = 0, minor = 0;
        CUDA_TRY(ctx, device_index, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_index));
        CUDA_TRY(ctx, device_index, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_index));
        ci->cc = major * 10 + minor;
    }
    /* the kernel choices (LTX2_ATTN_IMPL, LTX2_ATTN_PREP, LTX2_CONV3D_IMPL; backend_kernels.h) */
    st = ltx2_kernel_choices_from_env(ctx, device_index, true, &ci->rt);
    if (st != LTX2_OK) goto done;
    CUDA_TRY(ctx, device_index, cudaStreamCreateWithFlags(&ci->stream, cudaStreamNonBlocking));
    ci->rt.stream = ci->stream;
    CUBLAS_TRY(ctx, device_index, cublasLtCreate(&ci->lt));
    CUDA_TRY(ctx, device_index, cudaMalloc(&ci->workspace, CUDA_GEMM_WORKSPACE_BYTES));
    if (ci->rt.conv_impl == LTX2_CONV3D_IMPL_LIBRARY) {
        if ((st = ltx2_cudnn_conv_create(ctx, device_index, ci->stream, &ci->cudnn)) != LTX2_OK) goto done;
        ci->kernel_conv3d = be->conv3d;
        be->conv3d = cuda_conv3d_cudnn;
    }
done:
    if (st != LTX2_OK) {
        cuda_destroy(be);
        return st;
    }
    *out = be;
    return LTX2_OK;
}

#endif
