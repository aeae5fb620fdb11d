/* The row kernels (kernels/norm.cu rms_norm / layer_norm / row_sumsq / rms_apply / row_stats, kernels/vae_ops.cu pixel_norm,
 * kernels/fused.cu norm_modulate, kernels/group_norm.cu) run in the CUDA emulator against the CPU reference ops on the
 * same inputs (bf16-rounded for bf16 cases): f32 and bf16; warp-per-row (dim <= 1024, several
 * rows per block, a partial last block) and block-per-row modes; the 16-byte vector path (aligned
 * dims and pointers) and the scalar path (odd dims, a misaligned pointer); in place (y == x);
 * norm_modulate with per-sample groups and per-token row_idx over strided AdaLN table rows, and its fp8
 * copies bit for bit against the fp8 quantise kernel on its stored output (with and without it).
 * Tolerances are the op harnesses' (tests/test_ops.c, tests/test_ops_fused.c); f32 cases also
 * print the largest difference in ulps (of max(|ref|, 1)). */
#define _POSIX_C_SOURCE 200809L

#include "emu_kernels.h"

#include "backend/backend.h"
#include "cpu/cpu_ops.h"
#include "emu_check.h"

/* torch RMSNorm / LayerNorm eps of the DiT, and the VAE's PixelNorm eps (ltx-core defaults). */
#define NORM_EPS 1e-6f
#define PIXEL_NORM_EPS 1e-8f
/* torch.nn.GroupNorm's default eps (the latent upsampler). */
#define GROUP_NORM_EPS 1e-5f
/* f32 ceiling on top of the harness tolerance, in ulps of max(|ref|, 1): the kernels' fp32 row
 * sums differ from the CPU's double ones by ~eps32 * sqrt(dim) relative (dim <= 2048: ~45 ulps
 * worst case, a few typical) plus rsqrtf's rounding; a wrong formula is off by far more. */
#define ROW_F32_MAX_ULP 32.0
/* AdaLN scale / shift magnitudes (the DiT's are O(0.1..1)). */
#define MOD_SCALE 0.5f
/* Token rows per modulation row in row_idx cases draw from this many table rows. */
#define ROW_IDX_TABLE_ROWS 4
/* Input scales of norm_modulate's fp8 copies: one in range, one that saturates (|y| of a few past
 * 448 * 0.004), one that lands values in e4m3's subnormals (|y| / 40 < 2^-6), so every branch of the
 * encoder is taken. */
#define MOD_FP8_SCALES {1.0f, 0.004f, 40.0f}
#define MOD_FP8_N 3

typedef enum row_op { OP_RMS, OP_LAYER, OP_PIXEL, OP_MOD, OP_SUMSQ, OP_APPLY, OP_GROUP, OP_STATS } row_op;

typedef struct row_case {
    const char *name;
    row_op op;
    bool bf;
    int64_t rows, dim;
    bool weight, bias, inplace, misalign, silu;
    float offset;
    /* norm_modulate: LTX2_KNORM_*, rows per group (0: per-token row_idx), extra columns per table row;
     * group_norm: rpg = groups, pad = samples (rows = samples x positions, dim = channels) */
    int norm;
    int64_t rpg, pad;
} row_case;

/* name, op, bf16, rows, dim, weight, bias, in place, misaligned, silu, offset, norm, rpg, pad */
static const row_case cases[] = {
    {"rms f32 19x64 warp vec +w", OP_RMS, false, 19, 64, true, false, false, false, false, 0, 0, 0, 0},
    {"rms f32 9x37 warp scalar in-place", OP_RMS, false, 9, 37, false, false, true, false, false, 0, 0, 0, 0},
    {"rms f32 5x64 warp misaligned->scalar +w", OP_RMS, false, 5, 64, true, false, false, true, false, 0, 0, 0, 0},
    {"rms f32 3x1536 block vec +w", OP_RMS, false, 3, 1536, true, false, false, false, false, 0, 0, 0, 0},
    {"rms f32 2x1027 block scalar in-place", OP_RMS, false, 2, 1027, false, false, true, false, false, 0, 0, 0, 0},
    {"rms bf16 11x96 warp vec +w", OP_RMS, true, 11, 96, true, false, false, false, false, 0, 0, 0, 0},
    {"rms bf16 7x30 warp scalar in-place", OP_RMS, true, 7, 30, false, false, true, false, false, 0, 0, 0, 0},
    {"rms bf16 2x2048 block vec +w in-place", OP_RMS, true, 2, 2048, true, false, true, false, false, 0, 0, 0, 0},
    {"rms bf16 2x1100 block scalar", OP_RMS, true, 2, 1100, false, false, false, false, false, 0, 0, 0, 0},
    {"layer f32 19x64 warp vec +w+b offset", OP_LAYER, false, 19, 64, true, true, false, false, false, 3, 0, 0, 0},
    {"layer f32 9x37 warp scalar +w in-place", OP_LAYER, false, 9, 37, true, false, true, false, false, 0, 0, 0, 0},
    {"layer f32 3x1536 block vec +w+b offset", OP_LAYER, false, 3, 1536, true, true, false, false, false, 3, 0, 0,
     0},
    {"layer f32 2x1027 block scalar in-place", OP_LAYER, false, 2, 1027, false, false, true, false, false, 0, 0, 0,
     0},
    {"layer bf16 11x96 warp vec +w+b", OP_LAYER, true, 11, 96, true, true, false, false, false, 0, 0, 0, 0},
    {"layer bf16 5x45 warp scalar in-place", OP_LAYER, true, 5, 45, false, false, true, false, false, 0, 0, 0, 0},
    {"layer bf16 2x1040 block misaligned->scalar +b", OP_LAYER, true, 2, 1040, false, true, false, true, false, 0, 0,
     0, 0},
    {"row_sumsq f32 19x64 warp vec", OP_SUMSQ, false, 19, 64, false, false, false, false, false, 0, 0, 0, 0},
    {"row_sumsq bf16 7x30 warp scalar", OP_SUMSQ, true, 7, 30, false, false, false, false, false, 0, 0, 0, 0},
    {"row_sumsq bf16 2x2048 block vec", OP_SUMSQ, true, 2, 2048, false, false, false, false, false, 0, 0, 0, 0},
    {"row_stats f32 19x64 warp vec offset", OP_STATS, false, 19, 64, false, false, false, false, false, 3, 0, 0, 0},
    {"row_stats bf16 7x30 warp scalar", OP_STATS, true, 7, 30, false, false, false, false, false, 0, 0, 0, 0},
    {"row_stats f32 3x1027 block scalar", OP_STATS, false, 3, 1027, false, false, false, false, false, 0, 0, 0, 0},
    {"row_stats bf16 2x2048 block vec offset", OP_STATS, true, 2, 2048, false, false, false, false, false, 3, 0, 0,
     0},
    {"rms_apply f32 9x37 warp scalar +w in-place", OP_APPLY, false, 9, 37, true, false, true, false, false, 0, 0, 0,
     0},
    {"rms_apply bf16 11x96 warp vec +w", OP_APPLY, true, 11, 96, true, false, false, false, false, 0, 0, 0, 0},
    {"rms_apply f32 3x1536 block vec", OP_APPLY, false, 3, 1536, false, false, false, false, false, 0, 0, 0, 0},
    {"pixel f32 13x48 warp +silu", OP_PIXEL, false, 13, 48, false, false, false, false, true, 0, 0, 0, 0},
    {"pixel f32 6x33 warp in-place", OP_PIXEL, false, 6, 33, false, false, true, false, false, 0, 0, 0, 0},
    {"pixel f32 2x1200 block +silu", OP_PIXEL, false, 2, 1200, false, false, false, false, true, 0, 0, 0, 0},
    {"pixel bf16 10x64 warp +silu in-place", OP_PIXEL, true, 10, 64, false, false, true, false, true, 0, 0, 0, 0},
    {"pixel bf16 2x1030 block", OP_PIXEL, true, 2, 1030, false, false, false, false, false, 0, 0, 0, 0},
    {"modulate f32 rms 10x64 groups of 5 vec", OP_MOD, false, 10, 64, false, false, false, false, false, 0,
     LTX2_KNORM_RMS, 5, 8},
    {"modulate f32 layer 12x32 row_idx vec in-place", OP_MOD, false, 12, 32, false, false, true, false, false, 1,
     LTX2_KNORM_LAYER, 0, 0},
    {"modulate f32 none 6x45 groups of 3 scalar", OP_MOD, false, 6, 45, false, false, false, false, false, 0,
     LTX2_KNORM_NONE, 3, 0},
    {"modulate f32 rms 2x1040 block groups of 1", OP_MOD, false, 2, 1040, false, false, false, false, false, 0,
     LTX2_KNORM_RMS, 1, 4},
    {"modulate bf16 layer 9x96 groups of 4 vec in-place", OP_MOD, true, 9, 96, false, false, true, false, false, 0,
     LTX2_KNORM_LAYER, 4, 8},
    {"modulate bf16 rms 7x36 row_idx scalar", OP_MOD, true, 7, 36, false, false, false, false, false, 0,
     LTX2_KNORM_RMS, 0, 0},
    {"modulate bf16 none 16x64 row_idx vec", OP_MOD, true, 16, 64, false, false, false, false, false, 0,
     LTX2_KNORM_NONE, 0, 8},
    {"modulate bf16 layer 2x1536 block row_idx", OP_MOD, true, 2, 1536, false, false, false, false, false, 0,
     LTX2_KNORM_LAYER, 0, 0},
    {"group f32 1x60 positions x64 G32 +w+b +silu", OP_GROUP, false, 60, 64, true, true, false, false, true, 0, 0, 32,
     1},
    {"group f32 2x18 positions x128 G32 +w+b offset in-place", OP_GROUP, false, 36, 128, true, true, true, false,
     false, 3, 0, 32, 2},
    {"group bf16 1x12 positions x1024 G32 +w+b +silu", OP_GROUP, true, 12, 1024, true, true, false, false, true, 0, 0,
     32, 1},
    {"group bf16 3x37 positions x12 G4", OP_GROUP, true, 111, 12, false, false, false, false, false, 0, 0, 4, 3},
};

static ltx2_tensor host_view(void *p, ltx2_dtype dt, int ndim, const int64_t *shape) {
    return ltx2_tensor_make(p, dt, ndim, shape);
}

/* norm_modulate's modulation inputs: one AdaLN table [U, 2 * dim + pad] holding shift in columns
 * [0, dim) and scale in [dim, 2 dim) (the junk pad columns catch a wrong row stride), and the
 * per-token rows. */
typedef struct mod_inputs {
    int64_t U, stride;
    float *table;
    int32_t *row_idx; /* NULL for groups */
} mod_inputs;

static mod_inputs mod_make(const row_case *c, uint64_t st) {
    mod_inputs m = {0};
    m.U = c->rpg ? (c->rows + c->rpg - 1) / c->rpg : ROW_IDX_TABLE_ROWS;
    m.stride = 2 * c->dim + c->pad;
    m.table = emu_normal(st, m.U * m.stride, MOD_SCALE, 0.0f, false);
    if (!c->rpg) {
        float *u = malloc((size_t)c->rows * sizeof(float));
        ltx2_rng_uniform(EMU_SEED, st + 1, 0, (size_t)c->rows, u);
        m.row_idx = malloc((size_t)c->rows * sizeof(int32_t));
        for (int64_t r = 0; r < c->rows; r++) m.row_idx[r] = (int32_t)(u[r] * (float)m.U);
        free(u);
    }
    return m;
}

/* The CPU reference of case c on x (rows x dim f32) into ref. */
static bool cpu_ref(ltx2_context *ctx, const row_case *c, const float *x, const float *w, const float *b,
                    const mod_inputs *m, float *ref) {
    const int64_t n = c->rows * c->dim;
    switch (c->op) {
    case OP_RMS:
        return ltx2_cpu_rms_norm(ctx, x, ref, c->rows, c->dim, w, NORM_EPS) == LTX2_OK;
    case OP_SUMSQ:
        return ltx2_cpu_row_sumsq(ctx, x, ref, c->rows, c->dim) == LTX2_OK;
    case OP_STATS:
        return ltx2_cpu_row_stats(ctx, x, ref, c->rows, c->dim) == LTX2_OK;
    case OP_APPLY: /* b: the whole-row sums (this rank's columns are half the row) */
        return ltx2_cpu_rms_apply(ctx, x, b, 2 * c->dim, ref, c->rows, c->dim, w, NORM_EPS) == LTX2_OK;
    case OP_LAYER:
        return ltx2_cpu_layer_norm(ctx, x, ref, c->rows, c->dim, w, b, NORM_EPS) == LTX2_OK;
    case OP_PIXEL:
        return ltx2_cpu_rms_norm(ctx, x, ref, c->rows, c->dim, NULL, PIXEL_NORM_EPS) == LTX2_OK &&
               (!c->silu || ltx2_cpu_silu(ctx, ref, ref, n) == LTX2_OK);
    case OP_GROUP:
        return ltx2_cpu_group_norm(ctx, x, ref, c->pad, c->rows / c->pad, c->dim, c->rpg, GROUP_NORM_EPS, w, b,
                                   c->silu) == LTX2_OK;
    case OP_MOD: {
        const int64_t xs[2] = {c->rows, c->dim}, ms[2] = {m->U, c->dim}, rs[1] = {c->rows};
        ltx2_tensor tx = host_view((void *)x, LTX2_F32, 2, xs), ty = host_view(ref, LTX2_F32, 2, xs);
        ltx2_tensor tsh = host_view(m->table, LTX2_F32, 2, ms), tsc = host_view(m->table + c->dim, LTX2_F32, 2, ms);
        tsh.strides[0] = tsc.strides[0] = m->stride;
        ltx2_tensor ti = host_view(m->row_idx, LTX2_I32, 1, rs);
        const ltx2_mod_rows mr = {.row_idx = m->row_idx ? &ti : NULL, .rows_per_group = c->rpg};
        const ltx2_norm_kind k = c->norm == LTX2_KNORM_RMS ? LTX2_NORM_RMS
                                 : c->norm == LTX2_KNORM_LAYER ? LTX2_NORM_LAYER
                                                               : LTX2_NORM_NONE;
        return ltx2_backend_norm_modulate(ltx2_backend_cpu(), ctx, &tx, k, NORM_EPS, &tsc, &tsh, &mr, &ty) ==
               LTX2_OK;
    }
    }
    return false;
}

static int launch(const row_case *c, const void *x, void *y, const void *w, const void *b, const mod_inputs *m,
                  const void *row_idx) {
    const int dt = c->bf ? LTX2_KDT_BF16 : LTX2_KDT_F32;
    switch (c->op) {
    case OP_RMS:
        return ltx2_k_rms_norm(NULL, dt, x, y, w, c->rows, c->dim, NORM_EPS);
    case OP_SUMSQ:
        return ltx2_k_row_sumsq(NULL, dt, x, (float *)y, c->rows, c->dim);
    case OP_STATS:
        return ltx2_k_row_stats(NULL, dt, x, (float *)y, c->rows, c->dim);
    case OP_APPLY:
        return ltx2_k_rms_apply(NULL, dt, x, y, w, (const float *)b, c->rows, c->dim, (float)(2 * c->dim), NORM_EPS);
    case OP_LAYER:
        return ltx2_k_layer_norm(NULL, dt, x, y, w, b, c->rows, c->dim, NORM_EPS);
    case OP_PIXEL:
        return ltx2_k_pixel_norm(NULL, dt, x, y, c->rows, c->dim, PIXEL_NORM_EPS, c->silu);
    case OP_GROUP:
        return ltx2_k_group_norm(NULL, dt, x, y, c->pad, c->rows / c->pad, c->dim, c->rpg, GROUP_NORM_EPS, w, b,
                                 c->silu);
    case OP_MOD: {
        const float *table = (const float *)w; /* the device copy of m->table */
        const ltx2_k_modulate_args a = {
            .x = x, .y = y, .rows = c->rows, .dim = c->dim, .norm = c->norm, .eps = NORM_EPS,
            .scale = table + c->dim, .shift = table, .mod_stride = m->stride, .row_idx = (const int32_t *)row_idx,
            .rows_per_group = c->rpg,
        };
        return ltx2_k_norm_modulate(NULL, dt, &a);
    }
    }
    return -1;
}

/* The op harnesses' tolerance for case c. */
static void tol_of(const row_case *c, double *atol, double *rtol) {
    if (c->op == OP_MOD) {
        *atol = c->bf ? DEV_BF16_ATOL : DEV_F32_ATOL;
        *rtol = c->bf ? DEV_BF16_RTOL : DEV_F32_RTOL;
        return;
    }
    if (c->op == OP_SUMSQ) { /* positive terms, an f32 output whatever x is */
        *atol = 0.0;
        *rtol = ROW_F32_RTOL;
        return;
    }
    if (c->op == OP_STATS) { /* signed terms cancel: an absolute error like sqrt(dim); min and max exact */
        *atol = ROW_F32_ATOL + ROW_OFFSET_ATOL_GAIN * fabs(c->offset) * sqrt((double)c->dim);
        *rtol = ROW_F32_RTOL;
        return;
    }
    /* a group norm's statistics run over a sample's positions x the group's channels */
    const double stat_n = c->op == OP_GROUP ? (double)(c->rows / c->pad) * (double)(c->dim / c->rpg) : (double)c->dim;
    *atol = ROW_F32_ATOL + ROW_OFFSET_ATOL_GAIN * fabs(c->offset) * sqrt(stat_n);
    *rtol = c->op == OP_PIXEL || c->op == OP_GROUP ? ROW_F32_RTOL + ACT_F32_RTOL : ROW_F32_RTOL;
    if (c->bf) {
        if (*atol < BF16_ATOL) *atol = BF16_ATOL;
        *rtol += EPS_BF16;
    }
}

static void run_case(ltx2_context *ctx, const row_case *c, int idx, double *f32_max_ulp) {
    const int64_t n = c->rows * c->dim;
    const size_t es = c->bf ? 2 : 4, off = c->misalign ? es : 0;
    const uint64_t st = (uint64_t)idx * 8u;
    float *x = emu_normal(st, n, 1.0f, c->offset, c->bf);
    float *w = c->weight ? emu_normal(st + 1, c->dim, 0.5f, 1.0f, c->bf) : NULL;
    float *b = c->bias ? emu_normal(st + 2, c->dim, 0.5f, 0.0f, c->bf) : NULL;
    if (c->op == OP_APPLY) { /* whole-row sums: this part's own plus an equal share from elsewhere */
        b = malloc((size_t)c->rows * sizeof(float));
        for (int64_t r = 0; r < c->rows; r++) {
            double s = 0;
            for (int64_t i = 0; i < c->dim; i++) s += (double)x[r * c->dim + i] * x[r * c->dim + i];
            b[r] = (float)(2.0 * s + 0.5);
        }
    }
    /* row_sumsq writes one f32 per row, row_stats three */
    const int64_t nout = c->op == OP_SUMSQ ? c->rows : c->op == OP_STATS ? 3 * c->rows : n;
    const bool obf = c->op == OP_SUMSQ || c->op == OP_STATS ? false : c->bf;
    const size_t oes = obf ? 2 : 4;
    mod_inputs m = {0};
    if (c->op == OP_MOD) m = mod_make(c, st + 3);
    float *ref = malloc((size_t)nout * sizeof(float)), *out = malloc((size_t)nout * sizeof(float));
    CHECK(cpu_ref(ctx, c, x, w, b, &m, ref), "%s: cpu reference: %s", c->name, ltx2_last_error(ctx));

    /* device buffers; a misaligned case shifts x and y by one element */
    unsigned char *dx = emu_alloc(n * es + off), *dy = c->inplace ? dx : emu_alloc(nout * oes + off);
    void *px = dx + off, *py = dy + off;
    emu_store(px, x, n, c->bf);
    void *dw = NULL, *db = NULL, *di = NULL;
    if (c->op == OP_MOD) {
        dw = emu_alloc((size_t)(m.U * m.stride) * sizeof(float));
        memcpy(dw, m.table, (size_t)(m.U * m.stride) * sizeof(float));
        if (m.row_idx) {
            di = emu_alloc((size_t)c->rows * sizeof(int32_t));
            memcpy(di, m.row_idx, (size_t)c->rows * sizeof(int32_t));
        }
    } else if (c->op == OP_APPLY) {
        if (w) emu_store(dw = emu_alloc(c->dim * es), w, c->dim, c->bf);
        emu_store(db = emu_alloc(c->rows * 4), b, c->rows, false);
    } else {
        if (w) emu_store(dw = emu_alloc(c->dim * es), w, c->dim, c->bf);
        if (b) emu_store(db = emu_alloc(c->dim * es), b, c->dim, c->bf);
    }
    const double t0 = emu_now_ms();
    const int rc = launch(c, px, py, dw, db, &m, di);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, c->name);
    CHECK(emu_guard_damage(py, nout * oes) == 0, "%s: wrote past the output", c->name);
    emu_load(out, py, nout, obf);

    double atol, rtol;
    tol_of(c, &atol, &rtol);
    const emu_stats s = emu_compare(out, ref, nout, atol, rtol, obf, c->name, false);
    emu_report(c->name, s, ms);
    if (!obf) {
        CHECK(s.max_ulp <= ROW_F32_MAX_ULP, "%s: %.3g ulps from the CPU (ceiling %g)", c->name, s.max_ulp,
              ROW_F32_MAX_ULP);
        if (s.max_ulp > *f32_max_ulp) *f32_max_ulp = s.max_ulp;
    }
    /* once per op and dtype: the comparison must catch one element moved by 0.05 */
    if (idx == 0 || c->op != cases[idx - 1].op || c->bf != cases[idx - 1].bf)
        emu_check_sensitive(c->name, out, ref, nout, atol, rtol, obf, nout - 1, 0.05f);

    free(x), free(w), free(b), free(ref), free(out), free(m.table), free(m.row_idx);
    if (dy != dx) free(dy);
    free(dx), free(dw), free(db), free(di);
}

/* norm_modulate's fp8 copies of case c (an OP_MOD case) against ltx2_k_fp8_quant on the plain
 * launch's output, bit for bit, with y written (then y must equal the plain output) and without
 * (then y must stay untouched). */
static void run_mod_fp8(const row_case *c, int idx) {
    const int64_t n = c->rows * c->dim;
    const size_t es = c->bf ? 2 : 4, off = c->misalign ? es : 0;
    const int dt = c->bf ? LTX2_KDT_BF16 : LTX2_KDT_F32;
    const float scales[MOD_FP8_N] = MOD_FP8_SCALES;
    const uint64_t st = (uint64_t)idx * 8u;
    float *x = emu_normal(st, n, 1.0f, c->offset, c->bf);
    mod_inputs m = mod_make(c, st + 3);
    unsigned char *dx = emu_alloc(n * es + off), *dy = emu_alloc(n * es + off), *dy2 = emu_alloc(n * es + off);
    void *px = dx + off;
    emu_store(px, x, n, c->bf);
    float *dw = emu_alloc_copy(m.table, (size_t)(m.U * m.stride) * sizeof(float));
    int32_t *di = m.row_idx ? emu_alloc_copy(m.row_idx, (size_t)c->rows * sizeof(int32_t)) : NULL;
    ltx2_k_modulate_args a = {
        .x = px, .y = dy + off, .rows = c->rows, .dim = c->dim, .norm = c->norm, .eps = NORM_EPS,
        .scale = dw + c->dim, .shift = dw, .mod_stride = m.stride, .row_idx = di, .rows_per_group = c->rpg,
    };
    char what[200];
    snprintf(what, sizeof what, "%s fp8 copies: plain launch", c->name);
    EMU_CHECK_LAUNCH(ltx2_k_norm_modulate(NULL, dt, &a), what);
    uint8_t *want[MOD_FP8_N], *got[MOD_FP8_N];
    for (int k = 0; k < MOD_FP8_N; k++) {
        want[k] = emu_alloc((size_t)n);
        got[k] = emu_alloc((size_t)n);
        snprintf(what, sizeof what, "%s fp8 copies: quantise launch %d", c->name, k);
        EMU_CHECK_LAUNCH(ltx2_k_fp8_quant(NULL, dt, dy + off, want[k], n, 1.0f / scales[k]), what);
        a.q.q[k] = got[k];
        a.q.inv_scale[k] = 1.0f / scales[k];
    }
    a.q.n = MOD_FP8_N;
    a.y = dy2 + off;
    for (int no_y = 0; no_y < 2; no_y++) {
        a.q.no_y = no_y;
        for (int k = 0; k < MOD_FP8_N; k++) emu_refill(got[k], (size_t)n);
        emu_refill(dy2, n * es + off);
        snprintf(what, sizeof what, "%s fp8 copies%s", c->name, no_y ? ", no y" : "");
        EMU_CHECK_LAUNCH(ltx2_k_norm_modulate(NULL, dt, &a), what);
        int64_t bad = 0, first = -1;
        for (int k = 0; k < MOD_FP8_N; k++) {
            for (int64_t i = 0; i < n; i++)
                if (got[k][i] != want[k][i]) bad++, first = first < 0 ? i : first;
            CHECK(emu_guard_damage(got[k], (size_t)n) == 0, "%s: wrote past copy %d", what, k);
        }
        CHECK(bad == 0, "%s: %lld codes differ from the quantise kernel's (first at %lld)", what, (long long)bad,
              (long long)first);
        if (no_y) {
            int64_t touched = 0;
            for (int64_t i = 0; i < (int64_t)(n * es + off); i++) touched += dy2[i] != GUARD_BYTE;
            CHECK(touched == 0, "%s: %lld bytes of y written", what, (long long)touched);
        } else {
            CHECK(memcmp(dy + off, dy2 + off, (size_t)n * es) == 0, "%s: y differs from the plain launch's", what);
        }
    }
    /* the encoder's saturation and subnormal branches were taken */
    int64_t sat = 0, sub = 0;
    for (int64_t i = 0; i < n; i++) sat += (want[1][i] & 0x7F) == 0x7E, sub += (want[2][i] & 0x78) == 0;
    CHECK(sat > 0 && sub > 0, "%s fp8 copies: %lld saturated and %lld subnormal codes (want both)", c->name,
          (long long)sat, (long long)sub);
    printf("  %-52s fp8 copies x%d bitwise (%lld saturated, %lld subnormal)\n", c->name, MOD_FP8_N, (long long)sat,
           (long long)sub);
    for (int k = 0; k < MOD_FP8_N; k++) free(want[k]), free(got[k]);
    free(x), free(m.table), free(m.row_idx), free(dx), free(dy), free(dy2), free(dw), free(di);
}

/* Launcher refusals and no-ops that must not touch memory. */
static void check_args(void) {
    float *buf = emu_alloc(64 * sizeof(float));
    CHECK(ltx2_k_rms_norm(NULL, LTX2_KDT_F32, buf, buf, NULL, 2, 0, NORM_EPS) != 0, "rms_norm dim 0 accepted");
    CHECK(ltx2_k_layer_norm(NULL, 7, buf, buf, NULL, NULL, 2, 8, NORM_EPS) != 0, "layer_norm bad dtype accepted");
    CHECK(ltx2_k_pixel_norm(NULL, LTX2_KDT_F32, NULL, buf, 2, 8, PIXEL_NORM_EPS, 0) != 0, "pixel_norm NULL x");
    CHECK(ltx2_k_group_norm(NULL, LTX2_KDT_F32, buf, buf, 1, 2, 12, 5, GROUP_NORM_EPS, NULL, NULL, 0) != 0,
          "group_norm 12 channels in 5 groups accepted");
    CHECK(ltx2_k_group_norm(NULL, LTX2_KDT_F32, buf, buf, 0, 2, 12, 4, GROUP_NORM_EPS, NULL, NULL, 0) == 0,
          "group_norm 0 samples");
    CHECK(ltx2_k_rms_norm(NULL, LTX2_KDT_F32, NULL, NULL, NULL, 0, 8, NORM_EPS) == 0, "rms_norm 0 rows");
    ltx2_k_modulate_args a = {.x = buf, .y = buf, .rows = 2, .dim = 8, .norm = LTX2_KNORM_RMS, .eps = NORM_EPS,
                              .scale = buf, .shift = buf, .mod_stride = 4, .row_idx = NULL, .rows_per_group = 1};
    CHECK(ltx2_k_norm_modulate(NULL, LTX2_KDT_F32, &a) != 0, "norm_modulate mod_stride < dim accepted");
    a.mod_stride = 8, a.rows_per_group = 0;
    CHECK(ltx2_k_norm_modulate(NULL, LTX2_KDT_F32, &a) != 0, "norm_modulate without a row rule accepted");
    a.rows_per_group = 1, a.norm = 9;
    CHECK(ltx2_k_norm_modulate(NULL, LTX2_KDT_F32, &a) != 0, "norm_modulate unknown norm accepted");
    a.norm = LTX2_KNORM_RMS, a.q.no_y = 1;
    CHECK(ltx2_k_norm_modulate(NULL, LTX2_KDT_F32, &a) != 0, "norm_modulate writing nothing accepted");
    a.q.no_y = 0, a.q.n = LTX2_K_FP8_OUTS_MAX + 1;
    CHECK(ltx2_k_norm_modulate(NULL, LTX2_KDT_F32, &a) != 0, "norm_modulate with too many fp8 copies accepted");
    a.q.n = 1, a.q.q[0] = (uint8_t *)buf, a.q.inv_scale[0] = 0.0f;
    CHECK(ltx2_k_norm_modulate(NULL, LTX2_KDT_F32, &a) != 0, "norm_modulate fp8 copy with scale 0 accepted");
    CHECK(ltx2_emu_last_fault() == NULL, "a refused launch left a fault");
    for (int i = 0; i < 64; i++) CHECK(((unsigned char *)buf)[i] == GUARD_BYTE, "a refused launch wrote memory");
    free(buf);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    const double t0 = emu_now_ms();
    const int n_cases = (int)(sizeof(cases) / sizeof(cases[0]));
    double f32_max_ulp = 0;
    printf("row kernels (emulated) vs the CPU reference:\n");
    for (int i = 0; i < n_cases; i++) run_case(ctx, &cases[i], i, &f32_max_ulp);
    for (int i = 0; i < n_cases; i++)
        if (cases[i].op == OP_MOD) run_mod_fp8(&cases[i], i);
    check_args();
    printf("largest f32 difference over all cases: %.3g ulp (of max(|ref|, 1))\ntotal %.1f s\n", f32_max_ulp,
           (emu_now_ms() - t0) / 1e3);
    ltx2_context_free(ctx);
    return test_finish();
}
