/* Op harness in the style of ggml's test-backend-ops: ONE registry of cases (op x dtype x shape,
 * including odd sizes, broadcasts and LTX-2 shapes scaled down by 4), seeded Philox inputs, and
 * two checks per case:
 *   cpu : the CPU backend (fp32 reference ops) against a naive double-precision implementation
 *         written here, so CI has real assertions without a GPU;
 *   cuda: the CUDA backend against the CPU backend, when a device exists (else reported, not
 *         failed).
 * Pass rule per element: |ref - out| <= atol + rtol*|ref|, plus NaN / Inf-sign checks and guard
 * elements after every output buffer. On failure: max abs err, rel-L2, cosine, first bad items.
 * Usage: test_ops [-o OPNAME] [-b cpu|cuda] [--list] [-v] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "test_util.h"

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
/* pi, spelled out because strict C11 <math.h> has no M_PI */
#define PI_D 3.14159265358979323846

/* Extra elements after each output buffer that must stay untouched (out-of-bounds writes). */
#define GUARD_ELEMS 64
/* Byte pattern pre-filled into outputs and guards: 0xFF.. is NaN in f32 and bf16, so an output
 * element the op forgot to write fails the NaN check too. */
#define FILL_BYTE 0xFF
#define SEED 20240611u
#define MAX_CASES 256
#define MAX_BAD_PRINT 5

/* case flags */
#define F_WEIGHT 1u    /* norm weight / gemm: (unused) */
#define F_BIAS 2u      /* norm bias / gemm bias */
#define F_KN 4u        /* gemm weight stored [K, N] */
#define F_STRIDED 8u   /* binary: a is a view with last-dim stride 2 */
#define F_SPECIAL 16u  /* convert: first inputs are NaN, +-inf, -0, ties, overflow */

typedef struct op_case {
    ltx2_op op;
    ltx2_dtype dtype; /* device dtype; convert: the destination (source is the other one) */
    int ndim;
    int64_t shape[4]; /* x (or a) */
    int64_t n;        /* gemm: N */
    int b_ndim;       /* binary: b shape */
    int64_t b_shape[4];
    unsigned flags;
    float scale, offset; /* inputs = offset + scale * normal */
} op_case;

typedef struct opts {
    int op;         /* -1: all */
    bool want_cpu, want_cuda, list, verbose;
} opts;

static op_case g_cases[MAX_CASES];
static int g_ncases;

static void add(op_case c) {
    if (c.scale == 0.0f) c.scale = 1.0f;
    if (g_ncases < MAX_CASES) g_cases[g_ncases++] = c;
}
/* The same case for f32 and bf16. */
static void add2(op_case c) {
    c.dtype = LTX2_F32;
    add(c);
    c.dtype = LTX2_BF16;
    add(c);
}

static void build_registry(void) {
    /* GEMM: odd sizes, both weight layouts, bias, GEMV, K=1, LTX-2 linears with D=4096/4. */
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {64, 256}, .n = 128});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {37, 129}, .n = 71, .flags = F_BIAS});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 3, .shape = {2, 25, 96}, .n = 80, .flags = F_KN});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {50, 300}, .n = 33, .flags = F_KN | F_BIAS});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {1, 512}, .n = 384, .flags = F_BIAS});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {13, 1}, .n = 17});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 3, .shape = {2, 128, 1024}, .n = 1024, .flags = F_BIAS}); /* attn proj */
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {64, 1024}, .n = 4096, .flags = F_BIAS});     /* FFN up */
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {64, 4096}, .n = 1024, .flags = F_BIAS});     /* FFN down */
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {300, 520}, .n = 260, .flags = F_BIAS});      /* > one MC block */

    /* Norms: short rows (warp per row), long rows (block per row), dims that are not a multiple
     * of the vector width, with and without weight/bias, LTX-2 hidden and head dims. */
    static const int64_t norm_shapes[][3] = {
        {4, 7, 0}, {3, 64, 0}, {16, 128, 0}, {2, 77, 1024}, {5, 2048, 0}, {3, 1030, 0}, {2, 4104, 0},
    };
    for (size_t i = 0; i < sizeof(norm_shapes) / sizeof(norm_shapes[0]); i++) {
        const int64_t *s = norm_shapes[i];
        int nd = s[2] ? 3 : 2;
        op_case c = {.ndim = nd, .shape = {s[0], s[1], s[2]}};
        c.op = LTX2_OP_RMS_NORM;
        c.flags = i % 2 ? 0u : F_WEIGHT;
        add2(c);
        c.op = LTX2_OP_LAYER_NORM;
        c.flags = i % 3 == 0 ? 0u : (i % 3 == 1 ? F_WEIGHT | F_BIAS : F_BIAS);
        add2(c);
    }
    /* LayerNorm on inputs whose mean dwarfs their spread (catches E[x^2]-E[x]^2 cancellation). */
    add2((op_case){.op = LTX2_OP_LAYER_NORM, .ndim = 2, .shape = {8, 512}, .flags = F_WEIGHT | F_BIAS,
                   .offset = 100.0f});
    add2((op_case){.op = LTX2_OP_RMS_NORM, .ndim = 2, .shape = {8, 512}, .flags = F_WEIGHT, .scale = 1e-3f});

    /* Softmax: odd dims, attention-like rows, long rows, and large logits (stability). */
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 2, .shape = {4, 7}});
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 3, .shape = {2, 8, 128}});
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 2, .shape = {3, 1000}});
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 2, .shape = {2, 4099}});
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 2, .shape = {6, 256}, .scale = 40.0f});
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 2, .shape = {1, 1}});

    /* Activations. */
    for (int a = 0; a < 2; a++) {
        ltx2_op op = a ? LTX2_OP_SILU : LTX2_OP_GELU_TANH;
        add2((op_case){.op = op, .ndim = 1, .shape = {1}});
        add2((op_case){.op = op, .ndim = 1, .shape = {1001}, .scale = 4.0f});
        add2((op_case){.op = op, .ndim = 3, .shape = {2, 77, 1024}});
        add2((op_case){.op = op, .ndim = 2, .shape = {3, 4101}, .scale = 8.0f});
    }

    /* Broadcasting add / mul. */
    for (int a = 0; a < 2; a++) {
        ltx2_op op = a ? LTX2_OP_MUL : LTX2_OP_ADD;
        add2((op_case){.op = op, .ndim = 3, .shape = {3, 5, 7}, .b_ndim = 3, .b_shape = {3, 5, 7}});
        add2((op_case){.op = op, .ndim = 3, .shape = {2, 77, 1024}, .b_ndim = 1, .b_shape = {1024}});
        add2((op_case){.op = op, .ndim = 3, .shape = {4, 1, 6}, .b_ndim = 2, .b_shape = {3, 1}});
        add2((op_case){.op = op, .ndim = 4, .shape = {2, 3, 4, 5}, .b_ndim = 3, .b_shape = {3, 1, 1}});
        add2((op_case){.op = op, .ndim = 2, .shape = {9, 33}, .b_ndim = 1, .b_shape = {1}});
        add2((op_case){.op = op, .ndim = 3, .shape = {2, 16, 64}, .b_ndim = 3, .b_shape = {2, 1, 64}}); /* AdaLN-like */
        add2((op_case){.op = op, .ndim = 2, .shape = {8, 16}, .b_ndim = 2, .b_shape = {8, 16}, .flags = F_STRIDED});
        add2((op_case){.op = op, .ndim = 1, .shape = {1}, .b_ndim = 3, .b_shape = {2, 3, 4}});
    }

    /* Conversion both ways; special values first. dtype is the destination. */
    add2((op_case){.op = LTX2_OP_CONVERT, .ndim = 1, .shape = {37}, .flags = F_SPECIAL, .scale = 1e3f});
    add2((op_case){.op = LTX2_OP_CONVERT, .ndim = 2, .shape = {77, 1024}});
    add2((op_case){.op = LTX2_OP_CONVERT, .ndim = 1, .shape = {4099}, .scale = 1e-30f});
}

/* ---- helpers ---- */

static int64_t numel_of(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

static const char *shape_s(int ndim, const int64_t *shape, char *buf, size_t cap) {
    return ltx2_shape_str(shape, ndim, buf, cap);
}

static void case_name(const op_case *c, char *buf, size_t cap) {
    char s1[64], s2[64];
    shape_s(c->ndim, c->shape, s1, sizeof(s1));
    switch (c->op) {
    case LTX2_OP_GEMM:
        snprintf(buf, cap, "gemm %s x%s N=%lld %s%s", ltx2_dtype_name(c->dtype), s1, (long long)c->n,
                 c->flags & F_KN ? "w[K,N]" : "w[N,K]", c->flags & F_BIAS ? " +bias" : "");
        break;
    case LTX2_OP_ADD:
    case LTX2_OP_MUL:
        snprintf(buf, cap, "%s %s a%s%s b%s", ltx2_op_name(c->op), ltx2_dtype_name(c->dtype), s1,
                 c->flags & F_STRIDED ? "(stride 2)" : "", shape_s(c->b_ndim, c->b_shape, s2, sizeof(s2)));
        break;
    case LTX2_OP_CONVERT:
        snprintf(buf, cap, "convert %s->%s %s%s", c->dtype == LTX2_BF16 ? "f32" : "bf16",
                 ltx2_dtype_name(c->dtype), s1, c->flags & F_SPECIAL ? " specials" : "");
        break;
    default:
        snprintf(buf, cap, "%s %s x%s%s%s%s", ltx2_op_name(c->op), ltx2_dtype_name(c->dtype), s1,
                 c->flags & F_WEIGHT ? " +weight" : "", c->flags & F_BIAS ? " +bias" : "",
                 c->offset != 0.0f ? " offset" : (c->scale != 1.0f ? " scaled" : ""));
        break;
    }
}

/* Round-to-nearest-even to bf16 and back, written independently of src/core/dtype.c. */
static float naive_bf16_round(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) {
        u = (u | 0x00400000u) & 0xFFFF0000u; /* quiet NaN, keep sign */
    } else {
        u += 0x7FFFu + ((u >> 16) & 1u);
        u &= 0xFFFF0000u;
    }
    float r;
    memcpy(&r, &u, 4);
    return r;
}

/* Host inputs (f32, already rounded to bf16 values for bf16 cases). */
typedef struct inputs {
    int64_t nx, nx_storage, nw, nb, nout;
    float *x, *w, *bias, *b; /* x holds nx_storage values for strided views */
    int out_ndim;
    int64_t out_shape[4];
} inputs;

static float *gen(uint64_t stream, int64_t n, float scale, float offset, bool round_bf16) {
    float *p = malloc((size_t)(n ? n : 1) * sizeof(float));
    ltx2_rng_normal(SEED, stream, 0, (size_t)n, p);
    for (int64_t i = 0; i < n; i++) {
        p[i] = offset + scale * p[i];
        if (round_bf16) p[i] = naive_bf16_round(p[i]);
    }
    return p;
}

static void inputs_make(const op_case *c, int idx, inputs *in) {
    memset(in, 0, sizeof(*in));
    uint64_t st = (uint64_t)idx * 8u;
    /* bf16 device cases (and bf16-sourced conversions) see bf16-exact inputs so both sides
     * compute on identical values. */
    bool rb = c->op == LTX2_OP_CONVERT ? c->dtype == LTX2_F32 : c->dtype == LTX2_BF16;
    in->nx = numel_of(c->ndim, c->shape);
    in->nx_storage = c->flags & F_STRIDED ? 2 * in->nx : in->nx;
    in->x = gen(st, in->nx_storage, c->scale, c->offset, rb);
    int64_t last = c->shape[c->ndim - 1];
    in->out_ndim = c->ndim;
    memcpy(in->out_shape, c->shape, sizeof(in->out_shape));
    switch (c->op) {
    case LTX2_OP_GEMM:
        in->nw = last * c->n;
        in->w = gen(st + 1, in->nw, 1.0f, 0.0f, rb);
        if (c->flags & F_BIAS) in->bias = gen(st + 2, c->n, 1.0f, 0.0f, rb);
        in->out_shape[c->ndim - 1] = c->n;
        break;
    case LTX2_OP_RMS_NORM:
    case LTX2_OP_LAYER_NORM:
        /* weights near 1 like trained norm gains, biases small */
        if (c->flags & F_WEIGHT) in->w = gen(st + 1, last, 0.2f, 1.0f, rb);
        if (c->flags & F_BIAS) in->bias = gen(st + 2, last, 0.1f, 0.0f, rb);
        break;
    case LTX2_OP_ADD:
    case LTX2_OP_MUL: {
        in->nb = numel_of(c->b_ndim, c->b_shape);
        in->b = gen(st + 1, in->nb, 1.0f, 0.0f, rb);
        int nd = c->ndim > c->b_ndim ? c->ndim : c->b_ndim;
        in->out_ndim = nd;
        for (int i = 0; i < nd; i++) {
            int ia = i - (nd - c->ndim), ib = i - (nd - c->b_ndim);
            int64_t da = ia >= 0 ? c->shape[ia] : 1, db = ib >= 0 ? c->b_shape[ib] : 1;
            in->out_shape[i] = da == 1 ? db : da;
        }
        break;
    }
    case LTX2_OP_CONVERT:
        if (c->flags & F_SPECIAL) {
            static const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, 1.00390625f /* tie: 1 + 2^-8 */,
                                       1.01171875f /* tie, rounds up to even */, 3.0e38f, -3.4e38f,
                                       1e-40f /* subnormal */};
            size_t k = sizeof(sp) / sizeof(sp[0]);
            for (size_t i = 0; i < k && (int64_t)i < in->nx; i++) in->x[i] = rb ? naive_bf16_round(sp[i]) : sp[i];
            if (in->nx > (int64_t)k + 2 && c->dtype == LTX2_BF16) { /* f32 source: NaN and inf */
                in->x[k] = NAN;
                in->x[k + 1] = -INFINITY;
            }
        }
        break;
    default:
        break;
    }
    in->nout = numel_of(in->out_ndim, in->out_shape);
}

static void inputs_free(inputs *in) {
    free(in->x);
    free(in->w);
    free(in->bias);
    free(in->b);
}

/* ---- naive double-precision references ---- */

static void naive_ref(const op_case *c, const inputs *in, double *ref) {
    int64_t last = c->shape[c->ndim - 1];
    switch (c->op) {
    case LTX2_OP_GEMM: {
        int64_t K = last, N = c->n, M = in->nx / (K ? K : 1);
        bool kn = c->flags & F_KN;
#pragma omp parallel for
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = in->bias ? in->bias[j] : 0.0;
                for (int64_t k = 0; k < K; k++)
                    s += (double)in->x[i * K + k] * (double)(kn ? in->w[k * N + j] : in->w[j * K + k]);
                ref[i * N + j] = s;
            }
        break;
    }
    case LTX2_OP_RMS_NORM:
    case LTX2_OP_LAYER_NORM:
    case LTX2_OP_SOFTMAX: {
        int64_t rows = in->nx / last;
        for (int64_t r = 0; r < rows; r++) {
            const float *x = in->x + r * last;
            double *y = ref + r * last;
            if (c->op == LTX2_OP_SOFTMAX) {
                double mx = -INFINITY, s = 0;
                for (int64_t i = 0; i < last; i++) mx = x[i] > mx ? x[i] : mx;
                for (int64_t i = 0; i < last; i++) s += exp(x[i] - mx);
                for (int64_t i = 0; i < last; i++) y[i] = exp(x[i] - mx) / s;
                continue;
            }
            double mean = 0, var = 0;
            if (c->op == LTX2_OP_LAYER_NORM) {
                for (int64_t i = 0; i < last; i++) mean += x[i];
                mean /= (double)last;
            }
            for (int64_t i = 0; i < last; i++) var += (x[i] - mean) * (x[i] - mean);
            double inv = 1.0 / sqrt(var / (double)last + 1e-6);
            for (int64_t i = 0; i < last; i++) {
                double v = (x[i] - mean) * inv;
                if (in->w) v *= in->w[i];
                if (in->bias) v += in->bias[i];
                y[i] = v;
            }
        }
        break;
    }
    case LTX2_OP_GELU_TANH:
        for (int64_t i = 0; i < in->nx; i++) {
            double v = in->x[i];
            ref[i] = 0.5 * v * (1.0 + tanh(sqrt(2.0 / PI_D) * (v + 0.044715 * v * v * v)));
        }
        break;
    case LTX2_OP_SILU:
        for (int64_t i = 0; i < in->nx; i++) ref[i] = in->x[i] / (1.0 + exp(-(double)in->x[i]));
        break;
    case LTX2_OP_ADD:
    case LTX2_OP_MUL: {
        /* Walk the output index and find each operand's element from its own shape. */
        int nd = in->out_ndim;
        int64_t xs = c->flags & F_STRIDED ? 2 : 1;
        for (int64_t o = 0; o < in->nout; o++) {
            int64_t rem = o, ia = 0, ib = 0, sa = xs, sb = 1;
            for (int d = nd - 1; d >= 0; d--) {
                int64_t coord = rem % in->out_shape[d];
                rem /= in->out_shape[d];
                int da = d - (nd - c->ndim), db = d - (nd - c->b_ndim);
                if (da >= 0) {
                    if (c->shape[da] != 1) ia += coord * sa;
                    sa *= c->shape[da];
                }
                if (db >= 0) {
                    if (c->b_shape[db] != 1) ib += coord * sb;
                    sb *= c->b_shape[db];
                }
            }
            double a = in->x[ia], b = in->b[ib];
            ref[o] = c->op == LTX2_OP_ADD ? a + b : a * b;
        }
        break;
    }
    case LTX2_OP_CONVERT:
        for (int64_t i = 0; i < in->nx; i++)
            ref[i] = c->dtype == LTX2_BF16 ? naive_bf16_round(in->x[i]) : in->x[i];
        break;
    default:
        break;
    }
}

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
        t = (tol){ROW_F32_ATOL + ROW_OFFSET_ATOL_GAIN * fabs(c->offset) * sk, ROW_F32_RTOL};
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

static bool compare(const char *label, const char *name, const float *out, const double *ref,
                    int64_t n, tol t) {
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
            bad = e > t.atol + t.rtol * fabs(r);
        }
        if (bad) {
            if (printed < MAX_BAD_PRINT) {
                fprintf(stderr, "    [%s] %s: element %lld: out %.9g ref %.9g (allowed %.3g)\n", label, name,
                        (long long)i, o, r, t.atol + t.rtol * fabs(r));
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
    dev_buf bx = {0}, bw = {0}, bbias = {0}, bb = {0}, bo = {0};
    ltx2_status st = upload_as(be, ctx, in->x, in->nx_storage, in_dt, &bx);
    if (st == LTX2_OK && in->w) st = upload_as(be, ctx, in->w, c->op == LTX2_OP_GEMM ? in->nw : c->shape[c->ndim - 1], dt, &bw);
    if (st == LTX2_OK && in->bias) st = upload_as(be, ctx, in->bias, c->op == LTX2_OP_GEMM ? c->n : c->shape[c->ndim - 1], dt, &bbias);
    if (st == LTX2_OK && in->b) st = upload_as(be, ctx, in->b, in->nb, dt, &bb);

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
        int64_t vec_n = c->op == LTX2_OP_GEMM ? c->n : last;
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
        default:
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
    return ok;
}

/* ---- driver ---- */

static void usage(void) {
    printf("usage: test_ops [-o OPNAME] [-b cpu|cuda] [--list] [-v]\n  ops:");
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
    build_registry();
    ltx2_context *ctx = ltx2_context_create(NULL);
    const ltx2_backend *cpu = ltx2_backend_cpu();
    ltx2_backend *cuda = NULL;
    char cuda_why[LTX2_ERROR_CAP] = "";
    if (o.want_cuda && ltx2_backend_cuda_create(ctx, 0, &cuda) != LTX2_OK) {
        snprintf(cuda_why, sizeof(cuda_why), "%s", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }

    if (o.list) {
        printf("%-4s %-60s %-6s %-6s\n", "#", "case", "cpu", "cuda");
        for (int i = 0; i < g_ncases; i++) {
            const op_case *c = &g_cases[i];
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

    int n_run = 0, n_cuda = 0, n_fail_cases = 0;
    for (int i = 0; i < g_ncases; i++) {
        const op_case *c = &g_cases[i];
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
            cpu_res = cpu_ok && compare("cpu vs naive", name, cpu_out, ref, in.nout, tol_for(c, LTX2_F32)) ? "ok" : "FAIL";
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
                bool ok = run_on(cuda, ctx, c, &in, c->dtype, dev_out, "cuda", name) &&
                          compare("cuda vs cpu", name, dev_out, ref, in.nout, tol_for(c, c->dtype));
                cuda_res = ok ? "ok" : "FAIL";
                free(dev_out);
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
    printf("%d cases run (%d against CUDA), %d failing\n", n_run, n_cuda, n_fail_cases);
    ltx2_backend_free(cuda);
    ltx2_context_free(ctx);
    return test_finish();
}
