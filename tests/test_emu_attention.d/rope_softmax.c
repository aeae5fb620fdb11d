/* The standalone RoPE kernel (kernels/rope.cu) and the softmax kernel (kernels/softmax.cu) in the
 * CUDA emulator against the CPU reference ops, plus their launchers' refusals. RoPE covers both
 * layouts, f32 and bf16, in place and not, and split tables shared by every batch row and / or head
 * (Gemma-3's one table); softmax covers the warp-per-row and block-per-row
 * kernels with 16-byte vector and scalar accesses, and large logits. */
#define _POSIX_C_SOURCE 200809L

#include "emu_kernels.h"

#include "cpu/cpu_ops.h"
#include "emu_att.h"
#include "emu_check.h"

/* RoPE: exact. The kernel performs the CPU reference's fp32 operations in the same order
 * (kernels/rope.cuh, src/cpu/rope.c) and the emulator runs them as host fp32 arithmetic without
 * contraction, so f32 results are bit-identical and bf16 ones equal the reference rounded once. */
#define ROPE_EMU_ATOL 0.0
#define ROPE_EMU_RTOL 0.0
#define ROPE_ANGLE_SCALE 2.0f
/* Softmax, as the op harness (tests/test_ops.c): f32 atol/rtol (ROW_F32_RTOL) of a row reduction,
 * bf16 a floor of BF16_ATOL plus one bf16 ulp relative. */
#define SOFTMAX_F32_ATOL 1e-7

static size_t elem_size(int dt) { return dt == LTX2_KDT_F32 ? 4 : 2; }

/* Device copy of f32 values as dtype dt, `pad` elements into the buffer (misaligned views). */
static void *to_dev(const float *x, int64_t n, int dt, int64_t pad) {
    const size_t es = elem_size(dt);
    unsigned char *p = emu_alloc((size_t)(n + pad) * es);
    emu_store(p + (size_t)pad * es, x, n, dt == LTX2_KDT_BF16);
    return p;
}

static void from_dev(const void *p, int64_t n, int dt, int64_t pad, float *out) {
    emu_load(out, (const unsigned char *)p + (size_t)pad * elem_size(dt), n, dt == LTX2_KDT_BF16);
}

typedef struct rope_case {
    const char *name;
    int dtype, rope;
    int64_t B, S, H, d;
    bool in_place;
    bool one_row, one_head; /* split tables [1 or B, 1 or H, S, d/2] */
} rope_case;

static const rope_case k_rope[] = {
    {"f32 split B2 S37 H3 d64", LTX2_KDT_F32, LTX2_KROPE_SPLIT, 2, 37, 3, 64, false, false, false},
    {"f32 interleaved B2 S37 H3 d64", LTX2_KDT_F32, LTX2_KROPE_INTERLEAVED, 2, 37, 3, 64, false, false, false},
    {"bf16 split B2 S37 H3 d64", LTX2_KDT_BF16, LTX2_KROPE_SPLIT, 2, 37, 3, 64, false, false, false},
    {"bf16 interleaved B2 S33 H3 d64 in place", LTX2_KDT_BF16, LTX2_KROPE_INTERLEAVED, 2, 33, 3, 64, true, false, false},
    {"bf16 split B1 S5 H2 d128 in place", LTX2_KDT_BF16, LTX2_KROPE_SPLIT, 1, 5, 2, 128, true, false, false},
    {"f32 split B1 S3 H2 d6 (odd half)", LTX2_KDT_F32, LTX2_KROPE_SPLIT, 1, 3, 2, 6, false, false, false},
    {"bf16 split B2 S37 H3 d64, one table", LTX2_KDT_BF16, LTX2_KROPE_SPLIT, 2, 37, 3, 64, false, true, true},
    {"f32 split B2 S9 H4 d64, a table per row", LTX2_KDT_F32, LTX2_KROPE_SPLIT, 2, 9, 4, 64, true, false, true},
    {"f32 split B3 S9 H2 d64, a table per head", LTX2_KDT_F32, LTX2_KROPE_SPLIT, 3, 9, 2, 64, false, true, false},
};

static void rope_one(ltx2_context *ctx, const rope_case *c, uint64_t stream0) {
    const int64_t D = c->H * c->d, n = c->B * c->S * D;
    const bool il = c->rope == LTX2_KROPE_INTERLEAVED, bf = c->dtype == LTX2_KDT_BF16;
    const int64_t tb = c->one_row ? 1 : c->B, th = c->one_head ? 1 : c->H;
    const int64_t nt = il ? n : tb * th * c->S * (c->d / 2);
    float *x = emu_normal_seeded(EMU_ATT_SEED, stream0, n, 1.0f, 0.0f, bf);
    float *ang = emu_normal_seeded(EMU_ATT_SEED, stream0 + 1, nt, ROPE_ANGLE_SCALE, 0.0f, false);
    float *ct = emu_xmalloc((size_t)nt * 4), *st = emu_xmalloc((size_t)nt * 4);
    for (int64_t i = 0; i < nt; i++) {
        const float a = ang[il ? i & ~(int64_t)1 : i];
        ct[i] = cosf(a), st[i] = sinf(a);
    }
    float *ref = emu_xmalloc((size_t)n * 4), *out = emu_xmalloc((size_t)n * 4);
    const int64_t sx[3] = {c->B, c->S, D}, sts[4] = {tb, th, c->S, c->d / 2};
    ltx2_tensor tx = ltx2_tensor_make(x, LTX2_F32, 3, sx), ty = ltx2_tensor_make(ref, LTX2_F32, 3, sx);
    ltx2_tensor tc = il ? ltx2_tensor_make(ct, LTX2_F32, 3, sx) : ltx2_tensor_make(ct, LTX2_F32, 4, sts);
    ltx2_tensor ts = il ? ltx2_tensor_make(st, LTX2_F32, 3, sx) : ltx2_tensor_make(st, LTX2_F32, 4, sts);
    ltx2_status s = ltx2_backend_rope(ltx2_backend_cpu(), ctx, &tx, il ? LTX2_ROPE_INTERLEAVED : LTX2_ROPE_SPLIT,
                                      c->H, &tc, &ts, &ty);
    CHECK(s == LTX2_OK, "cpu rope %s: %s", c->name, ltx2_last_error(ctx));
    if (bf)
        for (int64_t i = 0; i < n; i++) ref[i] = ltx2_round_bf16(ref[i]);

    void *dx = to_dev(x, n, c->dtype, 0), *dy = c->in_place ? dx : emu_alloc((size_t)n * elem_size(c->dtype));
    float *dc = emu_alloc_copy(ct, (size_t)nt * 4), *ds = emu_alloc_copy(st, (size_t)nt * 4);
    ltx2_emu_reset_fault();
    const double t0 = emu_now_ms();
    int rc = ltx2_k_rope(NULL, c->dtype, c->rope, dx, dy, dc, ds, c->B, c->S, c->H, c->d, tb, th);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, c->name);
    CHECK(emu_guard_damage(dy, (size_t)n * elem_size(c->dtype)) == 0, "rope %s: write past y", c->name);
    from_dev(dy, n, c->dtype, 0, out);
    emu_report(c->name, emu_compare(out, ref, n, ROPE_EMU_ATOL, ROPE_EMU_RTOL, bf, c->name, false), ms);
    free(x), free(ang), free(ct), free(st), free(ref), free(out), free(dx), free(dc), free(ds);
    if (!c->in_place) free(dy);
}

typedef struct softmax_case {
    const char *name;
    int dtype;
    int64_t rows, dim;
    float scale, offset;
    int64_t pad; /* elements into the buffers: 1 breaks 16-byte alignment (scalar path) */
} softmax_case;

/* Rows of <= 1024 take one warp each, longer ones a block; 16-byte vectors when dim is a multiple
 * of 4 (f32) / 8 (bf16) and both pointers are aligned. */
static const softmax_case k_softmax[] = {
    {"f32 5x7 warp scalar", LTX2_KDT_F32, 5, 7, 1.0f, 0.0f, 0},
    {"f32 9x64 warp vec4", LTX2_KDT_F32, 9, 64, 1.0f, 0.0f, 0},
    {"f32 5x64 warp misaligned (scalar)", LTX2_KDT_F32, 5, 64, 1.0f, 0.0f, 1},
    {"f32 3x1500 block vec4", LTX2_KDT_F32, 3, 1500, 1.0f, 0.0f, 0},
    {"f32 2x2053 block scalar", LTX2_KDT_F32, 2, 2053, 1.0f, 0.0f, 0},
    {"f32 4x300 logits 50+10N", LTX2_KDT_F32, 4, 300, 10.0f, 50.0f, 0},
    {"bf16 5x7 warp scalar", LTX2_KDT_BF16, 5, 7, 1.0f, 0.0f, 0},
    {"bf16 9x64 warp vec8", LTX2_KDT_BF16, 9, 64, 1.0f, 0.0f, 0},
    {"bf16 3x1504 block vec8", LTX2_KDT_BF16, 3, 1504, 1.0f, 0.0f, 0},
    {"bf16 2x2053 block scalar", LTX2_KDT_BF16, 2, 2053, 1.0f, 0.0f, 0},
};

static void softmax_one(ltx2_context *ctx, const softmax_case *c, uint64_t stream0) {
    const int64_t n = c->rows * c->dim;
    const bool bf = c->dtype == LTX2_KDT_BF16;
    float *x = emu_normal_seeded(EMU_ATT_SEED, stream0, n, c->scale, c->offset, bf);
    float *ref = emu_xmalloc((size_t)n * 4), *out = emu_xmalloc((size_t)n * 4);
    ltx2_status s = ltx2_cpu_softmax(ctx, x, ref, c->rows, c->dim);
    CHECK(s == LTX2_OK, "cpu softmax %s: %s", c->name, ltx2_last_error(ctx));
    const size_t es = elem_size(c->dtype);
    unsigned char *dx = to_dev(x, n, c->dtype, c->pad), *dy = emu_alloc((size_t)(n + c->pad) * es);
    ltx2_emu_reset_fault();
    const double t0 = emu_now_ms();
    int rc = ltx2_k_softmax(NULL, c->dtype, dx + c->pad * es, dy + c->pad * es, c->rows, c->dim);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, c->name);
    CHECK(emu_guard_damage(dy, (size_t)(n + c->pad) * es) == 0, "softmax %s: write past y", c->name);
    from_dev(dy, n, c->dtype, c->pad, out);
    const double atol = bf ? BF16_ATOL : SOFTMAX_F32_ATOL, rtol = ROW_F32_RTOL + (bf ? EPS_BF16 : 0.0);
    emu_report(c->name, emu_compare(out, ref, n, atol, rtol, bf, c->name, false), ms);
    free(x), free(ref), free(out), free(dx), free(dy);
}

/* A refused launch returns want_rc, writes nothing and faults nothing. */
static void refused(const char *what, int rc, int want_rc, const void *y, size_t bytes) {
    CHECK(rc == want_rc, "refusal '%s': rc %d, expected %d", what, rc, want_rc);
    CHECK(emu_untouched(y, bytes), "refusal '%s': output written", what);
    CHECK(ltx2_emu_last_fault() == NULL, "refusal '%s': fault %s", what, ltx2_emu_last_fault());
}

static void test_refusals(void) {
    const int64_t B = 1, S = 4, H = 2, d = 64, n = B * S * H * d;
    float *x = emu_normal_seeded(EMU_ATT_SEED, 7000, n, 1.0f, 0.0f, false);
    float *x_dev = emu_alloc_copy(x, (size_t)n * 4), *y = emu_alloc((size_t)n * 4), *t = emu_alloc((size_t)n * 4);
    memset(t, 0, (size_t)n * 4);
    const size_t yb = (size_t)n * 4;
    const int bad = EMU_ERR_INVALID_VALUE;
    ltx2_emu_reset_fault();
    const int SP = LTX2_KROPE_SPLIT, IL = LTX2_KROPE_INTERLEAVED;
    refused("rope NONE", ltx2_k_rope(NULL, LTX2_KDT_F32, LTX2_KROPE_NONE, x_dev, y, t, t, B, S, H, d, B, H), bad, y, yb);
    refused("rope mode 3", ltx2_k_rope(NULL, LTX2_KDT_F32, 3, x_dev, y, t, t, B, S, H, d, B, H), bad, y, yb);
    refused("rope odd head_dim", ltx2_k_rope(NULL, LTX2_KDT_F32, SP, x_dev, y, t, t, B, S, 1, 7, B, 1), bad, y, yb);
    refused("rope dtype 2", ltx2_k_rope(NULL, 2, SP, x_dev, y, t, t, B, S, H, d, B, H), bad, y, yb);
    refused("rope NULL sin", ltx2_k_rope(NULL, LTX2_KDT_F32, SP, x_dev, y, t, NULL, B, S, H, d, B, H), bad, y, yb);
    refused("rope heads 0", ltx2_k_rope(NULL, LTX2_KDT_F32, SP, x_dev, y, t, t, B, S, 0, d, B, 1), bad, y, yb);
    refused("rope tables of 3 heads for 2", ltx2_k_rope(NULL, LTX2_KDT_F32, SP, x_dev, y, t, t, B, S, H, d, B, 3), bad,
            y, yb);
    refused("rope tables of 2 rows for 1", ltx2_k_rope(NULL, LTX2_KDT_F32, SP, x_dev, y, t, t, B, S, H, d, 2, H), bad, y,
            yb);
    refused("rope interleaved one head's table", ltx2_k_rope(NULL, LTX2_KDT_F32, IL, x_dev, y, t, t, B, S, H, d, B, 1),
            bad, y, yb);
    refused("softmax dim 0", ltx2_k_softmax(NULL, LTX2_KDT_F32, x_dev, y, S, 0), bad, y, yb);
    refused("softmax dtype 2", ltx2_k_softmax(NULL, 2, x_dev, y, S, d), bad, y, yb);
    refused("softmax x NULL", ltx2_k_softmax(NULL, LTX2_KDT_F32, NULL, y, S, d), bad, y, yb);
    refused("softmax rows -1", ltx2_k_softmax(NULL, LTX2_KDT_F32, x_dev, y, -1, d), bad, y, yb);
    refused("softmax rows 0 (no-op)", ltx2_k_softmax(NULL, LTX2_KDT_F32, x_dev, y, 0, d), 0, y, yb);
    free(x), free(x_dev), free(y), free(t);
    printf("  rope / softmax launcher refusals checked\n");
}

emu_counts test_emu_rope_softmax(ltx2_context *ctx) {
    test_refusals();
    printf("rope (emulated) vs the CPU backend:\n");
    for (size_t i = 0; i < sizeof(k_rope) / sizeof(k_rope[0]); i++) rope_one(ctx, &k_rope[i], 5000 + 4 * i);
    printf("softmax (emulated) vs ltx2_cpu_softmax:\n");
    for (size_t i = 0; i < sizeof(k_softmax) / sizeof(k_softmax[0]); i++)
        softmax_one(ctx, &k_softmax[i], 6000 + 4 * i);
    return (emu_counts){test_counts_g.passed, test_counts_g.failed};
}
