/* The op harness's cases for the vocoders' 1-D ops (conv1d, conv_transpose1d, the FIR resamplers,
 * snake, complex_abs, the pointwise ops with a parameter): their descriptors, seeded inputs and
 * naive double-precision references written from torch's definitions, independently of src/cpu.
 * The rest of the harness's inputs and references are reference.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_case.h"

/* Standard deviation of SnakeBeta's log-scale alpha and beta: their exp spans ~0.6..1.6 (2 sigma). */
#define SNAKE_LOG_PARAM_SCALE 0.25f

ltx2_conv1d_desc conv1d_desc_of(const op_case *c) {
    return (ltx2_conv1d_desc){.c_in = c->shape[2], .c_out = c->n, .k = c->taps, .stride = c->stride,
                              .dilation = c->dilation, .pad_left = c->pad[0], .pad_right = c->pad[1]};
}

ltx2_convt1d_desc convt1d_desc_of(const op_case *c) {
    return (ltx2_convt1d_desc){.c_in = c->shape[2], .c_out = c->n, .k = c->taps, .stride = c->stride,
                               .padding = c->pad[0]};
}

ltx2_fir_desc fir_desc_of(const op_case *c) {
    return (ltx2_fir_desc){.taps = c->taps, .ratio = c->stride, .pad_left = c->pad[0], .pad_right = c->pad[1],
                           .crop_left = c->crop[0], .crop_right = c->crop[1]};
}

bool op_is_unary_a(ltx2_op op) {
    return op == LTX2_OP_LEAKY_RELU || op == LTX2_OP_TANH || op == LTX2_OP_HARDTANH || op == LTX2_OP_LOG_FLOOR ||
           op == LTX2_OP_DIV_SCALAR;
}

/* The vocoders' ops' inputs and output shapes (lengths from torch's formulas, written here rather
 * than taken from conv1d_desc.c, so the backend's shape checks are tested too). */
void vocoder_inputs(const op_case *c, uint64_t st, bool rb, inputs *in) {
    const int64_t L = c->shape[1], C = c->shape[c->ndim - 1];
    switch (c->op) {
    case LTX2_OP_CONV1D: {
        const int64_t K = c->taps * C;
        const ltx2_conv1d_desc d = conv1d_desc_of(c);
        in->nw = K * c->n;
        in->w_torch = case_gen(st + 1, in->nw, (float)(CONV_W_SCALE_PER_SQRT_K / sqrt((double)K)), 0.0f, rb);
        in->w = malloc((size_t)in->nw * sizeof(float));
        if (ltx2_conv1d_pack_weight(NULL, &d, in->w_torch, in->w) != LTX2_OK) { /* zeros: the case fails */
            fprintf(stderr, "conv1d: ltx2_conv1d_pack_weight refused the case's descriptor\n");
            memset(in->w, 0, (size_t)in->nw * sizeof(float));
        }
        if (c->flags & F_BIAS) in->bias = case_gen(st + 2, c->n, 0.5f, 0.0f, rb);
        in->out_shape[1] = (L + c->pad[0] + c->pad[1] - c->dilation * (c->taps - 1) - 1) / c->stride + 1;
        in->out_shape[2] = c->n;
        break;
    }
    case LTX2_OP_CONV_TRANSPOSE1D: {
        /* an output sums c_in x ceil(k / stride) products at most */
        const int64_t K = C * ((c->taps + c->stride - 1) / c->stride);
        const ltx2_convt1d_desc d = convt1d_desc_of(c);
        in->nw = C * c->taps * c->n;
        in->w_torch = case_gen(st + 1, in->nw, (float)(CONV_W_SCALE_PER_SQRT_K / sqrt((double)K)), 0.0f, rb);
        in->w = malloc((size_t)in->nw * sizeof(float));
        if (ltx2_convt1d_pack_weight(NULL, &d, in->w_torch, in->w) != LTX2_OK) { /* zeros: the case fails */
            fprintf(stderr, "conv_transpose1d: ltx2_convt1d_pack_weight refused the case's descriptor\n");
            memset(in->w, 0, (size_t)in->nw * sizeof(float));
        }
        if (c->flags & F_BIAS) in->bias = case_gen(st + 2, c->n, 0.5f, 0.0f, rb);
        in->out_shape[1] = (L - 1) * c->stride - 2 * c->pad[0] + c->taps;
        in->out_shape[2] = c->n;
        break;
    }
    case LTX2_OP_FIR_UPSAMPLE:
    case LTX2_OP_FIR_DOWNSAMPLE: {
        /* a random filter (any index slip shows), f32 as the ops take it, O(1) outputs */
        in->filt = case_gen(st + 1, c->taps, (float)(1.0 / sqrt((double)c->taps)), 0.0f, false);
        const int64_t lp = L + c->pad[0] + c->pad[1];
        in->out_shape[1] = c->op == LTX2_OP_FIR_UPSAMPLE ? (lp - 1) * c->stride + c->taps - c->crop[0] - c->crop[1]
                                                         : (lp - c->taps) / c->stride + 1;
        break;
    }
    case LTX2_OP_SNAKE:
        /* exp of log-scale parameters near 0 (BigVGAN's alpha_logscale): alpha and 1 / beta near 1 */
        in->alpha = case_gen(st + 1, C, SNAKE_LOG_PARAM_SCALE, 0.0f, false);
        in->inv_beta = case_gen(st + 2, C, SNAKE_LOG_PARAM_SCALE, 0.0f, false);
        for (int64_t i = 0; i < C; i++) {
            in->alpha[i] = (float)exp(in->alpha[i]);
            in->inv_beta[i] = (float)exp(in->inv_beta[i]);
        }
        break;
    case LTX2_OP_COMPLEX_ABS:
        in->out_shape[c->ndim - 1] = C / 2;
        break;
    default: /* the pointwise ops with a parameter; nothing for any other op */
        if (op_is_unary_a(c->op) && (c->flags & F_SPECIAL)) {
            const float sp[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, c->alpha, -c->alpha};
            for (size_t i = 0; i < sizeof(sp) / sizeof(sp[0]) && (int64_t)i < in->nx; i++)
                in->x[i] = rb ? naive_bf16_round(sp[i]) : sp[i];
        }
        break;
    }
}

/* F.leaky_relu, torch.tanh, F.hardtanh, torch.log(torch.clamp(x, min=floor)), x / d; NaN stays NaN
 * (torch.clamp propagates it; fmin / fmax would not). */
static double naive_unary_a(ltx2_op op, double a, double v) {
    switch (op) {
    case LTX2_OP_LEAKY_RELU: return v > 0.0 ? v : v * a;
    case LTX2_OP_TANH: return tanh(v);
    case LTX2_OP_HARDTANH: return isnan(v) ? v : (v < -1.0 ? -1.0 : (v > 1.0 ? 1.0 : v));
    case LTX2_OP_LOG_FLOOR: return isnan(v) ? v : log(v < a ? a : v);
    default: return v / a; /* div_scalar */
    }
}

/* F.conv1d with weight [c_out, c_in, k] on x [N, L, c_in] channels-last: y[n, o, co] = b[co] +
 * sum_{ci, j} W[co, ci, j] * x[n, o*stride + j*dilation - pad_left, ci], zero outside [0, L). */
static void naive_conv1d(const op_case *c, const inputs *in, double *ref) {
    const int64_t N = c->shape[0], L = c->shape[1], Ci = c->shape[2], Co = c->n, K = c->taps, Lo = in->out_shape[1];
#pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < Lo; o++)
            for (int64_t co = 0; co < Co; co++) {
                double acc = in->bias ? in->bias[co] : 0.0;
                for (int64_t ci = 0; ci < Ci; ci++)
                    for (int64_t j = 0; j < K; j++) {
                        const int64_t t = o * c->stride + j * c->dilation - c->pad[0];
                        if (t >= 0 && t < L)
                            acc += (double)in->w_torch[(co * Ci + ci) * K + j] * in->x[(n * L + t) * Ci + ci];
                    }
                ref[(n * Lo + o) * Co + co] = acc;
            }
}

/* F.conv_transpose1d with weight [c_in, c_out, k]: every input t scatters x[t] W[:, :, j] to the
 * full output at t*stride + j; `padding` samples are then dropped from both ends, bias added. */
static void naive_conv_transpose1d(const op_case *c, const inputs *in, double *ref) {
    const int64_t N = c->shape[0], L = c->shape[1], Ci = c->shape[2], Co = c->n, K = c->taps, Lo = in->out_shape[1];
    const int64_t full_len = (L - 1) * c->stride + K;
    double *full = calloc((size_t)(full_len * Co), sizeof(double));
    if (!full) return;
    for (int64_t n = 0; n < N; n++) {
        memset(full, 0, (size_t)(full_len * Co) * sizeof(double));
        for (int64_t t = 0; t < L; t++)
            for (int64_t ci = 0; ci < Ci; ci++) {
                const double xv = in->x[(n * L + t) * Ci + ci];
                for (int64_t co = 0; co < Co; co++)
                    for (int64_t j = 0; j < K; j++)
                        full[(t * c->stride + j) * Co + co] += xv * in->w_torch[(ci * Co + co) * K + j];
            }
        for (int64_t o = 0; o < Lo; o++)
            for (int64_t co = 0; co < Co; co++)
                ref[(n * Lo + o) * Co + co] = full[(o + c->pad[0]) * Co + co] + (in->bias ? in->bias[co] : 0.0);
    }
    free(full);
}

/* x[n, i, ch] of the replicate-padded sequence (F.pad(mode='replicate')): index i - pad_left,
 * clamped to [0, L). */
static double replicate_at(const op_case *c, const inputs *in, int64_t n, int64_t i, int64_t ch) {
    const int64_t L = c->shape[1], C = c->shape[2];
    int64_t t = i - c->pad[0];
    t = t < 0 ? 0 : (t >= L ? L - 1 : t);
    return in->x[(n * L + t) * C + ch];
}

/* BigVGAN UpSample1d: xp = F.pad(x, pads, 'replicate'); ratio * F.conv_transpose1d(xp, filt,
 * stride=ratio, groups=C), i.e. xp[i] * filt[j] scattered to i*ratio + j; then crop_left /
 * crop_right dropped. */
static void naive_fir_upsample(const op_case *c, const inputs *in, double *ref) {
    const int64_t N = c->shape[0], L = c->shape[1], C = c->shape[2], r = c->stride, Lo = in->out_shape[1];
    const int64_t lp = L + c->pad[0] + c->pad[1], full_len = (lp - 1) * r + c->taps;
    double *full = malloc((size_t)full_len * sizeof(double));
    if (!full) return;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++) {
            memset(full, 0, (size_t)full_len * sizeof(double));
            for (int64_t i = 0; i < lp; i++) {
                const double xv = replicate_at(c, in, n, i, ch);
                for (int64_t j = 0; j < c->taps; j++) full[i * r + j] += xv * in->filt[j];
            }
            for (int64_t o = 0; o < Lo; o++) ref[(n * Lo + o) * C + ch] = (double)r * full[o + c->crop[0]];
        }
    free(full);
}

/* BigVGAN LowPassFilter1d: F.conv1d(F.pad(x, pads, 'replicate'), filt, stride=ratio, groups=C). */
static void naive_fir_downsample(const op_case *c, const inputs *in, double *ref) {
    const int64_t N = c->shape[0], C = c->shape[2], Lo = in->out_shape[1];
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < Lo; o++)
            for (int64_t ch = 0; ch < C; ch++) {
                double acc = 0.0;
                for (int64_t j = 0; j < c->taps; j++) acc += replicate_at(c, in, n, o * c->stride + j, ch) * in->filt[j];
                ref[(n * Lo + o) * C + ch] = acc;
            }
}

/* BigVGAN SnakeBeta: x + 1 / beta * sin(x * alpha)^2 per channel (the last dim). */
static void naive_snake(const op_case *c, const inputs *in, double *ref) {
    const int64_t C = c->shape[c->ndim - 1];
    for (int64_t i = 0; i < in->nx; i++) {
        const double v = in->x[i], s = sin(v * in->alpha[i % C]);
        ref[i] = v + in->inv_beta[i % C] * s * s;
    }
}

/* |re + i im| = sqrt(re^2 + im^2) over [.., 2F]: real parts first, then imaginary. */
static void naive_complex_abs(const op_case *c, const inputs *in, double *ref) {
    const int64_t F = c->shape[c->ndim - 1] / 2, rows = in->nout / F;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t f = 0; f < F; f++) {
            const double re = in->x[r * 2 * F + f], im = in->x[r * 2 * F + F + f];
            ref[r * F + f] = sqrt(re * re + im * im);
        }
}

/* The vocoders' ops; false for any other op. */
bool naive_vocoder_ref(const op_case *c, const inputs *in, double *ref) {
    switch (c->op) {
    case LTX2_OP_CONV1D: naive_conv1d(c, in, ref); return true;
    case LTX2_OP_CONV_TRANSPOSE1D: naive_conv_transpose1d(c, in, ref); return true;
    case LTX2_OP_FIR_UPSAMPLE: naive_fir_upsample(c, in, ref); return true;
    case LTX2_OP_FIR_DOWNSAMPLE: naive_fir_downsample(c, in, ref); return true;
    case LTX2_OP_SNAKE: naive_snake(c, in, ref); return true;
    case LTX2_OP_COMPLEX_ABS: naive_complex_abs(c, in, ref); return true;
    default: break;
    }
    if (!op_is_unary_a(c->op)) return false;
    for (int64_t i = 0; i < in->nx; i++) ref[i] = naive_unary_a(c->op, (double)c->alpha, in->x[i]);
    return true;
}

