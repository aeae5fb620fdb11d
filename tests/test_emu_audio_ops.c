/* The vocoders' 1-D kernels (kernels/conv1d.cu, kernels/audio_ops.cu) run in the CUDA emulator
 * against the CPU references on the same (bf16-rounded where the kernel stores bf16) inputs:
 * - conv1d (implicit GEMM): k 1 / 3 / 5 / 7, dilation 1 / 3 / 5, "same" padding, an STFT-like
 *   c_in 2 conv with k = n_fft, stride = hop and asymmetric padding, conv_post's c_out 1, bias on
 *   and off, odd channel counts, both tile widths (c_out <= 32 and > 32) with partial M and N tiles;
 * - conv_transpose1d (one GEMM per output phase): the vocoder's k = 2*stride, padding
 *   (k - stride)/2 for strides 2..5, plus k not a multiple of the stride with padding > stride, and
 *   k < stride (phases with no tap: bias only);
 * - the FIR resamplers: BigVGAN's UpSample1d (ratio 2, 12 taps, pads 5, crops 15/15) and
 *   LowPassFilter1d (ratio 2, 12 taps, pads 5/6), LTX-2.3's resampler (ratio 3, 37 taps, pads 6,
 *   crops 36/34);
 * - SnakeBeta (in place and not) and the STFT magnitude;
 * each in f32 and bf16, plus the launchers' refusals and their n == 0 no-ops. Weights are made in
 * torch's layouts and packed with ltx2_conv1d_pack_weight / ltx2_convt1d_pack_weight, as the
 * backend hands them over. */
#define _POSIX_C_SOURCE 200809L

#include "emu_kernels.h"

#include <float.h>

#include "backend/conv1d_desc.h"
#include "cpu/cpu_conv1d.h"
#include "cpu/cpu_ops.h"
#include "emu_check.h"

/* What the launchers return for arguments they refuse (cudaErrorInvalidValue, driver_types.h). */
#define EMU_ERR_INVALID_VALUE 1
/* Weights N(0, 1/K) keep the conv outputs O(1) for N(0, 1) inputs; bias N(0, BIAS_SCALE). */
#define BIAS_SCALE 0.5f

/* ---- tolerances ----
 * f32 convs: the kernel sums its K products in ascending order with FMAs, the CPU GEMM in its own
 * blocking; both are fp32 sums of O(1) partial sums, so the difference is a random walk of about
 * sqrt(K) roundings of at most eps/2 each. CONV_F32_TOL_GAIN * sqrt(K) * FLT_EPSILON is used as
 * both the absolute and the relative bound. Observed in the emulator: max_abs / (sqrt(K) * eps)
 * 1.2 at K = 1408 (the AMP block case), 1.3 at K = 192 (the vocoder-sized transposed conv), the
 * small cases bit-identical; the gain 8 leaves room for a GPU's FMA contraction and other
 * shapes, while a wrong tap or channel moves outputs by O(1 / sqrt(K)).
 * bf16: the output is rounded once, so one bf16 ulp (EPS_BF16 relative) on top of the f32 bound. */
#define CONV_F32_TOL_GAIN 8.0
/* FIR resamplers, snake, complex_abs: the CPU's fp32 operations in the CPU's order; only FMA
 * contraction (nvcc contracts, the emulator and the C reference do not) and, on a GPU, a few ulps
 * of sinf may differ: ~1e-6 relative on O(1) values, as BLUR_F32_TOL in test_emu_elementwise.c. */
#define SAME_ORDER_F32_TOL 1e-6

static int64_t g_idx; /* case counter: picks the Philox streams */

static uint64_t next_stream(void) { return (uint64_t)(g_idx++) * 8u; }

static double conv_f32_tol(int64_t K) { return CONV_F32_TOL_GAIN * sqrt((double)K) * FLT_EPSILON; }

/* Runs the comparison of one case; f32 tolerance `tol` (absolute and relative), bf16 one ulp more. */
static void finish(const char *name, const float *out, const float *ref, int64_t n, double tol, bool bf, double ms,
                   bool sensitive) {
    const double rtol = tol + (bf ? EPS_BF16 : 0.0);
    emu_report(name, emu_compare(out, ref, n, tol, rtol, bf, name, false), ms);
    if (sensitive) emu_check_sensitive(name, out, ref, n, tol, rtol, bf, n / 3, 0.25f);
}

static int kdt(bool bf) { return bf ? LTX2_KDT_BF16 : LTX2_KDT_F32; }

/* ---- conv1d ---- */

typedef struct conv_case {
    int64_t n, len, c_in, c_out, k, stride, dilation, pad_left, pad_right;
    bool bias, bf;
    const char *what;
} conv_case;

static void conv1d_case(ltx2_context *ctx, const conv_case *c) {
    char name[128];
    snprintf(name, sizeof(name), "conv1d %s n%lld L%lld %lld->%lld k%lld s%lld d%lld p%lld/%lld%s %s", c->bf ? "bf16" : "f32",
             (long long)c->n, (long long)c->len, (long long)c->c_in, (long long)c->c_out, (long long)c->k,
             (long long)c->stride, (long long)c->dilation, (long long)c->pad_left, (long long)c->pad_right,
             c->bias ? " +bias" : "", c->what);
    const ltx2_conv1d_desc d = {c->c_in, c->c_out, c->k, c->stride, c->dilation, c->pad_left, c->pad_right};
    int64_t out_len = 0;
    CHECK(ltx2_conv1d_out_len(ctx, &d, c->len, &out_len) == LTX2_OK, "%s: out_len: %s", name, ltx2_last_error(ctx));
    const int64_t K = c->k * c->c_in, nx = c->n * c->len * c->c_in, nw = K * c->c_out, ny = c->n * out_len * c->c_out;
    const uint64_t st = next_stream();
    float *x = emu_normal(st, nx, 1.0f, 0.0f, c->bf), *w_oik = emu_normal(st + 1, nw, 1.0f / sqrtf((float)K), 0.0f, c->bf);
    float *bias = c->bias ? emu_normal(st + 2, c->c_out, BIAS_SCALE, 0.0f, c->bf) : NULL;
    float *wp = malloc((size_t)nw * 4), *ref = malloc((size_t)ny * 4), *out = malloc((size_t)ny * 4);
    CHECK(ltx2_conv1d_pack_weight(ctx, &d, w_oik, wp) == LTX2_OK, "%s: pack", name);
    CHECK(ltx2_cpu_conv1d(ctx, &d, x, c->n, c->len, wp, bias, ref) == LTX2_OK, "%s: cpu: %s", name, ltx2_last_error(ctx));
    void *dx = emu_alloc_stored(x, nx, c->bf), *dw = emu_alloc_stored(wp, nw, c->bf);
    void *db = bias ? emu_alloc_stored(bias, c->c_out, c->bf) : NULL, *dy = emu_alloc((size_t)ny * (c->bf ? 2 : 4));
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_conv1d(NULL, kdt(c->bf), dx, dw, db, dy, c->n, c->len, c->c_in, c->c_out, c->k, c->stride,
                                 c->dilation, c->pad_left, out_len);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dy, (size_t)ny * (c->bf ? 2 : 4)) == 0, "%s: wrote past y", name);
    emu_load(out, dy, ny, c->bf);
    finish(name, out, ref, ny, conv_f32_tol(K), c->bf, ms, !c->bf);
    free(x), free(w_oik), free(bias), free(wp), free(ref), free(out), free(dx), free(dw), free(db), free(dy);
}

/* ---- conv_transpose1d ---- */

typedef struct convt_case {
    int64_t n, len, c_in, c_out, k, stride, padding;
    bool bias, bf;
    const char *what;
} convt_case;

static void convt1d_case(ltx2_context *ctx, const convt_case *c) {
    char name[128];
    snprintf(name, sizeof(name), "conv_transpose1d %s n%lld L%lld %lld->%lld k%lld s%lld p%lld%s %s", c->bf ? "bf16" : "f32",
             (long long)c->n, (long long)c->len, (long long)c->c_in, (long long)c->c_out, (long long)c->k,
             (long long)c->stride, (long long)c->padding, c->bias ? " +bias" : "", c->what);
    const ltx2_convt1d_desc d = {c->c_in, c->c_out, c->k, c->stride, c->padding};
    int64_t out_len = 0;
    CHECK(ltx2_convt1d_out_len(ctx, &d, c->len, &out_len) == LTX2_OK, "%s: out_len: %s", name, ltx2_last_error(ctx));
    /* products per output: c_in times the taps landing on it (at most ceil(k / stride)) */
    const int64_t K = (c->k + c->stride - 1) / c->stride * c->c_in;
    const int64_t nx = c->n * c->len * c->c_in, nw = c->c_in * c->k * c->c_out, ny = c->n * out_len * c->c_out;
    const uint64_t st = next_stream();
    float *x = emu_normal(st, nx, 1.0f, 0.0f, c->bf), *w_iok = emu_normal(st + 1, nw, 1.0f / sqrtf((float)K), 0.0f, c->bf);
    float *bias = c->bias ? emu_normal(st + 2, c->c_out, BIAS_SCALE, 0.0f, c->bf) : NULL;
    float *wp = malloc((size_t)nw * 4), *ref = malloc((size_t)ny * 4), *out = malloc((size_t)ny * 4);
    CHECK(ltx2_convt1d_pack_weight(ctx, &d, w_iok, wp) == LTX2_OK, "%s: pack", name);
    CHECK(ltx2_cpu_conv_transpose1d(ctx, &d, x, c->n, c->len, wp, bias, ref) == LTX2_OK, "%s: cpu: %s", name,
          ltx2_last_error(ctx));
    void *dx = emu_alloc_stored(x, nx, c->bf), *dw = emu_alloc_stored(wp, nw, c->bf);
    void *db = bias ? emu_alloc_stored(bias, c->c_out, c->bf) : NULL, *dy = emu_alloc((size_t)ny * (c->bf ? 2 : 4));
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_conv_transpose1d(NULL, kdt(c->bf), dx, dw, db, dy, c->n, c->len, c->c_in, c->c_out, c->k,
                                           c->stride, c->padding, out_len);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dy, (size_t)ny * (c->bf ? 2 : 4)) == 0, "%s: wrote past y", name);
    emu_load(out, dy, ny, c->bf);
    finish(name, out, ref, ny, conv_f32_tol(K), c->bf, ms, !c->bf);
    free(x), free(w_iok), free(bias), free(wp), free(ref), free(out), free(dx), free(dw), free(db), free(dy);
}

/* ---- FIR resamplers ---- */

typedef struct fir_case {
    bool up, bf;
    int64_t n, len, c;
    ltx2_fir_desc d;
    const char *what;
} fir_case;

static void fir_case_run(ltx2_context *ctx, const fir_case *c) {
    char name[128];
    const ltx2_fir_desc *d = &c->d;
    snprintf(name, sizeof(name), "fir_%s %s n%lld L%lld c%lld r%lld taps%lld pad%lld/%lld crop%lld/%lld %s",
             c->up ? "upsample" : "downsample", c->bf ? "bf16" : "f32", (long long)c->n, (long long)c->len,
             (long long)c->c, (long long)d->ratio, (long long)d->taps, (long long)d->pad_left, (long long)d->pad_right,
             (long long)d->crop_left, (long long)d->crop_right, c->what);
    int64_t out_len = 0;
    CHECK((c->up ? ltx2_fir_upsample_out_len : ltx2_fir_downsample_out_len)(ctx, d, c->len, &out_len) == LTX2_OK,
          "%s: out_len: %s", name, ltx2_last_error(ctx));
    const int64_t nx = c->n * c->len * c->c, ny = c->n * out_len * c->c;
    const uint64_t st = next_stream();
    /* random f32 taps: the index arithmetic, not the filter's shape, is under test */
    float *x = emu_normal(st, nx, 1.0f, 0.0f, c->bf), *filt = emu_normal(st + 1, d->taps, 0.5f, 0.0f, false);
    float *ref = malloc((size_t)ny * 4), *out = malloc((size_t)ny * 4);
    CHECK((c->up ? ltx2_cpu_fir_upsample : ltx2_cpu_fir_downsample)(ctx, d, x, c->n, c->len, c->c, filt, ref) ==
              LTX2_OK,
          "%s: cpu: %s", name, ltx2_last_error(ctx));
    void *dx = emu_alloc_stored(x, nx, c->bf), *df = emu_alloc_copy(filt, (size_t)d->taps * 4);
    void *dy = emu_alloc((size_t)ny * (c->bf ? 2 : 4));
    const double t0 = emu_now_ms();
    const int rc = c->up ? ltx2_k_fir_upsample(NULL, kdt(c->bf), dx, df, dy, c->n, c->len, c->c, d->taps, d->ratio,
                                               d->pad_left, d->pad_right, d->crop_left, out_len)
                         : ltx2_k_fir_downsample(NULL, kdt(c->bf), dx, df, dy, c->n, c->len, c->c, d->taps, d->ratio,
                                                 d->pad_left, out_len);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dy, (size_t)ny * (c->bf ? 2 : 4)) == 0, "%s: wrote past y", name);
    emu_load(out, dy, ny, c->bf);
    finish(name, out, ref, ny, SAME_ORDER_F32_TOL, c->bf, ms, !c->bf);
    free(x), free(filt), free(ref), free(out), free(dx), free(df), free(dy);
}

/* ---- snake, complex_abs ---- */

/* SnakeBeta's stored log-parameters: alpha = exp(a), inv_beta = 1 / (exp(b) + SNAKE_EPS), a and b
 * N(0, SNAKE_LOG_SCALE) (trained values are of that order), as the model precomputes them. */
#define SNAKE_LOG_SCALE 0.5f
#define SNAKE_EPS 1e-9f

static void snake_case(ltx2_context *ctx, bool bf, int64_t rows, int64_t c, bool inplace) {
    char name[96];
    snprintf(name, sizeof(name), "snake %s %lldx%lld%s", bf ? "bf16" : "f32", (long long)rows, (long long)c,
             inplace ? " in-place" : "");
    const int64_t n = rows * c;
    const uint64_t st = next_stream();
    float *x = emu_normal(st, n, 2.0f, 0.0f, bf), *alpha = emu_normal(st + 1, c, SNAKE_LOG_SCALE, 0.0f, false);
    float *inv_beta = emu_normal(st + 2, c, SNAKE_LOG_SCALE, 0.0f, false);
    for (int64_t i = 0; i < c; i++) {
        alpha[i] = expf(alpha[i]);
        inv_beta[i] = 1.0f / (expf(inv_beta[i]) + SNAKE_EPS);
    }
    float *ref = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
    CHECK(ltx2_cpu_snake(ctx, x, ref, alpha, inv_beta, rows, c) == LTX2_OK, "%s: cpu: %s", name, ltx2_last_error(ctx));
    const size_t bytes = (size_t)n * (bf ? 2 : 4);
    void *dx = emu_alloc_stored(x, n, bf), *dy = inplace ? dx : emu_alloc(bytes);
    void *da = emu_alloc_copy(alpha, (size_t)c * 4), *dib = emu_alloc_copy(inv_beta, (size_t)c * 4);
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_snake(NULL, kdt(bf), dx, dy, da, dib, rows, c);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dy, bytes) == 0, "%s: wrote past y", name);
    emu_load(out, dy, n, bf);
    finish(name, out, ref, n, SAME_ORDER_F32_TOL, bf, ms, !bf && !inplace);
    free(x), free(alpha), free(inv_beta), free(ref), free(out), free(dx), free(da), free(dib);
    if (dy != dx) free(dy);
}

static void complex_abs_case(ltx2_context *ctx, bool bf, int64_t rows, int64_t nf) {
    char name[96];
    snprintf(name, sizeof(name), "complex_abs %s %lldx%lld", bf ? "bf16" : "f32", (long long)rows, (long long)nf);
    const int64_t nx = rows * 2 * nf, ny = rows * nf;
    float *x = emu_normal(next_stream(), nx, 1.0f, 0.0f, bf);
    float *ref = malloc((size_t)ny * 4), *out = malloc((size_t)ny * 4);
    CHECK(ltx2_cpu_complex_abs(ctx, x, ref, rows, nf) == LTX2_OK, "%s: cpu: %s", name, ltx2_last_error(ctx));
    void *dx = emu_alloc_stored(x, nx, bf), *dy = emu_alloc((size_t)ny * (bf ? 2 : 4));
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_complex_abs(NULL, kdt(bf), dx, dy, rows, nf);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dy, (size_t)ny * (bf ? 2 : 4)) == 0, "%s: wrote past y", name);
    emu_load(out, dy, ny, bf);
    finish(name, out, ref, ny, SAME_ORDER_F32_TOL, bf, ms, !bf);
    free(x), free(ref), free(out), free(dx), free(dy);
}

/* ---- refusals and no-ops ---- */

/* Each bad argument must be refused (cudaErrorInvalidValue) without touching y; n == 0 (or an
 * empty output) must return 0 without touching y either. */
static void check_refusals(void) {
    enum { BYTES = 4096 };
    void *dx = emu_alloc(BYTES), *dw = emu_alloc(BYTES), *dy = emu_alloc(BYTES);
    float *f = emu_alloc(BYTES);
    memset(dx, 0, BYTES), memset(dw, 0, BYTES), memset(f, 0, BYTES);
    const int F = LTX2_KDT_F32;
    struct {
        const char *why;
        int rc, want;
    } r[] = {
        {"conv1d dtype 7", ltx2_k_conv1d(NULL, 7, dx, dw, NULL, dy, 1, 8, 4, 4, 3, 1, 1, 1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d NULL x", ltx2_k_conv1d(NULL, F, NULL, dw, NULL, dy, 1, 8, 4, 4, 3, 1, 1, 1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d NULL w", ltx2_k_conv1d(NULL, F, dx, NULL, NULL, dy, 1, 8, 4, 4, 3, 1, 1, 1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d NULL y", ltx2_k_conv1d(NULL, F, dx, dw, NULL, NULL, 1, 8, 4, 4, 3, 1, 1, 1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d n -1", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, -1, 8, 4, 4, 3, 1, 1, 1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d c_in 0", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, 1, 8, 0, 4, 3, 1, 1, 1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d c_out 0", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, 1, 8, 4, 0, 3, 1, 1, 1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d k 0", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, 1, 8, 4, 4, 0, 1, 1, 1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d stride 0", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, 1, 8, 4, 4, 3, 0, 1, 1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d dilation 0", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, 1, 8, 4, 4, 3, 1, 0, 1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d pad -1", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, 1, 8, 4, 4, 3, 1, 1, -1, 8), EMU_ERR_INVALID_VALUE},
        {"conv1d out_len -1", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, 1, 8, 4, 4, 3, 1, 1, 1, -1), EMU_ERR_INVALID_VALUE},
        {"conv1d K = k*c_in past int32", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, 1, 8, (int64_t)1 << 20, 4, 1 << 12, 1, 1, 1, 8),
         EMU_ERR_INVALID_VALUE},
        {"conv1d n 0 (no-op)", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, 0, 8, 4, 4, 3, 1, 1, 1, 8), 0},
        {"conv1d out_len 0 (no-op)", ltx2_k_conv1d(NULL, F, dx, dw, NULL, dy, 1, 8, 4, 4, 3, 1, 1, 1, 0), 0},
        {"conv_transpose1d NULL x", ltx2_k_conv_transpose1d(NULL, F, NULL, dw, NULL, dy, 1, 4, 4, 4, 4, 2, 1, 8),
         EMU_ERR_INVALID_VALUE},
        {"conv_transpose1d stride 0", ltx2_k_conv_transpose1d(NULL, F, dx, dw, NULL, dy, 1, 4, 4, 4, 4, 0, 1, 8),
         EMU_ERR_INVALID_VALUE},
        {"conv_transpose1d padding -1", ltx2_k_conv_transpose1d(NULL, F, dx, dw, NULL, dy, 1, 4, 4, 4, 4, 2, -1, 8),
         EMU_ERR_INVALID_VALUE},
        {"conv_transpose1d len -1", ltx2_k_conv_transpose1d(NULL, F, dx, dw, NULL, dy, 1, -1, 4, 4, 4, 2, 1, 8),
         EMU_ERR_INVALID_VALUE},
        {"conv_transpose1d stride 70000 (grid z)",
         ltx2_k_conv_transpose1d(NULL, F, dx, dw, NULL, dy, 1, 1, 4, 4, 4, 70000, 0, 4), EMU_ERR_INVALID_VALUE},
        {"conv_transpose1d n 0 (no-op)", ltx2_k_conv_transpose1d(NULL, F, dx, dw, NULL, dy, 0, 4, 4, 4, 4, 2, 1, 8), 0},
        {"fir_upsample NULL filter", ltx2_k_fir_upsample(NULL, F, dx, NULL, dy, 1, 8, 4, 12, 2, 5, 5, 15, 16),
         EMU_ERR_INVALID_VALUE},
        {"fir_upsample ratio 0", ltx2_k_fir_upsample(NULL, F, dx, f, dy, 1, 8, 4, 12, 0, 5, 5, 15, 16), EMU_ERR_INVALID_VALUE},
        {"fir_upsample len 0", ltx2_k_fir_upsample(NULL, F, dx, f, dy, 1, 0, 4, 12, 2, 5, 5, 15, 16), EMU_ERR_INVALID_VALUE},
        {"fir_upsample crop -1", ltx2_k_fir_upsample(NULL, F, dx, f, dy, 1, 8, 4, 12, 2, 5, 5, -1, 16),
         EMU_ERR_INVALID_VALUE},
        {"fir_upsample n 0 (no-op)", ltx2_k_fir_upsample(NULL, F, dx, f, dy, 0, 8, 4, 12, 2, 5, 5, 15, 16), 0},
        {"fir_downsample taps 0", ltx2_k_fir_downsample(NULL, F, dx, f, dy, 1, 8, 4, 0, 2, 5, 4), EMU_ERR_INVALID_VALUE},
        {"fir_downsample c 0", ltx2_k_fir_downsample(NULL, F, dx, f, dy, 1, 8, 0, 12, 2, 5, 4), EMU_ERR_INVALID_VALUE},
        {"fir_downsample dtype 2", ltx2_k_fir_downsample(NULL, 2, dx, f, dy, 1, 8, 4, 12, 2, 5, 4), EMU_ERR_INVALID_VALUE},
        {"fir_downsample out_len 0 (no-op)", ltx2_k_fir_downsample(NULL, F, dx, f, dy, 1, 8, 4, 12, 2, 5, 0), 0},
        {"snake NULL alpha", ltx2_k_snake(NULL, F, dx, dy, NULL, f, 4, 8), EMU_ERR_INVALID_VALUE},
        {"snake c 0", ltx2_k_snake(NULL, F, dx, dy, f, f, 4, 0), EMU_ERR_INVALID_VALUE},
        {"snake rows -1", ltx2_k_snake(NULL, F, dx, dy, f, f, -1, 8), EMU_ERR_INVALID_VALUE},
        {"snake rows 0 (no-op)", ltx2_k_snake(NULL, F, dx, dy, f, f, 0, 8), 0},
        {"complex_abs nf 0", ltx2_k_complex_abs(NULL, F, dx, dy, 4, 0), EMU_ERR_INVALID_VALUE},
        {"complex_abs NULL y", ltx2_k_complex_abs(NULL, F, dx, NULL, 4, 8), EMU_ERR_INVALID_VALUE},
        {"complex_abs rows 0 (no-op)", ltx2_k_complex_abs(NULL, F, dx, dy, 0, 8), 0},
    };
    const int nr = (int)(sizeof(r) / sizeof(r[0]));
    for (int i = 0; i < nr; i++) CHECK(r[i].rc == r[i].want, "%s: returned %d, want %d", r[i].why, r[i].rc, r[i].want);
    CHECK(emu_untouched(dy, BYTES), "a refused launch or a no-op wrote y");
    CHECK(ltx2_emu_last_fault() == NULL, "refusals: emulator fault %s", ltx2_emu_last_fault());
    printf("  %-58s %d checked\n", "refusals and no-ops", nr);
    free(dx), free(dw), free(dy), free(f);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    const double t0 = emu_now_ms();
    printf("vocoder 1-D kernels (emulated) vs the CPU reference:\n");

    /* n, len, c_in, c_out, k, stride, dilation, pad_left, pad_right, bias, bf */
    const conv_case convs[] = {
        {1, 50, 16, 24, 1, 1, 1, 0, 0, true, false, "1x1 (narrow tile)"},
        {2, 37, 24, 40, 3, 1, 1, 1, 1, true, false, "resblock k3 (wide tile, partial N)"},
        {1, 45, 13, 17, 7, 1, 3, 9, 9, false, false, "k7 dilation 3, odd channels"},
        {1, 70, 33, 70, 3, 1, 3, 3, 3, true, true, "k3 dilation 3, two N tiles"},
        {1, 150, 8, 8, 5, 1, 5, 10, 10, true, false, "k5 dilation 5, two M tiles"},
        {1, 64, 2, 18, 16, 4, 1, 6, 10, false, false, "STFT-like: n_fft 16, hop 4"},
        {2, 48, 2, 66, 16, 4, 1, 6, 10, false, true, "STFT-like: 2 N tiles"},
        {2, 30, 20, 32, 7, 1, 1, 3, 3, true, true, "conv_pre k7"},
        {1, 40, 32, 1, 7, 1, 1, 3, 3, true, false, "conv_post c_out 1"},
        {1, 21, 7, 5, 3, 2, 1, 0, 1, false, true, "odd: stride 2, pad 0/1"},
        /* vocoder-sized: the AMP block's k 11 dilation 5 (K = 1408, 88 K slices), an STFT frame
         * conv (n_fft 64, hop 16, centred padding) */
        {1, 200, 128, 96, 11, 1, 5, 25, 25, true, false, "AMP block k11 dilation 5"},
        {2, 256, 2, 66, 64, 16, 1, 24, 24, false, true, "STFT: n_fft 64, hop 16"},
    };
    for (size_t i = 0; i < sizeof(convs) / sizeof(convs[0]); i++) conv1d_case(ctx, &convs[i]);

    /* n, len, c_in, c_out, k, stride, padding, bias, bf */
    const convt_case convts[] = {
        {1, 20, 24, 12, 4, 2, 1, true, false, "k = 2*stride"},
        {2, 15, 16, 40, 6, 3, 1, false, true, "k = 2*stride"},
        {1, 11, 9, 33, 8, 4, 2, false, false, "k = 2*stride, odd channels"},
        {1, 8, 32, 16, 10, 5, 2, true, true, "k = 2*stride, odd stride"},
        {1, 9, 5, 7, 7, 3, 4, true, false, "k % stride != 0, padding > stride"},
        {2, 6, 6, 10, 3, 4, 0, true, false, "k < stride: bias-only phase"},
        {1, 50, 96, 48, 12, 6, 3, true, false, "vocoder-sized, k = 2*stride"},
    };
    for (size_t i = 0; i < sizeof(convts) / sizeof(convts[0]); i++) convt1d_case(ctx, &convts[i]);

    /* up, bf, n, len, c, {taps, ratio, pad_left, pad_right, crop_left, crop_right} */
    const fir_case firs[] = {
        {true, false, 1, 20, 24, {12, 2, 5, 5, 15, 15}, "BigVGAN UpSample1d"},
        {true, true, 2, 13, 7, {12, 2, 5, 5, 15, 15}, "BigVGAN UpSample1d"},
        {true, false, 1, 30, 2, {37, 3, 6, 6, 36, 34}, "resampler x3"},
        {true, true, 2, 17, 3, {37, 3, 6, 6, 36, 34}, "resampler x3"},
        /* no right crop: the last outputs reach past the last padded input, where the sum stops */
        {true, false, 1, 9, 5, {12, 2, 3, 2, 0, 0}, "uncropped, uneven pads"},
        {false, false, 1, 40, 24, {12, 2, 5, 6, 0, 0}, "BigVGAN LowPassFilter1d"},
        {false, true, 2, 25, 7, {12, 2, 5, 6, 0, 0}, "BigVGAN LowPassFilter1d, odd len"},
    };
    for (size_t i = 0; i < sizeof(firs) / sizeof(firs[0]); i++) fir_case_run(ctx, &firs[i]);

    snake_case(ctx, false, 40, 24, false);
    snake_case(ctx, false, 33, 7, true);
    snake_case(ctx, true, 40, 24, false);
    snake_case(ctx, true, 21, 9, true);
    complex_abs_case(ctx, false, 12, 33);
    complex_abs_case(ctx, true, 7, 65);

    check_refusals();

    printf("total %.1f s\n", (emu_now_ms() - t0) / 1e3);
    ltx2_context_free(ctx);
    return test_finish();
}
