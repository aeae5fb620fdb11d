/* Multi-head attention on the CPU: one (batch, head, query) row per OpenMP iteration, with a
 * per-thread score row of Tk floats. Scores and the softmax sum accumulate in double for the
 * reference; the max-subtracted exponentials are the usual stable softmax. */
#include "cpu/cpu_attention.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static inline bool key_allowed(const ltx2_cpu_attn_keys *K, const uint8_t *m, int64_t i, int64_t j) {
    if (m && !m[j]) return false;
    if (K->causal && j > i) return false;
    if (K->window > 0 && i - j >= K->window) return false;
    return true;
}

ltx2_status ltx2_cpu_attention(ltx2_context *ctx, const float *q, const float *k, const float *v, float *out,
                               int64_t B, int64_t Tq, int64_t Tk, int64_t heads, int64_t head_dim,
                               const ltx2_cpu_attn_keys *keys, float scale) {
    const ltx2_cpu_attn_keys none = {0};
    const ltx2_cpu_attn_keys *K = keys ? keys : &none;
    const int64_t kvh = K->kv_heads > 0 ? K->kv_heads : heads;
    if (B < 0 || Tq < 0 || Tk <= 0 || heads <= 0 || head_dim <= 0 || heads % kvh != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "cpu attention: bad shape B=%lld Tq=%lld Tk=%lld heads=%lld kv_heads=%lld head_dim=%lld "
                          "(Tk > 0, kv_heads dividing heads)",
                          (long long)B, (long long)Tq, (long long)Tk, (long long)heads, (long long)kvh,
                          (long long)head_dim);
    if ((K->causal || K->window > 0) && Tq != Tk)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "cpu attention: a causal or windowed mask needs Tq == Tk (%lld, %lld)",
                          (long long)Tq, (long long)Tk);
    if (B * Tq == 0) return LTX2_OK;
    if (!q || !k || !v || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu attention: NULL buffer");
    if (out == q || out == k || out == v)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu attention: out must not alias q, k or v");
    const int64_t D = heads * head_dim, Dkv = kvh * head_dim, group = heads / kvh;
    const int n_threads = omp_get_max_threads();
    double *scratch = malloc((size_t)n_threads * (size_t)(Tk + head_dim) * sizeof(double));
    if (!scratch)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu attention: %d x %lld scratch doubles", n_threads,
                          (long long)(Tk + head_dim));

#pragma omp parallel
    {
        double *p = scratch + (size_t)omp_get_thread_num() * (size_t)(Tk + head_dim);
        double *acc = p + Tk;
#pragma omp for collapse(3) schedule(static)
        for (int64_t b = 0; b < B; b++) {
            for (int64_t h = 0; h < heads; h++) {
                for (int64_t i = 0; i < Tq; i++) {
                    const float *qi = q + (b * Tq + i) * D + h * head_dim;
                    const int64_t hk = h / group;
                    const uint8_t *m = K->key_mask ? K->key_mask + b * Tk : NULL;
                    int64_t n_keep = 0;
                    for (int64_t j = 0; j < Tk; j++) n_keep += key_allowed(K, m, i, j);
                    float *oi = out + (b * Tq + i) * D + h * head_dim;
                    if (n_keep == 0 && K->empty_zero) {
                        memset(oi, 0, (size_t)head_dim * sizeof(float));
                        continue;
                    }
                    const int use_mask = n_keep > 0 && n_keep < Tk; /* none kept: uniform over every key */
                    double mx = -INFINITY;
                    for (int64_t j = 0; j < Tk; j++) {
                        if (use_mask && !key_allowed(K, m, i, j)) continue;
                        const float *kj = k + (b * Tk + j) * Dkv + hk * head_dim;
                        double s = 0.0;
                        /* simd: lets the double dot product vectorise (a fixed lane split, so the
                         * result is still deterministic for a given build) */
#pragma omp simd reduction(+ : s)
                        for (int64_t c = 0; c < head_dim; c++) s += (double)qi[c] * kj[c];
                        s *= scale;
                        if (n_keep == 0) s = 0.0;
                        p[j] = s;
                        if (s > mx) mx = s;
                    }
                    double sum = 0.0;
                    for (int64_t c = 0; c < head_dim; c++) acc[c] = 0.0;
                    for (int64_t j = 0; j < Tk; j++) {
                        if (use_mask && !key_allowed(K, m, i, j)) continue;
                        double e = exp(p[j] - mx);
                        sum += e;
                        const float *vj = v + (b * Tk + j) * Dkv + hk * head_dim;
#pragma omp simd
                        for (int64_t c = 0; c < head_dim; c++) acc[c] += e * vj[c];
                    }
                    for (int64_t c = 0; c < head_dim; c++) oi[c] = (float)(acc[c] / sum);
                }
            }
        }
    }
    free(scratch);
    return LTX2_OK;
}
