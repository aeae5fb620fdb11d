/* The streaming kernels run in the CUDA emulator against the CPU reference on the same inputs:
 * unary (GELU tanh, SiLU and the vocoders' LeakyReLU, tanh, hardtanh, log floor, divide; threshold
 * values and NaN), binary add / mul over broadcast plans (ltx2_broadcast_plan_make, as
 * the CUDA backend builds them; broadcast and strided operands), convert f32 <-> bf16 (every bf16
 * pattern, IEEE specials), fp8 e4m3 dequantise (all 256 codes) and quantise (specials, ties,
 * saturation; bit-exact against ltx2_f32_to_fp8e4m3 of the scaled value, rounded to bf16 first for a
 * bf16 source as torch does), gated_add and head_gate (kernels/fused.cu)
 * depth_to_space / space_to_depth (kernels/vae_ops.cu) and blur_downsample (kernels/blur_downsample.cu), each in f32 and bf16 on the 16-byte vector path and
 * the scalar path (odd sizes, misaligned pointers), in place where the op allows.
 * Where the kernel does exactly the CPU's fp32 operations (add / mul, convert, fp8, leaky_relu,
 * hardtanh, div_scalar, the depth_to_space add, the space_to_depth group mean) the result must be bit-identical (bf16: to the CPU result rounded to bf16);
 * elsewhere the op harnesses' tolerances apply (tests/test_ops.c, tests/test_ops_fused.c). */
#define _POSIX_C_SOURCE 200809L

#include "emu_kernels.h"

#include "backend/backend.h"
#include "cpu/broadcast.h"
#include "cpu/cpu_depth_to_space.h"
#include "cpu/cpu_space_to_depth.h"
#include "cpu/cpu_ops.h"
#include "emu_check.h"

/* fp8 per-tensor scale of the quantise / dequantise cases (not a power of two, so the scale
 * multiply rounds). */
#define FP8_SCALE 0.37f
/* fp8 quantise inputs: |x| up to ~3 * 200 / 0.37, well past the e4m3 range (448) once scaled. */
#define FP8_INPUT_SCALE 200.0f

static int64_t g_idx; /* case counter: picks the Philox streams */

static uint64_t next_stream(void) { return (uint64_t)(g_idx++) * 8u; }

/* Runs the comparison and sensitivity check of one case (exact: bit-identical required). */
static void finish(const char *name, const float *out, const float *ref, int64_t n, double atol, double rtol,
                   bool bf, double ms, bool sensitive) {
    emu_report(name, emu_compare(out, ref, n, atol, rtol, bf, name, false), ms);
    if (sensitive) emu_check_sensitive(name, out, ref, n, atol, rtol, bf, n / 3, 0.25f);
}

static void round_all(float *p, int64_t n) {
    for (int64_t i = 0; i < n; i++) p[i] = ltx2_round_bf16(p[i]);
}

/* ---- unary ---- */

/* The vocoders' unary parameters: BigVGAN's LeakyReLU slope (LRELU_SLOPE), the log-mel floor, and a
 * divisor that is not a power of two (so the division rounds), as the mean over a stack of 3. */
#define UNARY_LEAKY_SLOPE 0.1f
#define UNARY_LOG_FLOOR 1e-5f
#define UNARY_DIVISOR 3.0f
/* Inputs: N(0, UNARY_SCALE), so about a third lies past the hardtanh bounds and half below the
 * log floor; the first elements are these specials (NaN must pass through every op). */
#define UNARY_SCALE 3.0f
static const float unary_specials[] = {NAN, -1.0f, 1.0f, -1.0001f, 1.0001f, 0.0f, -0.0f, INFINITY, -INFINITY,
                                       UNARY_LOG_FLOOR, 0.5f * UNARY_LOG_FLOOR, -2.5f, 2.5f};
#define N_UNARY_SPECIALS ((int64_t)(sizeof(unary_specials) / sizeof(unary_specials[0])))

static const char *unary_name(int op) {
    switch (op) {
    case LTX2_KUNARY_GELU_TANH: return "gelu_tanh";
    case LTX2_KUNARY_SILU: return "silu";
    case LTX2_KUNARY_LEAKY_RELU: return "leaky_relu";
    case LTX2_KUNARY_TANH: return "tanh";
    case LTX2_KUNARY_HARDTANH: return "hardtanh";
    case LTX2_KUNARY_LOG_FLOOR: return "log_floor";
    default: return "div_scalar";
    }
}

/* The op's alpha (ltx2_k_unary's parameter; 0 for the ops without one). */
static float unary_alpha(int op) {
    return op == LTX2_KUNARY_LEAKY_RELU ? UNARY_LEAKY_SLOPE
           : op == LTX2_KUNARY_LOG_FLOOR ? UNARY_LOG_FLOOR
           : op == LTX2_KUNARY_DIV_SCALAR ? UNARY_DIVISOR
                                          : 0.0f;
}

static ltx2_status unary_ref(ltx2_context *ctx, int op, const float *x, float *y, int64_t n) {
    const float a = unary_alpha(op);
    switch (op) {
    case LTX2_KUNARY_GELU_TANH: return ltx2_cpu_gelu_tanh(ctx, x, y, n);
    case LTX2_KUNARY_SILU: return ltx2_cpu_silu(ctx, x, y, n);
    case LTX2_KUNARY_LEAKY_RELU: return ltx2_cpu_leaky_relu(ctx, x, y, n, a);
    case LTX2_KUNARY_TANH: return ltx2_cpu_tanh(ctx, x, y, n);
    case LTX2_KUNARY_HARDTANH: return ltx2_cpu_hardtanh(ctx, x, y, n);
    case LTX2_KUNARY_LOG_FLOOR: return ltx2_cpu_log_floor(ctx, x, y, n, a);
    default: return ltx2_cpu_div_scalar(ctx, x, y, n, a);
    }
}

/* One correctly rounded fp32 operation (a compare and select, a multiply, an IEEE division): the
 * kernel must be bit-identical to the CPU (bf16: to its result rounded to bf16). */
static bool unary_exact(int op) {
    return op == LTX2_KUNARY_LEAKY_RELU || op == LTX2_KUNARY_HARDTANH || op == LTX2_KUNARY_DIV_SCALAR;
}

static void unary_case(ltx2_context *ctx, int op, bool bf, int64_t n, bool inplace, bool misalign) {
    char name[96];
    snprintf(name, sizeof(name), "%s %s n=%lld%s%s", unary_name(op), bf ? "bf16" : "f32", (long long)n,
             inplace ? " in-place" : "", misalign ? " misaligned" : "");
    const size_t es = bf ? 2 : 4, off = misalign ? es : 0;
    float *x = emu_normal(next_stream(), n, UNARY_SCALE, 0.0f, bf), *ref = malloc((size_t)n * 4),
          *out = malloc((size_t)n * 4);
    /* the vocoders' ops get the threshold specials (gelu / silu keep their earlier inputs) */
    if (op >= LTX2_KUNARY_LEAKY_RELU)
        for (int64_t i = 0; i < N_UNARY_SPECIALS && i < n; i++)
            x[i] = bf ? ltx2_round_bf16(unary_specials[i]) : unary_specials[i];
    CHECK(unary_ref(ctx, op, x, ref, n) == LTX2_OK, "%s", name);
    unsigned char *dx = emu_alloc(n * es + off), *dy = inplace ? dx : emu_alloc(n * es + off);
    emu_store(dx + off, x, n, bf);
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_unary(NULL, bf ? LTX2_KDT_BF16 : LTX2_KDT_F32, op, dx + off, dy + off, n, unary_alpha(op));
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dy + off, n * es) == 0, "%s: wrote past the output", name);
    emu_load(out, dy + off, n, bf);
    if (unary_exact(op)) {
        if (bf) round_all(ref, n);
        finish(name, out, ref, n, 0.0, 0.0, bf, ms, !inplace);
    } else {
        finish(name, out, ref, n, bf ? BF16_ATOL : ACT_F32_ATOL, ACT_F32_RTOL + (bf ? EPS_BF16 : 0), bf, ms, !inplace);
    }
    if (op >= LTX2_KUNARY_LEAKY_RELU && n > 0) CHECK(isnan(out[0]), "%s: NaN did not pass through (got %g)", name, out[0]);
    free(x), free(ref), free(out), free(dx);
    if (dy != dx) free(dy);
}

/* An unknown op code is refused without touching the output. */
static void unary_refusal(void) {
    enum { N = 64 };
    float *dx = emu_alloc(N * 4), *dy = emu_alloc(N * 4);
    memset(dx, 0, N * 4);
    const int rc = ltx2_k_unary(NULL, LTX2_KDT_F32, LTX2_KUNARY_DIV_SCALAR + 1, dx, dy, N, 1.0f);
    CHECK(rc != 0, "unary: op %d accepted", LTX2_KUNARY_DIV_SCALAR + 1);
    CHECK(emu_untouched(dy, N * 4), "unary: a refused op wrote its output");
    free(dx), free(dy);
}

/* ---- binary ---- */

typedef struct bin_case {
    int op;
    bool bf, a_strided; /* a: every other element of its last dim */
    int an, bn;
    int64_t as[3], bs[3];
} bin_case;

static void binary_case(ltx2_context *ctx, const bin_case *c) {
    char name[128], sa[48], sb[48];
    snprintf(name, sizeof(name), "%s %s a%s%s b%s", c->op == LTX2_KBINARY_ADD ? "add" : "mul", c->bf ? "bf16" : "f32",
             ltx2_shape_str(c->as, c->an, sa, sizeof(sa)), c->a_strided ? "(stride 2)" : "",
             ltx2_shape_str(c->bs, c->bn, sb, sizeof(sb)));
    ltx2_tensor ta = ltx2_tensor_make(NULL, LTX2_F32, c->an, c->as), tb = ltx2_tensor_make(NULL, LTX2_F32, c->bn, c->bs);
    const int64_t na = ltx2_tensor_numel(&ta) * (c->a_strided ? 2 : 1), nb = ltx2_tensor_numel(&tb);
    if (c->a_strided)
        for (int i = 0; i < c->an; i++) ta.strides[i] *= 2;
    /* the output has the broadcast shape (a and b aligned at the trailing dim) */
    int64_t os[3];
    const int on = c->an > c->bn ? c->an : c->bn;
    for (int i = 0; i < on; i++) {
        const int ia = i - (on - c->an), ib = i - (on - c->bn);
        const int64_t da = ia >= 0 ? c->as[ia] : 1, db = ib >= 0 ? c->bs[ib] : 1;
        os[i] = da > db ? da : db;
    }
    ltx2_tensor to = ltx2_tensor_make(NULL, LTX2_F32, on, os);
    const int64_t n = ltx2_tensor_numel(&to);
    const uint64_t st = next_stream();
    float *a = emu_normal(st, na, 2.0f, 0.0f, c->bf), *b = emu_normal(st + 1, nb, 2.0f, 0.5f, c->bf);
    float *ref = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
    ta.data = a, tb.data = b, to.data = ref;
    CHECK(ltx2_cpu_binary(ctx, c->op == LTX2_KBINARY_ADD ? LTX2_BINARY_ADD : LTX2_BINARY_MUL, &ta, &tb, &to) == LTX2_OK,
          "%s: cpu: %s", name, ltx2_last_error(ctx));
    ltx2_broadcast_plan p;
    CHECK(ltx2_broadcast_plan_make(ctx, &ta, &tb, &to, &p) == LTX2_OK, "%s: plan", name);
    const size_t es = c->bf ? 2 : 4;
    void *da = emu_alloc(na * es), *db = emu_alloc(nb * es), *dout = emu_alloc(n * es);
    emu_store(da, a, na, c->bf);
    emu_store(db, b, nb, c->bf);
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_binary(NULL, c->bf ? LTX2_KDT_BF16 : LTX2_KDT_F32, c->op, da, db, dout, p.ndim, p.shape,
                                 p.a_strides, p.b_strides, p.out_strides);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dout, n * es) == 0, "%s: wrote past the output", name);
    emu_load(out, dout, n, c->bf);
    /* one fp32 operation on identical values: exact, also after the bf16 rounding */
    if (c->bf) round_all(ref, n);
    finish(name, out, ref, n, 0.0, 0.0, c->bf, ms, c->op == LTX2_KBINARY_ADD && !c->bf);
    free(a), free(b), free(ref), free(out), free(da), free(db), free(dout);
}

/* ---- convert ---- */

/* f32 values that stress the bf16 rounding: NaN, infinities, signed zeros, overflow to inf, ties
 * to even both ways, denormals, the largest finite bf16. */
static const uint32_t f32_specials[] = {
    0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x7F800000u, 0xFF800000u, 0x00000000u, 0x80000000u, 0x7F7FFFFFu,
    0xFF7FFFFFu, 0x7F7F8000u, 0x3F808000u, 0x3F818000u, 0xBF808000u, 0x3F807FFFu, 0x00000001u, 0x807FFFFFu,
    0x00008000u, 0x00018000u, 0x7F7F7FFFu, 0x3F800001u,
};
#define N_F32_SPECIALS ((int64_t)(sizeof(f32_specials) / sizeof(f32_specials[0])))

static void convert_to_bf16_case(int64_t n, bool misalign) {
    char name[96];
    snprintf(name, sizeof(name), "convert f32->bf16 n=%lld specials%s", (long long)n, misalign ? " misaligned" : "");
    float *x = emu_normal(next_stream(), n, 10.0f, 0.0f, false);
    for (int64_t i = 0; i < N_F32_SPECIALS && i < n; i++) memcpy(&x[i], &f32_specials[i], 4);
    const size_t off = misalign ? 4 : 0;
    unsigned char *dx = emu_alloc(n * 4 + off), *dy = emu_alloc(n * 2 + off);
    memcpy(dx + off, x, (size_t)n * 4);
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_convert(NULL, LTX2_KDT_F32, dx + off, LTX2_KDT_BF16, dy + off, n);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dy + off, n * 2) == 0, "%s: wrote past the output", name);
    int64_t bad = 0, nan_payload = 0;
    for (int64_t i = 0; i < n; i++) {
        uint16_t got;
        memcpy(&got, dy + off + 2 * i, 2);
        const uint16_t want = ltx2_f32_to_bf16(x[i]);
        if (isnan(x[i])) { /* NaN must stay NaN; its payload/sign are not part of the contract */
            bad += !((got & 0x7F80u) == 0x7F80u && (got & 0x7Fu));
            nan_payload += got != want;
        } else {
            bad += got != want;
        }
    }
    printf("  %-58s %lld/%lld bits differ from ltx2_f32_to_bf16 (NaN payload/sign differs in %lld)  %6.1f ms%s\n",
           name, (long long)bad, (long long)n, (long long)nan_payload, ms, bad ? "  FAIL" : "");
    CHECK(bad == 0, "%s: %lld elements not bit-identical to ltx2_f32_to_bf16", name, (long long)bad);
    free(x), free(dx), free(dy);
}

/* Every one of the 65536 bf16 patterns (vector path), or the first n (scalar path when odd). */
static void convert_from_bf16_case(int64_t n, int dst_dtype) {
    char name[96];
    snprintf(name, sizeof(name), "convert bf16->%s n=%lld (all patterns)", dst_dtype == LTX2_KDT_F32 ? "f32" : "bf16",
             (long long)n);
    const size_t des = dst_dtype == LTX2_KDT_F32 ? 4 : 2;
    uint16_t *dx = emu_alloc((size_t)n * 2);
    for (int64_t i = 0; i < n; i++) dx[i] = (uint16_t)(i * 40503u); /* odd multiplier: a permutation */
    unsigned char *dy = emu_alloc(n * des);
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_convert(NULL, LTX2_KDT_BF16, dx, dst_dtype, dy, n);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dy, n * des) == 0, "%s: wrote past the output", name);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const float want = ltx2_bf16_to_f32(dx[i]);
        float got;
        if (des == 4) {
            memcpy(&got, dy + 4 * i, 4);
        } else {
            uint16_t h;
            memcpy(&h, dy + 2 * i, 2);
            got = ltx2_bf16_to_f32(h);
        }
        bad += isnan(want) ? !isnan(got) : memcmp(&got, &want, 4) != 0;
    }
    printf("  %-58s %lld/%lld not bit-identical  %6.1f ms%s\n", name, (long long)bad, (long long)n, ms,
           bad ? "  FAIL" : "");
    CHECK(bad == 0, "%s: %lld elements differ", name, (long long)bad);
    free(dx), free(dy);
}

/* ---- fp8 e4m3 ---- */

/* Dequantise codes (every byte value, repeated) to f32 or bf16; bit-identical to
 * ltx2_fp8e4m3_to_f32(code) * scale (rounded to bf16 for bf16). */
static void fp8_dequant_case(bool bf, int64_t n) {
    char name[96];
    snprintf(name, sizeof(name), "fp8 dequant ->%s n=%lld (all codes)", bf ? "bf16" : "f32", (long long)n);
    uint8_t *src = emu_alloc((size_t)n);
    for (int64_t i = 0; i < n; i++) src[i] = (uint8_t)(i * 167u);
    const size_t es = bf ? 2 : 4;
    void *dy = emu_alloc(n * es);
    float *out = malloc((size_t)n * 4), *ref = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) ref[i] = ltx2_fp8e4m3_to_f32(src[i]) * FP8_SCALE;
    if (bf) round_all(ref, n);
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_fp8_dequant(NULL, src, bf ? LTX2_KDT_BF16 : LTX2_KDT_F32, dy, n, FP8_SCALE);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dy, n * es) == 0, "%s: wrote past the output", name);
    emu_load(out, dy, n, bf);
    finish(name, out, ref, n, 0.0, 0.0, bf, ms, !bf);
    free(src), free(dy), free(out), free(ref);
}

/* fp8 quantise inputs: specials first (NaN, infinities, zeros, the saturation edge 448 / 464 /
 * 480, e4m3 ties and subnormals once divided by FP8_SCALE), then wide random values. */
static const float fp8_specials[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 448.0f * FP8_SCALE, 464.0f * FP8_SCALE, 480.0f * FP8_SCALE,
    -1e9f, 1.0625f * FP8_SCALE, 1.1875f * FP8_SCALE, 0.001953125f * FP8_SCALE, 0.0009765625f * FP8_SCALE,
    1e-30f, -3.0e-3f,
};
#define N_FP8_SPECIALS ((int64_t)(sizeof(fp8_specials) / sizeof(fp8_specials[0])))

static void fp8_quant_case(bool bf, int64_t n, bool misalign) {
    char name[96];
    snprintf(name, sizeof(name), "fp8 quant %s-> n=%lld specials%s", bf ? "bf16" : "f32", (long long)n,
             misalign ? " misaligned" : "");
    float *x = emu_normal(next_stream(), n, FP8_INPUT_SCALE * FP8_SCALE, 0.0f, bf);
    for (int64_t i = 0; i < N_FP8_SPECIALS && i < n; i++) x[i] = bf ? ltx2_round_bf16(fp8_specials[i]) : fp8_specials[i];
    const size_t es = bf ? 2 : 4, off = misalign ? es : 0;
    unsigned char *dx = emu_alloc(n * es + off);
    uint8_t *dq = emu_alloc((size_t)n);
    emu_store(dx + off, x, n, bf);
    const float inv = 1.0f / FP8_SCALE; /* as the CUDA backend passes it */
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_fp8_quant(NULL, bf ? LTX2_KDT_BF16 : LTX2_KDT_F32, dx + off, dq, n, inv);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dq, (size_t)n) == 0, "%s: wrote past the output", name);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        /* a bf16 source's product is a bf16 value first (torch: bf16 tensor * f32 scalar) */
        const float p = x[i] * inv;
        const uint8_t want = ltx2_f32_to_fp8e4m3(bf && !isnan(p) ? ltx2_round_bf16(p) : p);
        if (dq[i] != want && bad++ < 5)
            fprintf(stderr, "    %s: element %lld (%g): got 0x%02X want 0x%02X\n", name, (long long)i, x[i], dq[i], want);
    }
    printf("  %-58s %lld/%lld codes differ from ltx2_f32_to_fp8e4m3  %6.1f ms%s\n", name, (long long)bad, (long long)n,
           ms, bad ? "  FAIL" : "");
    CHECK(bad == 0, "%s: %lld codes not bit-identical", name, (long long)bad);
    free(x), free(dx), free(dq);
}

/* ---- gated_add, head_gate ---- */

static void gated_add_case(ltx2_context *ctx, bool bf, int64_t rows, int64_t dim, int gate_mode, int64_t rpg,
                           int64_t gate_pad) {
    /* gate_mode: 0 none (plain add), 1 per-sample groups of rpg rows, 2 per-token row_idx */
    char name[96];
    snprintf(name, sizeof(name), "gated_add %s %lldx%lld %s", bf ? "bf16" : "f32", (long long)rows, (long long)dim,
             gate_mode == 0 ? "no gate" : gate_mode == 1 ? "groups" : "row_idx");
    const int64_t n = rows * dim, U = gate_mode == 1 ? (rows + rpg - 1) / rpg : 3, gs = dim + gate_pad;
    const uint64_t st = next_stream();
    float *x = emu_normal(st, n, 1.0f, 0.0f, bf), *y = emu_normal(st + 1, n, 1.0f, 0.0f, bf);
    float *gate = emu_normal(st + 2, U * gs, 0.7f, 0.0f, false), *u = malloc((size_t)rows * 4);
    int32_t *idx = malloc((size_t)rows * 4);
    ltx2_rng_uniform(EMU_SEED, st + 3, 0, (size_t)rows, u);
    for (int64_t r = 0; r < rows; r++) idx[r] = (int32_t)(u[r] * (float)U);
    float *ref = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
    memcpy(ref, x, (size_t)n * 4);
    const int64_t xs[2] = {rows, dim}, gsh[2] = {U, dim}, is[1] = {rows};
    ltx2_tensor tx = ltx2_tensor_make(ref, LTX2_F32, 2, xs), ty = ltx2_tensor_make(y, LTX2_F32, 2, xs);
    ltx2_tensor tg = ltx2_tensor_make(gate, LTX2_F32, 2, gsh), ti = ltx2_tensor_make(idx, LTX2_I32, 1, is);
    tg.strides[0] = gs;
    const ltx2_mod_rows m = {.row_idx = gate_mode == 2 ? &ti : NULL, .rows_per_group = gate_mode == 1 ? rpg : 1};
    CHECK(ltx2_backend_gated_add(ltx2_backend_cpu(), ctx, &tx, &ty, gate_mode ? &tg : NULL, &m) == LTX2_OK,
          "%s: cpu: %s", name, ltx2_last_error(ctx));
    const size_t es = bf ? 2 : 4;
    void *dx = emu_alloc(n * es), *dy = emu_alloc(n * es), *dg = emu_alloc((size_t)(U * gs) * 4);
    int32_t *di = emu_alloc((size_t)rows * 4);
    emu_store(dx, x, n, bf);
    emu_store(dy, y, n, bf);
    memcpy(dg, gate, (size_t)(U * gs) * 4);
    memcpy(di, idx, (size_t)rows * 4);
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_gated_add(NULL, bf ? LTX2_KDT_BF16 : LTX2_KDT_F32, dx, dy, gate_mode ? dg : NULL, gs,
                                    gate_mode == 2 ? di : NULL, gate_mode == 1 ? rpg : 1, rows, dim);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(dx, n * es) == 0, "%s: wrote past x", name);
    emu_load(out, dx, n, bf);
    finish(name, out, ref, n, bf ? DEV_BF16_ATOL : DEV_F32_ATOL, bf ? DEV_BF16_RTOL : DEV_F32_RTOL, bf, ms,
           gate_mode == 1 && !bf);
    free(x), free(y), free(gate), free(u), free(idx), free(ref), free(out), free(dx), free(dy), free(dg), free(di);
}

static void head_gate_case(ltx2_context *ctx, bool bf, int64_t rows, int64_t heads, int64_t hd, bool misalign) {
    char name[96];
    snprintf(name, sizeof(name), "head_gate %s rows %lld heads %lld d %lld%s", bf ? "bf16" : "f32", (long long)rows,
             (long long)heads, (long long)hd, misalign ? " misaligned" : "");
    const int64_t n = rows * heads * hd, nl = rows * heads;
    const uint64_t st = next_stream();
    float *o = emu_normal(st, n, 1.0f, 0.0f, bf), *l = emu_normal(st + 1, nl, 2.0f, 0.0f, bf);
    float *ref = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
    memcpy(ref, o, (size_t)n * 4);
    const int64_t os[2] = {rows, heads * hd}, ls[2] = {rows, heads};
    ltx2_tensor to = ltx2_tensor_make(ref, LTX2_F32, 2, os), tl = ltx2_tensor_make(l, LTX2_F32, 2, ls);
    CHECK(ltx2_backend_head_gate(ltx2_backend_cpu(), ctx, &to, &tl, heads) == LTX2_OK, "%s: cpu", name);
    const size_t es = bf ? 2 : 4, off = misalign ? es : 0;
    unsigned char *d_o = emu_alloc(n * es + off);
    void *dl = emu_alloc(nl * es);
    emu_store(d_o + off, o, n, bf);
    emu_store(dl, l, nl, bf);
    const double t0 = emu_now_ms();
    const int rc = ltx2_k_head_gate(NULL, bf ? LTX2_KDT_BF16 : LTX2_KDT_F32, d_o + off, dl, rows, heads, hd, NULL);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rc, name);
    CHECK(emu_guard_damage(d_o + off, n * es) == 0, "%s: wrote past o", name);
    emu_load(out, d_o + off, n, bf);
    finish(name, out, ref, n, bf ? DEV_BF16_ATOL : DEV_F32_ATOL, bf ? DEV_BF16_RTOL : DEV_F32_RTOL, bf, ms, !bf);
    /* fp8 copies of the gated o (LTX-2.3's out-projection input): bit for bit the quantise kernel on
     * the plain launch's output, with o written (then the plain launch's) and without (untouched) */
    const int dt = bf ? LTX2_KDT_BF16 : LTX2_KDT_F32;
    uint8_t *want = emu_alloc((size_t)n), *got = emu_alloc((size_t)n);
    unsigned char *d_o2 = emu_alloc(n * es + off);
    EMU_CHECK_LAUNCH(ltx2_k_fp8_quant(NULL, dt, d_o + off, want, n, 1.0f / FP8_SCALE), name);
    ltx2_k_fp8_outs q = {.n = 1, .q = {got}, .inv_scale = {1.0f / FP8_SCALE}};
    for (int no_y = 0; no_y < 2; no_y++) {
        q.no_y = no_y;
        emu_refill(got, (size_t)n);
        emu_store(d_o2 + off, o, n, bf);
        EMU_CHECK_LAUNCH(ltx2_k_head_gate(NULL, dt, d_o2 + off, dl, rows, heads, hd, &q), name);
        CHECK(memcmp(got, want, (size_t)n) == 0 && emu_guard_damage(got, (size_t)n) == 0,
              "%s: fp8 copy%s differs from the quantise kernel's", name, no_y ? " (no o)" : "");
        unsigned char *plain = no_y ? NULL : d_o + off;
        float *o2 = malloc((size_t)n * 4);
        emu_load(o2, d_o2 + off, n, bf);
        CHECK(plain ? memcmp(d_o2 + off, plain, (size_t)n * es) == 0 : memcmp(o2, o, (size_t)n * 4) == 0,
              "%s: o after the copies%s", name, no_y ? " should be untouched" : " differs from the plain launch's");
        free(o2);
    }
    free(want), free(got), free(d_o2);
    free(o), free(l), free(ref), free(out), free(d_o), free(dl);
}

/* ---- depth_to_space ---- */

static void d2s_case(ltx2_context *ctx, bool bf, int64_t n, int64_t t, int64_t h, int64_t w, int64_t c,
                     const int64_t s[3], bool drop, int64_t rc) {
    char name[96];
    snprintf(name, sizeof(name), "depth_to_space %s %lldx%lldx%lldx%lld c%lld s%lldx%lldx%lld%s%s", bf ? "bf16" : "f32",
             (long long)n, (long long)t, (long long)h, (long long)w, (long long)c, (long long)s[0], (long long)s[1],
             (long long)s[2], drop ? " drop" : "", rc ? " +residual" : "");
    const int64_t prod = s[0] * s[1] * s[2], nx = n * t * h * w * c * prod, nr = n * t * h * w * rc * prod;
    const int64_t ny = n * (t * s[0] - (drop ? 1 : 0)) * h * s[1] * w * s[2] * c;
    const uint64_t st = next_stream();
    float *x = emu_normal(st, nx, 1.0f, 0.0f, bf), *r = rc ? emu_normal(st + 1, nr, 1.0f, 0.0f, bf) : NULL;
    float *ref = malloc((size_t)ny * 4), *out = malloc((size_t)ny * 4);
    CHECK(ltx2_cpu_depth_to_space(ctx, x, n, t, h, w, c, s, drop, r, rc, ref) == LTX2_OK, "%s: cpu: %s", name,
          ltx2_last_error(ctx));
    const size_t es = bf ? 2 : 4;
    void *dx = emu_alloc(nx * es), *dr = rc ? emu_alloc(nr * es) : NULL, *dy = emu_alloc(ny * es);
    emu_store(dx, x, nx, bf);
    if (dr) emu_store(dr, r, nr, bf);
    const double t0 = emu_now_ms();
    const int rcode = ltx2_k_depth_to_space(NULL, bf ? LTX2_KDT_BF16 : LTX2_KDT_F32, dx, dr, dy, n, t, h, w, c, s[0],
                                            s[1], s[2], drop, rc);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rcode, name);
    CHECK(emu_guard_damage(dy, ny * es) == 0, "%s: wrote past y", name);
    emu_load(out, dy, ny, bf);
    if (bf) round_all(ref, ny); /* a pure gather + one fp32 add: exact */
    finish(name, out, ref, ny, 0.0, 0.0, bf, ms, !bf && rc);
    free(x), free(r), free(ref), free(out), free(dx), free(dr), free(dy);
}

/* ---- space_to_depth ---- */

static void s2d_case(ltx2_context *ctx, bool bf, int64_t n, int64_t t, int64_t h, int64_t w, int64_t c,
                     const int64_t s[3], int64_t rc) {
    char name[96];
    snprintf(name, sizeof(name), "space_to_depth %s %lldx%lldx%lldx%lld c%lld s%lldx%lldx%lld%s", bf ? "bf16" : "f32",
             (long long)n, (long long)t, (long long)h, (long long)w, (long long)c, (long long)s[0], (long long)s[1],
             (long long)s[2], rc ? " +residual mean" : "");
    const int64_t nx = n * t * h * w * c, nr = n * t * h * w * rc, ny = nx;
    const uint64_t st = next_stream();
    float *x = emu_normal(st, nx, 1.0f, 0.0f, bf), *r = rc ? emu_normal(st + 1, nr, 1.0f, 0.0f, bf) : NULL;
    float *ref = malloc((size_t)ny * 4), *out = malloc((size_t)ny * 4);
    CHECK(ltx2_cpu_space_to_depth(ctx, x, n, t, h, w, c, s, r, rc, ref) == LTX2_OK, "%s: cpu: %s", name,
          ltx2_last_error(ctx));
    const size_t es = bf ? 2 : 4;
    void *dx = emu_alloc(nx * es), *dr = rc ? emu_alloc(nr * es) : NULL, *dy = emu_alloc(ny * es);
    emu_store(dx, x, nx, bf);
    if (dr) emu_store(dr, r, nr, bf);
    const double t0 = emu_now_ms();
    const int rcode = ltx2_k_space_to_depth(NULL, bf ? LTX2_KDT_BF16 : LTX2_KDT_F32, dx, dr, dy, n, t, h, w, c, s[0],
                                            s[1], s[2], rc);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rcode, name);
    CHECK(emu_guard_damage(dy, ny * es) == 0, "%s: wrote past y", name);
    emu_load(out, dy, ny, bf);
    if (bf) round_all(ref, ny); /* a gather + the same fp32 sums and divide: exact */
    finish(name, out, ref, ny, 0.0, 0.0, bf, ms, !bf && rc);
    free(x), free(r), free(ref), free(out), free(dx), free(dr), free(dy);
}

/* ---- blur_downsample ---- */

/* fp32 sums of <= 25 weighted terms in the same order; only contraction into FMAs may differ. */
#define BLUR_F32_TOL 1e-6

static void blur_case(ltx2_context *ctx, bool bf, int64_t frames, int64_t h, int64_t w, int64_t c, int64_t s) {
    char name[96];
    snprintf(name, sizeof(name), "blur_downsample %s %lldx%lldx%lld c%lld s%lld", bf ? "bf16" : "f32",
             (long long)frames, (long long)h, (long long)w, (long long)c, (long long)s);
    const int64_t nx = frames * h * w * c, ny = frames * ((h - 1) / s + 1) * ((w - 1) / s + 1) * c;
    float *x = emu_normal(next_stream(), nx, 1.0f, 0.0f, bf);
    float *ref = malloc((size_t)ny * 4), *out = malloc((size_t)ny * 4);
    CHECK(ltx2_cpu_blur_downsample(ctx, x, frames, h, w, c, s, ref) == LTX2_OK, "%s: cpu: %s", name,
          ltx2_last_error(ctx));
    const size_t es = bf ? 2 : 4;
    void *dx = emu_alloc(nx * es), *dy = emu_alloc(ny * es);
    emu_store(dx, x, nx, bf);
    const double t0 = emu_now_ms();
    const int rcode = ltx2_k_blur_downsample(NULL, bf ? LTX2_KDT_BF16 : LTX2_KDT_F32, dx, dy, frames, h, w, c, s);
    const double ms = emu_now_ms() - t0;
    EMU_CHECK_LAUNCH(rcode, name);
    CHECK(emu_guard_damage(dy, ny * es) == 0, "%s: wrote past y", name);
    emu_load(out, dy, ny, bf);
    if (bf) round_all(ref, ny);
    /* bf16: the fp32 sums may round to the neighbouring bf16 value (one ulp, rtol 2^-8) */
    finish(name, out, ref, ny, BLUR_F32_TOL, bf ? 1.0 / 256.0 : BLUR_F32_TOL, bf, ms, true);
    free(x), free(ref), free(out), free(dx), free(dy);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    const double t0 = emu_now_ms();
    printf("streaming kernels (emulated) vs the CPU reference:\n");

    unary_case(ctx, LTX2_KUNARY_GELU_TANH, false, 4096, false, false); /* vector */
    unary_case(ctx, LTX2_KUNARY_GELU_TANH, false, 1001, true, false);  /* scalar (odd n) */
    unary_case(ctx, LTX2_KUNARY_SILU, false, 2048, true, false);
    unary_case(ctx, LTX2_KUNARY_SILU, false, 512, false, true); /* scalar (misaligned) */
    unary_case(ctx, LTX2_KUNARY_GELU_TANH, true, 2048, false, false);
    unary_case(ctx, LTX2_KUNARY_SILU, true, 999, true, false);
    /* the vocoders' ops: f32 vector / in-place scalar (odd n) / misaligned scalar, bf16 vector / in-place odd */
    for (int op = LTX2_KUNARY_LEAKY_RELU; op <= LTX2_KUNARY_DIV_SCALAR; op++) {
        unary_case(ctx, op, false, 1024, false, false);
        unary_case(ctx, op, false, 333, true, false);
        unary_case(ctx, op, false, 256, false, true);
        unary_case(ctx, op, true, 1024, true, false);
        unary_case(ctx, op, true, 77, false, false);
    }
    unary_refusal();

    const bin_case bins[] = {
        {LTX2_KBINARY_ADD, false, false, 3, 1, {4, 6, 8}, {8}},          /* vector, b row broadcast */
        {LTX2_KBINARY_MUL, false, false, 3, 2, {3, 5, 7}, {5, 1}},       /* scalar, b broadcast along the last dim */
        {LTX2_KBINARY_ADD, true, false, 3, 3, {2, 3, 16}, {2, 1, 16}},  /* vector bf16 */
        {LTX2_KBINARY_MUL, true, true, 2, 2, {4, 8}, {1, 8}},           /* strided a: scalar */
        {LTX2_KBINARY_ADD, false, false, 2, 2, {1, 16}, {6, 1}},         /* outer product: both broadcast */
        {LTX2_KBINARY_MUL, false, true, 3, 3, {2, 3, 5}, {2, 3, 5}},     /* strided a, same shapes */
        {LTX2_KBINARY_MUL, true, false, 2, 1, {5, 24}, {1}},             /* scalar b broadcast everywhere */
    };
    for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) binary_case(ctx, &bins[i]);

    convert_to_bf16_case(1024, false); /* vector */
    convert_to_bf16_case(1001, false); /* scalar */
    convert_to_bf16_case(64, true);    /* misaligned: scalar */
    convert_from_bf16_case(65536, LTX2_KDT_F32);
    convert_from_bf16_case(999, LTX2_KDT_F32);
    convert_from_bf16_case(4096, LTX2_KDT_BF16);

    fp8_dequant_case(false, 512); /* vector (n % 16 == 0) */
    fp8_dequant_case(true, 512);
    fp8_dequant_case(false, 257); /* scalar */
    fp8_quant_case(false, 4096, false);
    fp8_quant_case(false, 4095, false);
    fp8_quant_case(true, 1024, false);
    fp8_quant_case(true, 512, true);

    gated_add_case(ctx, false, 5, 64, 0, 1, 0);  /* plain add, vector */
    gated_add_case(ctx, false, 10, 64, 1, 5, 128); /* gate rows 192 apart, vector */
    gated_add_case(ctx, false, 7, 30, 2, 1, 2);  /* scalar */
    gated_add_case(ctx, true, 9, 96, 2, 1, 96);
    gated_add_case(ctx, true, 6, 37, 1, 3, 0);

    head_gate_case(ctx, false, 6, 4, 16, false); /* vector */
    head_gate_case(ctx, false, 5, 3, 6, false);  /* scalar */
    head_gate_case(ctx, false, 4, 2, 8, true);   /* misaligned: scalar */
    head_gate_case(ctx, true, 4, 2, 64, false);
    head_gate_case(ctx, true, 3, 5, 12, false);

    const int64_t s222[3] = {2, 2, 2}, s122[3] = {1, 2, 2}, s211[3] = {2, 1, 1};
    d2s_case(ctx, false, 2, 2, 3, 2, 4, s222, true, 2);
    d2s_case(ctx, false, 1, 3, 2, 3, 3, s122, false, 0);
    d2s_case(ctx, true, 2, 3, 2, 2, 8, s211, true, 4);
    d2s_case(ctx, true, 1, 2, 2, 3, 2, s222, false, 1);
    s2d_case(ctx, false, 2, 4, 4, 2, 2, s222, 8); /* the encoder's compress_all: g = 4 */
    s2d_case(ctx, false, 1, 3, 4, 6, 3, s122, 0);
    s2d_case(ctx, true, 1, 4, 2, 2, 6, s211, 6);  /* g = 1 */
    s2d_case(ctx, true, 2, 2, 4, 4, 2, s222, 16); /* g = 8 */
    blur_case(ctx, false, 2, 12, 15, 32, 2); /* the x1.5 resampler: stride 2 */
    blur_case(ctx, false, 1, 9, 6, 40, 4);
    blur_case(ctx, true, 3, 8, 9, 16, 2);

    printf("total %.1f s\n", (emu_now_ms() - t0) / 1e3);
    ltx2_context_free(ctx);
    return test_finish();
}
