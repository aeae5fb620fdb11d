/* Op harness in the style of ggml's test-backend-ops: ONE registry of cases (op x dtype x shape,
 * including odd sizes, broadcasts and LTX-2 shapes scaled down by 4), seeded Philox inputs, and
 * two checks per case:
 *   cpu : the CPU backend (fp32 reference ops) against a naive double-precision implementation
 *         written here, so CI has real assertions without a GPU;
 *   cuda: the CUDA backend against the CPU backend, when a device exists (else reported, not
 *         failed). Attention runs once per device kernel: a backend per LTX2_ATTN_IMPL value
 *         (mma_sync everywhere, wgmma on compute capability 9.x), unless the caller already set
 *         LTX2_ATTN_IMPL, in which case only that choice runs. With -b emu (a build with the CUDA
 *         headers: LTX2_TEST_OPS_EMU) the kernel emulator (tests/emu/) stands in for the device,
 *         so every case also runs through the CUDA kernels on machines without a GPU.
 * Pass rule per element: |ref - out| <= atol + rtol*|ref|, plus NaN / Inf-sign checks and guard
 * elements after every output buffer. On failure: max abs err, rel-L2, cosine, first bad items.
 * Usage: test_ops [-o OPNAME] [-b cpu|cuda|emu] [--list] [-v] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#ifdef LTX2_TEST_OPS_EMU
#include "backend_emu.h"
#endif
#include "core/dtype.h"
#include "core/rng.h"
#include "test_util.h"
#include "test_ops.d/ops_case.h"

/* ---- tolerances (how each was chosen) ----
 * fp32 has a 24-bit significand: eps32 = 2^-23 ~ 1.2e-7.
 * bf16 has 8 significant bits: eps_bf16 = 2^-7 ~ 7.8e-3; rounding a result to bf16 alone costs up
 * to half of that relative; we allow one full eps because fp32 differences before the rounding
 * (summation order, rsqrtf/expf/tanhf ulps) can flip which way it rounds. */
#define EPS_BF16 0.0078125 /* 2^-7 */
/* GEMM: with unit-normal inputs an output is a sum of K unit-variance terms, |c| ~ sqrt(K), and
 * fp32 rounding in a (blocked) dot product grows like eps32 * sqrt(K) * |c| ~ 1.2e-7 * K. The atol
 * is scaled by sqrt(K): 1e-5*sqrt(K) covers that with a ~10x margin up to K = 8192. */
#define GEMM_F32_ATOL_PER_SQRT_K 1e-5
#define GEMM_F32_RTOL 1e-5
/* bf16 GEMM on the device: same fp32 accumulation (tensor cores keep fp32 partial sums), then
 * the bf16 output rounding (rtol); atol 10x the f32 one for the differently ordered sums. */
#define GEMM_BF16_ATOL_PER_SQRT_K 1e-4
/* Row reductions (norms, softmax) in fp32 vs double: error ~ eps32 * sqrt(dim) relative; 1e-5
 * covers dim up to ~10^4 with margin. Softmax outputs are < 1, so its atol is small. */
#define ROW_F32_RTOL 1e-5
#define ROW_F32_ATOL 1e-5
#define SOFTMAX_F32_ATOL 1e-7
/* A device computing a row mean in fp32 carries rounding proportional to the values' magnitude,
 * not their spread: for inputs offset + N(0,1) the row atol grows by this factor per unit of
 * |offset| (fp32 partial sums of ~100s of values near 100 lose ~1e-5 of the spread). */
#define ROW_OFFSET_ATOL_GAIN 1e-6
/* Activations: a few ulps of expf/tanhf propagated through the formula; atol for outputs near 0
 * where relative error is meaningless (gelu(x) ~ x/2 for tiny x is fine, but 1+tanh cancels
 * for x << 0). */
#define ACT_F32_RTOL 1e-5
#define ACT_F32_ATOL 1e-6
/* add / mul: one fp32 rounding of the exact result: half an ulp (2^-24); allow 2 ulps. */
#define BINARY_F32_RTOL 2.4e-7
/* bf16 device results vs the f32 CPU: fp32 noise (atol) then one bf16 rounding (rtol). */
#define BF16_ATOL 1e-4
/* Attention, f32 CPU vs naive double: the CPU reference accumulates in double but normalises and
 * rotates q/k in fp32 (~1e-7 relative per element), which moves a score by ~1e-7*sqrt(d) and an
 * output (a convex combination of unit-scale values) by about as much; 1e-5 leaves margin. */
#define ATTN_F32_ATOL 1e-5
#define ATTN_F32_RTOL 1e-5
/* Attention, bf16 device vs f32 CPU. The device rounds the normalised/rotated q and k to bf16
 * (2^-9 relative each) before QK^T, which moves a unit-variance score by ~2^-9 * sqrt(2) ~ 3e-3
 * at most (typically 1e-3); it also rounds the softmax weights P to bf16 before PV (2^-9
 * relative, averaging out over keys) and the output to bf16 (rtol). Outputs are averages of
 * unit-normal values, |o| <~ 1, so 4e-3 absolute covers a 3e-3 score shift with margin. */
#define ATTN_BF16_ATOL 4e-3
/* Where the data make those roundings move an output further than that (a peaked softmax with
 * values far from the mean), the element may differ by ATTN_BF16_SIGMAS standard deviations of
 * the rounding noise instead (naive_attention_bf16_sd, per element). 6 sigma: a normal tail of
 * 2e-9, against ~2e5 attention outputs in the registry. */
#define ATTN_BF16_SIGMAS 6.0
/* RoPE in fp32: (a c - b s) rounds two products and a sum of terms up to |x| ~ 5: ~3 half-ulps of
 * 5 = 1e-6; 2e-6 absolute for outputs that cancel to ~0. */
#define ROPE_F32_ATOL 2e-6
#define ROPE_F32_RTOL 1e-6

/* The vocoders' ops. leaky_relu (x * slope), div_scalar (x / d) and hardtanh (a clamp) round at
 * most once in fp32, or twice where a kernel multiplies by a rounded 1/d: under 1.5 ulps, inside
 * BINARY_F32_RTOL's 2. tanh and log_floor: the activations' few ulps of tanhf / logf (ACT_F32_*).
 * SnakeBeta: the angle x * alpha rounds in fp32 before sinf (half an ulp of |x alpha| <~ 30: ~1e-6
 * absolute), and sin^2 / beta carries that change at slope <= 1 / beta (<~ 2.7 at 4 sigma of the
 * cases' parameters), so 1e-5 absolute leaves margin (observed: 1.1e-6). complex_abs: two squares,
 * a sum and sqrtf, a few ulps relative (ACT_F32_RTOL). The FIR resamplers: sums of <= 43 products
 * of O(1) terms in fp32 (ROW_F32_*). conv1d / conv_transpose1d: the GEMM rule over K = k * c_in,
 * as conv3d (an output of the transposed conv sums ceil(k / stride) * c_in of those terms: K is an
 * upper bound). */
#define SNAKE_F32_ATOL 1e-5

/* Extra elements after each output buffer that must stay untouched (out-of-bounds writes). */
#define GUARD_ELEMS 64
/* Byte pattern pre-filled into outputs and guards: 0xFF.. is NaN in f32 and bf16, so an output
 * element the op forgot to write fails the NaN check too. */
#define FILL_BYTE 0xFF
#define MAX_BAD_PRINT 5

typedef struct opts {
    int op;         /* -1: all */
    bool want_cpu, want_cuda, list, verbose;
} opts;

/* ---- tolerance per op x dtype ---- */

typedef struct tol {
    double atol, rtol;
} tol;

static tol tol_for(const op_case *c, ltx2_dtype dt) {
    bool bf = dt == LTX2_BF16 && c->op != LTX2_OP_CONVERT;
    double sk = sqrt((double)c->shape[c->ndim - 1]);
    tol t = {0.0, 0.0};
    switch (c->op) {
    case LTX2_OP_GEMM:
        t.atol = (bf ? GEMM_BF16_ATOL_PER_SQRT_K : GEMM_F32_ATOL_PER_SQRT_K) * sk;
        t.rtol = GEMM_F32_RTOL;
        break;
    case LTX2_OP_RMS_NORM:
    case LTX2_OP_LAYER_NORM:
    case LTX2_OP_RMS_APPLY:
        t = (tol){ROW_F32_ATOL + ROW_OFFSET_ATOL_GAIN * fabs(c->offset) * sk, ROW_F32_RTOL};
        break;
    case LTX2_OP_BLUR_DOWNSAMPLE: /* a convex combination of <= 25 values in fp32 */
        t = (tol){ROW_F32_ATOL, ROW_F32_RTOL};
        break;
    case LTX2_OP_GROUP_NORM: {
        /* the row rule over a group's inner x channels-per-group values, plus the SiLU's ulps */
        int64_t per_group = 1;
        for (int i = 1; i < c->ndim; i++) per_group *= c->shape[i];
        const double sg = sqrt((double)(per_group / c->heads));
        t = (tol){ROW_F32_ATOL + ROW_OFFSET_ATOL_GAIN * fabs(c->offset) * sg, ROW_F32_RTOL + ACT_F32_RTOL};
        break;
    }
    case LTX2_OP_ROW_SUMSQ:
        /* a sum of positive terms in fp32: no cancellation; the output stays f32 for bf16 inputs */
        bf = false;
        t = (tol){0.0, ROW_F32_RTOL};
        break;
    case LTX2_OP_ROW_STATS:
        /* the sum of signed terms cancels: its fp32 error is absolute, growing like sqrt(K); min and
         * max are exact (bf16 inputs are bf16 values); f32 out for bf16 inputs */
        bf = false;
        t = (tol){ROW_F32_ATOL * sk, ROW_F32_RTOL};
        break;
    case LTX2_OP_SOFTMAX:
        t = (tol){SOFTMAX_F32_ATOL, ROW_F32_RTOL};
        break;
    case LTX2_OP_GELU_TANH:
    case LTX2_OP_SILU:
        t = (tol){ACT_F32_ATOL, ACT_F32_RTOL};
        break;
    case LTX2_OP_ADD:
    case LTX2_OP_MUL:
        t = (tol){0.0, BINARY_F32_RTOL};
        break;
    case LTX2_OP_ATTENTION: {
        /* score errors scale with |q||k| (scale^2) and move outputs of scale |v| (scale^1) */
        double s3 = (double)c->scale * c->scale * c->scale;
        t = bf ? (tol){ATTN_BF16_ATOL * s3, 0.0} /* + EPS_BF16 below */ : (tol){ATTN_F32_ATOL * s3, ATTN_F32_RTOL};
        break;
    }
    case LTX2_OP_ROPE:
        t = (tol){ROPE_F32_ATOL, ROPE_F32_RTOL};
        break;
    case LTX2_OP_CONV3D: {
        const ltx2_conv3d_desc d = conv_desc_of(c);
        double sK = sqrt((double)(ltx2_conv3d_packed_numel(&d) / d.c_out));
        t.atol = (bf ? GEMM_BF16_ATOL_PER_SQRT_K : GEMM_F32_ATOL_PER_SQRT_K) * sK;
        t.rtol = GEMM_F32_RTOL;
        break;
    }
    case LTX2_OP_PIXEL_NORM:
        t = (tol){ROW_F32_ATOL, ROW_F32_RTOL + ACT_F32_RTOL};
        break;
    case LTX2_OP_DEPTH_TO_SPACE:
        t = (tol){0.0, BINARY_F32_RTOL};
        break;
    case LTX2_OP_SPACE_TO_DEPTH: /* a gather plus an fp32 mean of at most a few terms */
        t = (tol){ROW_F32_ATOL, BINARY_F32_RTOL};
        break;
    case LTX2_OP_CONV1D:
    case LTX2_OP_CONV_TRANSPOSE1D: {
        double sK = sqrt((double)(c->taps * c->shape[2]));
        t.atol = (bf ? GEMM_BF16_ATOL_PER_SQRT_K : GEMM_F32_ATOL_PER_SQRT_K) * sK;
        t.rtol = GEMM_F32_RTOL;
        break;
    }
    case LTX2_OP_FIR_UPSAMPLE:
    case LTX2_OP_FIR_DOWNSAMPLE:
        t = (tol){ROW_F32_ATOL, ROW_F32_RTOL};
        break;
    case LTX2_OP_LEAKY_RELU:
    case LTX2_OP_HARDTANH:
    case LTX2_OP_DIV_SCALAR:
        t = (tol){0.0, BINARY_F32_RTOL};
        break;
    case LTX2_OP_TANH:
    case LTX2_OP_LOG_FLOOR:
        t = (tol){ACT_F32_ATOL, ACT_F32_RTOL};
        break;
    case LTX2_OP_SNAKE:
        t = (tol){SNAKE_F32_ATOL, ACT_F32_RTOL};
        break;
    case LTX2_OP_COMPLEX_ABS:
        t = (tol){0.0, ACT_F32_RTOL};
        break;
    default: /* convert: exact */
        break;
    }
    if (bf) {
        if (t.atol < BF16_ATOL) t.atol = BF16_ATOL;
        t.rtol += EPS_BF16;
    }
    return t;
}

/* ---- comparison ---- */

/* atol_at: per-element atol used instead of t.atol where it is larger (NULL: none). */
static bool compare(const char *label, const char *name, const float *out, const double *ref,
                    int64_t n, tol t, const double *atol_at) {
    double max_abs = 0, d2 = 0, r2 = 0, o2 = 0, dot = 0;
    int64_t n_bad = 0;
    int printed = 0;
    for (int64_t i = 0; i < n; i++) {
        double o = out[i], r = ref[i];
        bool bad;
        if (isnan(r)) {
            bad = !isnan(o);
        } else if (isinf(r)) {
            bad = !(isinf(o) && (o > 0) == (r > 0));
        } else if (!isfinite(o)) {
            bad = true; /* NaN or Inf where the reference is finite */
        } else {
            double e = fabs(o - r);
            if (e > max_abs) max_abs = e;
            d2 += e * e;
            r2 += r * r;
            o2 += o * o;
            dot += o * r;
            bad = e > fmax(t.atol, atol_at ? atol_at[i] : 0.0) + t.rtol * fabs(r);
        }
        if (bad) {
            if (printed < MAX_BAD_PRINT) {
                fprintf(stderr, "    [%s] %s: element %lld: out %.9g ref %.9g (allowed %.3g)\n", label, name,
                        (long long)i, o, r, fmax(t.atol, atol_at ? atol_at[i] : 0.0) + t.rtol * fabs(r));
                printed++;
            }
            n_bad++;
        }
    }
    double rel_l2 = r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
    double cosine = (o2 > 0 && r2 > 0) ? dot / sqrt(o2 * r2) : 1.0;
    if (n_bad)
        fprintf(stderr, "    [%s] %s: %lld/%lld bad, max abs err %.3g, rel-L2 %.3g, cosine %.9f (atol %.3g rtol %.3g)\n",
                label, name, (long long)n_bad, (long long)n, max_abs, rel_l2, cosine, t.atol, t.rtol);
    CHECK(n_bad == 0, "%s %s: %lld bad elements", label, name, (long long)n_bad);
    return n_bad == 0;
}

/* ---- running a case on a backend ---- */

typedef struct dev_buf {
    void *p;
    size_t bytes;
} dev_buf;

/* Uploads n host f32 values as dtype dt into fresh device memory. */
static ltx2_status upload_as(const ltx2_backend *be, ltx2_context *ctx, const float *host, int64_t n,
                             ltx2_dtype dt, dev_buf *out) {
    size_t bytes = (size_t)n * ltx2_dtype_size(dt);
    void *tmp = malloc(bytes ? bytes : 1);
    ltx2_status st = ltx2_convert(ctx, tmp, dt, host, LTX2_F32, (size_t)n);
    if (st == LTX2_OK) st = be->alloc(be, ctx, bytes, &out->p);
    if (st == LTX2_OK) st = be->upload(be, ctx, out->p, tmp, bytes);
    out->bytes = bytes;
    free(tmp);
    return st;
}

static ltx2_tensor view(void *p, ltx2_dtype dt, ltx2_device dev, int ndim, const int64_t *shape) {
    ltx2_tensor t = ltx2_tensor_make(p, dt, ndim, shape);
    t.device = dev;
    return t;
}

/* Runs case c on backend be with device dtype dt; writes n_out f32 results to host out.
 * Returns false (after recording a CHECK failure) on any error, guard damage included. */
static bool run_on(const ltx2_backend *be, ltx2_context *ctx, const op_case *c, const inputs *in,
                   ltx2_dtype dt, float *out, const char *label, const char *name) {
    ltx2_dtype in_dt = dt, out_dt = dt;
    if (c->op == LTX2_OP_CONVERT) in_dt = dt == LTX2_BF16 ? LTX2_F32 : LTX2_BF16;
    if (c->op == LTX2_OP_ROW_SUMSQ || c->op == LTX2_OP_ROW_STATS) out_dt = LTX2_F32; /* f32 whatever x is */
    dev_buf bx = {0}, bw = {0}, bbias = {0}, bb = {0}, bo = {0};
    ltx2_status st = upload_as(be, ctx, in->x, in->nx_storage, in_dt, &bx);
    const bool wide_w = c->op == LTX2_OP_GEMM || c->op == LTX2_OP_CONV3D || c->op == LTX2_OP_CONV1D ||
                        c->op == LTX2_OP_CONV_TRANSPOSE1D; /* w is a matrix, bias [n] */
    if (st == LTX2_OK && in->w) st = upload_as(be, ctx, in->w, wide_w ? in->nw : c->shape[c->ndim - 1], dt, &bw);
    if (st == LTX2_OK && in->bias) st = upload_as(be, ctx, in->bias, wide_w ? c->n : c->shape[c->ndim - 1], dt, &bbias);
    /* b: binary's operand and depth_to_space / space_to_depth's residual in dt; rms_apply's row sums f32 */
    if (st == LTX2_OK && in->b)
        st = upload_as(be, ctx, in->b, in->nb, c->op == LTX2_OP_RMS_APPLY ? LTX2_F32 : dt, &bb);
    /* attention / rope extras: k, v, norm weights in dt; RoPE tables always f32; the mask u8 */
    dev_buf bk = {0}, bv = {0}, bwq = {0}, bwk = {0}, bqc = {0}, bqs = {0}, bkc = {0}, bks = {0}, bm = {0};
    const int64_t Dm = c->shape[c->ndim - 1];
    if (st == LTX2_OK && in->k) st = upload_as(be, ctx, in->k, in->nkv, dt, &bk);
    if (st == LTX2_OK && in->v) st = upload_as(be, ctx, in->v, in->nkv, dt, &bv);
    if (st == LTX2_OK && in->wq) st = upload_as(be, ctx, in->wq, Dm, dt, &bwq);
    if (st == LTX2_OK && in->wk) st = upload_as(be, ctx, in->wk, Dm, dt, &bwk);
    if (st == LTX2_OK && in->qc) st = upload_as(be, ctx, in->qc, in->ntq, LTX2_F32, &bqc);
    if (st == LTX2_OK && in->qs) st = upload_as(be, ctx, in->qs, in->ntq, LTX2_F32, &bqs);
    if (st == LTX2_OK && in->kc) st = upload_as(be, ctx, in->kc, in->ntk, LTX2_F32, &bkc);
    if (st == LTX2_OK && in->ks) st = upload_as(be, ctx, in->ks, in->ntk, LTX2_F32, &bks);
    /* the vocoders' f32 side inputs: the FIR filter, SnakeBeta's alpha and 1 / beta */
    dev_buf bfilt = {0}, balpha = {0}, bibeta = {0};
    if (st == LTX2_OK && in->filt) st = upload_as(be, ctx, in->filt, c->taps, LTX2_F32, &bfilt);
    if (st == LTX2_OK && in->alpha) st = upload_as(be, ctx, in->alpha, Dm, LTX2_F32, &balpha);
    if (st == LTX2_OK && in->inv_beta) st = upload_as(be, ctx, in->inv_beta, Dm, LTX2_F32, &bibeta);
    if (st == LTX2_OK && in->mask) {
        size_t mb = (size_t)(c->shape[0] * c->sk);
        st = be->alloc(be, ctx, mb, &bm.p);
        if (st == LTX2_OK) st = be->upload(be, ctx, bm.p, in->mask, mb);
    }

    size_t osz = ltx2_dtype_size(out_dt);
    size_t obytes = (size_t)(in->nout + GUARD_ELEMS) * osz;
    unsigned char *host_o = malloc(obytes);
    memset(host_o, FILL_BYTE, obytes);
    if (st == LTX2_OK) st = be->alloc(be, ctx, obytes, &bo.p);
    if (st == LTX2_OK) st = be->upload(be, ctx, bo.p, host_o, obytes);

    if (st == LTX2_OK) {
        ltx2_tensor x = view(bx.p, in_dt, be->device, c->ndim, c->shape);
        if (c->flags & F_STRIDED) {
            /* a view of every other element of the last dim */
            for (int i = 0; i < c->ndim; i++) x.strides[i] *= 2;
        }
        ltx2_tensor y = view(bo.p, out_dt, be->device, in->out_ndim, in->out_shape);
        int64_t last = c->shape[c->ndim - 1];
        int64_t vec_n = wide_w ? c->n : last;
        ltx2_tensor tw = view(bw.p, dt, be->device, 1, &vec_n);
        ltx2_tensor tbias = view(bbias.p, dt, be->device, 1, &vec_n);
        switch (c->op) {
        case LTX2_OP_GEMM: {
            int64_t wshape[2] = {c->n, last};
            if (c->flags & F_KN) {
                wshape[0] = last;
                wshape[1] = c->n;
            }
            tw = view(bw.p, dt, be->device, 2, wshape);
            st = ltx2_backend_gemm(be, ctx, &x, &tw, c->flags & F_KN ? LTX2_B_KN : LTX2_B_NK,
                                   in->bias ? &tbias : NULL, &y);
            break;
        }
        case LTX2_OP_RMS_NORM:
            st = ltx2_backend_rms_norm(be, ctx, &x, in->w ? &tw : NULL, 1e-6f, &y);
            break;
        case LTX2_OP_LAYER_NORM:
            st = ltx2_backend_layer_norm(be, ctx, &x, in->w ? &tw : NULL, in->bias ? &tbias : NULL, 1e-6f, &y);
            break;
        case LTX2_OP_ROW_SUMSQ:
            st = ltx2_backend_row_sumsq(be, ctx, &x, &y);
            break;
        case LTX2_OP_ROW_STATS:
            st = ltx2_backend_row_stats(be, ctx, &x, &y);
            break;
        case LTX2_OP_RMS_APPLY: {
            ltx2_tensor ss = view(bb.p, LTX2_F32, be->device, 1, &in->nb);
            st = ltx2_backend_rms_apply(be, ctx, &x, &ss, 2 * last, in->w ? &tw : NULL, 1e-6f, &y);
            break;
        }
        case LTX2_OP_SOFTMAX:
            st = ltx2_backend_softmax(be, ctx, &x, &y);
            break;
        case LTX2_OP_GELU_TANH:
        case LTX2_OP_SILU:
            st = ltx2_backend_unary(be, ctx, c->op, &x, &y);
            break;
        case LTX2_OP_ADD:
        case LTX2_OP_MUL: {
            ltx2_tensor b = view(bb.p, dt, be->device, c->b_ndim, c->b_shape);
            st = ltx2_backend_binary(be, ctx, c->op, &x, &b, &y);
            break;
        }
        case LTX2_OP_CONVERT:
            st = ltx2_backend_convert(be, ctx, &x, &y);
            break;
        case LTX2_OP_ATTENTION: {
            const int64_t B = c->shape[0], Sq = c->shape[1], Sk = c->sk, H = c->heads, d = Dm / H;
            const bool il = c->flags & F_ROPE_IL;
            int64_t kvs[3] = {B, Sk, case_kv_heads(c) * d}, ms[2] = {B, Sk};
            int64_t tq_sp[4] = {B, H, Sq, d / 2}, tk_sp[4] = {B, H, Sk, d / 2}, tq_il[3] = {B, Sq, Dm},
                    tk_il[3] = {B, Sk, Dm};
            ltx2_tensor tk = view(bk.p, dt, be->device, 3, kvs), tv = view(bv.p, dt, be->device, 3, kvs);
            ltx2_tensor twq = view(bwq.p, dt, be->device, 1, &Dm), twk = view(bwk.p, dt, be->device, 1, &Dm);
            ltx2_tensor tm = view(bm.p, LTX2_U8, be->device, 2, ms);
            ltx2_tensor tqc = view(bqc.p, LTX2_F32, be->device, il ? 3 : 4, il ? tq_il : tq_sp);
            ltx2_tensor tqs = view(bqs.p, LTX2_F32, be->device, il ? 3 : 4, il ? tq_il : tq_sp);
            ltx2_tensor tkc = view(bkc.p, LTX2_F32, be->device, il ? 3 : 4, il ? tk_il : tk_sp);
            ltx2_tensor tks = view(bks.p, LTX2_F32, be->device, il ? 3 : 4, il ? tk_il : tk_sp);
            const bool rope = c->flags & (F_ROPE | F_ROPE_IL);
            ltx2_attn_args a = {.heads = H, .scale = (float)(1.0 / sqrt((double)d)),
                                .key_mask = in->mask ? &tm : NULL, .kv_heads = c->kv_heads,
                                .causal = c->flags & F_CAUSAL, .window = c->window,
                                .empty_zero = c->flags & F_EMPTY0, .q_norm = in->wq ? &twq : NULL,
                                .k_norm = in->wk ? &twk : NULL, .norm_eps = QK_NORM_EPS,
                                .rope_type = il ? LTX2_ROPE_INTERLEAVED : LTX2_ROPE_SPLIT,
                                .q_cos = rope ? &tqc : NULL, .q_sin = rope ? &tqs : NULL,
                                .k_cos = rope ? &tkc : NULL, .k_sin = rope ? &tks : NULL};
            st = ltx2_backend_attention(be, ctx, &x, &tk, &tv, &a, &y);
            break;
        }
        case LTX2_OP_ROPE: {
            const int64_t B = c->shape[0], S = c->shape[1], H = c->heads, d = Dm / H;
            const bool il = c->flags & F_ROPE_IL;
            int64_t sp[4] = {c->flags & F_ROPE_ONE_ROW ? 1 : B, c->flags & F_ROPE_ONE_HEAD ? 1 : H, S, d / 2},
                    ils[3] = {B, S, Dm};
            ltx2_tensor tc = view(bqc.p, LTX2_F32, be->device, il ? 3 : 4, il ? ils : sp);
            ltx2_tensor ts = view(bqs.p, LTX2_F32, be->device, il ? 3 : 4, il ? ils : sp);
            st = ltx2_backend_rope(be, ctx, &x, il ? LTX2_ROPE_INTERLEAVED : LTX2_ROPE_SPLIT, H, &tc, &ts, &y);
            break;
        }
        case LTX2_OP_CONV3D: {
            ltx2_conv3d_desc d = conv_desc_of(c);
            int64_t ws[2] = {in->nw / c->n, c->n};
            ltx2_tensor tw2 = view(bw.p, dt, be->device, 2, ws);
            st = ltx2_backend_conv3d(be, ctx, &d, &x, &tw2, in->bias ? &tbias : NULL, c->flags & F_SILU, &y);
            break;
        }
        case LTX2_OP_PIXEL_NORM:
            st = ltx2_backend_pixel_norm(be, ctx, &x, PIXEL_NORM_EPS, c->flags & F_SILU, &y);
            break;
        case LTX2_OP_BLUR_DOWNSAMPLE:
            st = ltx2_backend_blur_downsample(be, ctx, &x, c->k3[0], &y);
            break;
        case LTX2_OP_GROUP_NORM:
            st = ltx2_backend_group_norm(be, ctx, &x, c->heads, GROUP_NORM_EPS, in->w ? &tw : NULL,
                                         in->bias ? &tbias : NULL, c->flags & F_SILU, &y);
            break;
        case LTX2_OP_DEPTH_TO_SPACE: {
            ltx2_d2s_args a = {.stride = {c->k3[0], c->k3[1], c->k3[2]}, .drop_first = c->flags & F_DROP};
            int64_t rs[5] = {c->shape[0], c->shape[1], c->shape[2], c->shape[3], c->n * c->k3[0] * c->k3[1] * c->k3[2]};
            ltx2_tensor tr = view(bb.p, dt, be->device, 5, rs);
            st = ltx2_backend_depth_to_space(be, ctx, &x, &a, in->b ? &tr : NULL, &y);
            break;
        }
        case LTX2_OP_SPACE_TO_DEPTH: {
            ltx2_s2d_args a = {.stride = {c->k3[0], c->k3[1], c->k3[2]}};
            int64_t rs[5] = {c->shape[0], c->shape[1], c->shape[2], c->shape[3], c->n};
            ltx2_tensor tr = view(bb.p, dt, be->device, 5, rs);
            st = ltx2_backend_space_to_depth(be, ctx, &x, &a, in->b ? &tr : NULL, &y);
            break;
        }
        case LTX2_OP_CONV1D: {
            const ltx2_conv1d_desc d = conv1d_desc_of(c);
            const int64_t ws[2] = {d.k * d.c_in, d.c_out};
            ltx2_tensor tw2 = view(bw.p, dt, be->device, 2, ws);
            st = ltx2_backend_conv1d(be, ctx, &d, &x, &tw2, in->bias ? &tbias : NULL, &y);
            break;
        }
        case LTX2_OP_CONV_TRANSPOSE1D: {
            const ltx2_convt1d_desc d = convt1d_desc_of(c);
            const int64_t ws[2] = {d.c_in, d.k * d.c_out};
            ltx2_tensor tw2 = view(bw.p, dt, be->device, 2, ws);
            st = ltx2_backend_conv_transpose1d(be, ctx, &d, &x, &tw2, in->bias ? &tbias : NULL, &y);
            break;
        }
        case LTX2_OP_FIR_UPSAMPLE:
        case LTX2_OP_FIR_DOWNSAMPLE: {
            const ltx2_fir_desc d = fir_desc_of(c);
            ltx2_tensor tf = view(bfilt.p, LTX2_F32, be->device, 1, &c->taps);
            st = c->op == LTX2_OP_FIR_UPSAMPLE ? ltx2_backend_fir_upsample(be, ctx, &d, &x, &tf, &y)
                                               : ltx2_backend_fir_downsample(be, ctx, &d, &x, &tf, &y);
            break;
        }
        case LTX2_OP_SNAKE: {
            ltx2_tensor ta = view(balpha.p, LTX2_F32, be->device, 1, &Dm);
            ltx2_tensor tb = view(bibeta.p, LTX2_F32, be->device, 1, &Dm);
            st = ltx2_backend_snake(be, ctx, &x, &ta, &tb, &y);
            break;
        }
        case LTX2_OP_COMPLEX_ABS:
            st = ltx2_backend_complex_abs(be, ctx, &x, &y);
            break;
        default:
            if (op_is_unary_a(c->op))
                st = ltx2_backend_unary_a(be, ctx, c->op, c->alpha, &x, &y);
            else
                st = LTX2_ERR_INTERNAL;
            break;
        }
    }
    if (st == LTX2_OK) st = be->sync(be, ctx);
    if (st == LTX2_OK) st = be->download(be, ctx, host_o, bo.p, obytes);
    bool ok = st == LTX2_OK;
    CHECK(st == LTX2_OK, "[%s] %s: %s: %s", label, name, ltx2_status_name(st), ltx2_last_error(ctx));
    if (ok) {
        int64_t bad_guard = 0;
        for (size_t i = (size_t)in->nout * osz; i < obytes; i++) bad_guard += host_o[i] != FILL_BYTE;
        CHECK(bad_guard == 0, "[%s] %s: %lld guard bytes after the output were overwritten", label, name,
              (long long)bad_guard);
        ok = bad_guard == 0 && ltx2_convert(ctx, out, LTX2_F32, host_o, out_dt, (size_t)in->nout) == LTX2_OK;
    }
    free(host_o);
    be->free(be, bx.p);
    be->free(be, bw.p);
    be->free(be, bbias.p);
    be->free(be, bb.p);
    be->free(be, bo.p);
    dev_buf extra[] = {bk, bv, bwq, bwk, bqc, bqs, bkc, bks, bm, bfilt, balpha, bibeta};
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) be->free(be, extra[i].p);
    return ok;
}

/* ---- driver ---- */

/* The attention kernels each attention case runs on; see the header comment. */
#define ATTN_IMPL_ENV "LTX2_ATTN_IMPL"
#define N_ATTN_IMPLS 2
static const char *const attn_impl_names[N_ATTN_IMPLS] = {"mma_sync", "wgmma"};

/* The sm_90a wgmma kernel's contract (attention_sm90.cu): head dims 64, 128 and 256 with Gemma's
 * masks, but not causal / windowed rows averaged when empty (no empty_zero): those and other head
 * dims go to the per-row kernel in automatic dispatch, and a forced wgmma refuses them. */
static bool wgmma_takes(const op_case *c) {
    const int64_t d = c->shape[2] / c->heads;
    const bool rows_averaged = (c->window || (c->flags & F_CAUSAL)) && !(c->flags & F_EMPTY0);
    return (d == 64 || d == 128 || d == 256) && !rows_averaged;
}

static bool g_emu; /* -b emu: the kernel emulator is the device */

/* The device backend: CUDA, or with -b emu the kernel emulator (which reads LTX2_ATTN_IMPL as the
 * CUDA backend does). */
static ltx2_status device_create(ltx2_context *ctx, ltx2_backend **out) {
#ifdef LTX2_TEST_OPS_EMU
    if (g_emu) return ltx2_backend_emu_create(ctx, out);
#endif
    return ltx2_backend_cuda_create(ctx, 0, out);
}

/* Creates one CUDA backend per attention kernel this device runs; returns how many. */
static int attn_backends_create(ltx2_context *ctx, ltx2_backend **out, const char **names) {
    if (getenv(ATTN_IMPL_ENV)) return 0; /* the caller chose one: the default backend has it */
    int n = 0;
    for (int i = 0; i < N_ATTN_IMPLS; i++) {
        setenv(ATTN_IMPL_ENV, attn_impl_names[i], 1);
        if (device_create(ctx, &out[n]) == LTX2_OK) {
            names[n++] = attn_impl_names[i];
        } else {
            printf("cuda attention [%s]: not run (%s)\n", attn_impl_names[i], ltx2_last_error(ctx));
            ltx2_clear_error(ctx);
        }
    }
    unsetenv(ATTN_IMPL_ENV);
    return n;
}

static void usage(void) {
    printf("usage: test_ops [-o OPNAME] [-b cpu|cuda|emu] [--list] [-v]\n  ops:");
    for (int i = 0; i < LTX2_OP_COUNT; i++) printf(" %s", ltx2_op_name((ltx2_op)i));
    printf("\n");
}

static bool parse(int argc, char **argv, opts *o) {
    *o = (opts){.op = -1, .want_cpu = true, .want_cuda = true};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            ltx2_op op;
            if (!ltx2_op_from_name(argv[++i], &op)) return false;
            o->op = (int)op;
        } else if (!strcmp(argv[i], "-b") && i + 1 < argc) {
            const char *b = argv[++i];
            if (!strcmp(b, "cpu")) o->want_cuda = false;
            else if (!strcmp(b, "cuda")) o->want_cpu = false;
#ifdef LTX2_TEST_OPS_EMU
            else if (!strcmp(b, "emu")) o->want_cpu = false, g_emu = true;
#endif
            else return false;
        } else if (!strcmp(argv[i], "--list")) {
            o->list = true;
        } else if (!strcmp(argv[i], "-v")) {
            o->verbose = true;
        } else {
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv) {
    opts o;
    if (!parse(argc, argv, &o)) {
        usage();
        return 2;
    }
    int n_cases = 0;
    const op_case *cases = ops_cases(&n_cases);
    if (!cases) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);
    const ltx2_backend *cpu = ltx2_backend_cpu();
    ltx2_backend *cuda = NULL;
    char cuda_why[LTX2_ERROR_CAP] = "";
    if (o.want_cuda && device_create(ctx, &cuda) != LTX2_OK) {
        snprintf(cuda_why, sizeof(cuda_why), "%s", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }

    if (o.list) {
        printf("%-4s %-60s %-6s %-6s\n", "#", "case", "cpu", "cuda");
        for (int i = 0; i < n_cases; i++) {
            const op_case *c = &cases[i];
            if (o.op >= 0 && (int)c->op != o.op) continue;
            char name[160];
            case_name(c, name, sizeof(name));
            ltx2_dtype cpu_dt = c->op == LTX2_OP_CONVERT ? c->dtype : LTX2_F32;
            printf("%-4d %-60s %-6s %-6s\n", i, name, ltx2_backend_supports(cpu, c->op, cpu_dt) ? "yes" : "no",
                   cuda ? (ltx2_backend_supports(cuda, c->op, c->dtype) ? "yes" : "no") : "n/a");
        }
        ltx2_backend_free(cuda);
        ltx2_context_free(ctx);
        return 0;
    }
    if (!o.want_cpu && !cuda) { /* -b cuda asked for the device comparison alone */
        ltx2_context_free(ctx);
        return test_skip(cuda_why);
    }
    if (o.want_cuda && !cuda)
        printf("cuda: not available (%s); CPU-vs-CUDA checks are skipped, CPU-vs-naive checks still run\n",
               cuda_why);
    ltx2_backend *attn_be[N_ATTN_IMPLS] = {0};
    const char *attn_names[N_ATTN_IMPLS] = {0};
    const int n_attn = cuda ? attn_backends_create(ctx, attn_be, attn_names) : 0;

    int n_run = 0, n_cuda = 0, n_fail_cases = 0;
    for (int i = 0; i < n_cases; i++) {
        const op_case *c = &cases[i];
        if (o.op >= 0 && (int)c->op != o.op) continue;
        char name[160];
        case_name(c, name, sizeof(name));
        int failed_before = test_counts_g.failed;
        inputs in;
        inputs_make(c, i, &in);
        float *cpu_out = malloc((size_t)in.nout * sizeof(float));
        double *ref = malloc((size_t)in.nout * sizeof(double));
        /* The CPU backend runs f32 (it is the reference); conversions run in their own dtypes. */
        ltx2_dtype cpu_dt = c->op == LTX2_OP_CONVERT ? c->dtype : LTX2_F32;
        bool cpu_ok = run_on(cpu, ctx, c, &in, cpu_dt, cpu_out, "cpu", name);
        const char *cpu_res = "-", *cuda_res = "-";
        if (o.want_cpu) {
            naive_ref(c, &in, ref);
            cpu_res = cpu_ok && compare("cpu vs naive", name, cpu_out, ref, in.nout, tol_for(c, LTX2_F32), NULL) ? "ok" : "FAIL";
        }
        if (o.want_cuda) {
            if (!cuda) {
                cuda_res = "skip";
            } else if (!ltx2_backend_supports(cuda, c->op, c->dtype)) {
                cuda_res = "unsupported";
            } else if (!cpu_ok) {
                cuda_res = "no-ref";
            } else {
                float *dev_out = malloc((size_t)in.nout * sizeof(float));
                for (int64_t k = 0; k < in.nout; k++) ref[k] = cpu_out[k];
                double *atol_at = NULL;
                if (c->op == LTX2_OP_ATTENTION && c->dtype == LTX2_BF16) {
                    atol_at = malloc((size_t)in.nout * sizeof(double));
                    naive_attention_bf16_sd(c, &in, atol_at);
                    for (int64_t k = 0; k < in.nout; k++) atol_at[k] *= ATTN_BF16_SIGMAS;
                }
                /* attention: every kernel variant; everything else: the default backend */
                const bool per_impl = c->op == LTX2_OP_ATTENTION && n_attn > 0;
                bool ok = true;
                for (int v = 0; v < (per_impl ? n_attn : 1); v++) {
                    char label[64], cmp_label[80];
                    const char *impl = per_impl ? attn_names[v] : getenv(ATTN_IMPL_ENV);
                    if (c->op == LTX2_OP_ATTENTION && !wgmma_takes(c) && impl && !strcmp(impl, "wgmma")) {
                        /* a forced wgmma kernel refuses this case by contract; nothing to compare */
                        if (o.verbose)
                            printf("    [cuda[wgmma]] %s: not run (head dim outside 64/128/256, or rows averaged)\n", name);
                        continue;
                    }
                    if (per_impl)
                        snprintf(label, sizeof(label), "cuda[%s]", attn_names[v]);
                    else
                        snprintf(label, sizeof(label), "cuda");
                    snprintf(cmp_label, sizeof(cmp_label), "%s vs cpu", label);
                    ok = run_on(per_impl ? attn_be[v] : cuda, ctx, c, &in, c->dtype, dev_out, label, name) &&
                         compare(cmp_label, name, dev_out, ref, in.nout, tol_for(c, c->dtype), atol_at) && ok;
                }
                cuda_res = ok ? "ok" : "FAIL";
                free(dev_out);
                free(atol_at);
                n_cuda++;
            }
        }
        if (test_counts_g.failed != failed_before) n_fail_cases++;
        if (o.verbose || test_counts_g.failed != failed_before)
            printf("%-4d %-64s cpu:%-5s cuda:%s\n", i, name, cpu_res, cuda_res);
        free(cpu_out);
        free(ref);
        inputs_free(&in);
        n_run++;
    }
    printf("%d cases run (%d against %s), %d failing\n", n_run, n_cuda, g_emu ? "the emulated CUDA kernels" : "CUDA",
           n_fail_cases);
    for (int v = 0; v < n_attn; v++) ltx2_backend_free(attn_be[v]);
    ltx2_backend_free(cuda);
    ltx2_context_free(ctx);
    return test_finish();
}
