/* The C seam between src/ and kernels/: extern "C" launchers with plain C types only.
 * Each launcher enqueues work on `stream` (a cudaStream_t passed as void*, NULL = default stream)
 * and returns a cudaError_t as int: 0 on success, else the launch/argument error. They never
 * synchronise; callers check asynchronous errors at their next sync. Pointers are device memory.
 * Tensors are contiguous row-major unless strides are given. */
#ifndef LTX2_KERNELS_H
#define LTX2_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types the kernels accept (storage; all arithmetic is fp32). */
enum { LTX2_KDT_F32 = 0, LTX2_KDT_BF16 = 1 };

/* Pointwise ops; alpha is the op's one parameter (leaky_relu: the negative slope; log_floor:
 * log(max(x, alpha)); div_scalar: x / alpha), ignored by the others. hardtanh clamps to [-1, 1].
 * NaN passes through every op (comparisons, not fminf / fmaxf, as torch's clamp). */
enum {
    LTX2_KUNARY_GELU_TANH = 0,
    LTX2_KUNARY_SILU = 1,
    LTX2_KUNARY_LEAKY_RELU = 2,
    LTX2_KUNARY_TANH = 3,
    LTX2_KUNARY_HARDTANH = 4,
    LTX2_KUNARY_LOG_FLOOR = 5,
    LTX2_KUNARY_DIV_SCALAR = 6
};
enum { LTX2_KBINARY_ADD = 0, LTX2_KBINARY_MUL = 1 };

/* Max dims of a broadcast plan (matches LTX2_MAX_DIMS in include/ltx2/tensor.h). */
#define LTX2_KMAX_DIMS 8

/* Over the last dim of x[rows, dim]; weight/bias have dim elements of the same dtype or are
 * NULL; y may alias x. */
int ltx2_k_rms_norm(void *stream, int dtype, const void *x, void *y, const void *weight,
                    int64_t rows, int64_t dim, float eps);
/* ss[r] = sum of x[r, :]^2 (fp32 accumulation); and y = x * rsqrt(ss[r] / n + eps) * weight with
 * ss given (n: the whole row width when the row is split across ranks). y may alias x. */
int ltx2_k_row_sumsq(void *stream, int dtype, const void *x, float *ss, int64_t rows, int64_t dim);
int ltx2_k_rms_apply(void *stream, int dtype, const void *x, void *y, const void *weight, const float *ss,
                     int64_t rows, int64_t dim, float n, float eps);
int ltx2_k_layer_norm(void *stream, int dtype, const void *x, void *y, const void *weight,
                      const void *bias, int64_t rows, int64_t dim, float eps);
int ltx2_k_softmax(void *stream, int dtype, const void *x, void *y, int64_t rows, int64_t dim);

/* y[i] = f(x[i]) for n elements (alpha: see LTX2_KUNARY_*); y may alias x. */
int ltx2_k_unary(void *stream, int dtype, int op, const void *x, void *y, int64_t n, float alpha);

/* out = a (op) b over an already-broadcast plan: ndim dims of `shape`, per-operand strides in
 * elements (0 = broadcast). All three share dtype. */
int ltx2_k_binary(void *stream, int dtype, int op, const void *a, const void *b, void *out,
                  int ndim, const int64_t *shape, const int64_t *a_strides,
                  const int64_t *b_strides, const int64_t *out_strides);

/* dst[i] = (dst_dtype) src[i]; f32->bf16 rounds to nearest even, NaN stays NaN. */
int ltx2_k_convert(void *stream, int src_dtype, const void *src, int dst_dtype, void *dst,
                   int64_t n);

/* ---- RoPE, attention, VAE ops ---- */

enum { LTX2_KROPE_NONE = 0, LTX2_KROPE_SPLIT = 1, LTX2_KROPE_INTERLEAVED = 2 };

/* y = RoPE(x) over x[B, S, heads*head_dim] (y may alias x), tables f32: split [tab_rows, tab_heads,
 * S, d/2] with tab_rows B or 1 and tab_heads heads or 1 (1: one table row shared by every batch row
 * / head), interleaved [B, S, H*d] (src/cpu/cpu_rope.h; tab_rows B, tab_heads heads). dtype f32 or
 * bf16. */
int ltx2_k_rope(void *stream, int dtype, int rope, const void *x, void *y, const float *cos_t,
                const float *sin_t, int64_t B, int64_t S, int64_t heads, int64_t head_dim, int64_t tab_rows,
                int64_t tab_heads);

/* Flash attention forward, bf16 in/out, fp32 softmax and accumulation, never forming S x S.
 * q/out [B, Sq, heads*head_dim], k/v [B, Skv, heads*head_dim] token-major; head_dim 64 or 128;
 * 16-byte aligned pointers. key_mask [B, Skv] (nonzero = attend) or NULL; a row whose keys are
 * all masked averages every value. q_norm/k_norm: bf16 RMSNorm weights [heads*head_dim] over the
 * whole inner dim (both or neither); rope: LTX2_KROPE_* with f32 tables for q and k. Norm and
 * RoPE need `workspace` of ltx2_k_attention_workspace() bytes (device memory, 256-aligned).
 * impl picks the kernel: AUTO (0) takes the sm_90a wgmma/TMA kernel on 9.x where it runs (verified
 * on an H100: ATT_AUTO_PICKS_WGMMA in attention.cu), else the portable mma.sync kernel; MMA_SYNC
 * forces the portable one; WGMMA forces the Hopper one (head_dim 64/128/256, Gemma's masks but not
 * causal/windowed rows averaged when empty nor image blocks, scale > 0, a build carrying sm_90a)
 * and fails with cudaErrorNotSupported where it cannot run. */
enum { LTX2_KATTN_AUTO = 0, LTX2_KATTN_MMA_SYNC = 1, LTX2_KATTN_WGMMA = 2, LTX2_KATTN_PER_ROW = 3 /* answer only */ };
typedef struct ltx2_k_attn_args {
    const void *q, *k, *v;
    void *out;
    int64_t B, Sq, Skv, heads, head_dim;
    float scale;
    const uint8_t *key_mask;
    const void *q_norm, *k_norm;
    float norm_eps;
    int rope;
    const float *q_cos, *q_sin, *k_cos, *k_sin;
    void *workspace;
    size_t workspace_bytes;
    int impl; /* LTX2_KATTN_* */
    /* Gemma-3's masks (the per-row kernel only; no QK norm or RoPE with them): k and v hold
     * kv_heads heads (0 = heads) and q head h reads kv head h / (heads / kv_heads); causal keeps
     * keys j <= i, window > 0 also i - j < window (Sq == Skv); empty_zero writes 0 for a query left
     * with no key instead of the average of every value. */
    int64_t kv_heads;
    int causal;
    int64_t window;
    int empty_zero;
    /* [B, Sq] image-block ids (-1: none) or NULL, with causal: query i also sees the keys j > i of
     * its own block (Gemma-3's bidirectional image tokens). The per-row kernel runs such a call. */
    const int32_t *blocks;
    /* Where the wgmma kernel gets Q's QK norm / RoPE and the key mask (LTX2_KATTN_PREP_*): AUTO,
     * from the pre-pass (Q normalised and rotated into the workspace like K, the mask packed to a
     * bit per key); IN_KERNEL, Q normalised and rotated in shared memory after its load and the
     * mask read a byte per score (the kernel before 2026-11-28, kept to time the two in one run).
     * The results are the same bits; the other kernels ignore it. */
    int prep;
    /* 1: e4m3 attention (see LTX2_KATTN_FP8_HEAD_DIM below), the wgmma kernel only; 0: bf16. */
    int fp8;
} ltx2_k_attn_args;
/* e4m3 attention (args.fp8): Q, K and V (after the QK norm / RoPE; K and V less their channel means
 * over the keys, V's added back to O) rounded to e4m3 with a scale per (token, head) of Q, per
 * (batch, kv head, 128-key tile) of K and per (batch, kv head, channel) of V, each the group's
 * absolute maximum / 448, the means and maxima over the keys the mask leaves (masked keys change no
 * code); scores from the e4m3 products times the scales, online softmax in f32 over 128-key tiles,
 * the tile's weights times 256 rounded to e4m3 for P V, the row sum of the unrounded weights
 * (src/cpu/cpu_attention.h: ltx2_cpu_attention_fp8, the reference). Head dim 128, a key mask and
 * grouped heads but no causal / windowed / empty-zero rows or image blocks, on the sm_90a kernel
 * (a device without it: cudaErrorNotSupported); impl AUTO or WGMMA, prep AUTO. */
#define LTX2_KATTN_FP8_HEAD_DIM 128
enum { LTX2_KATTN_PREP_AUTO = 0, LTX2_KATTN_PREP_IN_KERNEL = 1 };
/* Head dims 64 and 128 run the tensor-core kernels; any other even one up to this a per-row fp32
 * kernel (attention_small.cu). 256: Gemma-3's. */
#define LTX2_KATTN_MAX_HEAD_DIM 256
/* The workspace's parts (K', q's inverse RMS, Q', the packed key mask) each start on this boundary
 * (cp.async and TMA need 16 bytes; 256 matches cudaMalloc's). */
#define LTX2_KATTN_WS_ALIGN 256
size_t ltx2_k_attention_workspace(const ltx2_k_attn_args *a);
int ltx2_k_attention(void *stream, const ltx2_k_attn_args *a);
/* 1 when the current device can run LTX2_KATTN_WGMMA (compute capability 9.x and a build with
 * the sm_90a architecture), else 0. */
int ltx2_k_attention_wgmma_available(void);
/* The kernel ltx2_k_attention would run for a (its impl honoured): LTX2_KATTN_MMA_SYNC, _WGMMA or
 * _PER_ROW (attention_small.cu), or minus the error it would return. Queues nothing. */
int ltx2_k_attention_pick(const ltx2_k_attn_args *a);

/* Implicit-GEMM conv3d, bf16 NDHWC in/out, fp32 accumulation: y[n, to, ho, wo, co] = bias[co] +
 * sum x[n, t, h, w, ci] * w[((a*kh + b)*kw + e)*c_in + ci][co], then SiLU when silu. Time index
 * to*st + a - t_front outside [0, T) reads a zero frame when t_zero, else is clamped into [0, T)
 * (edge frames replicated); spatial padding kh/2, kw/2
 * is zeros or reflect (kh, kw odd; reflect needs kh/2 < h and kw/2 < w). c_in and c_out
 * multiples of 8, 16-byte aligned x, w, y. */
typedef struct ltx2_k_conv3d_args {
    const void *x, *w, *bias; /* bias may be NULL */
    void *y;
    int64_t n, t, h, w_, c_in, c_out;
    int64_t kt, kh, kw, st, sh, sw;
    int64_t t_front;
    int t_zero;
    int reflect;
    int64_t to, ho, wo;
    int silu;
    int impl; /* LTX2_KCONV_* */
} ltx2_k_conv3d_args;
/* Which conv3d kernel runs: AUTO is the mma.sync kernel until the sm_90a wgmma kernel has been
 * timed on a GPU; WGMMA asks for it (cudaErrorNotSupported where it cannot run). */
enum { LTX2_KCONV_AUTO = 0, LTX2_KCONV_MMA_SYNC = 1, LTX2_KCONV_WGMMA = 2 };
int ltx2_k_conv3d(void *stream, const ltx2_k_conv3d_args *a);
/* 1 when the current device can run LTX2_KCONV_WGMMA. */
int ltx2_k_conv3d_wgmma_available(void);

/* torch GroupNorm on channels-last x [n, inner, c] (src/cpu/cpu_ops.h ltx2_cpu_group_norm): weight
 * and bias [c] in x's dtype or NULL, then SiLU when silu; y may alias x. */
int ltx2_k_group_norm(void *stream, int dtype, const void *x, void *y, int64_t n, int64_t inner, int64_t c,
                      int64_t groups, float eps, const void *weight, const void *bias, int silu);

/* ltx-core BlurDownsample on channels-last frames (src/cpu/cpu_ops.h ltx2_cpu_blur_downsample):
 * x [frames, h, w, c] -> y [frames, (h-1)/s+1, (w-1)/s+1, c]; y must not alias x. */
int ltx2_k_blur_downsample(void *stream, int dtype, const void *x, void *y, int64_t frames, int64_t h, int64_t w,
                           int64_t c, int64_t s);

/* ---- 1-D ops of the vocoders (src/backend/conv1d_desc.h; CPU references in src/cpu/conv1d.c
 * and src/cpu/audio_ops.c). Channels-last [n, len, c]; x, y, w, bias share dtype (f32 or bf16),
 * filters and per-channel parameters are f32; y never aliases x unless stated. ---- */

/* y[b, o, co] = bias[co] + sum_{j, ci} x[b, o*stride - pad_left + j*dilation, ci] * w[(j*c_in + ci)*c_out + co],
 * taps outside [0, len) read 0; y [n, out_len, c_out]. bias may be NULL. */
int ltx2_k_conv1d(void *stream, int dtype, const void *x, const void *w, const void *bias, void *y, int64_t n,
                  int64_t len, int64_t c_in, int64_t c_out, int64_t k, int64_t stride, int64_t dilation,
                  int64_t pad_left, int64_t out_len);
/* y[b, t*stride - padding + j, co] += sum_ci x[b, t, ci] * w[(ci*k + j)*c_out + co] for every input
 * t and tap j landing in [0, out_len), plus bias[co] (may be NULL); y [n, out_len, c_out]. */
int ltx2_k_conv_transpose1d(void *stream, int dtype, const void *x, const void *w, const void *bias, void *y,
                            int64_t n, int64_t len, int64_t c_in, int64_t c_out, int64_t k, int64_t stride,
                            int64_t padding, int64_t out_len);
/* Depthwise FIR upsampler: y[b, o, ch] = ratio * sum over padded inputs i in [0, len + pad_left +
 * pad_right) with j = o + crop_left - i*ratio in [0, taps) (i descending) of
 * x[b, clamp(i - pad_left, 0, len-1), ch] * filt[j]; y [n, out_len, c]. */
int ltx2_k_fir_upsample(void *stream, int dtype, const void *x, const float *filt, void *y, int64_t n, int64_t len,
                        int64_t c, int64_t taps, int64_t ratio, int64_t pad_left, int64_t pad_right, int64_t crop_left,
                        int64_t out_len);
/* Depthwise FIR downsampler: y[b, o, ch] = sum_{j ascending} x[b, clamp(o*ratio + j - pad_left, 0, len-1), ch]
 * * filt[j]; y [n, out_len, c]. */
int ltx2_k_fir_downsample(void *stream, int dtype, const void *x, const float *filt, void *y, int64_t n,
                          int64_t len, int64_t c, int64_t taps, int64_t ratio, int64_t pad_left, int64_t out_len);
/* SnakeBeta: y = x + inv_beta[ch] * sin(x * alpha[ch])^2 over x [rows, c]; y may alias x. */
int ltx2_k_snake(void *stream, int dtype, const void *x, void *y, const float *alpha, const float *inv_beta,
                 int64_t rows, int64_t c);
/* y[r, f] = sqrt(x[r, f]^2 + x[r, nf + f]^2): x [rows, 2*nf] (real parts, then imaginary), y [rows, nf]. */
int ltx2_k_complex_abs(void *stream, int dtype, const void *x, void *y, int64_t rows, int64_t nf);
/* st[3 r + 0..2] = sum (fp32 accumulation), min and max of x[r, :] (f32 / bf16 x, f32 st); NaN
 * never wins a min or max. */
int ltx2_k_row_stats(void *stream, int dtype, const void *x, float *st, int64_t rows, int64_t dim);
/* x [rows, dim] += RMSNorm(y) * wy, out = RMSNorm(x) * w (wy, w [dim] or NULL: 1), each rounded to
 * dtype as the separate RMSNorm, add and RMSNorm round; out must not be x. */
int ltx2_k_add_rms_norm(void *stream, int dtype, void *x, const void *y, const void *wy, const void *w, void *out,
                        int64_t rows, int64_t dim, float eps);
/* y = RoPE(RMSNorm(x_h) * w) for each head of x [B, S, heads * head_dim] (w [head_dim] or NULL: 1),
 * the normalised values rounded to dtype, split tables [tab_rows (B or 1), tab_heads (heads or 1), S,
 * head_dim / 2]; y may alias x. LTX2_KERR_NOT_SUPPORTED above the head_dim it stages (8192). */
int ltx2_k_rms_norm_rope(void *stream, int dtype, const void *x, void *y, const void *w, const float *cos_t,
                         const float *sin_t, int64_t B, int64_t S, int64_t heads, int64_t head_dim, float eps,
                         int64_t tab_rows, int64_t tab_heads);

/* y = x * rsqrt(mean(x^2) + eps) over the last dim (then SiLU when silu); y may alias x. */
int ltx2_k_pixel_norm(void *stream, int dtype, const void *x, void *y, int64_t rows, int64_t dim,
                      float eps, int silu);

/* DepthToSpaceUpsample rearrangement (src/cpu/cpu_depth_to_space.h): x [n, t, h, w, c*s0*s1*s2]
 * -> y [n, t*s0 - drop, h*s1, w*s2, c] (+ residual [n, t, h, w, rc*s0*s1*s2] or NULL). */
int ltx2_k_depth_to_space(void *stream, int dtype, const void *x, const void *residual, void *y,
                          int64_t n, int64_t t, int64_t h, int64_t w, int64_t c, int64_t s0,
                          int64_t s1, int64_t s2, int drop, int64_t rc);

/* SpaceToDepthDownsample rearrangement (src/cpu/cpu_space_to_depth.h): x [n, t, h, w, c] ->
 * y [n, t/s0, h/s1, w/s2, c*s0*s1*s2] (+ the group mean of residual [n, t, h, w, rc] or NULL). */
int ltx2_k_space_to_depth(void *stream, int dtype, const void *x, const void *residual, void *y,
                          int64_t n, int64_t t, int64_t h, int64_t w, int64_t c, int64_t s0,
                          int64_t s1, int64_t s2, int64_t rc);

/* ---- fused DiT elementwise (kernels/fused.cu) and fp8 (kernels/fp8.cu) ---- */

enum { LTX2_KNORM_NONE = 0, LTX2_KNORM_RMS = 1, LTX2_KNORM_LAYER = 2 };

/* y[r, :] = norm(x[r, :]) * (1 + scale[m, :]) + shift[m, :] over x, y [rows, dim] (y may alias
 * x); norm is LTX2_KNORM_* without affine; m = row_idx[r] (int32, device) when row_idx is given,
 * else r / rows_per_group. scale/shift are f32 rows mod_stride (>= dim) elements apart. */
/* fp8 copies of a kernel's output y for the fp8 GEMMs that read it: q[i] = e4m3(y * inv_scale[i])
 * of y as stored (rounded to its dtype), as ltx2_k_fp8_quant of y gives; no_y: y is not written.
 * n 0: none. */
#define LTX2_K_FP8_OUTS_MAX 4
typedef struct ltx2_k_fp8_outs {
    int n, no_y;
    uint8_t *q[LTX2_K_FP8_OUTS_MAX];
    float inv_scale[LTX2_K_FP8_OUTS_MAX];
} ltx2_k_fp8_outs;

typedef struct ltx2_k_modulate_args {
    const void *x;
    void *y;
    int64_t rows, dim;
    int norm;
    float eps;
    const float *scale, *shift;
    int64_t mod_stride;
    const int32_t *row_idx;
    int64_t rows_per_group;
    ltx2_k_fp8_outs q; /* each q[i] [rows, dim] */
} ltx2_k_modulate_args;
int ltx2_k_norm_modulate(void *stream, int dtype, const ltx2_k_modulate_args *a);

/* x[r, :] += y[r, :] * gate[m, :] over [rows, dim], m as above; gate f32 rows gate_stride
 * apart, or NULL for a plain add. y must not overlap x (the kernel reads it as restrict). */
int ltx2_k_gated_add(void *stream, int dtype, void *x, const void *y, const float *gate,
                     int64_t gate_stride, const int32_t *row_idx, int64_t rows_per_group,
                     int64_t rows, int64_t dim);

/* o[r, h*head_dim + j] *= 2 * sigmoid(logits[r, h]); o [rows, heads*head_dim], logits
 * [rows, heads], same dtype; q (NULL: none) fp8 copies of the gated o (each [rows, heads*head_dim];
 * no_y: o not written). */
int ltx2_k_head_gate(void *stream, int dtype, void *o, const void *logits, int64_t rows,
                     int64_t heads, int64_t head_dim, const ltx2_k_fp8_outs *q);

/* fp8 e4m3fn with a per-tensor scale: dst = decode(src) * scale (dst f32 or bf16), and
 * dst = encode(src * inv_scale) with torch's saturating cast (|x| > 448 and inf -> +-448, NaN
 * -> 0x7F | sign), bit-identical to ltx2_f32_to_fp8e4m3; for a bf16 src the product is rounded to
 * bf16 before the cast, as torch computes a bf16 tensor times an f32 scalar (ltx-core FP8Linear). */
int ltx2_k_fp8_dequant(void *stream, const uint8_t *src, int dst_dtype, void *dst, int64_t n,
                       float scale);
int ltx2_k_fp8_quant(void *stream, int src_dtype, const void *src, uint8_t *dst, int64_t n,
                     float inv_scale);

/* cudaErrorNotSupported as an int, for C code that must not include the CUDA headers (a launcher
 * returns it when a forced kernel cannot take a launch; checked against the enum in table.cu). */
#define LTX2_KERR_NOT_SUPPORTED 801

/* Every launcher above as one table, so the op table's kernel ops (src/backend/backend_kernels.c)
 * reach either the real kernels or, renamed, the CPU emulator's (tests/emu/). */
typedef struct ltx2_k_table {
    int (*rms_norm)(void *, int, const void *, void *, const void *, int64_t, int64_t, float);
    int (*row_sumsq)(void *, int, const void *, float *, int64_t, int64_t);
    int (*rms_apply)(void *, int, const void *, void *, const void *, const float *, int64_t, int64_t, float, float);
    int (*layer_norm)(void *, int, const void *, void *, const void *, const void *, int64_t, int64_t, float);
    int (*softmax)(void *, int, const void *, void *, int64_t, int64_t);
    int (*unary)(void *, int, int, const void *, void *, int64_t, float);
    int (*binary)(void *, int, int, const void *, const void *, void *, int, const int64_t *, const int64_t *,
                  const int64_t *, const int64_t *);
    int (*convert)(void *, int, const void *, int, void *, int64_t);
    int (*rope)(void *, int, int, const void *, void *, const float *, const float *, int64_t, int64_t, int64_t,
                int64_t, int64_t, int64_t);
    size_t (*attention_workspace)(const ltx2_k_attn_args *);
    int (*attention)(void *, const ltx2_k_attn_args *);
    int (*attention_wgmma_available)(void);
    int (*conv3d)(void *, const ltx2_k_conv3d_args *);
    int (*conv3d_wgmma_available)(void);
    int (*pixel_norm)(void *, int, const void *, void *, int64_t, int64_t, float, int);
    int (*depth_to_space)(void *, int, const void *, const void *, void *, int64_t, int64_t, int64_t, int64_t, int64_t,
                          int64_t, int64_t, int64_t, int, int64_t);
    int (*space_to_depth)(void *, int, const void *, const void *, void *, int64_t, int64_t, int64_t, int64_t, int64_t,
                          int64_t, int64_t, int64_t, int64_t);
    int (*norm_modulate)(void *, int, const ltx2_k_modulate_args *);
    int (*gated_add)(void *, int, void *, const void *, const float *, int64_t, const int32_t *, int64_t, int64_t,
                     int64_t);
    int (*head_gate)(void *, int, void *, const void *, int64_t, int64_t, int64_t, const ltx2_k_fp8_outs *);
    int (*fp8_dequant)(void *, const uint8_t *, int, void *, int64_t, float);
    int (*fp8_quant)(void *, int, const void *, uint8_t *, int64_t, float);
    int (*group_norm)(void *, int, const void *, void *, int64_t, int64_t, int64_t, int64_t, float, const void *,
                      const void *, int);
    int (*blur_downsample)(void *, int, const void *, void *, int64_t, int64_t, int64_t, int64_t, int64_t);
    int (*conv1d)(void *, int, const void *, const void *, const void *, void *, int64_t, int64_t, int64_t, int64_t,
                  int64_t, int64_t, int64_t, int64_t, int64_t);
    int (*conv_transpose1d)(void *, int, const void *, const void *, const void *, void *, int64_t, int64_t, int64_t,
                            int64_t, int64_t, int64_t, int64_t, int64_t);
    int (*fir_upsample)(void *, int, const void *, const float *, void *, int64_t, int64_t, int64_t, int64_t, int64_t,
                        int64_t, int64_t, int64_t, int64_t);
    int (*fir_downsample)(void *, int, const void *, const float *, void *, int64_t, int64_t, int64_t, int64_t,
                          int64_t, int64_t, int64_t);
    int (*snake)(void *, int, const void *, void *, const float *, const float *, int64_t, int64_t);
    int (*complex_abs)(void *, int, const void *, void *, int64_t, int64_t);
    int (*row_stats)(void *, int, const void *, float *, int64_t, int64_t);
    int (*add_rms_norm)(void *, int, void *, const void *, const void *, const void *, void *, int64_t, int64_t, float);
    int (*rms_norm_rope)(void *, int, const void *, void *, const void *, const float *, const float *, int64_t,
                         int64_t, int64_t, int64_t, float, int64_t, int64_t);
} ltx2_k_table;
const ltx2_k_table *ltx2_k_table_get(void);

#ifdef __cplusplus
}
#endif
#endif
