/* The implicit-GEMM conv3d kernels (kernels/conv3d.cu: cp.async ring, ldmatrix, mma.sync bf16;
 * kernels/conv3d_sm90.cu: the same gather into swizzled tiles, wgmma), each run in the CUDA
 * emulator against the CPU reference ltx2_cpu_conv3d on the same bf16-rounded inputs: causal and
 * symmetric time padding, zero and reflect spatial padding, strides, 1x1x1, channel counts that
 * are multiples of 8 but not of the tiles, odd H / W, batch 2, bias / SiLU on and off, partial M
 * and N tiles; plus the launcher's refusals and the backend's LTX2_CONV3D_IMPL switch. Weights
 * are generated in torch's [c_out, c_in, kt, kh, kw] layout and packed with
 * ltx2_conv3d_pack_weight, as the CUDA backend receives them. Tolerances are the op harness's for
 * CUDA conv3d (tests/test_ops.c). */
#define _POSIX_C_SOURCE 200809L

#include "emu_kernels.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend_kernels.h"
#include "backend_emu.h"

#include "cpu/cpu_conv3d.h"
#include "cpu/cpu_ops.h"
#include "emu_check.h"

/* What the launcher returns for arguments it refuses (cudaErrorInvalidValue, driver_types.h). */
#define EMU_ERR_INVALID_VALUE 1
/* Weight scale 1/sqrt(K) keeps outputs O(1), as in the op harness (CONV_W_SCALE_PER_SQRT_K). */
#define BIAS_SCALE 0.5f

typedef struct c3_case {
    const char *name;
    int64_t n, t, h, w, ci, co;
    int64_t kt, kh, kw, st, sh, sw;
    ltx2_conv_tpad tpad;
    bool reflect, bias, silu;
    /* a wrong reference this case must NOT match (shows the comparison separates the modes):
     * 0 none, 1 the other time padding, 2 the other spatial padding, 3 replicated instead of zero
     * frames */
    int wrong;
} c3_case;

static const c3_case cases[] = {
    /* the VAE's 3x3x3 causal conv (2 replicated frames in front); 24 -> 40 channels: K = 648 is
     * 20.25 k-tiles and N one partial 64-wide tile; M = 210 is 1.6 M-tiles */
    {"3x3x3 causal zeros 24->40 n2 t3 5x7 +bias", 2, 3, 5, 7, 24, 40, 3, 3, 3, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL, false,
     true, false, 1},
    /* the decoder's symmetric conv (1 frame each side) with reflect padding and the SiLU epilogue */
    {"3x3x3 symmetric reflect 16->24 t4 5x3 +silu", 1, 4, 5, 3, 16, 24, 3, 3, 3, 1, 1, 1, LTX2_CONV_TPAD_SYMMETRIC,
     true, false, true, 2},
    {"3x3x3 causal reflect 8->16 n2 t2 3x3 +bias+silu", 2, 2, 3, 3, 8, 16, 3, 3, 3, 1, 1, 1,
     LTX2_CONV_TPAD_CAUSAL, true, true, true, 0},
    /* stride 2 in time and space (downsampling convs) */
    {"3x3x3 causal stride 2x2x2 8->16 t5 7x5 +bias", 1, 5, 7, 5, 8, 16, 3, 3, 3, 2, 2, 2, LTX2_CONV_TPAD_CAUSAL,
     false, true, false, 0},
    {"3x3x3 symmetric reflect stride 1x2x2 16->8 t3 6x5", 1, 3, 6, 5, 16, 8, 3, 3, 3, 1, 2, 2,
     LTX2_CONV_TPAD_SYMMETRIC, true, false, false, 0},
    /* no time padding: To = T - 2 */
    {"3x1x1 no tpad 8->8 t4 3x5 +bias", 1, 4, 3, 5, 8, 8, 3, 1, 1, 1, 1, 1, LTX2_CONV_TPAD_NONE, false, true,
     false, 0},
    /* 1x1x1 (the VAE's channel projections): two N tiles (72 = 64 + 8) and three M tiles */
    {"1x1x1 24->72 n2 t2 9x8 +bias+silu", 2, 2, 9, 8, 24, 72, 1, 1, 1, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL, false,
     true, true, 0},
    {"1x3x3 reflect 40->8 t1 5x5", 1, 1, 5, 5, 40, 8, 1, 3, 3, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL, true, false, false,
     0},
    /* the smallest extents reflect allows (pad = size - 1): mirrors land on the far edge */
    {"3x3x3 symmetric reflect 8->16 n2 t2 2x2 +bias", 2, 2, 2, 2, 8, 16, 3, 3, 3, 1, 1, 1,
     LTX2_CONV_TPAD_SYMMETRIC, true, true, false, 0},
    {"1x5x5 reflect 8->8 t2 3x4 +silu", 1, 2, 3, 4, 8, 8, 1, 5, 5, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL, true, false, true,
     0},
    /* three N tiles (136 = 2 * 64 + 8) */
    {"1x1x1 16->136 t3 5x3 +bias", 1, 3, 5, 3, 16, 136, 1, 1, 1, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL, false, true, false,
     0},
    /* the wgmma kernel's 256-wide tile (c_out > 128) twice across N, 14 k-tiles of 64 around its
     * 4-slot ring */
    {"3x3x3 causal 32->264 t2 6x6 +bias+silu", 1, 2, 6, 6, 32, 264, 3, 3, 3, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL, false,
     true, true, 0},
    /* the audio VAE's causal conv over (time, 1, mel): two zero frames in front */
    {"3x1x3 causal zero frames 16->24 n2 t4 1x6 +bias", 2, 4, 1, 6, 16, 24, 3, 1, 3, 1, 1, 1,
     LTX2_CONV_TPAD_CAUSAL_ZEROS, false, true, false, 3},
    /* the latent upsampler's Conv3d(padding=1): one zero frame on each side */
    {"3x3x3 symmetric zero frames 16->32 n2 t3 4x5 +bias", 2, 3, 4, 5, 16, 32, 3, 3, 3, 1, 1, 1,
     LTX2_CONV_TPAD_SYMMETRIC_ZEROS, false, true, false, 3},
};

static ltx2_conv3d_desc desc_of(const c3_case *c) {
    return (ltx2_conv3d_desc){.c_in = c->ci, .c_out = c->co, .kt = c->kt, .kh = c->kh, .kw = c->kw,
                              .st = c->st, .sh = c->sh, .sw = c->sw, .tpad = c->tpad,
                              .spad = c->reflect ? LTX2_CONV_SPAD_REFLECT : LTX2_CONV_SPAD_ZEROS};
}

/* t_front as the kernel backends derive it (src/backend/backend_kernels.c). */
static int64_t t_front_of(const ltx2_conv3d_desc *d) {
    int64_t front, back;
    ltx2_conv3d_tpad_amounts(d, &front, &back);
    return front;
}

/* The CPU reference y (+ SiLU) for descriptor d; false when the CPU refuses. */
static bool cpu_ref(ltx2_context *ctx, const ltx2_conv3d_desc *d, const c3_case *c, const float *x,
                    const float *wp, const float *bias, float *y, int64_t ny) {
    if (ltx2_cpu_conv3d(ctx, d, x, c->n, c->t, c->h, c->w, wp, bias, y) != LTX2_OK) return false;
    return !c->silu || ltx2_cpu_silu(ctx, y, y, ny) == LTX2_OK;
}

static const char *impl_name(int impl) { return impl == LTX2_KCONV_WGMMA ? "wgmma" : "mma_sync"; }

static void run_case(ltx2_context *ctx, const c3_case *c, int idx, int impl) {
    const ltx2_conv3d_desc d = desc_of(c);
    int64_t o[3];
    if (ltx2_conv3d_out_shape(ctx, &d, c->t, c->h, c->w, o) != LTX2_OK) {
        CHECK(0, "%s: bad case: %s", c->name, ltx2_last_error(ctx));
        return;
    }
    const int64_t K = c->kt * c->kh * c->kw * c->ci;
    const int64_t nx = c->n * c->t * c->h * c->w * c->ci, nw = K * c->co, ny = c->n * o[0] * o[1] * o[2] * c->co;
    const uint64_t st = (uint64_t)idx * 4u;
    float *x = emu_normal(st, nx, 1.0f, 0.0f, true);
    float *w_torch = emu_normal(st + 1, nw, (float)(1.0 / sqrt((double)K)), 0.0f, true);
    float *bias = c->bias ? emu_normal(st + 2, c->co, BIAS_SCALE, 0.0f, true) : NULL;
    float *wp = malloc((size_t)nw * sizeof(float));
    float *ref = malloc((size_t)ny * sizeof(float)), *out = malloc((size_t)ny * sizeof(float));
    CHECK(ltx2_conv3d_pack_weight(ctx, &d, w_torch, wp) == LTX2_OK, "%s: pack", c->name);
    CHECK(cpu_ref(ctx, &d, c, x, wp, bias, ref, ny), "%s: cpu reference: %s", c->name, ltx2_last_error(ctx));

    void *dx = emu_alloc((size_t)nx * 2), *dw = emu_alloc((size_t)nw * 2), *dy = emu_alloc((size_t)ny * 2);
    void *db = c->bias ? emu_alloc((size_t)c->co * 2) : NULL;
    emu_store(dx, x, nx, true);
    emu_store(dw, wp, nw, true);
    if (db) emu_store(db, bias, c->co, true);
    const ltx2_k_conv3d_args a = {
        .x = dx, .w = dw, .bias = db, .y = dy, .n = c->n, .t = c->t, .h = c->h, .w_ = c->w, .c_in = c->ci,
        .c_out = c->co, .kt = c->kt, .kh = c->kh, .kw = c->kw, .st = c->st, .sh = c->sh, .sw = c->sw,
        .t_front = t_front_of(&d), .t_zero = ltx2_conv3d_tpad_zeros(&d), .reflect = c->reflect, .to = o[0], .ho = o[1], .wo = o[2], .silu = c->silu,
        .impl = impl,
    };
    char name[160];
    snprintf(name, sizeof name, "%s [%s]", c->name, impl_name(impl));
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_conv3d(NULL, &a);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dy, (size_t)ny * 2) == 0, "%s: wrote past the output", name);
    emu_load(out, dy, ny, true);

    const double atol = GEMM_BF16_ATOL_PER_SQRT_K * sqrt((double)K), rtol = GEMM_F32_RTOL + EPS_BF16;
    emu_report(name, emu_compare(out, ref, ny, atol, rtol, true, name, false), ms);
    if (idx == 0) emu_check_sensitive(name, out, ref, ny, atol, rtol, true, ny / 2, 0.05f);

    if (c->wrong) {
        /* the same output against the other padding mode's reference must not pass */
        ltx2_conv3d_desc dw2 = d;
        if (c->wrong == 1)
            dw2.tpad = d.tpad == LTX2_CONV_TPAD_CAUSAL ? LTX2_CONV_TPAD_SYMMETRIC : LTX2_CONV_TPAD_CAUSAL;
        if (c->wrong == 3) dw2.tpad = LTX2_CONV_TPAD_CAUSAL; /* zero frames vs replicated frame 0 */
        else dw2.spad = d.spad == LTX2_CONV_SPAD_REFLECT ? LTX2_CONV_SPAD_ZEROS : LTX2_CONV_SPAD_REFLECT;
        float *wrong = malloc((size_t)ny * sizeof(float));
        CHECK(cpu_ref(ctx, &dw2, c, x, wp, bias, wrong, ny), "%s: wrong reference", name);
        emu_stats s = emu_compare(out, wrong, ny, atol, rtol, true, name, true);
        printf("    vs the %s reference: %lld/%lld elements differ (expected: many)\n",
               c->wrong == 2 ? "other spatial padding" : "other time padding", (long long)s.n_bad, (long long)ny);
        CHECK(s.n_bad > 0, "%s: indistinguishable from the wrong padding's reference", name);
        free(wrong);
    }
    free(x), free(w_torch), free(bias), free(wp), free(ref), free(out);
    free(dx), free(dw), free(dy), free(db);
}

/* ---- refusals: arguments the launcher must reject without launching ---- */

typedef struct refusal {
    const char *why;
    ltx2_k_conv3d_args a;
} refusal;

static void check_refusals(void) {
    /* a valid base: 3x3x3 causal reflect, 8 -> 8 channels, 1 x 2 x 3 x 3 voxels (buffers sized for 16) */
    enum { C = 16, VOX = 2 * 3 * 3, K = 27 * C };
    unsigned char *dx = emu_alloc(VOX * C * 2 + 64), *dw = emu_alloc(K * C * 2 + 64), *dy = emu_alloc(VOX * C * 2 + 64);
    const ltx2_k_conv3d_args base = {
        .x = dx, .w = dw, .bias = NULL, .y = dy, .n = 1, .t = 2, .h = 3, .w_ = 3, .c_in = 8, .c_out = 8, .kt = 3,
        .kh = 3, .kw = 3, .st = 1, .sh = 1, .sw = 1, .t_front = 2, .reflect = 1, .to = 2, .ho = 3, .wo = 3, .silu = 0,
    };
    refusal r[16];
    int nr = 0;
#define REFUSE(w, field, value)             \
    do {                                    \
        r[nr].why = (w);                    \
        r[nr].a = base;                     \
        r[nr].a.field = (value);            \
        nr++;                               \
    } while (0)
    REFUSE("c_in 12 (not a multiple of 8)", c_in, 12);
    REFUSE("c_in 4 (< 8)", c_in, 4);
    REFUSE("c_out 12 (not a multiple of 8)", c_out, 12);
    REFUSE("even kh", kh, 2);
    REFUSE("reflect with kh/2 >= h", h, 1);
    REFUSE("reflect with kw/2 >= w", w_, 1);
    REFUSE("x not 16-byte aligned", x, dx + 8);
    REFUSE("w not 16-byte aligned", w, dw + 2);
    REFUSE("y not 16-byte aligned", y, dy + 4);
    REFUSE("x NULL", x, NULL);
    REFUSE("batch 0", n, 0);
    REFUSE("zero output frames", to, 0);
    REFUSE("stride 0", sh, 0);
#undef REFUSE
    unsigned char *before = malloc(VOX * C * 2 + 64);
    memcpy(before, dy, VOX * C * 2 + 64);
    for (int i = 0; i < nr; i++) {
        const int rc = ltx2_k_conv3d(NULL, &r[i].a);
        const char *f = ltx2_emu_last_fault();
        CHECK(rc == EMU_ERR_INVALID_VALUE, "refusal (%s): launcher returned %d, want %d", r[i].why, rc,
              EMU_ERR_INVALID_VALUE);
        CHECK(f == NULL, "refusal (%s): emulator fault %s", r[i].why, f ? f : "");
        if (f) ltx2_emu_reset_fault();
    }
    CHECK(memcmp(before, dy, VOX * C * 2 + 64) == 0, "a refused launch wrote the output");
    CHECK(ltx2_k_conv3d(NULL, NULL) == EMU_ERR_INVALID_VALUE, "NULL args accepted");
    printf("  %d refusals checked (c_in/c_out %% 8, even kernel, reflect pad >= size, misaligned, NULL, empty)\n",
           nr + 1);
    /* and the base itself runs */
    memset(dx, 0, VOX * C * 2), memset(dw, 0, K * C * 2);
    EMU_CHECK_LAUNCH(ltx2_k_conv3d(NULL, &base), "refusal base case");
    free(before), free(dx), free(dw), free(dy);
}

/* The backend's switch (LTX2_CONV3D_IMPL, backend_kernels.h): a bad value is refused at creation
 * with its name; both kernels' names create a backend (the emulated device is sm_90). */
static void check_impl_switch(ltx2_context *ctx) {
    ltx2_backend *be = NULL;
    setenv(LTX2_CONV3D_IMPL_ENV, "bogus", 1);
    CHECK(ltx2_backend_emu_create(ctx, &be) != LTX2_OK && strstr(ltx2_last_error(ctx), LTX2_CONV3D_IMPL_ENV),
          "%s=bogus accepted", LTX2_CONV3D_IMPL_ENV);
    ltx2_clear_error(ctx);
    if (be) be->destroy(be), be = NULL;
    /* cuDNN is the CUDA backend's: the emulator refuses it rather than silently running a kernel */
    setenv(LTX2_CONV3D_IMPL_ENV, "cudnn", 1);
    CHECK(ltx2_backend_emu_create(ctx, &be) != LTX2_OK && strstr(ltx2_last_error(ctx), "cudnn"),
          "%s=cudnn accepted by the emulator", LTX2_CONV3D_IMPL_ENV);
    ltx2_clear_error(ctx);
    if (be) be->destroy(be), be = NULL;
    static const char *const ok[] = {"auto", "mma_sync", "wgmma"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        setenv(LTX2_CONV3D_IMPL_ENV, ok[i], 1);
        CHECK(ltx2_backend_emu_create(ctx, &be) == LTX2_OK, "%s=%s refused: %s", LTX2_CONV3D_IMPL_ENV, ok[i],
              ltx2_last_error(ctx));
        if (be) be->destroy(be), be = NULL;
    }
    unsetenv(LTX2_CONV3D_IMPL_ENV);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    const double t0 = emu_now_ms();
    const int n_cases = (int)(sizeof(cases) / sizeof(cases[0]));
    printf("conv3d (bf16, emulated) vs ltx2_cpu_conv3d:\n");
    /* every case on both kernels: the mma.sync one (AUTO's pick) and the sm_90a wgmma one */
    static const int impls[] = {LTX2_KCONV_MMA_SYNC, LTX2_KCONV_WGMMA};
    for (size_t k = 0; k < sizeof(impls) / sizeof(impls[0]); k++)
        for (int i = 0; i < n_cases; i++) run_case(ctx, &cases[i], i, impls[k]);
    check_refusals();
    check_impl_switch(ctx);
    printf("total %.1f s\n", (emu_now_ms() - t0) / 1e3);
    ltx2_context_free(ctx);
    return test_finish();
}
