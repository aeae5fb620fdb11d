/* The op harness's inputs and references: seeded Philox inputs per case (bf16-exact where the
 * device computes in bf16) and naive double-precision implementations of every op, written here
 * independently of src/cpu so the CPU backend has something to be checked against. The vocoders'
 * 1-D ops have theirs in vocoder_ops.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/rng.h"
#include "ops_case.h"

/* pi, spelled out because strict C11 <math.h> has no M_PI */
#define PI_D 3.14159265358979323846
#define SEED 20240611u

/* ---- helpers ---- */

static int64_t numel_of(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

static const char *shape_s(int ndim, const int64_t *shape, char *buf, size_t cap) {
    return ltx2_shape_str(shape, ndim, buf, cap);
}

void case_name(const op_case *c, char *buf, size_t cap) {
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
    case LTX2_OP_ATTENTION:
    {
        char gq[32] = "", win[32] = "";
        if (c->kv_heads) snprintf(gq, sizeof gq, "/kv%lld", (long long)c->kv_heads);
        if (c->window) snprintf(win, sizeof win, " +window%lld", (long long)c->window);
        snprintf(buf, cap, "attention %s q%s H%lld%s Skv=%lld%s%s%s%s%s%s%s%s", ltx2_dtype_name(c->dtype), s1,
                 (long long)c->heads, gq, (long long)c->sk, c->flags & F_MASK ? " +mask" : "",
                 c->flags & F_LEFTPAD ? " +leftpad" : "", c->flags & F_ROPE ? " +rope" : "",
                 c->flags & F_ROPE_IL ? " +rope_il" : "", c->flags & F_QKNORM ? " +qknorm" : "",
                 c->flags & F_CAUSAL ? " +causal" : "", win, c->flags & F_EMPTY0 ? " +empty0" : "");
        break;
    }
    case LTX2_OP_ROPE:
        snprintf(buf, cap, "rope %s x%s H%lld %s%s%s", ltx2_dtype_name(c->dtype), s1, (long long)c->heads,
                 c->flags & F_ROPE_IL ? "interleaved" : "split", c->flags & F_ROPE_ONE_ROW ? " +one_row" : "",
                 c->flags & F_ROPE_ONE_HEAD ? " +one_head" : "");
        break;
    case LTX2_OP_CONV3D:
        snprintf(buf, cap, "conv3d %s x%s Cout=%lld k%lldx%lldx%lld %s %s%s%s", ltx2_dtype_name(c->dtype), s1,
                 (long long)c->n, (long long)c->k3[0], (long long)c->k3[1], (long long)c->k3[2],
                 c->tpad == LTX2_CONV_TPAD_CAUSAL            ? "causal"
                 : c->tpad == LTX2_CONV_TPAD_CAUSAL_ZEROS    ? "causal-zero-frames"
                 : c->tpad == LTX2_CONV_TPAD_SYMMETRIC_ZEROS ? "sym-zero-frames"
                                                             : "sym",
                 c->flags & F_REFLECT ? "reflect" : "zeros",
                 c->flags & F_BIAS ? " +bias" : "", c->flags & F_SILU ? " +silu" : "");
        break;
    case LTX2_OP_PIXEL_NORM:
        snprintf(buf, cap, "pixel_norm %s x%s%s", ltx2_dtype_name(c->dtype), s1, c->flags & F_SILU ? " +silu" : "");
        break;
    case LTX2_OP_BLUR_DOWNSAMPLE:
        snprintf(buf, cap, "blur_downsample %s x%s s%lld", ltx2_dtype_name(c->dtype), s1, (long long)c->k3[0]);
        break;
    case LTX2_OP_GROUP_NORM:
        snprintf(buf, cap, "group_norm %s x%s G%lld%s%s%s%s", ltx2_dtype_name(c->dtype), s1, (long long)c->heads,
                 c->flags & F_WEIGHT ? " +weight" : "", c->flags & F_BIAS ? " +bias" : "",
                 c->flags & F_SILU ? " +silu" : "", c->offset != 0.0f ? " offset" : "");
        break;
    case LTX2_OP_DEPTH_TO_SPACE:
        snprintf(buf, cap, "depth_to_space %s x%s s%lldx%lldx%lld%s%s", ltx2_dtype_name(c->dtype), s1,
                 (long long)c->k3[0], (long long)c->k3[1], (long long)c->k3[2], c->flags & F_DROP ? " drop" : "",
                 c->flags & F_RESID ? " +residual" : "");
        break;
    case LTX2_OP_SPACE_TO_DEPTH:
        snprintf(buf, cap, "space_to_depth %s x%s s%lldx%lldx%lld%s", ltx2_dtype_name(c->dtype), s1,
                 (long long)c->k3[0], (long long)c->k3[1], (long long)c->k3[2],
                 c->flags & F_RESID ? " +residual mean" : "");
        break;
    case LTX2_OP_CONV1D:
        snprintf(buf, cap, "conv1d %s x%s Cout=%lld k%lld s%lld d%lld pad%lld/%lld%s", ltx2_dtype_name(c->dtype), s1,
                 (long long)c->n, (long long)c->taps, (long long)c->stride, (long long)c->dilation,
                 (long long)c->pad[0], (long long)c->pad[1], c->flags & F_BIAS ? " +bias" : "");
        break;
    case LTX2_OP_CONV_TRANSPOSE1D:
        snprintf(buf, cap, "conv_transpose1d %s x%s Cout=%lld k%lld s%lld p%lld%s", ltx2_dtype_name(c->dtype), s1,
                 (long long)c->n, (long long)c->taps, (long long)c->stride, (long long)c->pad[0],
                 c->flags & F_BIAS ? " +bias" : "");
        break;
    case LTX2_OP_FIR_UPSAMPLE:
        snprintf(buf, cap, "fir_upsample %s x%s taps%lld x%lld pad%lld/%lld crop%lld/%lld", ltx2_dtype_name(c->dtype),
                 s1, (long long)c->taps, (long long)c->stride, (long long)c->pad[0], (long long)c->pad[1],
                 (long long)c->crop[0], (long long)c->crop[1]);
        break;
    case LTX2_OP_FIR_DOWNSAMPLE:
        snprintf(buf, cap, "fir_downsample %s x%s taps%lld /%lld pad%lld/%lld", ltx2_dtype_name(c->dtype), s1,
                 (long long)c->taps, (long long)c->stride, (long long)c->pad[0], (long long)c->pad[1]);
        break;
    case LTX2_OP_LEAKY_RELU:
    case LTX2_OP_TANH:
    case LTX2_OP_HARDTANH:
    case LTX2_OP_LOG_FLOOR:
    case LTX2_OP_DIV_SCALAR: {
        char par[32] = ""; /* tanh and hardtanh take no parameter */
        if (c->op != LTX2_OP_TANH && c->op != LTX2_OP_HARDTANH) snprintf(par, sizeof par, " alpha=%g", (double)c->alpha);
        snprintf(buf, cap, "%s %s x%s%s%s%s", ltx2_op_name(c->op), ltx2_dtype_name(c->dtype), s1, par,
                 c->flags & F_SPECIAL ? " specials" : "",
                 c->offset != 0.0f ? " offset" : (c->scale != 1.0f ? " scaled" : ""));
        break;
    }
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
float naive_bf16_round(float f) {
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

ltx2_conv3d_desc conv_desc_of(const op_case *c) {
    return (ltx2_conv3d_desc){.c_in = c->shape[4], .c_out = c->n, .kt = c->k3[0], .kh = c->k3[1], .kw = c->k3[2],
                              .st = 1, .sh = 1, .sw = 1, .tpad = (ltx2_conv_tpad)c->tpad,
                              .spad = c->flags & F_REFLECT ? LTX2_CONV_SPAD_REFLECT : LTX2_CONV_SPAD_ZEROS};
}

float *case_gen(uint64_t stream, int64_t n, float scale, float offset, bool round_bf16) {
    float *p = malloc((size_t)(n ? n : 1) * sizeof(float));
    ltx2_rng_normal(SEED, stream, 0, (size_t)n, p);
    for (int64_t i = 0; i < n; i++) {
        p[i] = offset + scale * p[i];
        if (round_bf16) p[i] = naive_bf16_round(p[i]);
    }
    return p;
}

void inputs_make(const op_case *c, int idx, inputs *in) {
    memset(in, 0, sizeof(*in));
    uint64_t st = (uint64_t)idx * 8u;
    /* bf16 device cases (and bf16-sourced conversions) see bf16-exact inputs so both sides
     * compute on identical values. */
    bool rb = c->op == LTX2_OP_CONVERT ? c->dtype == LTX2_F32 : c->dtype == LTX2_BF16;
    in->nx = numel_of(c->ndim, c->shape);
    in->nx_storage = c->flags & F_STRIDED ? 2 * in->nx : in->nx;
    in->x = case_gen(st, in->nx_storage, c->scale, c->offset, rb);
    int64_t last = c->shape[c->ndim - 1];
    in->out_ndim = c->ndim;
    memcpy(in->out_shape, c->shape, sizeof(in->out_shape));
    switch (c->op) {
    case LTX2_OP_GEMM:
        in->nw = last * c->n;
        in->w = case_gen(st + 1, in->nw, 1.0f, 0.0f, rb);
        if (c->flags & F_BIAS) in->bias = case_gen(st + 2, c->n, 1.0f, 0.0f, rb);
        in->out_shape[c->ndim - 1] = c->n;
        break;
    case LTX2_OP_ROW_SUMSQ:
        in->out_shape[c->ndim - 1] = 1;
        break;
    case LTX2_OP_ROW_STATS:
        in->out_shape[c->ndim - 1] = 3;
        break;
    case LTX2_OP_RMS_APPLY: {
        /* this rank's D columns of a row twice as wide: the whole-row sum is its own plus an equal
         * share from the other rank (f32, as the all-reduce delivers it) */
        const int64_t rows = in->nx / last;
        if (c->flags & F_WEIGHT) in->w = case_gen(st + 1, last, 0.2f, 1.0f, rb);
        in->nb = rows;
        in->b = malloc((size_t)rows * sizeof(float));
        for (int64_t r = 0; r < rows; r++) {
            double s = 0;
            for (int64_t i = 0; i < last; i++) s += (double)in->x[r * last + i] * in->x[r * last + i];
            in->b[r] = (float)(2.0 * s + 0.5);
        }
        break;
    }
    case LTX2_OP_RMS_NORM:
    case LTX2_OP_LAYER_NORM:
    case LTX2_OP_GROUP_NORM:
        /* weights near 1 like trained norm gains, biases small */
        if (c->flags & F_WEIGHT) in->w = case_gen(st + 1, last, 0.2f, 1.0f, rb);
        if (c->flags & F_BIAS) in->bias = case_gen(st + 2, last, 0.1f, 0.0f, rb);
        break;
    case LTX2_OP_ADD:
    case LTX2_OP_MUL: {
        in->nb = numel_of(c->b_ndim, c->b_shape);
        in->b = case_gen(st + 1, in->nb, 1.0f, 0.0f, rb);
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
    case LTX2_OP_ATTENTION: {
        const int64_t B = c->shape[0], Sq = c->shape[1], D = c->shape[2], Sk = c->sk, d = D / c->heads;
        in->out_shape[1] = Sq;
        in->nkv = B * Sk * case_kv_heads(c) * d;
        in->k = case_gen(st + 1, in->nkv, c->scale, 0.0f, rb);
        in->v = case_gen(st + 2, in->nkv, c->scale, 0.0f, rb);
        if (c->flags & F_QKNORM) {
            in->wq = case_gen(st + 3, D, 0.2f, 1.0f, rb);
            in->wk = case_gen(st + 4, D, 0.2f, 1.0f, rb);
        }
        if (c->flags & (F_ROPE | F_ROPE_IL)) {
            /* split [B, H, S, d/2], interleaved [B, S, D] (the pair's angle repeated) */
            bool il = c->flags & F_ROPE_IL;
            in->ntq = il ? B * Sq * D : B * c->heads * Sq * (d / 2);
            in->ntk = il ? B * Sk * D : B * c->heads * Sk * (d / 2);
            float *aq = case_gen(st + 5, in->ntq, 2.0f, 0.0f, false), *ak = case_gen(st + 6, in->ntk, 2.0f, 0.0f, false);
            in->qc = malloc((size_t)in->ntq * sizeof(float));
            in->qs = malloc((size_t)in->ntq * sizeof(float));
            in->kc = malloc((size_t)in->ntk * sizeof(float));
            in->ks = malloc((size_t)in->ntk * sizeof(float));
            for (int64_t i = 0; i < in->ntq; i++) {
                float a = aq[il ? i & ~(int64_t)1 : i];
                in->qc[i] = (float)cos(a);
                in->qs[i] = (float)sin(a);
            }
            for (int64_t i = 0; i < in->ntk; i++) {
                float a = ak[il ? i & ~(int64_t)1 : i];
                in->kc[i] = (float)cos(a);
                in->ks[i] = (float)sin(a);
            }
            free(aq);
            free(ak);
        }
        if (c->flags & F_MASK) {
            /* batch 0: a text padding pattern; batch 1: every key masked (uniform average);
             * batch 2: only the last quarter of the keys attended */
            in->mask = malloc((size_t)(B * Sk));
            for (int64_t b = 0; b < B; b++)
                for (int64_t j = 0; j < Sk; j++)
                    in->mask[b * Sk + j] = b == 1   ? 0
                                           : b == 2 ? j >= Sk - Sk / 4
                                                    : (j < (2 * Sk) / 3 || j % 5 == 0);
        } else if (c->flags & F_LEFTPAD) {
            in->mask = malloc((size_t)(B * Sk));
            for (int64_t b = 0; b < B; b++)
                for (int64_t j = 0; j < Sk; j++) in->mask[b * Sk + j] = j >= (b == 0 ? Sk / 3 : 2);
        }
        break;
    }
    case LTX2_OP_ROPE: {
        const int64_t B = c->shape[0], S = c->shape[1], D = c->shape[2], d = D / c->heads;
        bool il = c->flags & F_ROPE_IL;
        const int64_t tb = c->flags & F_ROPE_ONE_ROW ? 1 : B, th = c->flags & F_ROPE_ONE_HEAD ? 1 : c->heads;
        in->ntq = il ? B * S * D : tb * th * S * (d / 2);
        float *aq = case_gen(st + 5, in->ntq, 2.0f, 0.0f, false);
        in->qc = malloc((size_t)in->ntq * sizeof(float));
        in->qs = malloc((size_t)in->ntq * sizeof(float));
        for (int64_t i = 0; i < in->ntq; i++) {
            float a = aq[il ? i & ~(int64_t)1 : i];
            in->qc[i] = (float)cos(a);
            in->qs[i] = (float)sin(a);
        }
        free(aq);
        break;
    }
    case LTX2_OP_CONV3D: {
        ltx2_conv3d_desc d = conv_desc_of(c);
        int64_t o[3];
        ltx2_conv3d_out_shape(NULL, &d, c->shape[1], c->shape[2], c->shape[3], o);
        int64_t K = ltx2_conv3d_packed_numel(&d) / d.c_out;
        in->nw = K * d.c_out;
        in->w = case_gen(st + 1, in->nw, (float)(CONV_W_SCALE_PER_SQRT_K / sqrt((double)K)), 0.0f, rb);
        if (c->flags & F_BIAS) in->bias = case_gen(st + 2, d.c_out, 0.5f, 0.0f, rb);
        in->out_shape[1] = o[0];
        in->out_shape[2] = o[1];
        in->out_shape[3] = o[2];
        in->out_shape[4] = d.c_out;
        break;
    }
    case LTX2_OP_BLUR_DOWNSAMPLE:
        in->out_shape[2] = (c->shape[2] - 1) / c->k3[0] + 1;
        in->out_shape[3] = (c->shape[3] - 1) / c->k3[0] + 1;
        break;
    case LTX2_OP_DEPTH_TO_SPACE: {
        const int64_t *sd = c->k3, prod = sd[0] * sd[1] * sd[2];
        in->out_shape[1] = c->shape[1] * sd[0] - (c->flags & F_DROP ? 1 : 0);
        in->out_shape[2] = c->shape[2] * sd[1];
        in->out_shape[3] = c->shape[3] * sd[2];
        in->out_shape[4] = c->shape[4] / prod;
        if (c->flags & F_RESID) {
            in->nb = c->shape[0] * c->shape[1] * c->shape[2] * c->shape[3] * c->n * prod;
            in->b = case_gen(st + 1, in->nb, 1.0f, 0.0f, rb);
        }
        break;
    }
    case LTX2_OP_SPACE_TO_DEPTH: {
        const int64_t *sd = c->k3;
        in->out_shape[1] = c->shape[1] / sd[0];
        in->out_shape[2] = c->shape[2] / sd[1];
        in->out_shape[3] = c->shape[3] / sd[2];
        in->out_shape[4] = c->shape[4] * sd[0] * sd[1] * sd[2];
        if (c->flags & F_RESID) {
            in->nb = c->shape[0] * c->shape[1] * c->shape[2] * c->shape[3] * c->n;
            in->b = case_gen(st + 1, in->nb, 1.0f, 0.0f, rb);
        }
        break;
    }
    default: /* the vocoders' ops; nothing more for the others */
        vocoder_inputs(c, st, rb, in);
        break;
    }
    in->nout = numel_of(in->out_ndim, in->out_shape);
}

void inputs_free(inputs *in) {
    free(in->x);
    free(in->w);
    free(in->bias);
    free(in->b);
    free(in->k);
    free(in->v);
    free(in->wq);
    free(in->wk);
    free(in->qc);
    free(in->qs);
    free(in->kc);
    free(in->ks);
    free(in->mask);
    free(in->w_torch);
    free(in->filt);
    free(in->alpha);
    free(in->inv_beta);
}

/* ---- naive double-precision references ---- */

/* q or k after RMSNorm across the whole inner dim and RoPE, in double: [B, S, D]. */
static double *naive_prep_qk(const op_case *c, const float *x, int64_t S, int64_t H, const float *w, const float *tc,
                             const float *ts) {
    const int64_t B = c->shape[0], d = c->shape[2] / c->heads, D = H * d; /* H: q's heads or K's */
    double *o = malloc((size_t)(B * S * D) * sizeof(double));
    for (int64_t r = 0; r < B * S; r++) {
        const float *xr = x + r * D;
        double *orow = o + r * D;
        double inv = 1.0;
        if (w) {
            double ss = 0;
            for (int64_t i = 0; i < D; i++) ss += (double)xr[i] * xr[i];
            inv = 1.0 / sqrt(ss / (double)D + (double)QK_NORM_EPS);
        }
        for (int64_t i = 0; i < D; i++) orow[i] = xr[i] * inv * (w ? (double)w[i] : 1.0);
        if (!tc) continue;
        const int64_t b = r / S, t = r % S;
        if (c->flags & F_ROPE_IL) {
            const float *cr = tc + r * D, *sr = ts + r * D;
            for (int64_t i = 0; i < D; i += 2) {
                double a0 = orow[i], a1 = orow[i + 1];
                orow[i] = a0 * cr[i] - a1 * sr[i];
                orow[i + 1] = a1 * cr[i + 1] + a0 * sr[i + 1];
            }
        } else {
            for (int64_t h = 0; h < H; h++) {
                const float *cr = tc + ((b * H + h) * S + t) * (d / 2), *sr = ts + ((b * H + h) * S + t) * (d / 2);
                double *xh = orow + h * d;
                for (int64_t i = 0; i < d / 2; i++) {
                    double a0 = xh[i], a1 = xh[i + d / 2];
                    xh[i] = a0 * cr[i] - a1 * sr[i];
                    xh[i + d / 2] = a1 * cr[i] + a0 * sr[i];
                }
            }
        }
    }
    return o;
}

/* The spread of each attention output under the device's documented bf16 roundings (the kernels
 * round the normalised/rotated q and k and the softmax weights P to bf16; the output rounding is
 * the comparison's rtol). Each rounding is an independent relative error of standard deviation
 * u/sqrt(3) (uniform in +-u, u = 2^-9), so to first order:
 *   score j:  sd(ds_j) = scale * u/sqrt(3) * sqrt(2 sum_e (q_e k_je)^2)   (both factors rounded)
 *   output c: d o_c / d s_j = p_j (v_jc - o_c), rounding p_j adds p_j u/sqrt(3) v_jc,
 *   sd(o_c)^2 = sum_j p_j^2 [ sd(ds_j)^2 (v_jc - o_c)^2 + u^2/3 v_jc^2 ].
 * A fixed atol cannot follow both a flat softmax and a peaked one (large |q||k|, a few keys with
 * most of the weight and values far from the mean): on an H100 the case "q[1, 126, 256] H4
 * Skv=126 +rope" (scale 2) moved rows by up to 0.046, the mma.sync and wgmma kernels alike.
 * sd[] (when non-NULL) gets this standard deviation per output element. */
/* Whether query i of batch b sees key j: the padding mask, then Gemma's causal and window. */
static bool naive_key_kept(const op_case *c, const inputs *in, int64_t b, int64_t i, int64_t j) {
    if (in->mask && !in->mask[b * c->sk + j]) return false;
    if ((c->flags & F_CAUSAL) && j > i) return false;
    return !(c->window > 0 && i - j >= c->window);
}

static void naive_attention_sd(const op_case *c, const inputs *in, double *ref, double *sd) {
    const int64_t B = c->shape[0], Sq = c->shape[1], D = c->shape[2], Sk = c->sk, H = c->heads, d = D / H;
    const int64_t Hkv = case_kv_heads(c), Dkv = Hkv * d;
    const double u2 = 1.0 / (512.0 * 512.0 * 3.0); /* variance of a bf16 relative rounding: (2^-9)^2 / 3 */
    double *q = naive_prep_qk(c, in->x, Sq, H, in->wq, in->qc, in->qs);
    double *k = naive_prep_qk(c, in->k, Sk, Hkv, in->wk, in->kc, in->ks);
    const double scale = 1.0 / sqrt((double)d);
#pragma omp parallel for collapse(2)
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++) {
            double *p = malloc((size_t)Sk * sizeof(double)), *ds = malloc((size_t)Sk * sizeof(double));
            const int64_t hk = h / (H / Hkv);
            for (int64_t i = 0; i < Sq; i++) {
                int64_t kept = 0;
                for (int64_t j = 0; j < Sk; j++) kept += naive_key_kept(c, in, b, i, j);
                if (kept == 0 && (c->flags & F_EMPTY0)) {
                    for (int64_t e = 0; e < d; e++) {
                        ref[(b * Sq + i) * D + h * d + e] = 0.0;
                        if (sd) sd[(b * Sq + i) * D + h * d + e] = 0.0;
                    }
                    continue;
                }
                const double *qi = q + (b * Sq + i) * D + h * d;
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < Sk; j++) {
                    const double *kj = k + (b * Sk + j) * Dkv + hk * d;
                    bool keep = kept == 0 || naive_key_kept(c, in, b, i, j);
                    double sc = 0, sq = 0;
                    for (int64_t e = 0; e < d; e++) {
                        sc += qi[e] * kj[e];
                        sq += qi[e] * kj[e] * qi[e] * kj[e];
                    }
                    /* all keys masked: the reference's additive -max bias cancels -> uniform */
                    p[j] = !keep ? -INFINITY : (kept == 0 ? 0.0 : sc * scale);
                    ds[j] = kept == 0 ? 0.0 : scale * scale * u2 * 2.0 * sq; /* variance of s_j */
                    if (p[j] > mx) mx = p[j];
                }
                for (int64_t j = 0; j < Sk; j++) sum += p[j] = exp(p[j] - mx);
                for (int64_t e = 0; e < d; e++) {
                    double o = 0;
                    for (int64_t j = 0; j < Sk; j++) o += p[j] * in->v[(b * Sk + j) * Dkv + hk * d + e];
                    o /= sum;
                    ref[(b * Sq + i) * D + h * d + e] = o;
                    if (!sd) continue;
                    double var = 0;
                    for (int64_t j = 0; j < Sk; j++) {
                        const double vj = in->v[(b * Sk + j) * Dkv + hk * d + e], pj = p[j] / sum;
                        var += pj * pj * (ds[j] * (vj - o) * (vj - o) + u2 * vj * vj);
                    }
                    sd[(b * Sq + i) * D + h * d + e] = sqrt(var);
                }
            }
            free(p);
            free(ds);
        }
    free(q);
    free(k);
}

static void naive_attention(const op_case *c, const inputs *in, double *ref) { naive_attention_sd(c, in, ref, NULL); }

int64_t case_kv_heads(const op_case *c) { return c->kv_heads > 0 ? c->kv_heads : c->heads; }

void naive_attention_bf16_sd(const op_case *c, const inputs *in, double *sd) {
    double *ref = malloc((size_t)in->nout * sizeof(double));
    naive_attention_sd(c, in, ref, sd);
    free(ref);
}

static void naive_conv3d(const op_case *c, const inputs *in, double *ref) {
    const ltx2_conv3d_desc dd = conv_desc_of(c);
    const int64_t N = c->shape[0], T = c->shape[1], Hh = c->shape[2], W = c->shape[3], Ci = dd.c_in, Co = dd.c_out;
    const int64_t To = in->out_shape[1], Ho = in->out_shape[2], Wo = in->out_shape[3];
    const bool zero_frames = dd.tpad == LTX2_CONV_TPAD_CAUSAL_ZEROS || dd.tpad == LTX2_CONV_TPAD_SYMMETRIC_ZEROS;
    const int64_t front = dd.tpad == LTX2_CONV_TPAD_CAUSAL || dd.tpad == LTX2_CONV_TPAD_CAUSAL_ZEROS ? dd.kt - 1
                          : dd.tpad == LTX2_CONV_TPAD_SYMMETRIC || dd.tpad == LTX2_CONV_TPAD_SYMMETRIC_ZEROS
                              ? (dd.kt - 1) / 2
                              : 0;
    const int64_t ph = dd.kh / 2, pw = dd.kw / 2;
    const bool reflect = dd.spad == LTX2_CONV_SPAD_REFLECT;
#pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < N; n++)
        for (int64_t to = 0; to < To; to++)
            for (int64_t ho = 0; ho < Ho; ho++)
                for (int64_t wo = 0; wo < Wo; wo++) {
                    double *y = ref + (((n * To + to) * Ho + ho) * Wo + wo) * Co;
                    for (int64_t o = 0; o < Co; o++) y[o] = in->bias ? in->bias[o] : 0.0;
                    for (int64_t a = 0; a < dd.kt; a++) {
                        int64_t ts = to + a - front;
                        if (zero_frames && (ts < 0 || ts > T - 1)) continue; /* zero frames */
                        ts = ts < 0 ? 0 : ts > T - 1 ? T - 1 : ts; /* edge frames replicated */
                        for (int64_t bb = 0; bb < dd.kh; bb++)
                            for (int64_t e = 0; e < dd.kw; e++) {
                                int64_t hs = ho + bb - ph, ws = wo + e - pw;
                                if (reflect) {
                                    hs = hs < 0 ? -hs : hs >= Hh ? 2 * (Hh - 1) - hs : hs;
                                    ws = ws < 0 ? -ws : ws >= W ? 2 * (W - 1) - ws : ws;
                                } else if (hs < 0 || hs >= Hh || ws < 0 || ws >= W) {
                                    continue;
                                }
                                const float *xs = in->x + (((n * T + ts) * Hh + hs) * W + ws) * Ci;
                                const float *wt = in->w + ((a * dd.kh + bb) * dd.kw + e) * Ci * Co;
                                for (int64_t i = 0; i < Ci; i++)
                                    for (int64_t o = 0; o < Co; o++) y[o] += (double)xs[i] * wt[i * Co + o];
                            }
                    }
                    if (c->flags & F_SILU)
                        for (int64_t o = 0; o < Co; o++) y[o] = y[o] / (1.0 + exp(-y[o]));
                }
}

/* SpaceToDepthDownsample written as a scatter (every input element to its output slot; the op
 * gathers), then the residual scattered the same way and averaged over groups of g channels. */
static void s2d_scatter(const op_case *c, const float *src, int64_t ch, double *dst) {
    const int64_t *sd = c->k3, T = c->shape[1], H = c->shape[2], W = c->shape[3];
    const int64_t To = T / sd[0], Ho = H / sd[1], Wo = W / sd[2], Co = ch * sd[0] * sd[1] * sd[2];
    for (int64_t n = 0; n < c->shape[0]; n++)
        for (int64_t t = 0; t < T; t++)
            for (int64_t y = 0; y < H; y++)
                for (int64_t x = 0; x < W; x++)
                    for (int64_t cc = 0; cc < ch; cc++) {
                        const int64_t k = ((cc * sd[0] + t % sd[0]) * sd[1] + y % sd[1]) * sd[2] + x % sd[2];
                        const int64_t o = (((n * To + t / sd[0]) * Ho + y / sd[1]) * Wo + x / sd[2]) * Co + k;
                        dst[o] = src[(((n * T + t) * H + y) * W + x) * ch + cc];
                    }
}

static void s2d_reference(const op_case *c, const inputs *in, double *ref) {
    s2d_scatter(c, in->x, c->shape[4], ref);
    if (!in->b) return;
    const int64_t vox = in->nout / in->out_shape[4], C = in->out_shape[4];
    const int64_t rcp = c->n * c->k3[0] * c->k3[1] * c->k3[2], g = rcp / C;
    double *r = malloc((size_t)(vox * rcp) * sizeof(double));
    if (!r) return;
    s2d_scatter(c, in->b, c->n, r);
    for (int64_t v = 0; v < vox; v++)
        for (int64_t k = 0; k < C; k++) {
            double sum = 0.0;
            for (int64_t q = 0; q < g; q++) sum += r[v * rcp + k * g + q];
            ref[v * C + k] += sum / (double)g;
        }
    free(r);
}

void naive_ref(const op_case *c, const inputs *in, double *ref) {
    if (naive_vocoder_ref(c, in, ref)) return; /* vocoder_ops.c */
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
    case LTX2_OP_ROW_SUMSQ:
        for (int64_t r = 0; r < in->nout; r++) {
            double s = 0;
            for (int64_t i = 0; i < last; i++) s += (double)in->x[r * last + i] * in->x[r * last + i];
            ref[r] = s;
        }
        break;
    case LTX2_OP_ROW_STATS:
        for (int64_t r = 0; r < in->nout / 3; r++) {
            double s = 0, lo = INFINITY, hi = -INFINITY;
            for (int64_t i = 0; i < last; i++) {
                const double v = in->x[r * last + i];
                s += v;
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            ref[3 * r] = s, ref[3 * r + 1] = lo, ref[3 * r + 2] = hi;
        }
        break;
    case LTX2_OP_RMS_APPLY:
        for (int64_t r = 0; r < in->nx / last; r++) {
            const double inv = 1.0 / sqrt((double)in->b[r] / (double)(2 * last) + 1e-6);
            for (int64_t i = 0; i < last; i++)
                ref[r * last + i] = in->x[r * last + i] * inv * (in->w ? in->w[i] : 1.0);
        }
        break;
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
    case LTX2_OP_ATTENTION:
        naive_attention(c, in, ref);
        break;
    case LTX2_OP_ROPE: {
        op_case cc = *c;
        cc.flags &= ~(unsigned)F_QKNORM;
        /* shared split tables: the full [B, H, S, d/2] ones the naive rotation reads, row by row */
        const int64_t B = c->shape[0], S = c->shape[1], H = c->heads, half = c->shape[2] / H / 2;
        const bool one_row = c->flags & F_ROPE_ONE_ROW, one_head = c->flags & F_ROPE_ONE_HEAD;
        float *qc = in->qc, *qs = in->qs;
        if (one_row || one_head) {
            qc = malloc((size_t)(B * H * S * half) * sizeof(float));
            qs = malloc((size_t)(B * H * S * half) * sizeof(float));
            const int64_t th = one_head ? 1 : H;
            for (int64_t b = 0; b < B; b++)
                for (int64_t h = 0; h < H; h++) {
                    const int64_t src = ((one_row ? 0 : b) * th + (one_head ? 0 : h)) * S * half;
                    memcpy(qc + (b * H + h) * S * half, in->qc + src, (size_t)(S * half) * sizeof(float));
                    memcpy(qs + (b * H + h) * S * half, in->qs + src, (size_t)(S * half) * sizeof(float));
                }
        }
        double *r = naive_prep_qk(&cc, in->x, c->shape[1], c->heads, NULL, qc, qs);
        if (qc != in->qc) free(qc), free(qs);
        memcpy(ref, r, (size_t)in->nout * sizeof(double));
        free(r);
        break;
    }
    case LTX2_OP_CONV3D:
        naive_conv3d(c, in, ref);
        break;
    case LTX2_OP_BLUR_DOWNSAMPLE: {
        /* per frame and channel: outer(binomial row 4)^2 / 256, zero padding 2, stride s */
        static const double k1[5] = {1, 4, 6, 4, 1};
        const int64_t F = c->shape[0] * c->shape[1], H = c->shape[2], W = c->shape[3], s = c->k3[0];
        const int64_t Ho = in->out_shape[2], Wo = in->out_shape[3];
        for (int64_t f = 0; f < F; f++)
            for (int64_t i = 0; i < Ho; i++)
                for (int64_t j = 0; j < Wo; j++)
                    for (int64_t ch = 0; ch < last; ch++) {
                        double acc = 0;
                        for (int64_t a = 0; a < 5; a++)
                            for (int64_t b = 0; b < 5; b++) {
                                const int64_t hs = i * s + a - 2, ws = j * s + b - 2;
                                if (hs >= 0 && hs < H && ws >= 0 && ws < W)
                                    acc += k1[a] * k1[b] / 256.0 * in->x[((f * H + hs) * W + ws) * last + ch];
                            }
                        ref[((f * Ho + i) * Wo + j) * last + ch] = acc;
                    }
        break;
    }
    case LTX2_OP_GROUP_NORM: {
        /* per sample (dim 0) and group of last/G consecutive channels, over every position */
        const int64_t N = c->shape[0], G = c->heads, cg = last / G, inner = in->nx / (N * last);
        for (int64_t b = 0; b < N; b++)
            for (int64_t g = 0; g < G; g++) {
                const float *x = in->x + b * inner * last + g * cg;
                double s = 0, s2 = 0;
                for (int64_t v = 0; v < inner; v++)
                    for (int64_t k = 0; k < cg; k++) s += x[v * last + k];
                const double mean = s / (double)(inner * cg);
                for (int64_t v = 0; v < inner; v++)
                    for (int64_t k = 0; k < cg; k++) s2 += (x[v * last + k] - mean) * (x[v * last + k] - mean);
                const double rstd = 1.0 / sqrt(s2 / (double)(inner * cg) + (double)GROUP_NORM_EPS);
                for (int64_t v = 0; v < inner; v++)
                    for (int64_t k = 0; k < cg; k++) {
                        const int64_t ch = g * cg + k;
                        double o = (x[v * last + k] - mean) * rstd * (in->w ? in->w[ch] : 1.0) +
                                   (in->bias ? in->bias[ch] : 0.0);
                        if (c->flags & F_SILU) o = o / (1.0 + exp(-o));
                        ref[b * inner * last + v * last + g * cg + k] = o;
                    }
            }
        break;
    }
    case LTX2_OP_PIXEL_NORM:
        for (int64_t r = 0; r < in->nx / last; r++) {
            const float *x = in->x + r * last;
            double ss = 0;
            for (int64_t i = 0; i < last; i++) ss += (double)x[i] * x[i];
            double inv = 1.0 / sqrt(ss / (double)last + (double)PIXEL_NORM_EPS);
            for (int64_t i = 0; i < last; i++) {
                double v = x[i] * inv;
                ref[r * last + i] = c->flags & F_SILU ? v / (1.0 + exp(-v)) : v;
            }
        }
        break;
    case LTX2_OP_DEPTH_TO_SPACE: {
        /* walk the output and find each source element from the einops pattern */
        const int64_t *sd = c->k3, C = in->out_shape[4], T = in->out_shape[1], H = in->out_shape[2],
                      W = in->out_shape[3], drop = c->flags & F_DROP ? 1 : 0;
        const int64_t t0 = c->shape[1], h0 = c->shape[2], w0 = c->shape[3], xc = c->shape[4];
        const int64_t rcp = c->n * sd[0] * sd[1] * sd[2];
        int64_t o = 0;
        for (int64_t n = 0; n < c->shape[0]; n++)
            for (int64_t t = 0; t < T; t++)
                for (int64_t y = 0; y < H; y++)
                    for (int64_t x = 0; x < W; x++)
                        for (int64_t ch = 0; ch < C; ch++, o++) {
                            int64_t tt = t + drop, p1 = tt % sd[0], p2 = y % sd[1], p3 = x % sd[2];
                            int64_t vox = ((n * t0 + tt / sd[0]) * h0 + y / sd[1]) * w0 + x / sd[2];
                            double v = in->x[vox * xc + ((ch * sd[0] + p1) * sd[1] + p2) * sd[2] + p3];
                            if (in->b) v += in->b[vox * rcp + (((ch % c->n) * sd[0] + p1) * sd[1] + p2) * sd[2] + p3];
                            ref[o] = v;
                        }
        break;
    }
    case LTX2_OP_SPACE_TO_DEPTH:
        s2d_reference(c, in, ref);
        break;
    default:
        break;
    }
}

