/* fp32 CPU references of the fused DiT ops (the same arithmetic as src/model/dit_block.c's
 * modulate / gated_add / attention gate), GEMM epilogues composed from the CPU GEMM and GELU, and
 * the fp8 e4m3 casts of src/core/dtype.c with a per-tensor scale. */
#include "backend/backend_cpu_fused.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "cpu/cpu_ops.h"
#include "cpu/cpu_rope.h"

static int64_t mod_row(const ltx2_mod_rows *m, int64_t r) {
    return m->row_idx ? (int64_t)((const int32_t *)m->row_idx->data)[r] : r / m->rows_per_group;
}

ltx2_status ltx2_cpu_be_norm_modulate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                      ltx2_norm_kind norm, float eps, const ltx2_tensor *scale,
                                      const ltx2_tensor *shift, const ltx2_mod_rows *m, ltx2_tensor *y,
                                      const ltx2_fp8_outs *q) {
    const int64_t D = x->shape[x->ndim - 1], rows = ltx2_tensor_numel(x) / D;
    float *yd = y->data;
    if (norm == LTX2_NORM_RMS) LTX2_TRY(ltx2_cpu_rms_norm(ctx, x->data, yd, rows, D, NULL, eps));
    else if (norm == LTX2_NORM_LAYER) LTX2_TRY(ltx2_cpu_layer_norm(ctx, x->data, yd, rows, D, NULL, NULL, eps));
    else if (yd != x->data) memcpy(yd, x->data, (size_t)(rows * D) * sizeof(float));
    const float *sc = scale->data, *sh = shift->data;
    const int64_t ld = scale->strides[0];
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t u = mod_row(m, r);
        float *o = yd + r * D;
        for (int64_t c = 0; c < D; c++) o[c] = o[c] * (1.0f + sc[u * ld + c]) + sh[u * ld + c];
    }
    /* the copies from y as the fp8 op would make them (the reference has no fused form) */
    for (int i = 0; q && i < q->n; i++) LTX2_TRY(ltx2_cpu_be_fp8(be, ctx, y, q->scale[i], q->q[i]));
    return LTX2_OK;
}

ltx2_status ltx2_cpu_be_gated_add(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                  const ltx2_tensor *gate, const ltx2_mod_rows *m) {
    (void)be, (void)ctx;
    const int64_t D = x->shape[x->ndim - 1], rows = ltx2_tensor_numel(x) / D;
    float *xd = x->data;
    const float *yd = y->data, *g = gate ? gate->data : NULL;
    const int64_t ld = gate ? gate->strides[0] : 0;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *gr = g ? g + mod_row(m, r) * ld : NULL;
        for (int64_t c = 0; c < D; c++) xd[r * D + c] = xd[r * D + c] + yd[r * D + c] * (gr ? gr[c] : 1.0f);
    }
    return LTX2_OK;
}

/* The three reference ops in sequence (the norms' ltx2_cpu_rms_norm, the add above): bit for bit
 * what a model calling them one by one computes. */
ltx2_status ltx2_cpu_be_add_rms_norm(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                     const ltx2_tensor *wy, const ltx2_tensor *w, float eps, ltx2_tensor *out) {
    const int64_t d = x->shape[x->ndim - 1], rows = ltx2_tensor_numel(x) / d;
    float *yn = malloc((size_t)(rows * d) * sizeof *yn);
    if (!yn) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu add_rms_norm: %lld x %lld floats", (long long)rows, (long long)d);
    ltx2_status st = ltx2_cpu_rms_norm(ctx, y->data, yn, rows, d, wy ? wy->data : NULL, eps);
    ltx2_tensor tn = *y;
    tn.data = yn;
    if (st == LTX2_OK) st = ltx2_cpu_be_gated_add(be, ctx, x, &tn, NULL, NULL);
    free(yn);
    LTX2_TRY(st);
    return ltx2_cpu_rms_norm(ctx, x->data, out->data, rows, d, w ? w->data : NULL, eps);
}

/* The two reference ops in sequence (ltx2_cpu_rms_norm over each head's d values, then the split
 * RoPE of ltx2_cpu_rope_apply_split_tab in place): bit for bit what a model calling them does. */
ltx2_status ltx2_cpu_be_rms_norm_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                      const ltx2_tensor *w, float eps, int64_t heads, const ltx2_tensor *cos_t,
                                      const ltx2_tensor *sin_t, ltx2_tensor *y) {
    (void)be;
    const int64_t B = x->shape[0], S = x->shape[1], d = x->shape[2] / heads;
    LTX2_TRY(ltx2_cpu_rms_norm(ctx, x->data, y->data, B * S * heads, d, w ? w->data : NULL, eps));
    return ltx2_cpu_rope_apply_split_tab(ctx, y->data, cos_t->data, sin_t->data, B, S, heads, d, cos_t->shape[0],
                                         cos_t->shape[1]);
}

ltx2_status ltx2_cpu_be_head_gate(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o,
                                  const ltx2_tensor *logits, int64_t heads, const ltx2_fp8_outs *q) {
    const int64_t inner = o->shape[o->ndim - 1], d = inner / heads, rows = ltx2_tensor_numel(o) / inner;
    float *od = o->data;
    const float *l = logits->data;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t h = 0; h < heads; h++) {
            /* the reference's double sigmoid (dit_block.c attn_forward) */
            float gv = 2.0f * (float)(1.0 / (1.0 + exp(-(double)l[r * heads + h])));
            for (int64_t j = 0; j < d; j++) od[r * inner + h * d + j] *= gv;
        }
    /* the copies from o as the fp8 op would make them (the reference has no fused form) */
    for (int i = 0; q && i < q->n; i++) LTX2_TRY(ltx2_cpu_be_fp8(be, ctx, o, q->scale[i], q->q[i]));
    return LTX2_OK;
}

/* An fp8 operand as f32 values times its scale (a malloc'd copy the caller frees; NULL: no memory). */
static float *fp8_widened(const ltx2_tensor *t, float scale) {
    const int64_t n = ltx2_tensor_numel(t);
    float *d = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!d) return NULL;
    const uint8_t *s = t->data;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) d[i] = ltx2_fp8e4m3_to_f32(s[i]) * scale;
    return d;
}

ltx2_status ltx2_cpu_be_gemm_ex(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                const ltx2_tensor *w, const ltx2_gemm_ex_args *a, ltx2_tensor *y) {
    if (x->dtype == LTX2_F8_E4M3) {
        /* the fp8 reference: both operands dequantised with their per-tensor scales, then the f32
         * GEMM and its epilogues (y f32, be->fp8_gemm_out) */
        float *xd = fp8_widened(x, a->x_scale), *wd = fp8_widened(w, a->w_scale);
        ltx2_status st = LTX2_OK;
        if (!xd || !wd) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu gemm_fp8: dequantised operands");
        } else {
            ltx2_tensor xf = ltx2_tensor_make(xd, LTX2_F32, x->ndim, x->shape);
            ltx2_tensor wf = ltx2_tensor_make(wd, LTX2_F32, w->ndim, w->shape);
            st = ltx2_cpu_be_gemm_ex(be, ctx, &xf, &wf, a, y);
        }
        free(xd);
        free(wd);
        return st;
    }
    const int64_t K = x->shape[x->ndim - 1], N = y->shape[y->ndim - 1], M = ltx2_tensor_numel(x) / K;
    const int64_t ldb = a->w_layout == LTX2_B_NK ? K : N;
    /* residual through beta = 1 with C = residual, as cuBLASLt does (y may be the residual) */
    float beta = 0.0f;
    if (a->residual) {
        if (a->residual->data != y->data) memcpy(y->data, a->residual->data, (size_t)(M * N) * sizeof(float));
        beta = 1.0f;
    }
    LTX2_TRY(ltx2_cpu_gemm_wdt(ctx, M, N, K, 1.0f, x->data, K, w->data, w->dtype, ldb, a->w_layout, beta, y->data,
                               N, a->bias ? a->bias->data : NULL));
    return a->gelu ? ltx2_cpu_gelu_tanh(ctx, y->data, y->data, M * N) : LTX2_OK;
}

ltx2_status ltx2_cpu_be_fp8(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float scale,
                            ltx2_tensor *y) {
    (void)be, (void)ctx;
    const int64_t n = ltx2_tensor_numel(x);
    if (y->dtype == LTX2_F8_E4M3) {
        const float *s = x->data, inv = 1.0f / scale;
        uint8_t *d = y->data;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) d[i] = ltx2_f32_to_fp8e4m3(s[i] * inv);
    } else {
        const uint8_t *s = x->data;
        float *d = y->data;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) d[i] = ltx2_fp8e4m3_to_f32(s[i]) * scale;
    }
    return LTX2_OK;
}
