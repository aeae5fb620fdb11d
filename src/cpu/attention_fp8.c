/* CPU reference of the e4m3 attention (ltx2_attn_args.fp8; the wgmma kernel's F8 variant with
 * kernels/att_fp8.cu's pre-pass): the same quantisation groups, codes and tile-wise online softmax,
 * in double where the kernel accumulates in f32, so a kernel differs from it only by rounding
 * order, exp2's approximation and the e4m3 codes of P those move across a rounding boundary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "att90_layout.h" /* A90_F8_BN, A90_F8_MAX, A90_F8_P_SCALE: the scheme's constants */
#include "core/dtype.h"
#include "cpu/cpu_attention.h"

/* log2(e) in f32, as the kernel's ATT_LOG2E (the multiplier is rounded the same way). */
#define F8_LOG2E 1.4426950408889634f

/* One quantisation group, rows x cols values x[r * xs + c] taken as bf16 (the values a device's
 * tensors hold, its norm / RoPE pre-pass included: so a group's maximum, and with it every code,
 * is the one the device finds) less sub[c] (NULL: 0) in f32, scale = amax / 448, codes
 * e4m3(x * 448 / amax), decoded into out[r * os + c]; rows with seen[r] 0 (seen NULL: all seen)
 * are 0 and no part of the maximum. Returns the scale (1 for an all-zero group). */
static float quant_group(const float *x, int64_t rows, int64_t cols, int64_t xs, const uint8_t *seen, const float *sub,
                         float *out, int64_t os) {
    float amax = 0.0f;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            out[r * os + c] = seen && !seen[r] ? 0.0f : ltx2_round_bf16(x[r * xs + c]) - (sub ? sub[c] : 0.0f);
            amax = fmaxf(amax, fabsf(out[r * os + c]));
        }
    const float inv = amax > 0.0f ? A90_F8_MAX / amax : 0.0f;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            out[r * os + c] = ltx2_fp8e4m3_to_f32(ltx2_f32_to_fp8e4m3(out[r * os + c] * inv));
    return amax > 0.0f ? amax / A90_F8_MAX : 1.0f;
}

/* mean[c] of the seen rows of the n rows x[r * xs + c] (bf16 values, as the device reads them; seen
 * NULL: every row), c < d; 0 when no row is seen. */
static void channel_means(const float *x, int64_t n, int64_t d, int64_t xs, const uint8_t *seen, float *mean) {
    int64_t n_seen = 0;
    for (int64_t r = 0; r < n; r++) n_seen += !seen || seen[r];
    for (int64_t c = 0; c < d; c++) {
        double s = 0.0;
        for (int64_t r = 0; r < n; r++)
            if (!seen || seen[r]) s += ltx2_round_bf16(x[r * xs + c]);
        mean[c] = n_seen ? (float)(s / (double)n_seen) : 0.0f;
    }
}

/* One (batch, head): rows of q [Tq, ld_q] against k/v [Tk, ld_kv] of head_dim d, quantised copies
 * qd/kd/vd ([T, d]) and scales made by the caller; out rows [Tq, ld_q]. */
typedef struct f8_head {
    const float *qd, *qs, *kd, *ks, *vd, *vs, *vmean;
    const uint8_t *mask; /* [Tk] or NULL */
    bool all_masked;
    int64_t Tq, Tk, d;
    float scale_log2;
} f8_head;

static void f8_row(const f8_head *h, int64_t i, float *o_row, double *acc) {
    const int64_t d = h->d;
    const float *q = h->qd + i * d;
    const float q_mul = h->qs[i] * h->scale_log2;
    double m = -INFINITY, l = 0.0;
    for (int64_t c = 0; c < d; c++) acc[c] = 0.0;
    float x[A90_F8_BN];
    for (int64_t k0 = 0; k0 < h->Tk; k0 += A90_F8_BN) {
        const int64_t n = h->Tk - k0 < A90_F8_BN ? h->Tk - k0 : A90_F8_BN;
        const float mul = q_mul * h->ks[k0 / A90_F8_BN];
        float mx = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            const int64_t key = k0 + j;
            if (h->all_masked) {
                x[j] = 0.0f; /* every key, uniform weights (the bf16 attention's rule) */
            } else if (h->mask && !h->mask[key]) {
                x[j] = -INFINITY;
            } else {
                double dot = 0.0;
                for (int64_t c = 0; c < d; c++) dot += (double)q[c] * h->kd[key * d + c];
                x[j] = (float)dot * mul;
            }
            mx = fmaxf(mx, x[j]);
        }
        const double m_new = fmax(m, (double)mx), base = m_new == -INFINITY ? 0.0 : m_new;
        const double alpha = exp2(m - base);
        l *= alpha;
        for (int64_t c = 0; c < d; c++) acc[c] *= alpha;
        for (int64_t j = 0; j < n; j++) {
            const float p = (float)exp2((double)x[j] - base);
            l += p;
            const double p8 = ltx2_fp8e4m3_to_f32(ltx2_f32_to_fp8e4m3(p * A90_F8_P_SCALE));
            if (p8 == 0.0) continue;
            const float *vr = h->vd + (k0 + j) * d;
            for (int64_t c = 0; c < d; c++) acc[c] += p8 * vr[c];
        }
        m = m_new;
    }
    for (int64_t c = 0; c < d; c++)
        o_row[c] = l > 0.0 ? (float)(acc[c] / A90_F8_P_SCALE / l * h->vs[c] + h->vmean[c]) : 0.0f;
}

ltx2_status ltx2_cpu_attention_fp8(ltx2_context *ctx, const float *q, const float *k, const float *v, float *out,
                                   int64_t B, int64_t Tq, int64_t Tk, int64_t heads, int64_t head_dim,
                                   const ltx2_cpu_attn_keys *keys, float scale) {
    const ltx2_cpu_attn_keys none = {0};
    const ltx2_cpu_attn_keys *K = keys ? keys : &none;
    int64_t kvh = 0;
    LTX2_TRY(ltx2_cpu_attn_shape(ctx, "cpu fp8 attention", B, Tq, Tk, heads, head_dim, K, &kvh));
    if (K->causal || K->window > 0 || K->empty_zero || K->probs_bf16 || K->blocks)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "cpu fp8 attention: causal, windowed, empty-zero, image-block or bf16-probability masks "
                          "are not part of the e4m3 scheme");
    if (B * Tq == 0) return LTX2_OK;
    if (!q || !k || !v || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu fp8 attention: NULL buffer");
    const int64_t d = head_dim, D = heads * d, Dkv = kvh * d, group = heads / kvh;
    const int64_t tiles = (Tk + A90_F8_BN - 1) / A90_F8_BN;
    /* per (batch, kv head): K and V quantised [Tk, d] with their scales; per (batch, head): Q */
    const size_t kv_floats = (size_t)(2 * Tk * d + tiles + 3 * d), q_floats = (size_t)(Tq * d + Tq);
    float *kvbuf = malloc(kv_floats * sizeof(float)), *qbuf = malloc(q_floats * sizeof(float));
    if (!kvbuf || !qbuf) {
        free(kvbuf), free(qbuf);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu fp8 attention: %zu floats", kv_floats + q_floats);
    }
    float *kd = kvbuf, *vd = kd + Tk * d, *ks = vd + Tk * d, *vs = ks + tiles, *kmean = vs + d, *vmean = kmean + d;
    float *qd = qbuf, *qs = qd + Tq * d;
    const float scale_log2 = scale * F8_LOG2E;
    ltx2_status st = LTX2_OK;
    for (int64_t b = 0; b < B; b++) {
        const uint8_t *m = K->key_mask ? K->key_mask + b * Tk : NULL;
        bool any = m == NULL;
        for (int64_t j = 0; m && j < Tk && !any; j++) any = m[j] != 0;
        /* the keys the queries see make the statistics: the mask's, or every key without one or
         * when none is left (those rows average every value) */
        const uint8_t *seen = m && any ? m : NULL;
        for (int64_t g = 0; g < kvh; g++) {
            const float *kh = k + b * Tk * Dkv + g * d, *vh = v + b * Tk * Dkv + g * d;
            /* K and V less their channel means over the keys (the kernel's smoothing: K's shifts each
             * score row by a constant, V's is added back to O); every statistic over the seen keys */
            channel_means(kh, Tk, d, Dkv, seen, kmean);
            channel_means(vh, Tk, d, Dkv, seen, vmean);
            for (int64_t t = 0; t < tiles; t++) { /* a group per tile: its keys x d */
                const int64_t n = Tk - t * A90_F8_BN < A90_F8_BN ? Tk - t * A90_F8_BN : A90_F8_BN;
                ks[t] = quant_group(kh + t * A90_F8_BN * Dkv, n, d, Dkv, seen ? seen + t * A90_F8_BN : NULL, kmean,
                                    kd + t * A90_F8_BN * d, d);
            }
            for (int64_t c = 0; c < d; c++) /* a group per channel */
                vs[c] = quant_group(vh + c, Tk, 1, Dkv, seen, vmean + c, vd + c, d);
            for (int64_t hq = g * group; hq < (g + 1) * group; hq++) {
                for (int64_t i = 0; i < Tq; i++)
                    qs[i] = quant_group(q + (b * Tq + i) * D + hq * d, 1, d, d, NULL, NULL, qd + i * d, d);
                const f8_head hd = {qd, qs, kd, ks, vd, vs, vmean, m, !any, Tq, Tk, d, scale_log2};
                int oom = 0;
#pragma omp parallel reduction(| : oom)
                {
                    double *acc = malloc((size_t)d * sizeof(double));
                    oom = acc == NULL;
#pragma omp for schedule(static)
                    for (int64_t i = 0; i < Tq; i++)
                        if (acc) f8_row(&hd, i, out + (b * Tq + i) * D + hq * d, acc);
                    free(acc);
                }
                if (oom) {
                    st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu fp8 attention: row accumulators");
                    break;
                }
            }
            if (st != LTX2_OK) break;
        }
        if (st != LTX2_OK) break;
    }
    free(kvbuf), free(qbuf);
    return st;
}
