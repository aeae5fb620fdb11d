/* The rms_norm_rope op (each head of x [B, S, heads * d] RMSNorm'd, then split-RoPE'd;
 * kernels/norm_rope.cu) on the CPU emulator of the CUDA kernels: bit for bit the two ops it
 * replaces run one by one on the same emulated device (rms_norm over the [B * S * heads, d] rows,
 * then rope), in f32 and bf16, warp-per-row and block-per-row, 16-byte vectors and scalars, with
 * and without weights, tables shared by every row and head or per row and head, in place (as the
 * Gemma forward runs it) and not; a head wider than the kernel stages runs the two kernels; and
 * within the op harness's tolerance of the CPU reference. A kernel that rotates the unrounded
 * normalised values is caught in bf16. */
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

#define SEED 0x0dd5eedULL
/* Device vs the f32 CPU reference: bf16 storage rounds the normalised value and the rotated one
 * (2^-8 relative each); f32 differs by the summation order of the sum of squares. */
#define BF16_RTOL 0.0078125
#define BF16_ATOL 0.02
#define F32_RTOL 1e-5
#define F32_ATOL 1e-5

typedef struct nr_case {
    const char *name;
    bool bf16;
    int64_t B, S, heads, d;
    bool weights, shared_tables, in_place;
} nr_case;

static const nr_case k_cases[] = {
    {"bf16 2x5x4 d256 warp vec, one table, in place (Gemma-3)", true, 2, 5, 4, 256, true, true, true},
    {"f32 1x3x2 d64 warp vec, tables per row and head", false, 1, 3, 2, 64, true, false, false},
    {"bf16 2x3x3 d6 warp scalar, no weights, one table", true, 2, 3, 3, 6, false, true, false},
    {"bf16 1x2x2 d2048 block vec, tables per row and head, in place", true, 1, 2, 2, 2048, true, false, true},
    {"f32 1x2x1 d8200 (wider than staged: the two kernels)", false, 1, 2, 1, 8200, true, true, false},
};

static ltx2_context *g_ctx;

/* The case on be, fused or as rms_norm then rope; *y_out gets the result. */
static ltx2_status run(const ltx2_backend *be, const nr_case *c, bool fused, const float *hx, const float *hw,
                       const float *hc, const float *hs, float **y_out) {
    const ltx2_dtype dt = c->bf16 && be->device != LTX2_DEVICE_CPU ? LTX2_BF16 : LTX2_F32;
    const int64_t xs[3] = {c->B, c->S, c->heads * c->d}, rows[2] = {c->B * c->S * c->heads, c->d};
    const int64_t ts[4] = {c->shared_tables ? 1 : c->B, c->shared_tables ? 1 : c->heads, c->S, c->d / 2};
    ltx2_tensor x = bio_put(g_ctx, be, hx, dt, 3, xs), y = c->in_place ? x : bio_put(g_ctx, be, hx, dt, 3, xs);
    ltx2_tensor w = bio_put(g_ctx, be, hw, dt, 1, &c->d);
    ltx2_tensor cs = bio_put(g_ctx, be, hc, LTX2_F32, 4, ts), sn = bio_put(g_ctx, be, hs, LTX2_F32, 4, ts);
    const ltx2_tensor *pw = c->weights ? &w : NULL;
    ltx2_status st;
    if (fused) {
        st = ltx2_backend_rms_norm_rope(be, g_ctx, &x, pw, 1e-6f, c->heads, &cs, &sn, &y);
    } else {
        ltx2_tensor xr = x, yr = y;
        xr.ndim = yr.ndim = 2;
        memcpy(xr.shape, rows, sizeof rows), memcpy(yr.shape, rows, sizeof rows);
        xr.strides[0] = yr.strides[0] = c->d, xr.strides[1] = yr.strides[1] = 1;
        st = ltx2_backend_rms_norm(be, g_ctx, &xr, pw, 1e-6f, &yr);
        if (st == LTX2_OK) st = ltx2_backend_rope(be, g_ctx, &y, LTX2_ROPE_SPLIT, c->heads, &cs, &sn, &y);
    }
    *y_out = st == LTX2_OK ? bio_get(g_ctx, be, &y) : NULL;
    be->free(be, x.data), be->free(be, w.data), be->free(be, cs.data), be->free(be, sn.data);
    if (!c->in_place) be->free(be, y.data);
    return st;
}

static void check_case(const ltx2_backend *emu, int ci) {
    const nr_case *c = &k_cases[ci];
    const int64_t n = c->B * c->S * c->heads * c->d;
    const int64_t nt = (c->shared_tables ? 1 : c->B * c->heads) * c->S * (c->d / 2);
    float *hx = bio_gen(SEED, 4 * (uint64_t)ci, n, 2.0f, 0.3f, c->bf16);
    float *hw = bio_gen(SEED, 4 * (uint64_t)ci + 1, c->d, 0.2f, 1.0f, c->bf16);
    float *ang = bio_gen(SEED, 4 * (uint64_t)ci + 2, nt, 3.0f, 0.0f, false);
    float *hc = malloc((size_t)nt * sizeof(float)), *hs = malloc((size_t)nt * sizeof(float));
    for (int64_t i = 0; i < nt; i++) hc[i] = cosf(ang[i]), hs[i] = sinf(ang[i]);
    float *fy = NULL, *uy = NULL, *cy = NULL;
    ltx2_status st = run(emu, c, true, hx, hw, hc, hs, &fy);
    CHECK(st == LTX2_OK, "%s: fused on emu: %s", c->name, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) st = run(emu, c, false, hx, hw, hc, hs, &uy);
    CHECK(st == LTX2_OK, "%s: two ops on emu: %s", c->name, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) st = run(ltx2_backend_cpu(), c, true, hx, hw, hc, hs, &cy);
    CHECK(st == LTX2_OK, "%s: cpu: %s", c->name, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        CHECK(!memcmp(fy, uy, (size_t)n * sizeof(float)), "%s: the fused kernel is not the two ops' bits", c->name);
        double e = 0;
        const int64_t bad = bio_n_far(fy, cy, n, c->bf16 ? BF16_ATOL : F32_ATOL, c->bf16 ? BF16_RTOL : F32_RTOL, &e);
        CHECK(bad == 0, "%s: %lld values beyond the CPU's tolerance (max err %.3g)", c->name, (long long)bad, e);
        printf("  %-60s bitwise the two ops; vs cpu max err %.3g\n", c->name, e);
    }
    free(hx), free(hw), free(ang), free(hc), free(hs), free(fy), free(uy), free(cy);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    ltx2_backend *emu = NULL;
    if (ltx2_backend_emu_create(g_ctx, &emu) != LTX2_OK) {
        ltx2_context_free(g_ctx);
        return test_skip("no emulated device");
    }
    printf("rms_norm_rope (emulated kernel) vs rms_norm + rope on emu and vs the CPU:\n");
    for (int ci = 0; ci < (int)(sizeof k_cases / sizeof k_cases[0]); ci++) check_case(emu, ci);
    ltx2_backend_free(emu);
    ltx2_context_free(g_ctx);
    return test_finish();
}
