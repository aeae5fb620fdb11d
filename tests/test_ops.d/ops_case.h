/* What the op harness's three parts share (tests/test_ops.c: tolerances, comparison, backends,
 * driver; test_ops.d/cases.c: the registry of cases; test_ops.d/reference.c: seeded inputs and
 * the naive double-precision references): the case description, its flags, the host inputs. */
#ifndef LTX2_TEST_OPS_CASE_H
#define LTX2_TEST_OPS_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"

/* PixelNorm epsilon of the video VAE (ltx-core PixelNorm default). */
#define PIXEL_NORM_EPS 1e-8f
/* GroupNorm epsilon of the latent upsampler (torch.nn.GroupNorm default). */
#define GROUP_NORM_EPS 1e-5f
/* QK RMSNorm epsilon of the LTX-2 attention (torch RMSNorm eps=1e-6 in ltx-core). */
#define QK_NORM_EPS 1e-6f

/* case flags */
#define F_WEIGHT 1u    /* norm weight / gemm: (unused) */
#define F_BIAS 2u      /* norm bias / gemm bias */
#define F_KN 4u        /* gemm weight stored [K, N] */
#define F_STRIDED 8u   /* binary: a is a view with last-dim stride 2 */
#define F_SPECIAL 16u  /* convert: first inputs are NaN, +-inf, -0, ties, overflow; the pointwise
                        * ops with a parameter: first inputs are NaN, +-inf, +-0, +-1, +-alpha */
#define F_MASK 32u     /* attention: key padding mask (batch 1: every key masked; batch 2: the
                        * leading 3/4 masked, so whole leading key tiles are dead) */
#define F_ROPE 64u     /* attention: split RoPE on q and k; rope op: split */
#define F_ROPE_IL 128u /* attention / rope: interleaved RoPE */
#define F_QKNORM 256u  /* attention: RMSNorm across heads on q and k */
#define F_SILU 512u    /* conv3d / pixel_norm: SiLU epilogue */
#define F_DROP 1024u   /* depth_to_space: drop the first frame */
#define F_RESID 2048u  /* depth_to_space: residual with .n channels before the stride product;
                        * space_to_depth: residual (group-mean skip) with .n channels */
#define F_REFLECT 4096u /* conv3d: reflect spatial padding (else zeros) */
#define F_CAUSAL 8192u  /* attention: causal keys (Sq == Skv; Gemma-3) */
#define F_EMPTY0 16384u /* attention: a query with no key gives 0 (torch SDPA; Gemma-3) */
#define F_LEFTPAD 32768u /* attention: key mask of left padding (the tokenizer's: batch 0 pads
                          * a third of its keys, batch 1 two) */
#define F_ROPE_ONE_ROW 65536u   /* rope op, split: one table row for every batch row [1, ., S, d/2] */
#define F_ROPE_ONE_HEAD 131072u /* rope op, split: one table head for every head [., 1, S, d/2] */

typedef struct op_case {
    ltx2_op op;
    ltx2_dtype dtype; /* device dtype; convert: the destination (source is the other one) */
    int ndim;
    int64_t shape[5]; /* x (or a); attention: q [B, Sq, H*d]; conv3d: x NDHWC */
    int64_t n;        /* gemm: N; conv3d, conv1d, conv_transpose1d: c_out; depth_to_space: residual channels / prod;
                       * space_to_depth: residual channels */
    int64_t heads, sk; /* attention / rope: heads; group_norm: groups; attention: S_kv */
    int64_t kv_heads, window; /* attention: grouped K/V heads (0: heads), sliding window (0: none) */
    int64_t k3[3];     /* conv3d kernel (t, h, w); depth_to_space / space_to_depth: strides */
    int tpad;          /* conv3d: ltx2_conv_tpad */
    int b_ndim;       /* binary: b shape */
    int64_t b_shape[4];
    unsigned flags;
    float scale, offset; /* inputs = offset + scale * normal */
    /* the vocoders' ops (n is c_out for conv1d / conv_transpose1d) */
    float alpha;         /* leaky_relu slope, log_floor floor, div_scalar divisor */
    int64_t taps;        /* conv1d / conv_transpose1d kernel size, FIR filter taps */
    int64_t stride;      /* conv stride, FIR ratio (0 is read as 1) */
    int64_t dilation;    /* conv1d (0 is read as 1) */
    int64_t pad[2];      /* conv1d zeros left / right; conv_transpose1d padding in pad[0] (cropped from
                          * both ends); FIR replicate padding left / right */
    int64_t crop[2];     /* fir_upsample: samples dropped left / right */
} op_case;

/* Host inputs (f32, already rounded to bf16 values for bf16 cases). */
typedef struct inputs {
    int64_t nx, nx_storage, nw, nb, nout;
    float *x, *w, *bias, *b; /* x holds nx_storage values for strided views */
    int out_ndim;
    int64_t out_shape[5];
    /* attention: k, v [B, Sk, Dkv] (Dkv = kv heads x d), norm weights [D], RoPE tables for q and
     * k (f32), mask [B, Sk] */
    float *k, *v, *wq, *wk, *qc, *qs, *kc, *ks;
    int64_t nkv, ntq, ntk;
    uint8_t *mask;
    /* conv1d / conv_transpose1d: the weight in PyTorch's layout ([c_out, c_in, k] / [c_in, c_out, k]),
     * which the naive references read; w holds it packed for the op. f32 whatever the dtype: the
     * FIR filter [taps], SnakeBeta's alpha and 1 / beta [C]. */
    float *w_torch, *filt, *alpha, *inv_beta;
} inputs;

/* The registry, built on first use: every case, in a fixed order (indices seed the inputs). */
const op_case *ops_cases(int *n);

void case_name(const op_case *c, char *buf, size_t cap);
ltx2_conv3d_desc conv_desc_of(const op_case *c);
ltx2_conv1d_desc conv1d_desc_of(const op_case *c);
ltx2_convt1d_desc convt1d_desc_of(const op_case *c);
ltx2_fir_desc fir_desc_of(const op_case *c);
/* The pointwise ops that take a parameter (ltx2_backend_unary_a). */
bool op_is_unary_a(ltx2_op op);
/* Seeded host inputs of case c (idx: its registry index, which picks the Philox streams). */
void inputs_make(const op_case *c, int idx, inputs *in);
void inputs_free(inputs *in);
/* The naive double-precision result of case c on inputs in, into ref[in->nout]. */
void naive_ref(const op_case *c, const inputs *in, double *ref);
/* Attention only: per output element, the standard deviation the device's bf16 roundings give it
 * (first order; see reference.c), for the bf16 device comparison. */
void naive_attention_bf16_sd(const op_case *c, const inputs *in, double *sd);
/* Attention: the K/V heads of case c (kv_heads, or heads when not grouped). */
int64_t case_kv_heads(const op_case *c);

/* Weight scale of conv cases (conv3d, conv1d, conv_transpose1d): 1/sqrt(K) keeps outputs O(1), like
 * trained convs. */
#define CONV_W_SCALE_PER_SQRT_K 1.0

/* Shared by reference.c and vocoder_ops.c: f's nearest-even bf16 value (NaN quieted), and n Philox
 * normals of the harness's seed on `stream`, offset + scale * z, rounded to bf16 values when asked. */
float naive_bf16_round(float f);
float *case_gen(uint64_t stream, int64_t n, float scale, float offset, bool round_bf16);
/* vocoder_ops.c: the vocoders' ops' inputs and output shapes (after the common x of inputs_make),
 * and their references (false for any other op). */
void vocoder_inputs(const op_case *c, uint64_t st, bool rb, inputs *in);
bool naive_vocoder_ref(const op_case *c, const inputs *in, double *ref);

#endif
