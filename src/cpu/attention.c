/* Multi-head attention on the CPU as two GEMMs per (batch, head, tile of queries) around a row softmax:
 * S = scale * Q K^T and O = P V through ltx2_cpu_gemm (so attention runs at the GEMM's rate: it was a
 * per-row double dot product at a fifth of it, #15 item 8), with P = exp(S - rowmax) / rowsum. fp32 like
 * torch's SDPA on the CPU; the row sum accumulates in double (per key, or per lane of 16 with libmvec's
 * vector expf: cpu_mvec.h).
 * Every output row depends only on its own query row, the keys and the GEMM's fixed summation order,
 * not on the tiling or on which heads a rank computes, so a head-sharded run gives the same bits. */
#include "cpu/cpu_attention.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "cpu/cpu_mvec.h"
#include "cpu/cpu_ops.h"

/* Floats of one tile of scores (queries x keys): 16 MB keeps a tile in a large L2/L3 slice while the
 * tile stays tall enough for the GEMM's row blocking (>= 341 queries at 12,288 keys). */
#define ATTN_TILE_FLOATS ((int64_t)4 << 20)

/* m: the batch row's key mask, blk its image-block ids (both may be NULL). */
static inline bool key_allowed(const ltx2_cpu_attn_keys *K, const uint8_t *m, const int32_t *blk, int64_t i,
                               int64_t j) {
    if (m && !m[j]) return false;
    if (K->causal && j > i && !(blk && blk[i] >= 0 && blk[j] == blk[i])) return false;
    if (K->window > 0 && i - j >= K->window) return false;
    return true;
}

/* How many of the Tk keys query i sees. */
static int64_t keys_seen(const ltx2_cpu_attn_keys *K, const uint8_t *m, const int32_t *blk, int64_t i, int64_t Tk) {
    if (!m && !K->causal && K->window <= 0) return Tk;
    int64_t n = 0;
    for (int64_t j = 0; j < Tk; j++) n += key_allowed(K, m, blk, i, j);
    return n;
}

#if LTX2_CPU_MVEC
/* A row's scores, 16 at a time: s = exp(s - max(s)) through libmvec's expf (a masked key, -inf,
 * becomes 0), returning their sum, accumulated in double (16 lanes, then added up). The scalar
 * loop's expf call per score cost more than the row's two GEMMs. */
static double exp_row(float *s, int64_t Tk) {
    __m512 vmax = _mm512_set1_ps(-INFINITY);
    int64_t j = 0;
    for (; j + 16 <= Tk; j += 16) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(s + j));
    float mx = _mm512_reduce_max_ps(vmax);
    for (; j < Tk; j++)
        if (s[j] > mx) mx = s[j];
    const __m512 vm = _mm512_set1_ps(mx);
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    for (j = 0; j < Tk; j += 16) {
        const __mmask16 k = Tk - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (Tk - j)) - 1u);
        const __m512 e = _mm512_maskz_mov_ps(k, _ZGVeN16v_expf(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j), vm)));
        _mm512_mask_storeu_ps(s + j, k, e);
        lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
        hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
}
#endif

/* Row i's scores s[Tk] -> probabilities in place, over the keys K allows; returns false when the
 * row sees no key and keys->empty_zero (the row's output is then 0). No key and !empty_zero: the
 * uniform average of every value (ltx-core's additive -FLT_MAX mask). */
static bool softmax_row(const ltx2_cpu_attn_keys *K, const uint8_t *m, const int32_t *blk, int64_t i, float *s,
                        int64_t Tk) {
    const int64_t n_keep = keys_seen(K, m, blk, i, Tk);
    if (n_keep == 0) {
        if (K->empty_zero) return false;
        for (int64_t j = 0; j < Tk; j++) s[j] = 1.0f / (float)Tk;
        return true;
    }
    const bool masked = n_keep < Tk;
    double sum = 0.0;
#if LTX2_CPU_MVEC
    /* masked keys become exp(-inf) = 0: a kept key keeps its lane, so a row's bits do not depend on
     * masked keys around it (the padded keys of a sequence-parallel run) */
    if (masked)
        for (int64_t j = 0; j < Tk; j++)
            if (!key_allowed(K, m, blk, i, j)) s[j] = -INFINITY;
    sum = exp_row(s, Tk);
#else
    {
        float mx = -INFINITY;
        for (int64_t j = 0; j < Tk; j++)
            if ((!masked || key_allowed(K, m, blk, i, j)) && s[j] > mx) mx = s[j];
        for (int64_t j = 0; j < Tk; j++) {
            if (masked && !key_allowed(K, m, blk, i, j)) {
                s[j] = 0.0f;
                continue;
            }
            s[j] = expf(s[j] - mx);
            sum += s[j];
        }
    }
#endif
    if (K->probs_bf16) {
        /* jax.nn.softmax divides by its f32 sum; then attention_probs.astype(bf16) */
        const float fs = (float)sum;
        for (int64_t j = 0; j < Tk; j++) s[j] = ltx2_round_bf16(s[j] / fs);
        return true;
    }
    const float inv = (float)(1.0 / sum);
    for (int64_t j = 0; j < Tk; j++) s[j] *= inv;
    return true;
}

ltx2_status ltx2_cpu_attn_shape(ltx2_context *ctx, const char *what, int64_t B, int64_t Tq, int64_t Tk,
                                int64_t heads, int64_t head_dim, const ltx2_cpu_attn_keys *K, int64_t *kv_heads) {
    const int64_t kvh = K->kv_heads > 0 ? K->kv_heads : heads;
    *kv_heads = kvh;
    if (B < 0 || Tq < 0 || Tk <= 0 || heads <= 0 || head_dim <= 0 || heads % kvh != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "%s: bad shape B=%lld Tq=%lld Tk=%lld heads=%lld kv_heads=%lld head_dim=%lld "
                          "(Tk > 0, kv_heads dividing heads)",
                          what, (long long)B, (long long)Tq, (long long)Tk, (long long)heads, (long long)kvh,
                          (long long)head_dim);
    return LTX2_OK;
}

ltx2_status ltx2_cpu_attention(ltx2_context *ctx, const float *q, const float *k, const float *v, float *out,
                               int64_t B, int64_t Tq, int64_t Tk, int64_t heads, int64_t head_dim,
                               const ltx2_cpu_attn_keys *keys, float scale) {
    const ltx2_cpu_attn_keys none = {0};
    const ltx2_cpu_attn_keys *K = keys ? keys : &none;
    int64_t kvh = 0;
    LTX2_TRY(ltx2_cpu_attn_shape(ctx, "cpu attention", B, Tq, Tk, heads, head_dim, K, &kvh));
    if ((K->causal || K->window > 0) && Tq != Tk)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "cpu attention: a causal or windowed mask needs Tq == Tk (%lld, %lld)",
                          (long long)Tq, (long long)Tk);
    if (B * Tq == 0) return LTX2_OK;
    if (!q || !k || !v || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu attention: NULL buffer");
    if (out == q || out == k || out == v)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu attention: out must not alias q, k or v");
    const int64_t D = heads * head_dim, Dkv = kvh * head_dim, group = heads / kvh;
    int64_t tile = ATTN_TILE_FLOATS / Tk;
    if (tile < 1) tile = 1;
    if (tile > Tq) tile = Tq;
    float *s = malloc((size_t)(tile * Tk) * sizeof *s);
    if (!s) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "cpu attention: %lld x %lld scores", (long long)tile, (long long)Tk);
    ltx2_status st = LTX2_OK;
    for (int64_t b = 0; b < B && st == LTX2_OK; b++) {
        const uint8_t *m = K->key_mask ? K->key_mask + b * Tk : NULL;
        const int32_t *blk = K->blocks ? K->blocks + b * Tq : NULL;
        for (int64_t h = 0; h < heads && st == LTX2_OK; h++) {
            const float *kh = k + b * Tk * Dkv + (h / group) * head_dim;
            const float *vh = v + b * Tk * Dkv + (h / group) * head_dim;
            for (int64_t i0 = 0; i0 < Tq && st == LTX2_OK; i0 += tile) {
                const int64_t n = Tq - i0 < tile ? Tq - i0 : tile;
                const float *qh = q + (b * Tq + i0) * D + h * head_dim;
                float *oh = out + (b * Tq + i0) * D + h * head_dim;
                st = ltx2_cpu_gemm(ctx, n, Tk, head_dim, scale, qh, D, kh, Dkv, LTX2_B_NK, 0.0f, s, Tk, NULL);
                if (st != LTX2_OK) break;
                int64_t empty = 0;
#pragma omp parallel for schedule(static) reduction(+ : empty)
                for (int64_t r = 0; r < n; r++) empty += !softmax_row(K, m, blk, i0 + r, s + r * Tk, Tk);
                st = ltx2_cpu_gemm(ctx, n, head_dim, Tk, 1.0f, s, Tk, vh, Dkv, LTX2_B_KN, 0.0f, oh, D, NULL);
                if (empty == 0 || st != LTX2_OK) continue;
                for (int64_t r = 0; r < n; r++) /* rows that saw no key (empty_zero): 0, as torch's SDPA */
                    if (keys_seen(K, m, blk, i0 + r, Tk) == 0) memset(oh + r * D, 0, (size_t)head_dim * sizeof(float));
            }
        }
    }
    free(s);
    return st;
}
