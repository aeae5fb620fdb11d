/* The add_rms_norm op (x += RMSNorm(y) * wy, out = RMSNorm(x) * w; kernels/norm.cu) on the CPU
 * emulator of the CUDA kernels: bit for bit the three ops it replaces run one by one on the same
 * emulated device (rms_norm of y, gated_add with no gate, rms_norm of x), for x and for out, in f32
 * and bf16, warp-per-row and block-per-row, 16-byte vectors and scalars, with and without weights;
 * and within the op harness's tolerance of the CPU reference. The bitwise comparison can fail: a
 * kernel that skips the rounding of RMSNorm(y) * wy before the add is caught in bf16. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "backend_emu.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "backend_io.h"
#include "test_util.h"

#define SEED 0xadd5eedULL
/* Device vs the f32 CPU reference: bf16 storage (one rounding of each stored value, 2^-8 relative,
 * twice over: the sum then the norm), f32 a different summation order. */
#define BF16_RTOL 0.0078125
#define BF16_ATOL 0.02
#define F32_RTOL 1e-5
#define F32_ATOL 1e-5

typedef struct add_case {
    const char *name;
    bool bf16;
    int64_t rows, dim;
    bool weights;
} add_case;

static const add_case k_cases[] = {
    {"f32 5x64 warp vec, weights", false, 5, 64, true},
    {"bf16 7x30 warp scalar, weights", true, 7, 30, true},
    {"bf16 4x3840 block vec, weights (Gemma-3 12B's rows)", true, 4, 3840, true},
    {"f32 3x1027 block scalar, no weights", false, 3, 1027, false},
    {"bf16 9x256 warp vec, no weights", true, 9, 256, false},
};

static ltx2_context *g_ctx;

static float *gen(uint64_t stream, int64_t n, float scale, float offset, bool bf16) {
    return bio_gen(SEED, stream, n, scale, offset, bf16);
}

/* tests/backend_io.h's, on this test's context. */
static ltx2_tensor put(const ltx2_backend *be, const float *h, ltx2_dtype dt, int ndim, const int64_t *shape) {
    return bio_put(g_ctx, be, h, dt, ndim, shape);
}

static float *get(const ltx2_backend *be, const ltx2_tensor *t) { return bio_get(g_ctx, be, t); }

/* Runs the case on be, fused or as three ops; x_out and o_out get x after and out. */
static ltx2_status run(const ltx2_backend *be, const add_case *c, bool fused, const float *hx, const float *hy,
                       const float *hwy, const float *hw, float **x_out, float **o_out) {
    /* the CPU reference is f32 (on the inputs' bf16 values) */
    const ltx2_dtype dt = c->bf16 && be->device != LTX2_DEVICE_CPU ? LTX2_BF16 : LTX2_F32;
    const int64_t s[2] = {c->rows, c->dim};
    ltx2_tensor x = put(be, hx, dt, 2, s), y = put(be, hy, dt, 2, s), o = put(be, hx, dt, 2, s);
    ltx2_tensor t = put(be, hy, dt, 2, s), wy = put(be, hwy, dt, 1, &c->dim), w = put(be, hw, dt, 1, &c->dim);
    const ltx2_tensor *pwy = c->weights ? &wy : NULL, *pw = c->weights ? &w : NULL;
    ltx2_status st;
    if (fused) {
        st = ltx2_backend_add_rms_norm(be, g_ctx, &x, &y, pwy, pw, 1e-6f, &o);
    } else {
        st = ltx2_backend_rms_norm(be, g_ctx, &y, pwy, 1e-6f, &t);
        if (st == LTX2_OK) st = ltx2_backend_gated_add(be, g_ctx, &x, &t, NULL, NULL);
        if (st == LTX2_OK) st = ltx2_backend_rms_norm(be, g_ctx, &x, pw, 1e-6f, &o);
    }
    *x_out = st == LTX2_OK ? get(be, &x) : NULL;
    *o_out = st == LTX2_OK ? get(be, &o) : NULL;
    be->free(be, x.data), be->free(be, y.data), be->free(be, o.data), be->free(be, t.data);
    be->free(be, wy.data), be->free(be, w.data);
    return st;
}

static void check_case(const ltx2_backend *emu, int ci) {
    const add_case *c = &k_cases[ci];
    const int64_t n = c->rows * c->dim;
    float *hx = gen(4 * (uint64_t)ci, n, 2.0f, 0.5f, c->bf16), *hy = gen(4 * (uint64_t)ci + 1, n, 1.0f, 0.0f, c->bf16);
    float *hwy = gen(4 * (uint64_t)ci + 2, c->dim, 0.2f, 1.0f, c->bf16);
    float *hw = gen(4 * (uint64_t)ci + 3, c->dim, 0.2f, 1.0f, c->bf16);
    float *fx = NULL, *fo = NULL, *ux = NULL, *uo = NULL, *cx = NULL, *co = NULL;
    ltx2_status st = run(emu, c, true, hx, hy, hwy, hw, &fx, &fo);
    CHECK(st == LTX2_OK, "%s: fused on emu: %s", c->name, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) st = run(emu, c, false, hx, hy, hwy, hw, &ux, &uo);
    CHECK(st == LTX2_OK, "%s: three ops on emu: %s", c->name, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) st = run(ltx2_backend_cpu(), c, true, hx, hy, hwy, hw, &cx, &co);
    CHECK(st == LTX2_OK, "%s: cpu: %s", c->name, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        CHECK(!memcmp(fx, ux, (size_t)n * sizeof(float)) && !memcmp(fo, uo, (size_t)n * sizeof(float)),
              "%s: the fused kernel is not the three ops' bits (x %s, out %s)", c->name,
              memcmp(fx, ux, (size_t)n * sizeof(float)) ? "differs" : "same",
              memcmp(fo, uo, (size_t)n * sizeof(float)) ? "differs" : "same");
        double ex = 0, eo = 0;
        const double atol = c->bf16 ? BF16_ATOL : F32_ATOL, rtol = c->bf16 ? BF16_RTOL : F32_RTOL;
        const int64_t bx = bio_n_far(fx, cx, n, atol, rtol, &ex), bo = bio_n_far(fo, co, n, atol, rtol, &eo);
        CHECK(bx == 0 && bo == 0, "%s: %lld x and %lld out values beyond the CPU's tolerance (max err %.3g, %.3g)",
              c->name, (long long)bx, (long long)bo, ex, eo);
        printf("  %-52s bitwise the three ops; vs cpu max err x %.3g, out %.3g\n", c->name, ex, eo);
    }
    free(hx), free(hy), free(hwy), free(hw), free(fx), free(fo), free(ux), free(uo), free(cx), free(co);
}

/* out aliasing x is refused before anything runs, on both backends. */
static void check_alias(const ltx2_backend *emu) {
    const ltx2_backend *bes[2] = {ltx2_backend_cpu(), emu};
    const int64_t s[2] = {2, 8};
    float h[16];
    for (int i = 0; i < 16; i++) h[i] = (float)i;
    for (int b = 0; b < 2; b++) {
        ltx2_tensor x = put(bes[b], h, LTX2_F32, 2, s), y = put(bes[b], h, LTX2_F32, 2, s);
        const ltx2_status st = ltx2_backend_add_rms_norm(bes[b], g_ctx, &x, &y, NULL, NULL, 1e-6f, &x);
        CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(g_ctx), "aliases x"),
              "%s add_rms_norm with out == x: status %d '%s'", bes[b]->name, (int)st, ltx2_last_error(g_ctx));
        ltx2_clear_error(g_ctx);
        bes[b]->free(bes[b], x.data), bes[b]->free(bes[b], y.data);
    }
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    ltx2_backend *emu = NULL;
    if (ltx2_backend_emu_create(g_ctx, &emu) != LTX2_OK) {
        ltx2_context_free(g_ctx);
        return test_skip("no emulated device");
    }
    printf("add_rms_norm (emulated kernel) vs its three ops on emu and vs the CPU:\n");
    for (int ci = 0; ci < (int)(sizeof k_cases / sizeof k_cases[0]); ci++) check_case(emu, ci);
    check_alias(emu);
    ltx2_backend_free(emu);
    ltx2_context_free(g_ctx);
    return test_finish();
}
