/* Checks the DepthToSpaceUpsample and SpaceToDepthDownsample kernels' index arithmetic
 * (kernels/vae_ops_layout.h) against the CPU references (src/cpu/depth_to_space.c,
 * space_to_depth.c via the CPU backend), exactly, for every output element: x is filled with its
 * own element index, so the CPU's y[i] names the x element it copied; then x is zero and the
 * residual holds its indices, so y[i] names the residual element it added (space_to_depth: the
 * fp32 mean of the g elements it averaged, exact sums of integers below 2^24). The kernel's
 * ltx2_d2s_src / ltx2_s2d_src must name the same elements. Runs without a GPU. */
#include <stdint.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "test_util.h"
#include "vae_ops_layout.h"

/* Indices are stored as f32: exact while below 2^24, which every case here stays under. */
#define EXACT_F32_INDEX_LIMIT (1 << 24)

typedef struct d2s_case {
    int64_t n, t, h, w, c, s[3];
    int drop;
    int64_t rc; /* residual channels before the factor product; 0 = none */
} d2s_case;

static float *iota_or_zero(int64_t n, int iota) {
    float *p = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) p[i] = iota ? (float)i : 0.0f;
    return p;
}

static void run_case(ltx2_context *ctx, const d2s_case *k) {
    const ltx2_backend *cpu = ltx2_backend_cpu();
    const int64_t prod = k->s[0] * k->s[1] * k->s[2];
    const ltx2_d2s_geom g = ltx2_d2s_geom_make(k->t, k->h, k->w, k->c, k->s[0], k->s[1], k->s[2], k->drop, k->rc);
    const int64_t xs[5] = {k->n, k->t, k->h, k->w, k->c * prod};
    const int64_t rs[5] = {k->n, k->t, k->h, k->w, k->rc * prod};
    const int64_t ys[5] = {k->n, k->t * k->s[0] - (k->drop ? 1 : 0), k->h * k->s[1], k->w * k->s[2], k->c};
    const int64_t nx = xs[0] * xs[1] * xs[2] * xs[3] * xs[4], nr = rs[0] * rs[1] * rs[2] * rs[3] * rs[4];
    const int64_t ny = ys[0] * ys[1] * ys[2] * ys[3] * ys[4];
    CHECK(nx < EXACT_F32_INDEX_LIMIT && nr < EXACT_F32_INDEX_LIMIT, "case too big for exact f32 indices");
    CHECK(g.T == ys[1] && g.H == ys[2] && g.W == ys[3], "geometry T/H/W %lld/%lld/%lld vs %lld/%lld/%lld",
          (long long)g.T, (long long)g.H, (long long)g.W, (long long)ys[1], (long long)ys[2], (long long)ys[3]);
    CHECK(ltx2_d2s_total(g, k->n) == ny, "total %lld vs %lld", (long long)ltx2_d2s_total(g, k->n), (long long)ny);

    ltx2_d2s_args a = {.stride = {k->s[0], k->s[1], k->s[2]}, .drop_first = k->drop != 0};
    float *xd = iota_or_zero(nx, 1), *yd = iota_or_zero(ny, 0);
    ltx2_tensor x = ltx2_tensor_make(xd, LTX2_F32, 5, xs), y = ltx2_tensor_make(yd, LTX2_F32, 5, ys);
    ltx2_status st = ltx2_backend_depth_to_space(cpu, ctx, &x, &a, NULL, &y);
    CHECK(st == LTX2_OK, "cpu depth_to_space: %s", ltx2_last_error(ctx));
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < ny; i++) {
        int64_t xo = -1, ro = -1;
        ltx2_d2s_src(g, i, &xo, &ro);
        if ((int64_t)yd[i] != xo) {
            if (first < 0) first = i;
            bad++;
        }
    }
    CHECK(bad == 0, "x source: %lld of %lld outputs differ (first y[%lld]: cpu x[%lld])", (long long)bad,
          (long long)ny, (long long)first, first < 0 ? -1LL : (long long)yd[first]);

    if (k->rc > 0) {
        float *rd = iota_or_zero(nr, 1);
        for (int64_t i = 0; i < nx; i++) xd[i] = 0.0f;
        ltx2_tensor r = ltx2_tensor_make(rd, LTX2_F32, 5, rs);
        st = ltx2_backend_depth_to_space(cpu, ctx, &x, &a, &r, &y);
        CHECK(st == LTX2_OK, "cpu depth_to_space + residual: %s", ltx2_last_error(ctx));
        bad = 0, first = -1;
        for (int64_t i = 0; i < ny; i++) {
            int64_t xo = -1, ro = -1;
            ltx2_d2s_src(g, i, &xo, &ro);
            if ((int64_t)yd[i] != ro) {
                if (first < 0) first = i;
                bad++;
            }
        }
        CHECK(bad == 0, "residual source: %lld of %lld outputs differ (first y[%lld]: cpu res[%lld])",
              (long long)bad, (long long)ny, (long long)first, first < 0 ? -1LL : (long long)yd[first]);
        free(rd);
    }
    free(xd);
    free(yd);
}

typedef struct s2d_case {
    int64_t n, t, h, w, c, s[3];
    int64_t rc; /* residual channels; 0 = none */
} s2d_case;

/* Outputs whose CPU value differs from `want(i)`, reporting the first. */
static void s2d_compare(const char *what, const float *yd, int64_t ny, ltx2_s2d_geom g, bool residual) {
    int64_t bad = 0, first = -1;
    float first_want = 0.0f;
    for (int64_t i = 0; i < ny; i++) {
        int64_t bn, t2, h2, w2, k;
        ltx2_s2d_split(g, i, &bn, &t2, &h2, &w2, &k);
        float want;
        if (!residual) {
            want = (float)ltx2_s2d_src(g, g.c, bn, t2, h2, w2, k);
        } else {
            float sum = 0.0f;
            for (int64_t q = k * g.g; q < (k + 1) * g.g; q++) sum += (float)ltx2_s2d_src(g, g.rc, bn, t2, h2, w2, q);
            want = sum / (float)g.g;
        }
        if (yd[i] != want) {
            if (first < 0) first = i, first_want = want;
            bad++;
        }
    }
    CHECK(bad == 0, "space_to_depth %s: %lld of %lld outputs differ (first y[%lld]: cpu %.1f, layout %.1f)", what,
          (long long)bad, (long long)ny, (long long)first, first < 0 ? 0.0 : (double)yd[first], (double)first_want);
}

static void run_s2d_case(ltx2_context *ctx, const s2d_case *k) {
    const ltx2_backend *cpu = ltx2_backend_cpu();
    const int64_t prod = k->s[0] * k->s[1] * k->s[2];
    const ltx2_s2d_geom g = ltx2_s2d_geom_make(k->t, k->h, k->w, k->c, k->s[0], k->s[1], k->s[2], k->rc);
    const int64_t xs[5] = {k->n, k->t, k->h, k->w, k->c};
    const int64_t rs[5] = {k->n, k->t, k->h, k->w, k->rc};
    const int64_t ys[5] = {k->n, k->t / k->s[0], k->h / k->s[1], k->w / k->s[2], k->c * prod};
    const int64_t nx = k->n * k->t * k->h * k->w * k->c, nr = k->n * k->t * k->h * k->w * k->rc;
    const int64_t ny = nx;
    CHECK(nx < EXACT_F32_INDEX_LIMIT && nr * 8 < EXACT_F32_INDEX_LIMIT, "case too big for exact f32 indices");
    CHECK(g.T == ys[1] && g.H == ys[2] && g.W == ys[3] && g.C == ys[4], "geometry T/H/W/C %lld/%lld/%lld/%lld",
          (long long)g.T, (long long)g.H, (long long)g.W, (long long)g.C);
    CHECK(ltx2_s2d_total(g, k->n) == ny, "total %lld vs %lld", (long long)ltx2_s2d_total(g, k->n), (long long)ny);

    const ltx2_s2d_args a = {.stride = {k->s[0], k->s[1], k->s[2]}};
    float *xd = iota_or_zero(nx, 1), *yd = iota_or_zero(ny, 0);
    ltx2_tensor x = ltx2_tensor_make(xd, LTX2_F32, 5, xs), y = ltx2_tensor_make(yd, LTX2_F32, 5, ys);
    ltx2_status st = ltx2_backend_space_to_depth(cpu, ctx, &x, &a, NULL, &y);
    CHECK(st == LTX2_OK, "cpu space_to_depth: %s", ltx2_last_error(ctx));
    s2d_compare("x source", yd, ny, g, false);
    if (k->rc > 0) {
        float *rd = iota_or_zero(nr, 1);
        for (int64_t i = 0; i < nx; i++) xd[i] = 0.0f;
        ltx2_tensor r = ltx2_tensor_make(rd, LTX2_F32, 5, rs);
        st = ltx2_backend_space_to_depth(cpu, ctx, &x, &a, &r, &y);
        CHECK(st == LTX2_OK, "cpu space_to_depth + residual: %s", ltx2_last_error(ctx));
        s2d_compare("residual mean", yd, ny, g, true);
        free(rd);
    }
    free(xd);
    free(yd);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    /* The VAE's factors (2,2,2) with the first-frame drop, (1,2,2), (2,1,1); residuals narrower
     * than, and as wide as, the output; batch 2; odd sizes; a factor of 3 and a drop that leaves
     * one frame, so no term of the mapping can hide behind a factor of 1 or 2. */
    static const d2s_case cases[] = {
        {1, 3, 4, 5, 4, {2, 2, 2}, 1, 2},  {2, 2, 3, 3, 3, {1, 2, 2}, 0, 0}, {1, 2, 2, 3, 16, {2, 1, 1}, 1, 16},
        {2, 2, 3, 2, 6, {2, 2, 2}, 0, 3},  {1, 1, 2, 3, 5, {2, 3, 1}, 1, 1}, {2, 2, 2, 3, 4, {3, 2, 3}, 1, 2},
        {1, 2, 3, 2, 2, {1, 1, 1}, 0, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) run_case(ctx, &cases[i]);
    /* The encoder's (2,2,2) with g = 4 and 8, (1,2,2), (2,1,1) with g = 1 and 2; batch 2; a factor
     * of 3. */
    static const s2d_case s2d[] = {
        {1, 4, 4, 6, 2, {2, 2, 2}, 8}, {2, 2, 4, 4, 2, {2, 2, 2}, 16}, {2, 3, 4, 6, 3, {1, 2, 2}, 0},
        {1, 4, 3, 3, 5, {2, 1, 1}, 5}, {2, 6, 2, 3, 4, {2, 1, 1}, 8},  {1, 3, 6, 3, 2, {3, 2, 1}, 6},
    };
    for (size_t i = 0; i < sizeof(s2d) / sizeof(s2d[0]); i++) run_s2d_case(ctx, &s2d[i]);
    ltx2_context_free(ctx);
    return test_finish();
}
