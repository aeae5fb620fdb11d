/* The one place that picks CPU or CUDA: a small op table per device. Callers use the
 * ltx2_backend_<op>() wrappers, which check shapes, dtypes, devices and supports() once for every
 * backend and then call the table. Tensors are ltx2_tensor views whose data lives on the
 * backend's device (allocate with ltx2_backend_alloc, move data with upload/download). */
#ifndef LTX2_BACKEND_BACKEND_H
#define LTX2_BACKEND_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/conv1d_desc.h"
#include "backend/conv3d_desc.h"
#include "backend/op_desc.h"
#include "core/context.h"
#include "ltx2/tensor.h"

typedef enum ltx2_op {
    LTX2_OP_GEMM = 0,   /* y[.., N] = x[.., K] * W^T (+ bias); W [N,K] or [K,N] */
    LTX2_OP_RMS_NORM,   /* over the last dim, optional weight */
    LTX2_OP_LAYER_NORM, /* over the last dim, optional weight and bias */
    LTX2_OP_SOFTMAX,    /* over the last dim */
    LTX2_OP_GELU_TANH,  /* torch gelu(approximate='tanh') */
    LTX2_OP_SILU,
    LTX2_OP_ADD,        /* numpy broadcasting */
    LTX2_OP_MUL,        /* numpy broadcasting */
    LTX2_OP_CONVERT,    /* dtype conversion (f32 <-> bf16); the dtype asked about is the source */
    LTX2_OP_ATTENTION,  /* multi-head SDPA, optional key mask, QK RMSNorm and RoPE on q/k */
    LTX2_OP_ROPE,       /* RoPE alone (split or interleaved) */
    LTX2_OP_CONV3D,     /* NDHWC conv3d with the VAE's padding rules, bias, optional SiLU */
    LTX2_OP_PIXEL_NORM, /* RMS over channels (no weight), optional SiLU: the VAE's norm + act */
    LTX2_OP_DEPTH_TO_SPACE, /* the VAE's DepthToSpaceUpsample rearrangement (+ residual) */
    LTX2_OP_NORM_MODULATE,  /* (none | RMS | LayerNorm, no affine) then x * (1 + scale) + shift */
    LTX2_OP_GATED_ADD,      /* x += y * gate (gate rows per token or per sample), or x += y */
    LTX2_OP_HEAD_GATE,      /* o *= 2 * sigmoid(logits) per head (LTX-2.3 gated attention) */
    LTX2_OP_GEMM_EX,        /* gemm + bias / GELU-tanh epilogue + residual add */
    LTX2_OP_GEMM_FP8,       /* gemm with fp8 e4m3 x and w, per-tensor scales, bf16 out */
    LTX2_OP_FP8,            /* fp8 e4m3 quantise / dequantise; the dtype asked about is the wide one */
    LTX2_OP_ROW_SUMSQ,      /* per-row sum of squares over the last dim, f32 out (tensor-parallel RMSNorm) */
    LTX2_OP_RMS_APPLY,      /* x / sqrt(ss / n + eps) * weight with a given row sum of squares ss */
    LTX2_OP_SPACE_TO_DEPTH, /* the VAE encoder's SpaceToDepthDownsample rearrangement (+ group-mean skip) */
    LTX2_OP_GROUP_NORM,     /* torch GroupNorm over [N, ..., C] channels-last, affine, optional SiLU */
    LTX2_OP_BLUR_DOWNSAMPLE, /* depthwise binomial 5x5 blur over (H, W) with a stride (ltx-core BlurDownsample) */
    LTX2_OP_LEAKY_RELU,      /* x >= 0 ? x : x * alpha */
    LTX2_OP_TANH,
    LTX2_OP_HARDTANH,        /* clamp to [-1, 1] */
    LTX2_OP_LOG_FLOOR,       /* log(max(x, alpha)) (the log-mel floor) */
    LTX2_OP_DIV_SCALAR,      /* x / alpha (torch's mean over a stack) */
    LTX2_OP_CONV1D,          /* [N, L, C] conv1d: stride, dilation, zero padding, bias (conv1d_desc.h) */
    LTX2_OP_CONV_TRANSPOSE1D, /* [N, L, C] ConvTranspose1d with torch's padding crop, bias */
    LTX2_OP_FIR_UPSAMPLE,    /* depthwise FIR upsampler, replicate padding (BigVGAN UpSample1d) */
    LTX2_OP_FIR_DOWNSAMPLE,  /* depthwise FIR low-pass downsampler, replicate padding (BigVGAN DownSample1d) */
    LTX2_OP_SNAKE,           /* BigVGAN SnakeBeta, per-channel alpha and 1 / beta */
    LTX2_OP_COMPLEX_ABS,     /* |re + i im| of an STFT's [.., 2F] (real, then imaginary) -> [.., F] */
    LTX2_OP_ROW_STATS,       /* per-row sum, min and max over the last dim, f32 [rows, 3] (LTX-2.0's text statistics) */
    LTX2_OP_ADD_RMS_NORM,    /* x += RMSNorm(y) * wy, out = RMSNorm(x) * w: Gemma-3's post-norm residual + next pre-norm */
    LTX2_OP_RMS_NORM_ROPE,   /* each head RMSNorm'd then split-RoPE'd: Gemma-3's QK norm and its rotation in one pass */
    LTX2_OP_COUNT
} ltx2_op;

/* "gemm", "rms_norm", ... ; NULL for an unknown op. */
const char *ltx2_op_name(ltx2_op op);
/* Parses an op name; returns false when unknown. */
bool ltx2_op_from_name(const char *name, ltx2_op *out);

typedef struct ltx2_backend ltx2_backend;

/* Attention extras (LTX-2 attention: q = rope(q_norm(to_q(x))), k likewise, then SDPA).
 * q_cos/q_sin and k_cos/k_sin are f32 RoPE tables as ltx2_cpu_rope_tables makes them:
 * split [B, heads, S, head_dim/2], interleaved [B, S, heads*head_dim]; all four or none.
 * q_norm/k_norm are RMSNorm weights over the whole inner dim [heads*head_dim] (across heads),
 * in the dtype of q; both or none; applied before RoPE. key_mask is [B, S_kv] u8 or bool
 * (nonzero = attend). kv_heads (0 = heads) makes it grouped-query: k and v hold kv_heads heads and
 * q head h reads kv head h / (heads / kv_heads). causal and window restrict self-attention
 * (S_q == S_kv) to keys j <= i, and i - j < window. A query left with no key averages every value
 * (ltx-core's additive -FLT_MAX bias), or gives 0 with empty_zero (torch SDPA's boolean mask). */
/* The head dim e4m3 attention takes (the kernel's A90_F8_D: d = 128 is one 128-byte e4m3 row). */
#define LTX2_ATTN_FP8_HEAD_DIM 128
typedef struct ltx2_attn_args {
    int64_t heads;
    float scale; /* usually 1/sqrt(head_dim) */
    const ltx2_tensor *key_mask;
    int64_t kv_heads;
    bool causal;
    int64_t window;
    bool empty_zero;
    /* [B, S] i32 image-block ids (-1: none) or NULL, with causal: query i also sees the keys j > i
     * of its own block (Gemma-3's image tokens attend to each other both ways in the prefill). */
    const ltx2_tensor *blocks;
    /* Probabilities rounded to bf16 before P V (MaxDiffusion's attention_probs.astype(bf16) in
     * attention_flax.py _apply_attention_dot; --precision tpu). The CPU backend only. */
    bool probs_bf16;
    /* e4m3 attention (ltx2_cpu_attention_fp8's scheme, the sm_90a kernel's fp8 variant): head_dim
     * LTX2_ATTN_FP8_HEAD_DIM, no causal, window, empty_zero, blocks or probs_bf16; a key mask and
     * grouped heads allowed. */
    bool fp8;
    const ltx2_tensor *q_norm, *k_norm;
    float norm_eps;
    ltx2_rope_type rope_type;
    const ltx2_tensor *q_cos, *q_sin, *k_cos, *k_sin;
} ltx2_attn_args;

/* The VAE's DepthToSpaceUpsample rearrangement (see src/cpu/cpu_depth_to_space.h). */
typedef struct ltx2_d2s_args {
    int64_t stride[3];    /* t, h, w factors */
    bool drop_first;      /* drop the first output frame (the VAE does when stride[0] == 2) */
} ltx2_d2s_args;

/* The VAE encoder's SpaceToDepthDownsample rearrangement (see src/cpu/cpu_space_to_depth.h). */
typedef struct ltx2_s2d_args {
    int64_t stride[3]; /* t, h, w factors */
} ltx2_s2d_args;

/* Normalisations the fused norm + modulate op runs first (no affine weights). */
typedef enum ltx2_norm_kind { LTX2_NORM_NONE = 0, LTX2_NORM_RMS = 1, LTX2_NORM_LAYER = 2 } ltx2_norm_kind;

/* AdaLN modulation rows for a token tensor [.., D] of `rows` rows: token r uses row
 * m = row_idx[r] (i32 [rows]) when row_idx is set, else r / rows_per_group. scale / shift /
 * gate are f32 [U, D] views whose rows may be further apart than D (strides[0] >= D,
 * strides[1] == 1), so one [U, k*D] AdaLN table serves k modulation rows. */
typedef struct ltx2_mod_rows {
    const ltx2_tensor *row_idx;
    int64_t rows_per_group;
} ltx2_mod_rows;

/* fp8 copies a producer writes beside its output y, for the fp8 GEMMs that read y: q[i] =
 * e4m3(y / scale[i]), of y as stored (rounded to its dtype), bit for bit what
 * ltx2_backend_fp8_convert(y, scale[i]) would give, without y's write and re-reads. no_y: y is
 * scratch (its contents unspecified afterwards) because every reader takes a copy. The DiT's
 * q / k / v / gate projections each have their own static input scale, hence several copies. */
#define LTX2_FP8_OUTS_MAX 4
typedef struct ltx2_fp8_outs {
    int n;
    float scale[LTX2_FP8_OUTS_MAX];
    ltx2_tensor *q[LTX2_FP8_OUTS_MAX]; /* fp8 e4m3, y's shape, contiguous */
    bool no_y;
} ltx2_fp8_outs;

/* GEMM epilogue: y = act(x W^T * alpha + bias) + residual, alpha = x_scale * w_scale for fp8
 * (1 otherwise). gelu and residual are exclusive (cuBLASLt would apply GELU after the add). */
typedef struct ltx2_gemm_ex_args {
    ltx2_b_layout w_layout;
    const ltx2_tensor *bias;     /* [N] or NULL; bf16 for the fp8 path */
    bool gelu;                   /* GELU, tanh approximation */
    const ltx2_tensor *residual; /* like y, may be y itself (in-place), or NULL */
    float x_scale, w_scale;      /* fp8 dequantisation scales (ignored otherwise) */
} ltx2_gemm_ex_args;

/* A device's identity (ltx2_backend.device_id): the size of a CUDA UUID. */
#define LTX2_DEVICE_ID_BYTES 16

/* The op table. Op entries receive arguments already validated by the wrappers below. */
struct ltx2_backend {
    const char *name;   /* "cpu" or "cuda" */
    ltx2_device device; /* where its tensors live */
    int device_index;
    void *impl;         /* backend-private state (streams, handles); NULL for the CPU */
    /* GEMM weights may be bf16 under f32 activations (the CPU: a checkpoint's bf16 weights stay
     * bf16 in memory and are widened, exactly, while packing). Otherwise w has x's dtype. */
    bool gemm_bf16_weights;
    /* An fp8 GEMM's y, bias and residual dtype: bf16 on CUDA (cuBLASLt's fp8 D), f32 on the CPU
     * (the reference dequantises x and w and runs its f32 GEMM). */
    ltx2_dtype fp8_gemm_out;

    bool (*supports)(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt);
    ltx2_status (*alloc)(const ltx2_backend *be, ltx2_context *ctx, size_t nbytes, void **out);
    void (*free)(const ltx2_backend *be, void *ptr);
    /* host -> device and device -> host, complete on return; copy is device -> device, ordered
     * with the backend's other work. */
    ltx2_status (*upload)(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src,
                          size_t nbytes);
    ltx2_status (*download)(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src,
                            size_t nbytes);
    ltx2_status (*copy)(const ltx2_backend *be, ltx2_context *ctx, void *dst, const void *src,
                        size_t nbytes);
    /* `rows` rows of `width` bytes, device -> device, row r from src + r*spitch to dst + r*dpitch,
     * ordered like copy (re-blocking tokens and heads for sequence parallelism). */
    ltx2_status (*copy_2d)(const ltx2_backend *be, ltx2_context *ctx, void *dst, size_t dpitch, const void *src,
                           size_t spitch, size_t width, size_t rows);
    /* Waits for all queued work and reports any asynchronous device error. */
    ltx2_status (*sync)(const ltx2_backend *be, ltx2_context *ctx);
    /* The device memory free and total, in bytes; NULL where there is no device memory to plan
     * (the CPU, the emulator, the planning backend). */
    ltx2_status (*mem_info)(const ltx2_backend *be, ltx2_context *ctx, size_t *free_bytes, size_t *total_bytes);
    /* Which physical device that memory is (a CUDA device's UUID): backends with equal ids share
     * mem_info's free memory, whichever process or index opened them. NULL where each backend's
     * memory is its own to plan (the CPU, the emulator). */
    ltx2_status (*device_id)(const ltx2_backend *be, ltx2_context *ctx, unsigned char out[LTX2_DEVICE_ID_BYTES]);

    ltx2_status (*gemm)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                        const ltx2_tensor *w, ltx2_b_layout w_layout, const ltx2_tensor *bias,
                        ltx2_tensor *y);
    ltx2_status (*rms_norm)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                            const ltx2_tensor *weight, float eps, ltx2_tensor *y);
    ltx2_status (*layer_norm)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                              const ltx2_tensor *weight, const ltx2_tensor *bias, float eps,
                              ltx2_tensor *y);
    ltx2_status (*softmax)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                           ltx2_tensor *y);
    ltx2_status (*unary)(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, float alpha,
                         const ltx2_tensor *x, ltx2_tensor *y);
    ltx2_status (*binary)(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                          const ltx2_tensor *a, const ltx2_tensor *b, ltx2_tensor *y);
    ltx2_status (*convert)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                           ltx2_tensor *y);

    ltx2_status (*attention)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *q,
                             const ltx2_tensor *k, const ltx2_tensor *v, const ltx2_attn_args *a,
                             ltx2_tensor *out);
    ltx2_status (*rope)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                        ltx2_rope_type type, int64_t heads, const ltx2_tensor *cos_t,
                        const ltx2_tensor *sin_t, ltx2_tensor *y);
    ltx2_status (*conv3d)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d,
                          const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias,
                          bool silu, ltx2_tensor *y);
    ltx2_status (*pixel_norm)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                              float eps, bool silu, ltx2_tensor *y);
    ltx2_status (*depth_to_space)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                  const ltx2_d2s_args *a, const ltx2_tensor *residual,
                                  ltx2_tensor *y);
    ltx2_status (*space_to_depth)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                  const ltx2_s2d_args *a, const ltx2_tensor *residual, ltx2_tensor *y);
    ltx2_status (*group_norm)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t groups,
                              float eps, const ltx2_tensor *weight, const ltx2_tensor *bias, bool silu,
                              ltx2_tensor *y);
    ltx2_status (*blur_downsample)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t stride,
                                   ltx2_tensor *y);
    ltx2_status (*conv1d)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv1d_desc *d, const ltx2_tensor *x,
                          const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y);
    ltx2_status (*conv_transpose1d)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_convt1d_desc *d,
                                    const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y);
    /* op is LTX2_OP_FIR_UPSAMPLE or LTX2_OP_FIR_DOWNSAMPLE */
    ltx2_status (*fir)(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, const ltx2_fir_desc *d,
                       const ltx2_tensor *x, const ltx2_tensor *filt, ltx2_tensor *y);
    ltx2_status (*snake)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *alpha,
                         const ltx2_tensor *inv_beta, ltx2_tensor *y);
    ltx2_status (*complex_abs)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y);

    /* q: NULL or at least one copy (ltx2_backend_norm_modulate_fp8) */
    ltx2_status (*norm_modulate)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 ltx2_norm_kind norm, float eps, const ltx2_tensor *scale,
                                 const ltx2_tensor *shift, const ltx2_mod_rows *m, ltx2_tensor *y,
                                 const ltx2_fp8_outs *q);
    ltx2_status (*gated_add)(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x,
                             const ltx2_tensor *y, const ltx2_tensor *gate, const ltx2_mod_rows *m);
    /* q: NULL or at least one copy (ltx2_backend_head_gate_fp8) */
    ltx2_status (*head_gate)(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o,
                             const ltx2_tensor *logits, int64_t heads, const ltx2_fp8_outs *q);
    ltx2_status (*gemm_ex)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                           const ltx2_tensor *w, const ltx2_gemm_ex_args *a, ltx2_tensor *y);
    ltx2_status (*row_sumsq)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *ss);
    ltx2_status (*row_stats)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *st);
    ltx2_status (*add_rms_norm)(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                const ltx2_tensor *wy, const ltx2_tensor *w, float eps, ltx2_tensor *out);
    ltx2_status (*rms_norm_rope)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *w,
                                 float eps, int64_t heads, const ltx2_tensor *cos_t, const ltx2_tensor *sin_t,
                                 ltx2_tensor *y);
    ltx2_status (*rms_apply)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, const ltx2_tensor *ss,
                             int64_t n, const ltx2_tensor *weight, float eps, ltx2_tensor *y);
    /* quantise (y fp8) or dequantise (x fp8) */
    ltx2_status (*fp8)(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float scale,
                       ltx2_tensor *y);

    void (*destroy)(ltx2_backend *be); /* NULL for the static CPU backend */
};

/* The CPU backend (OpenMP fp32 reference ops). Static and immutable; never freed. */
const ltx2_backend *ltx2_backend_cpu(void);

/* Creates a CUDA backend on device_index (own stream, cuBLASLt handle and workspace).
 * LTX2_ERR_UNSUPPORTED when this build has no CUDA; LTX2_ERR_DEVICE when no usable device exists
 * (the message says which: no device, bad index, driver error). */
ltx2_status ltx2_backend_cuda_create(ltx2_context *ctx, int device_index, ltx2_backend **out);

/* How many usable CUDA devices there are: 0 without CUDA in the build, without a driver or device. */
int ltx2_backend_cuda_device_count(void);
/* The same, and when there are none the reason in why (cap bytes; may be NULL): the runtime's
 * error, "0 devices", or that the build has no CUDA. */
int ltx2_backend_cuda_device_count_why(char *why, size_t cap);

/* Opens the backend a user names: "cpu", "cuda" (device 0), "cuda:N", or NULL / "auto" (CUDA
 * device 0 when one is usable, else the CPU). desc (cap bytes) gets one line saying what was
 * chosen and, for auto on the CPU, why: "cuda:0 (NVIDIA H100 80GB HBM3, compute capability 9.0,
 * 79.1 GiB)", "cpu (auto: no usable CUDA device: ...)". Naming cuda without a usable device is
 * LTX2_ERR_DEVICE with the reason; an unknown name LTX2_ERR_INVALID_ARG. Free with
 * ltx2_backend_free (the CPU backend is static). */
ltx2_status ltx2_backend_open(ltx2_context *ctx, const char *spec, const ltx2_backend **out, char *desc, size_t cap);
/* As ltx2_backend_open, for local rank `index` of a multi-rank job: "cuda" and auto take GPU index
 * modulo the usable GPUs (each rank its own GPU while there are enough; auto without one is the
 * CPU); "cpu" and "cuda:N" mean the same for every rank. */
ltx2_status ltx2_backend_open_rank(ltx2_context *ctx, const char *spec, int index, const ltx2_backend **out, char *desc,
                                   size_t cap);
/* OK when be runs fp8 e4m3 GEMMs (LTX2_OP_GEMM_FP8); else LTX2_ERR_UNSUPPORTED saying "<what>:
 * backend <name> has no fp8 GEMM" and, for a GPU, the compute capability it needs. */
ltx2_status ltx2_backend_require_fp8_gemm(ltx2_context *ctx, const ltx2_backend *be, const char *what);
/* OK when be runs e4m3 attention (ltx2_attn_args.fp8; ltx2_backend_supports(LTX2_OP_ATTENTION,
 * LTX2_F8_E4M3)); else LTX2_ERR_UNSUPPORTED saying "<what>: backend <name> has no e4m3 attention" and,
 * for a GPU, what it needs. */
ltx2_status ltx2_backend_require_fp8_attention(ltx2_context *ctx, const ltx2_backend *be, const char *what);
/* One line naming a backend's device (see ltx2_backend_open). */
void ltx2_backend_describe(const ltx2_backend *be, char *buf, size_t cap);
/* The CUDA half of ltx2_backend_describe ("cuda:N (name, compute capability, memory)"). */
void ltx2_backend_cuda_describe(const ltx2_backend *be, char *buf, size_t cap);

/* Frees a backend from *_create (NULL and the CPU backend are ignored). */
void ltx2_backend_free(const ltx2_backend *be);

bool ltx2_backend_supports(const ltx2_backend *be, ltx2_op op, ltx2_dtype dt);

/* ---- validated wrappers (all tensors on be->device, same dtype unless stated) ---- */

/* y = x W^T + bias. x [.., K] and y [.., N] contiguous with the same leading dims; w [N, K]
 * (LTX2_B_NK, torch Linear) or [K, N] (LTX2_B_KN), contiguous; bias [N] or NULL. */
ltx2_status ltx2_backend_gemm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                              const ltx2_tensor *w, ltx2_b_layout w_layout,
                              const ltx2_tensor *bias, ltx2_tensor *y);
/* x, y same shape, contiguous; weight/bias [last dim] or NULL. */
ltx2_status ltx2_backend_rms_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                  const ltx2_tensor *weight, float eps, ltx2_tensor *y);
ltx2_status ltx2_backend_layer_norm(const ltx2_backend *be, ltx2_context *ctx,
                                    const ltx2_tensor *x, const ltx2_tensor *weight,
                                    const ltx2_tensor *bias, float eps, ltx2_tensor *y);
ltx2_status ltx2_backend_softmax(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 ltx2_tensor *y);
/* op is LTX2_OP_GELU_TANH or LTX2_OP_SILU; x, y same shape, contiguous. */
ltx2_status ltx2_backend_unary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                               const ltx2_tensor *x, ltx2_tensor *y);
/* The pointwise ops with a parameter: LTX2_OP_LEAKY_RELU (alpha the slope), LTX2_OP_TANH,
 * LTX2_OP_HARDTANH, LTX2_OP_LOG_FLOOR (alpha the floor, > 0), LTX2_OP_DIV_SCALAR (alpha != 0), and
 * the two of ltx2_backend_unary (alpha ignored); x, y same shape, contiguous, y may alias x. NaN
 * passes through each, as in torch. */
ltx2_status ltx2_backend_unary_a(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op, float alpha,
                                 const ltx2_tensor *x, ltx2_tensor *y);
/* op is LTX2_OP_ADD or LTX2_OP_MUL; any strides; y has the broadcast shape. */
ltx2_status ltx2_backend_binary(const ltx2_backend *be, ltx2_context *ctx, ltx2_op op,
                                const ltx2_tensor *a, const ltx2_tensor *b, ltx2_tensor *y);
/* x, y same shape, contiguous, dtypes may differ (f32 <-> bf16). */
ltx2_status ltx2_backend_convert(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 ltx2_tensor *y);

/* out = SDPA over heads: q [B, Sq, H*d], k and v [B, Skv, H*d] (token-major, heads contiguous
 * inside a token), out like q; all contiguous, same dtype; extras in *a (see ltx2_attn_args).
 * The CUDA backend runs bf16: head dims 64, 128 and 256 on the tensor-core kernels, other even ones
 * up to LTX2_KATTN_MAX_HEAD_DIM on a per-row kernel. out must not alias q, k or v. */
ltx2_status ltx2_backend_attention(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *q,
                                   const ltx2_tensor *k, const ltx2_tensor *v,
                                   const ltx2_attn_args *a, ltx2_tensor *out);
/* y = RoPE(x), x and y [B, S, heads*head_dim] (y may alias x); cos/sin f32 tables as in
 * ltx2_attn_args, except that split tables may also be [1 or B, 1 or heads, S, head_dim/2]: a table
 * of one row / head serves every batch row / head (Gemma-3's shared positions). */
ltx2_status ltx2_backend_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                              ltx2_rope_type type, int64_t heads, const ltx2_tensor *cos_t,
                              const ltx2_tensor *sin_t, ltx2_tensor *y);
/* y [N, To, Ho, Wo, c_out] = conv3d(x [N, T, H, W, c_in]) + bias, then SiLU when silu; w is the
 * packed weight [kt*kh*kw*c_in, c_out] (ltx2_conv3d_pack_weight), bias [c_out] or NULL; y must not
 * overlap x. */
ltx2_status ltx2_backend_conv3d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv3d_desc *d,
                                const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias,
                                bool silu, ltx2_tensor *y);
/* torch GroupNorm(groups, C, eps) on channels-last x [N, ..., C]: per sample and group of C/groups
 * consecutive channels, mean and biased variance over every position and channel of the group;
 * y = (x - mean) / sqrt(var + eps) * weight[c] + bias[c] (each NULL: 1 / 0), then SiLU when silu.
 * y may alias x. */
ltx2_status ltx2_backend_group_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, int64_t groups,
                                    float eps, const ltx2_tensor *weight, const ltx2_tensor *bias, bool silu,
                                    ltx2_tensor *y);
/* ltx-core BlurDownsample(dims=2, stride, kernel 5): x [N, T, H, W, C] -> y [N, T, Ho, Wo, C], each
 * channel of each frame convolved with outer([1,4,6,4,1])^2 / 256, zero padding 2, stride s
 * (Ho = (H - 1) / s + 1); the rational latent upsampler's anti-alias. */
ltx2_status ltx2_backend_blur_downsample(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                         int64_t stride, ltx2_tensor *y);
/* ---- the vocoders' 1-D ops: channels-last [N, L, C] activations (conv1d_desc.h) ---- */

/* y [N, Lo, c_out] = conv1d(x [N, L, c_in]) + bias; w packed [k*c_in, c_out]
 * (ltx2_conv1d_pack_weight), bias [c_out] or NULL, all in x's dtype; y must not alias x. */
ltx2_status ltx2_backend_conv1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_conv1d_desc *d,
                                const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias, ltx2_tensor *y);
/* y [N, Lo, c_out] = conv_transpose1d(x [N, L, c_in]) + bias; w packed [c_in, k*c_out]
 * (ltx2_convt1d_pack_weight); y must not alias x. */
ltx2_status ltx2_backend_conv_transpose1d(const ltx2_backend *be, ltx2_context *ctx, const ltx2_convt1d_desc *d,
                                          const ltx2_tensor *x, const ltx2_tensor *w, const ltx2_tensor *bias,
                                          ltx2_tensor *y);
/* The depthwise FIR resamplers of ltx2_fir_desc: x [N, L, C] -> y [N, Lo, C], filt f32 [taps];
 * y must not alias x. */
ltx2_status ltx2_backend_fir_upsample(const ltx2_backend *be, ltx2_context *ctx, const ltx2_fir_desc *d,
                                      const ltx2_tensor *x, const ltx2_tensor *filt, ltx2_tensor *y);
ltx2_status ltx2_backend_fir_downsample(const ltx2_backend *be, ltx2_context *ctx, const ltx2_fir_desc *d,
                                        const ltx2_tensor *x, const ltx2_tensor *filt, ltx2_tensor *y);
/* SnakeBeta over the last dim C: y = x + inv_beta[c] * sin(x * alpha[c])^2, alpha and inv_beta
 * f32 [C]; y may alias x. */
ltx2_status ltx2_backend_snake(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                               const ltx2_tensor *alpha, const ltx2_tensor *inv_beta, ltx2_tensor *y);
/* y [.., F] = sqrt(x[.., f]^2 + x[.., F + f]^2) for x [.., 2F]; y must not alias x. */
ltx2_status ltx2_backend_complex_abs(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, ltx2_tensor *y);

/* y = x / sqrt(mean(x^2 over the last dim) + eps), then SiLU when silu; y may alias x. */
ltx2_status ltx2_backend_pixel_norm(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                    float eps, bool silu, ltx2_tensor *y);
/* x [N, T, H, W, C*s0*s1*s2] -> y [N, T*s0 - drop, H*s1, W*s2, C]; residual (NULL or
 * [N, T, H, W, Cr*s0*s1*s2] with C a multiple of Cr) is rearranged the same way and added with
 * its channels repeated. */
ltx2_status ltx2_backend_depth_to_space(const ltx2_backend *be, ltx2_context *ctx,
                                        const ltx2_tensor *x, const ltx2_d2s_args *a,
                                        const ltx2_tensor *residual, ltx2_tensor *y);
/* x [N, T, H, W, C] -> y [N, T/s0, H/s1, W/s2, C*s0*s1*s2] (T, H, W divisible by the strides);
 * residual (NULL or [N, T, H, W, Cr] with Cr*s0*s1*s2 a multiple of y's channels) is rearranged
 * the same way and each output channel adds the mean of its group of Cr*s0*s1*s2 / (C*s0*s1*s2)
 * consecutive rearranged residual channels. */
ltx2_status ltx2_backend_space_to_depth(const ltx2_backend *be, ltx2_context *ctx,
                                        const ltx2_tensor *x, const ltx2_s2d_args *a,
                                        const ltx2_tensor *residual, ltx2_tensor *y);

/* ---- fused DiT elementwise, GEMM epilogues, fp8 ---- */

/* y = norm(x) * (1 + scale[m]) + shift[m] over the last dim D; x, y same shape/dtype, contiguous
 * (y may alias x); scale/shift f32 [U, D] row views, rows chosen by *m. */
ltx2_status ltx2_backend_norm_modulate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                       ltx2_norm_kind norm, float eps, const ltx2_tensor *scale,
                                       const ltx2_tensor *shift, const ltx2_mod_rows *m, ltx2_tensor *y);
/* The same with fp8 copies of y for the fp8 GEMMs that read it (ltx2_fp8_outs, 1 to
 * LTX2_FP8_OUTS_MAX of them). */
ltx2_status ltx2_backend_norm_modulate_fp8(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                           ltx2_norm_kind norm, float eps, const ltx2_tensor *scale,
                                           const ltx2_tensor *shift, const ltx2_mod_rows *m, ltx2_tensor *y,
                                           const ltx2_fp8_outs *q);
/* x += y * gate[m] (gate f32 [U, D] row view, or NULL: x += y); x, y same shape/dtype. */
ltx2_status ltx2_backend_gated_add(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x,
                                   const ltx2_tensor *y, const ltx2_tensor *gate, const ltx2_mod_rows *m);
/* o [.., heads*d] *= 2 * sigmoid(logits [.., heads]), per head; same dtype. */
ltx2_status ltx2_backend_head_gate(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o,
                                   const ltx2_tensor *logits, int64_t heads);
/* The same with fp8 copies of the gated o for the fp8 out-projection that reads it (ltx2_fp8_outs:
 * 1 to LTX2_FP8_OUTS_MAX; no_y leaves o holding anything). */
ltx2_status ltx2_backend_head_gate_fp8(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o,
                                       const ltx2_tensor *logits, int64_t heads, const ltx2_fp8_outs *q);
/* ltx2_backend_gemm with the epilogues of *a. x, w f32/bf16 (y the same), or fp8 e4m3 x and w
 * with y, bias and residual in be->fp8_gemm_out (LTX2_OP_GEMM_FP8; weight layout [N, K] only). */
ltx2_status ltx2_backend_gemm_ex(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                 const ltx2_tensor *w, const ltx2_gemm_ex_args *a, ltx2_tensor *y);
/* x (f32/bf16) -> y fp8 e4m3 = sat(x * (1 / scale)), or x fp8 e4m3 -> y (f32/bf16) = x * scale;
 * same shape, contiguous; the saturating cast is src/core/dtype.c's. The product is in x's dtype
 * (rounded to bf16 for a bf16 x), as torch's FP8Linear computes its input's cast. */
ltx2_status ltx2_backend_fp8_convert(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                     float scale, ltx2_tensor *y);

/* ---- RMSNorm across ranks (tensor parallelism splits a row over the tensor group) ---- */

/* ss[r] = sum over the last dim of x[r, :]^2 in f32; x [.., D] contiguous f32/bf16, ss f32 with
 * one element per row (any shape). */
ltx2_status ltx2_backend_row_sumsq(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   ltx2_tensor *ss);
/* st[r] = (sum, min, max) of x[r, :] over the last dim: x [.., D] contiguous f32/bf16, st f32
 * contiguous with 3 elements per row (any shape). The sum accumulates in at least fp32; NaN never
 * wins a min or max. LTX-2.0's feature extractor combines the rows of the valid tokens. */
/* x += RMSNorm(y) * wy, then out = RMSNorm(x) * w, row by row over the last dim D: a normalised
 * branch added to the residual and the residual normalised for what reads it next (Gemma-3's
 * post-attention / post-MLP norm, the add, the next pre-norm). x, y, out [.., D] contiguous, one
 * dtype (f32 / bf16); wy, w [D] or NULL (1); out must not alias x. Rounded as the three ops it
 * replaces round: RMSNorm(y) * wy to the dtype, then the sum, then out. */
ltx2_status ltx2_backend_add_rms_norm(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                      const ltx2_tensor *wy, const ltx2_tensor *w, float eps, ltx2_tensor *out);
/* y = RoPE(RMSNorm(x_h) * w) for every head h of the token rows x [B, S, heads * d]: each head's d
 * values normalised (w [d] or NULL: 1), rounded to the dtype, then rotated in split halves with the
 * tables cos / sin [B or 1, heads or 1, S, d/2] as ltx2_backend_rope takes them (Gemma-3's
 * per-head QK norm, then its RoPE). Rounded as the two ops it replaces round, so its bits are
 * rms_norm over [B * S * heads, d] then rope. y [B, S, heads * d] may alias x. */
ltx2_status ltx2_backend_rms_norm_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                       const ltx2_tensor *w, float eps, int64_t heads, const ltx2_tensor *cos_t,
                                       const ltx2_tensor *sin_t, ltx2_tensor *y);
ltx2_status ltx2_backend_row_stats(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   ltx2_tensor *st);
/* y = x / sqrt(ss[r] / n + eps) * weight over the last dim D, with ss (f32, one per row) the sum
 * of squares of the whole row of width n >= D (this rank's D columns and the others'); weight [D]
 * or NULL; y like x, may alias it. */
ltx2_status ltx2_backend_rms_apply(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                   const ltx2_tensor *ss, int64_t n, const ltx2_tensor *weight, float eps,
                                   ltx2_tensor *y);

/* The CUDA backend's stream (a cudaStream_t) for bench baselines that call CUDA libraries
 * directly (bench/lt_baseline.c, bench_conv3d's cuDNN) and the parallel launcher; NULL for other
 * backends. */
void *ltx2_backend_cuda_stream(const ltx2_backend *be);

/* Benchmark counter (bench/): cuBLASLt plans (descriptors + heuristic query) this CUDA backend has
 * built, i.e. GEMM plan-cache misses since it was created; -1 for other backends. */
int64_t ltx2_backend_cuda_gemm_plans_built(const ltx2_backend *be);

#endif
