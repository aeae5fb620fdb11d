/* The profiling backend (profile_backend.h): each table entry forwards to the inner backend with the
 * inner backend itself as `be` (its entries read their own impl), timed between two syncs of it. */
#include "profile_backend.h"

#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct prof {
    const ltx2_backend *inner;
    prof_account acc;
} prof;

static prof *P(const ltx2_backend *be) { return (prof *)be->impl; }

/* Waits for the inner queue; the clock starts after it. A failed wait is the op's error. */
static ltx2_status begin(const ltx2_backend *be, ltx2_context *ctx, double *t0) {
    const ltx2_status st = P(be)->inner->sync(P(be)->inner, ctx);
    *t0 = bench_now();
    return st;
}

static ltx2_status end(const ltx2_backend *be, ltx2_context *ctx, int slot, double t0, ltx2_status st) {
    if (st == LTX2_OK) st = P(be)->inner->sync(P(be)->inner, ctx);
    P(be)->acc.seconds[slot] += bench_now() - t0;
    P(be)->acc.calls[slot]++;
    return st;
}

/* One timed forward: `call` is the inner entry's call with `I` as its backend. */
#define TIMED(slot, call)                                                                                 \
    do {                                                                                                  \
        const ltx2_backend *I = P(be)->inner;                                                             \
        double t0;                                                                                        \
        ltx2_status st = begin(be, ctx, &t0);                                                             \
        if (st == LTX2_OK) st = (call);                                                                   \
        return end(be, ctx, (slot), t0, st);                                                              \
    } while (0)

static bool p_supports(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt) {
    return P(be)->inner->supports(P(be)->inner, op, dt);
}
static ltx2_status p_alloc(const ltx2_backend *be, ltx2_context *ctx, size_t n, void **out) {
    return P(be)->inner->alloc(P(be)->inner, ctx, n, out);
}
static void p_free(const ltx2_backend *be, void *ptr) { P(be)->inner->free(P(be)->inner, ptr); }
static ltx2_status p_upload(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src, size_t n) {
    TIMED(PROF_TRANSFER, I->upload(I, ctx, dst, src, n));
}
static ltx2_status p_download(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src, size_t n) {
    TIMED(PROF_TRANSFER, I->download(I, ctx, dst, src, n));
}
static ltx2_status p_copy(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src, size_t n) {
    TIMED(PROF_TRANSFER, I->copy(I, ctx, dst, src, n));
}
static ltx2_status p_copy_2d(const ltx2_backend *be, ltx2_context *ctx, void *dst, size_t dp, const void *src,
                             size_t sp, size_t w, size_t rows) {
    TIMED(PROF_TRANSFER, I->copy_2d(I, ctx, dst, dp, src, sp, w, rows));
}
static ltx2_status p_sync(const ltx2_backend *be, ltx2_context *ctx) { return P(be)->inner->sync(P(be)->inner, ctx); }
static ltx2_status p_mem_info(const ltx2_backend *be, ltx2_context *ctx, size_t *f, size_t *t) {
    return P(be)->inner->mem_info(P(be)->inner, ctx, f, t);
}

static ltx2_status p_gemm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *w,
                          ltx2_b_layout l, const ltx2_tensor *bias, ltx2_tensor *y) {
    TIMED(LTX2_OP_GEMM, I->gemm(I, ctx, x, w, l, bias, y));
}
static ltx2_status p_rms_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *w,
                              float eps, ltx2_tensor *y) {
    TIMED(LTX2_OP_RMS_NORM, I->rms_norm(I, ctx, x, w, eps, y));
}
static ltx2_status p_layer_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *w,
                                const ltx2_tensor *b, float eps, ltx2_tensor *y) {
    TIMED(LTX2_OP_LAYER_NORM, I->layer_norm(I, ctx, x, w, b, eps, y));
}
static ltx2_status p_softmax(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y) {
    TIMED(LTX2_OP_SOFTMAX, I->softmax(I, ctx, x, y));
}
static ltx2_status p_unary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, float alpha, const ltx2_tensor *x,
                           ltx2_tensor *y) {
    TIMED(op, I->unary(I, ctx, op, alpha, x, y));
}
static ltx2_status p_binary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_tensor *a,
                            const ltx2_tensor *b, ltx2_tensor *y) {
    TIMED(op, I->binary(I, ctx, op, a, b, y));
}
static ltx2_status p_convert(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y) {
    TIMED(LTX2_OP_CONVERT, I->convert(I, ctx, x, y));
}
static ltx2_status p_attention(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *q, const ltx2_tensor *k,
                               const ltx2_tensor *v, const ltx2_attn_args *a, ltx2_tensor *o) {
    TIMED(LTX2_OP_ATTENTION, I->attention(I, ctx, q, k, v, a, o));
}
static ltx2_status p_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_rope_type type,
                          int64_t heads, const ltx2_tensor *c, const ltx2_tensor *s, ltx2_tensor *y) {
    TIMED(LTX2_OP_ROPE, I->rope(I, ctx, x, type, heads, c, s, y));
}
static ltx2_status p_conv3d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d, const ltx2_tensor *x,
                            const ltx2_tensor *w, const ltx2_tensor *b, bool silu, ltx2_tensor *y) {
    TIMED(LTX2_OP_CONV3D, I->conv3d(I, ctx, d, x, w, b, silu, y));
}
static ltx2_status p_pixel_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float eps, bool silu,
                                ltx2_tensor *y) {
    TIMED(LTX2_OP_PIXEL_NORM, I->pixel_norm(I, ctx, x, eps, silu, y));
}
static ltx2_status p_d2s(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_d2s_args *a,
                         const ltx2_tensor *r, ltx2_tensor *y) {
    TIMED(LTX2_OP_DEPTH_TO_SPACE, I->depth_to_space(I, ctx, x, a, r, y));
}
static ltx2_status p_s2d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_s2d_args *a,
                         const ltx2_tensor *r, ltx2_tensor *y) {
    TIMED(LTX2_OP_SPACE_TO_DEPTH, I->space_to_depth(I, ctx, x, a, r, y));
}
static ltx2_status p_group_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t g, float eps,
                                const ltx2_tensor *w, const ltx2_tensor *b, bool silu, ltx2_tensor *y) {
    TIMED(LTX2_OP_GROUP_NORM, I->group_norm(I, ctx, x, g, eps, w, b, silu, y));
}
static ltx2_status p_blur(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t s, ltx2_tensor *y) {
    TIMED(LTX2_OP_BLUR_DOWNSAMPLE, I->blur_downsample(I, ctx, x, s, y));
}
static ltx2_status p_conv1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv1d_desc *d, const ltx2_tensor *x,
                            const ltx2_tensor *w, const ltx2_tensor *b, ltx2_tensor *y) {
    TIMED(LTX2_OP_CONV1D, I->conv1d(I, ctx, d, x, w, b, y));
}
static ltx2_status p_convt1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_convt1d_desc *d,
                             const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *b, ltx2_tensor *y) {
    TIMED(LTX2_OP_CONV_TRANSPOSE1D, I->conv_transpose1d(I, ctx, d, x, w, b, y));
}
static ltx2_status p_fir(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_fir_desc *d,
                         const ltx2_tensor *x, const ltx2_tensor *f, ltx2_tensor *y) {
    TIMED(op, I->fir(I, ctx, op, d, x, f, y));
}
static ltx2_status p_snake(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *a,
                           const ltx2_tensor *ib, ltx2_tensor *y) {
    TIMED(LTX2_OP_SNAKE, I->snake(I, ctx, x, a, ib, y));
}
static ltx2_status p_complex_abs(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y) {
    TIMED(LTX2_OP_COMPLEX_ABS, I->complex_abs(I, ctx, x, y));
}
static ltx2_status p_norm_modulate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_norm_kind n,
                                   float eps, const ltx2_tensor *sc, const ltx2_tensor *sh, const ltx2_mod_rows *m,
                                   ltx2_tensor *y, const ltx2_fp8_outs *q) {
    TIMED(LTX2_OP_NORM_MODULATE, I->norm_modulate(I, ctx, x, n, eps, sc, sh, m, y, q));
}
static ltx2_status p_gated_add(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                               const ltx2_tensor *g, const ltx2_mod_rows *m) {
    TIMED(LTX2_OP_GATED_ADD, I->gated_add(I, ctx, x, y, g, m));
}
static ltx2_status p_head_gate(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o, const ltx2_tensor *l,
                               int64_t heads, const ltx2_fp8_outs *q) {
    TIMED(LTX2_OP_HEAD_GATE, I->head_gate(I, ctx, o, l, heads, q));
}
static ltx2_status p_gemm_ex(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *w,
                             const ltx2_gemm_ex_args *a, ltx2_tensor *y) {
    TIMED(x->dtype == LTX2_F8_E4M3 ? LTX2_OP_GEMM_FP8 : LTX2_OP_GEMM_EX, I->gemm_ex(I, ctx, x, w, a, y));
}
static ltx2_status p_row_sumsq(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *ss) {
    TIMED(LTX2_OP_ROW_SUMSQ, I->row_sumsq(I, ctx, x, ss));
}
static ltx2_status p_row_stats(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *out) {
    TIMED(LTX2_OP_ROW_STATS, I->row_stats(I, ctx, x, out));
}
static ltx2_status p_add_rms_norm(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                  const ltx2_tensor *wy, const ltx2_tensor *w, float eps, ltx2_tensor *out) {
    TIMED(LTX2_OP_ADD_RMS_NORM, I->add_rms_norm(I, ctx, x, y, wy, w, eps, out));
}
static ltx2_status p_rms_norm_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   const ltx2_tensor *w, float eps, int64_t heads, const ltx2_tensor *cos_t,
                                   const ltx2_tensor *sin_t, ltx2_tensor *y) {
    TIMED(LTX2_OP_RMS_NORM_ROPE, I->rms_norm_rope(I, ctx, x, w, eps, heads, cos_t, sin_t, y));
}
static ltx2_status p_rms_apply(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *ss,
                               int64_t n, const ltx2_tensor *w, float eps, ltx2_tensor *y) {
    TIMED(LTX2_OP_RMS_APPLY, I->rms_apply(I, ctx, x, ss, n, w, eps, y));
}
static ltx2_status p_fp8(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float scale, ltx2_tensor *y) {
    TIMED(LTX2_OP_FP8, I->fp8(I, ctx, x, scale, y));
}

static void p_destroy(ltx2_backend *be) {
    free(be->impl);
    free(be);
}

ltx2_status prof_backend_create(ltx2_context *ctx, const ltx2_backend *inner, ltx2_backend **out) {
    ltx2_backend *be = calloc(1, sizeof *be);
    prof *p = calloc(1, sizeof *p);
    if (!be || !p) {
        free(be);
        free(p);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "profiling backend");
    }
    p->inner = inner;
    *be = (ltx2_backend){
        .name = inner->name, .device = inner->device, .device_index = inner->device_index, .impl = p,
        .gemm_bf16_weights = inner->gemm_bf16_weights, .fp8_gemm_out = inner->fp8_gemm_out,
        .supports = p_supports, .alloc = p_alloc, .free = p_free,
        .upload = p_upload, .download = p_download, .copy = p_copy, .copy_2d = p_copy_2d, .sync = p_sync,
        .mem_info = inner->mem_info ? p_mem_info : NULL, .gemm = p_gemm, .rms_norm = p_rms_norm,
        .layer_norm = p_layer_norm, .softmax = p_softmax, .unary = p_unary, .binary = p_binary, .convert = p_convert,
        .attention = p_attention, .rope = p_rope, .conv3d = p_conv3d, .pixel_norm = p_pixel_norm,
        .depth_to_space = p_d2s, .space_to_depth = p_s2d, .group_norm = p_group_norm, .blur_downsample = p_blur,
        .conv1d = p_conv1d, .conv_transpose1d = p_convt1d, .fir = p_fir, .snake = p_snake,
        .complex_abs = p_complex_abs, .norm_modulate = p_norm_modulate, .gated_add = p_gated_add,
        .head_gate = p_head_gate, .gemm_ex = p_gemm_ex, .row_sumsq = p_row_sumsq, .row_stats = p_row_stats, .add_rms_norm = p_add_rms_norm,
        .rms_norm_rope = p_rms_norm_rope,
        .rms_apply = p_rms_apply,
        .fp8 = p_fp8, .destroy = p_destroy};
    *out = be;
    return LTX2_OK;
}

prof_account prof_backend_account(const ltx2_backend *be) { return P(be)->acc; }

void prof_backend_reset(ltx2_backend *be) { memset(&P(be)->acc, 0, sizeof P(be)->acc); }

void prof_report(bench_report *r, const prof_account *a, double wall_s, const char *what) {
    double total = 0;
    int64_t calls = 0;
    for (int s = 0; s < PROF_SLOTS; s++) total += a->seconds[s], calls += a->calls[s];
    const double gemm = a->seconds[LTX2_OP_GEMM] + a->seconds[LTX2_OP_GEMM_EX] + a->seconds[LTX2_OP_GEMM_FP8];
    const double attn = a->seconds[LTX2_OP_ATTENTION] + a->seconds[LTX2_OP_ROPE];
    const double conv =
        a->seconds[LTX2_OP_CONV3D] + a->seconds[LTX2_OP_CONV1D] + a->seconds[LTX2_OP_CONV_TRANSPOSE1D];
    const double xfer = a->seconds[PROF_TRANSFER], elem = total - gemm - attn - conv - xfer;
    const double t = total > 0 ? total : 1;
    bench_report_note(r, "%s (every op waited for): %.3f s over %lld ops: GEMMs %.1f%%, attention + RoPE %.1f%%, "
                      "convolutions %.1f%%, norms / elementwise %.1f%%, transfers %.1f%%", what, total,
                      (long long)calls, 100 * gemm / t, 100 * attn / t, 100 * conv / t, 100 * elem / t, 100 * xfer / t);
    if (wall_s > 0)
        bench_report_note(r, "  its wall time %.3f s: %.3f s outside the ops (host work between them)", wall_s,
                          wall_s - total);
    for (int s = 0; s < LTX2_OP_COUNT; s++)
        if (a->calls[s])
            bench_report_note(r, "  %-16s %6lld calls %9.3f ms", ltx2_op_name((ltx2_op)s), (long long)a->calls[s],
                              a->seconds[s] * 1e3);
    if (a->calls[PROF_TRANSFER])
        bench_report_note(r, "  %-16s %6lld calls %9.3f ms", "transfers", (long long)a->calls[PROF_TRANSFER],
                          xfer * 1e3);
}
