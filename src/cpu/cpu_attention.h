/* CPU reference multi-head scaled-dot-product attention (fp32, OpenMP), the oracle for the fused
 * GPU attention. Tokens are [B, T, heads * head_dim] row-major (heads contiguous inside a token),
 * the layout the projections produce, so no transposes are needed. */
#ifndef LTX2_CPU_CPU_ATTENTION_H
#define LTX2_CPU_CPU_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>

#include "core/context.h"

/* Which keys a query sees, and what a query that sees none gets. */
typedef struct ltx2_cpu_attn_keys {
    const uint8_t *key_mask; /* [B, Tk] 0/1, or NULL = every key */
    int64_t kv_heads;        /* 0 = heads; else grouped-query: q head h reads kv head h / (heads / kv_heads) */
    bool causal;             /* key j only for query i >= j (self-attention: Tq == Tk) */
    int64_t window;          /* > 0: also only keys with i - j < window (a sliding-window layer) */
    bool empty_zero;         /* a query with no key left gives 0 (torch SDPA's boolean mask); else the
                              * uniform average of every value (ltx-core's additive -FLT_MAX bias) */
    bool probs_bf16;         /* P = exp(S - max) / sum rounded to bf16 before P V (MaxDiffusion in bf16) */
    const int32_t *blocks;   /* [B, T] image-block ids (-1: none) or NULL, with causal: query i also sees
                              * the keys j > i of its own block (Gemma-3's image tokens) */
} ltx2_cpu_attn_keys;

/* out[b, i, h] = sum_j softmax_j(scale * <q[b,i,h], k[b,j,g(h)]>) v[b,j,g(h)] over the keys j that
 * keys allows (keys may be NULL: every key, heads == kv heads).
 * q: [B, Tq, H*d], k and v: [B, Tk, Hkv*d], out: [B, Tq, H*d] (must not alias q, k or v).
 * scale is usually 1/sqrt(d). */
ltx2_status ltx2_cpu_attention(ltx2_context *ctx, const float *q, const float *k, const float *v, float *out,
                               int64_t B, int64_t Tq, int64_t Tk, int64_t heads, int64_t head_dim,
                               const ltx2_cpu_attn_keys *keys, float scale);

/* The shape rules both attentions share (Tk > 0, kv heads dividing heads, ...): LTX2_OK with the kv
 * head count in *kv_heads, or LTX2_ERR_SHAPE naming `what`. */
ltx2_status ltx2_cpu_attn_shape(ltx2_context *ctx, const char *what, int64_t B, int64_t Tq, int64_t Tk,
                                int64_t heads, int64_t head_dim, const ltx2_cpu_attn_keys *K, int64_t *kv_heads);

/* The e4m3 attention (ltx2_attn_args.fp8; kernels/ltx2_kernels.h, LTX2_KATTN_FP8_HEAD_DIM): q, k, v taken
 * as bf16 (what a device holds); K and V less their channel means over the keys (K's mean shifts
 * each score row by a constant, which the softmax ignores; V's is added back to the output, whose
 * weights sum to 1); then rounded to e4m3 in their groups, every statistic (means, maxima) over the
 * keys the queries see (the mask's; all of them without a mask or when a batch has none left) (Q per token and head, K per kv head and
 * 128-key tile, V per kv head and channel over every key; scale = amax / 448); scores from the
 * rounded values times the scales, an online softmax over 128-key tiles whose weights, times 256,
 * are rounded to e4m3 for P V, divided by the sum of the unrounded weights. keys: a key mask and
 * grouped heads only (a batch with every key masked averages every value). Same shapes as
 * ltx2_cpu_attention. */
ltx2_status ltx2_cpu_attention_fp8(ltx2_context *ctx, const float *q, const float *k, const float *v, float *out,
                                   int64_t B, int64_t Tq, int64_t Tk, int64_t heads, int64_t head_dim,
                                   const ltx2_cpu_attn_keys *keys, float scale);

#endif
