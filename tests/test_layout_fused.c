/* Checks the fused DiT kernels' index arithmetic (kernels/fused_layout.h) against the CPU
 * backend's fused ops (src/backend/backend_cpu_fused.c), exactly, for every element, by feeding
 * the CPU ops inputs that make each output name the table element it used:
 *   gated_add with x = 0, y = 1, gate[k] = k       -> x[e] = gate offset of e;
 *   norm_modulate (no norm), x = 0, shift[k] = k   -> y[e] = shift offset of e;
 *   norm_modulate (no norm), x = 1, scale[k] = k   -> y[e] - 1 = scale offset of e;
 *   head_gate with o = 1 and distinct logits       -> o[e] = 2*sigmoid(logit of e), matched
 *     against the same op run one logit per row (heads = 1, head_dim = 1: no mapping to get wrong).
 * Also checks what the 16-byte paths assume: a V-element chunk (dim % V == 0) uses V consecutive
 * table elements, and one logit when head_dim % V == 0. Runs without a GPU. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "fused_layout.h"
#include "test_util.h"

/* Vector widths of the kernels' 16-byte paths: 4 f32, 8 bf16. */
static const int VEC_WIDTHS[2] = {4, 8};

typedef struct mod_case {
    int64_t rows, dim, U, ld; /* tokens [rows, dim]; table [U, dim] with rows ld apart */
    int64_t rows_per_group;   /* used when per_token is 0 */
    int per_token;            /* 1: a row_idx table (pseudo-random rows, repeats included) */
} mod_case;

static float *filled(int64_t n, float v) {
    float *p = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) p[i] = v;
    return p;
}

static float *iota(int64_t n) {
    float *p = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) p[i] = (float)i;
    return p;
}

/* A [U, dim] row view over buf with rows ld elements apart. */
static ltx2_tensor table_view(float *buf, int64_t U, int64_t dim, int64_t ld) {
    int64_t s[2] = {U, dim};
    ltx2_tensor t = ltx2_tensor_make(buf, LTX2_F32, 2, s);
    t.strides[0] = ld;
    t.strides[1] = 1;
    return t;
}

/* Counts elements whose CPU-derived offset got[e] differs from the layout's, and checks the
 * vector-path assumption on got. */
static void compare_offsets(const char *what, const mod_case *k, const int32_t *ridx, const float *got,
                            float bias) {
    const int64_t n = k->rows * k->dim;
    const int64_t rpg = k->per_token ? 0 : k->rows_per_group;
    int64_t bad = 0, first = -1;
    for (int64_t e = 0; e < n; e++) {
        const int64_t want = ltx2_fused_mod_off_flat(ridx, rpg, k->ld, k->dim, e);
        const int64_t r = e / k->dim, c = e % k->dim;
        const bool same = (int64_t)(got[e] - bias) == want && ltx2_fused_mod_off(ridx, rpg, k->ld, r, c) == want;
        if (!same) {
            if (first < 0) first = e;
            bad++;
        }
    }
    CHECK(bad == 0, "%s rows=%lld dim=%lld ld=%lld %s: %lld of %lld differ (first e=%lld: cpu %lld, layout %lld)",
          what, (long long)k->rows, (long long)k->dim, (long long)k->ld, k->per_token ? "per-token" : "per-group",
          (long long)bad, (long long)n, (long long)first, first < 0 ? -1LL : (long long)(got[first] - bias),
          first < 0 ? -1LL : (long long)ltx2_fused_mod_off_flat(ridx, rpg, k->ld, k->dim, first));
    for (int v = 0; v < 2; v++) {
        const int V = VEC_WIDTHS[v];
        if (k->dim % V) continue;
        int64_t broken = 0;
        for (int64_t e = 0; e < n; e += V)
            for (int j = 1; j < V; j++)
                if ((int64_t)(got[e + j] - bias) != (int64_t)(got[e] - bias) + j) broken++;
        CHECK(broken == 0, "%s: %lld V=%d chunks do not read consecutive table elements", what, (long long)broken, V);
    }
}

static void run_mod_case(ltx2_context *ctx, const mod_case *k) {
    const ltx2_backend *cpu = ltx2_backend_cpu();
    const int64_t n = k->rows * k->dim, ntab = k->U * k->ld;
    const int64_t xs[2] = {k->rows, k->dim};
    int32_t *ridx = NULL;
    ltx2_tensor ridx_t;
    ltx2_mod_rows m = {.row_idx = NULL, .rows_per_group = k->rows_per_group};
    if (k->per_token) {
        ridx = malloc((size_t)k->rows * sizeof(int32_t));
        for (int64_t r = 0; r < k->rows; r++) ridx[r] = (int32_t)((r * 7 + 3) % k->U); /* repeats, not monotone */
        ridx_t = ltx2_tensor_make(ridx, LTX2_I32, 1, &k->rows);
        m.row_idx = &ridx_t;
        m.rows_per_group = 0;
    }
    float *tab = iota(ntab), *zero_tab = filled(ntab, 0.0f);
    float *x = filled(n, 0.0f), *y = filled(n, 1.0f);
    ltx2_tensor xt = ltx2_tensor_make(x, LTX2_F32, 2, xs), yt = ltx2_tensor_make(y, LTX2_F32, 2, xs);
    ltx2_tensor gate = table_view(tab, k->U, k->dim, k->ld), zero = table_view(zero_tab, k->U, k->dim, k->ld);

    /* gated add: x = 0 + 1 * gate[off] */
    CHECK(ltx2_backend_gated_add(cpu, ctx, &xt, &yt, &gate, &m) == LTX2_OK, "gated_add: %s", ltx2_last_error(ctx));
    compare_offsets("gated_add gate", k, ridx, x, 0.0f);

    /* modulate without norm: y = 0 * (1 + 0) + shift[off] */
    for (int64_t i = 0; i < n; i++) x[i] = 0.0f;
    CHECK(ltx2_backend_norm_modulate(cpu, ctx, &xt, LTX2_NORM_NONE, 0.0f, &zero, &gate, &m, &yt) == LTX2_OK,
          "norm_modulate shift: %s", ltx2_last_error(ctx));
    compare_offsets("norm_modulate shift", k, ridx, y, 0.0f);

    /* modulate without norm: y = 1 * (1 + scale[off]) + 0 */
    for (int64_t i = 0; i < n; i++) x[i] = 1.0f;
    CHECK(ltx2_backend_norm_modulate(cpu, ctx, &xt, LTX2_NORM_NONE, 0.0f, &gate, &zero, &m, &yt) == LTX2_OK,
          "norm_modulate scale: %s", ltx2_last_error(ctx));
    compare_offsets("norm_modulate scale", k, ridx, y, 1.0f);

    free(ridx);
    free(tab);
    free(zero_tab);
    free(x);
    free(y);
}

static void run_head_gate_case(ltx2_context *ctx, int64_t rows, int64_t heads, int64_t head_dim) {
    const ltx2_backend *cpu = ltx2_backend_cpu();
    const int64_t inner = heads * head_dim, n = rows * inner, nl = rows * heads;
    float *o = filled(n, 1.0f), *g = filled(nl, 1.0f), *lg = malloc((size_t)nl * sizeof(float));
    /* distinct logits near 0, where 2*sigmoid is steep enough to keep them distinct in f32 */
    for (int64_t k = 0; k < nl; k++) lg[k] = 0.01f * (float)(k - nl / 2);
    const int64_t os[2] = {rows, inner}, ls[2] = {rows, heads}, flat[2] = {nl, 1};
    ltx2_tensor ot = ltx2_tensor_make(o, LTX2_F32, 2, os), lt = ltx2_tensor_make(lg, LTX2_F32, 2, ls);
    ltx2_tensor gt = ltx2_tensor_make(g, LTX2_F32, 2, flat), lflat = ltx2_tensor_make(lg, LTX2_F32, 2, flat);
    CHECK(ltx2_backend_head_gate(cpu, ctx, &ot, &lt, heads) == LTX2_OK, "head_gate: %s", ltx2_last_error(ctx));
    CHECK(ltx2_backend_head_gate(cpu, ctx, &gt, &lflat, 1) == LTX2_OK, "head_gate flat: %s", ltx2_last_error(ctx));
    int64_t bad = 0, first = -1;
    for (int64_t e = 0; e < n; e++)
        if (memcmp(&o[e], &g[ltx2_fused_head_logit(heads, head_dim, e)], sizeof(float)) != 0) {
            if (first < 0) first = e;
            bad++;
        }
    CHECK(bad == 0, "head_gate rows=%lld heads=%lld d=%lld: %lld of %lld differ (first e=%lld -> logit %lld)",
          (long long)rows, (long long)heads, (long long)head_dim, (long long)bad, (long long)n, (long long)first,
          first < 0 ? -1LL : (long long)ltx2_fused_head_logit(heads, head_dim, first));
    for (int v = 0; v < 2; v++) {
        const int V = VEC_WIDTHS[v];
        if (head_dim % V) continue;
        int64_t broken = 0;
        for (int64_t e = 0; e < n; e += V)
            for (int j = 1; j < V; j++)
                if (memcmp(&o[e + j], &o[e], sizeof(float)) != 0) broken++;
        CHECK(broken == 0, "head_gate: %lld V=%d chunks span two gates", (long long)broken, V);
    }
    free(o);
    free(g);
    free(lg);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    /* per-sample groups (B samples of S tokens, the last group short), per-token rows, tables
     * whose rows are further apart than dim (one [U, k*dim] AdaLN table serving k rows), odd dims
     * (scalar path) and dims that are multiples of both vector widths */
    static const mod_case cases[] = {
        {12, 16, 3, 16 * 6, 4, 0}, {10, 24, 4, 24 * 9, 3, 0}, {7, 5, 7, 11, 1, 0},
        {13, 16, 5, 40, 0, 1},     {9, 7, 4, 9, 0, 1},        {6, 32, 2, 32, 3, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) run_mod_case(ctx, &cases[i]);
    run_head_gate_case(ctx, 5, 4, 8);
    run_head_gate_case(ctx, 3, 3, 5);
    run_head_gate_case(ctx, 2, 2, 16);
    run_head_gate_case(ctx, 4, 1, 12);
    ltx2_context_free(ctx);
    return test_finish();
}
