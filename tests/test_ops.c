/* Op harness in the style of ggml's test-backend-ops: ONE registry of cases (op x dtype x shape,
 * including odd sizes, broadcasts and LTX-2 shapes scaled down by 4), seeded Philox inputs, and
 * two checks per case:
 *   cpu : the CPU backend (fp32 reference ops) against a naive double-precision implementation
 *         written here, so CI has real assertions without a GPU;
 *   cuda: the CUDA backend against the CPU backend, when a device exists (else reported, not
 *         failed). Attention runs once per device kernel: a backend per LTX2_ATTN_IMPL value
 *         (mma_sync everywhere, wgmma on compute capability 9.x), unless the caller already set
 *         LTX2_ATTN_IMPL, in which case only that choice runs.
 * Pass rule per element: |ref - out| <= atol + rtol*|ref|, plus NaN / Inf-sign checks and guard
 * elements after every output buffer. On failure: max abs err, rel-L2, cosine, first bad items.
 * Usage: test_ops [-o OPNAME] [-b cpu|cuda] [--list] [-v] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "test_util.h"

/* ---- tolerances (how each was chosen) ----
 * fp32 has a 24-bit significand: eps32 = 2^-23 ~ 1.2e-7.
 * bf16 has 8 significant bits: eps_bf16 = 2^-7 ~ 7.8e-3; rounding a result to bf16 alone costs up
 * to half of that relative; we allow one full eps because fp32 differences before the rounding
 * (summation order, rsqrtf/expf/tanhf ulps) can flip which way it rounds. */
#define EPS_BF16 0.0078125 /* 2^-7 */
/* GEMM: with unit-normal inputs an output is a sum of K unit-variance terms, |c| ~ sqrt(K), and
 * fp32 rounding in a (blocked) dot product grows like eps32 * sqrt(K) * |c| ~ 1.2e-7 * K. The atol
 * is scaled by sqrt(K): 1e-5*sqrt(K) covers that with a ~10x margin up to K = 8192. */
#define GEMM_F32_ATOL_PER_SQRT_K 1e-5
#define GEMM_F32_RTOL 1e-5
/* bf16 GEMM on the device: same fp32 accumulation (tensor cores keep fp32 partial sums), then
 * the bf16 output rounding (rtol); atol 10x the f32 one for the differently ordered sums. */
#define GEMM_BF16_ATOL_PER_SQRT_K 1e-4
/* Row reductions (norms, softmax) in fp32 vs double: error ~ eps32 * sqrt(dim) relative; 1e-5
 * covers dim up to ~10^4 with margin. Softmax outputs are < 1, so its atol is small. */
#define ROW_F32_RTOL 1e-5
#define ROW_F32_ATOL 1e-5
#define SOFTMAX_F32_ATOL 1e-7
/* A device computing a row mean in fp32 carries rounding proportional to the values' magnitude,
 * not their spread: for inputs offset + N(0,1) the row atol grows by this factor per unit of
 * |offset| (fp32 partial sums of ~100s of values near 100 lose ~1e-5 of the spread). */
#define ROW_OFFSET_ATOL_GAIN 1e-6
/* Activations: a few ulps of expf/tanhf propagated through the formula; atol for outputs near 0
 * where relative error is meaningless (gelu(x) ~ x/2 for tiny x is fine, but 1+tanh cancels
 * for x << 0). */
#define ACT_F32_RTOL 1e-5
#define ACT_F32_ATOL 1e-6
/* add / mul: one fp32 rounding of the exact result: half an ulp (2^-24); allow 2 ulps. */
#define BINARY_F32_RTOL 2.4e-7
/* bf16 device results vs the f32 CPU: fp32 noise (atol) then one bf16 rounding (rtol). */
#define BF16_ATOL 1e-4
/* Attention, f32 CPU vs naive double: the CPU reference accumulates in double but normalises and
 * rotates q/k in fp32 (~1e-7 relative per element), which moves a score by ~1e-7*sqrt(d) and an
 * output (a convex combination of unit-scale values) by about as much; 1e-5 leaves margin. */
#define ATTN_F32_ATOL 1e-5
#define ATTN_F32_RTOL 1e-5
/* Attention, bf16 device vs f32 CPU. The device rounds the normalised/rotated q and k to bf16
 * (2^-9 relative each) before QK^T, which moves a unit-variance score by ~2^-9 * sqrt(2) ~ 3e-3
 * at most (typically 1e-3); it also rounds the softmax weights P to bf16 before PV (2^-9
 * relative, averaging out over keys) and the output to bf16 (rtol). Outputs are averages of
 * unit-normal values, |o| <~ 1, so 4e-3 absolute covers a 3e-3 score shift with margin. */
#define ATTN_BF16_ATOL 4e-3
/* RoPE in fp32: (a c - b s) rounds two products and a sum of terms up to |x| ~ 5: ~3 half-ulps of
 * 5 = 1e-6; 2e-6 absolute for outputs that cancel to ~0. */
#define ROPE_F32_ATOL 2e-6
#define ROPE_F32_RTOL 1e-6
/* Weight scale of conv cases: 1/sqrt(K) keeps outputs O(1), like trained convs. */
#define CONV_W_SCALE_PER_SQRT_K 1.0
/* PixelNorm epsilon of the video VAE (ltx-core PixelNorm default). */
#define PIXEL_NORM_EPS 1e-8f
/* QK RMSNorm epsilon of the LTX-2 attention (torch RMSNorm eps=1e-6 in ltx-core). */
#define QK_NORM_EPS 1e-6f
/* pi, spelled out because strict C11 <math.h> has no M_PI */
#define PI_D 3.14159265358979323846

/* Extra elements after each output buffer that must stay untouched (out-of-bounds writes). */
#define GUARD_ELEMS 64
/* Byte pattern pre-filled into outputs and guards: 0xFF.. is NaN in f32 and bf16, so an output
 * element the op forgot to write fails the NaN check too. */
#define FILL_BYTE 0xFF
#define SEED 20240611u
#define MAX_CASES 256
#define MAX_BAD_PRINT 5

/* case flags */
#define F_WEIGHT 1u    /* norm weight / gemm: (unused) */
#define F_BIAS 2u      /* norm bias / gemm bias */
#define F_KN 4u        /* gemm weight stored [K, N] */
#define F_STRIDED 8u   /* binary: a is a view with last-dim stride 2 */
#define F_SPECIAL 16u  /* convert: first inputs are NaN, +-inf, -0, ties, overflow */
#define F_MASK 32u     /* attention: key padding mask (batch 1: every key masked; batch 2: the
                        * leading 3/4 masked, so whole leading key tiles are dead) */
#define F_ROPE 64u     /* attention: split RoPE on q and k; rope op: split */
#define F_ROPE_IL 128u /* attention / rope: interleaved RoPE */
#define F_QKNORM 256u  /* attention: RMSNorm across heads on q and k */
#define F_SILU 512u    /* conv3d / pixel_norm: SiLU epilogue */
#define F_DROP 1024u   /* depth_to_space: drop the first frame */
#define F_RESID 2048u  /* depth_to_space: residual with .n channels before the stride product */
#define F_REFLECT 4096u /* conv3d: reflect spatial padding (else zeros) */

typedef struct op_case {
    ltx2_op op;
    ltx2_dtype dtype; /* device dtype; convert: the destination (source is the other one) */
    int ndim;
    int64_t shape[5]; /* x (or a); attention: q [B, Sq, H*d]; conv3d: x NDHWC */
    int64_t n;        /* gemm: N; conv3d: c_out; depth_to_space: residual channels / prod */
    int64_t heads, sk; /* attention / rope: heads; attention: S_kv */
    int64_t k3[3];     /* conv3d kernel (t, h, w); depth_to_space: strides */
    int tpad;          /* conv3d: ltx2_conv_tpad */
    int b_ndim;       /* binary: b shape */
    int64_t b_shape[4];
    unsigned flags;
    float scale, offset; /* inputs = offset + scale * normal */
} op_case;

typedef struct opts {
    int op;         /* -1: all */
    bool want_cpu, want_cuda, list, verbose;
} opts;

static op_case g_cases[MAX_CASES];
static int g_ncases;

static void add(op_case c) {
    if (c.scale == 0.0f) c.scale = 1.0f;
    if (g_ncases < MAX_CASES) g_cases[g_ncases++] = c;
}
/* The same case for f32 and bf16. */
static void add2(op_case c) {
    c.dtype = LTX2_F32;
    add(c);
    c.dtype = LTX2_BF16;
    add(c);
}

static void build_registry(void) {
    /* GEMM: odd sizes, both weight layouts, bias, GEMV, K=1, LTX-2 linears with D=4096/4. */
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {64, 256}, .n = 128});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {37, 129}, .n = 71, .flags = F_BIAS});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 3, .shape = {2, 25, 96}, .n = 80, .flags = F_KN});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {50, 300}, .n = 33, .flags = F_KN | F_BIAS});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {1, 512}, .n = 384, .flags = F_BIAS});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {13, 1}, .n = 17});
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 3, .shape = {2, 128, 1024}, .n = 1024, .flags = F_BIAS}); /* attn proj */
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {64, 1024}, .n = 4096, .flags = F_BIAS});     /* FFN up */
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {64, 4096}, .n = 1024, .flags = F_BIAS});     /* FFN down */
    add2((op_case){.op = LTX2_OP_GEMM, .ndim = 2, .shape = {300, 520}, .n = 260, .flags = F_BIAS});      /* > one MC block */

    /* Norms: short rows (warp per row), long rows (block per row), dims that are not a multiple
     * of the vector width, with and without weight/bias, LTX-2 hidden and head dims. */
    static const int64_t norm_shapes[][3] = {
        {4, 7, 0}, {3, 64, 0}, {16, 128, 0}, {2, 77, 1024}, {5, 2048, 0}, {3, 1030, 0}, {2, 4104, 0},
    };
    for (size_t i = 0; i < sizeof(norm_shapes) / sizeof(norm_shapes[0]); i++) {
        const int64_t *s = norm_shapes[i];
        int nd = s[2] ? 3 : 2;
        op_case c = {.ndim = nd, .shape = {s[0], s[1], s[2]}};
        c.op = LTX2_OP_RMS_NORM;
        c.flags = i % 2 ? 0u : F_WEIGHT;
        add2(c);
        c.op = LTX2_OP_LAYER_NORM;
        c.flags = i % 3 == 0 ? 0u : (i % 3 == 1 ? F_WEIGHT | F_BIAS : F_BIAS);
        add2(c);
    }
    /* LayerNorm on inputs whose mean dwarfs their spread (catches E[x^2]-E[x]^2 cancellation). */
    add2((op_case){.op = LTX2_OP_LAYER_NORM, .ndim = 2, .shape = {8, 512}, .flags = F_WEIGHT | F_BIAS,
                   .offset = 100.0f});
    add2((op_case){.op = LTX2_OP_RMS_NORM, .ndim = 2, .shape = {8, 512}, .flags = F_WEIGHT, .scale = 1e-3f});

    /* Softmax: odd dims, attention-like rows, long rows, and large logits (stability). */
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 2, .shape = {4, 7}});
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 3, .shape = {2, 8, 128}});
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 2, .shape = {3, 1000}});
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 2, .shape = {2, 4099}});
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 2, .shape = {6, 256}, .scale = 40.0f});
    add2((op_case){.op = LTX2_OP_SOFTMAX, .ndim = 2, .shape = {1, 1}});

    /* Activations. */
    for (int a = 0; a < 2; a++) {
        ltx2_op op = a ? LTX2_OP_SILU : LTX2_OP_GELU_TANH;
        add2((op_case){.op = op, .ndim = 1, .shape = {1}});
        add2((op_case){.op = op, .ndim = 1, .shape = {1001}, .scale = 4.0f});
        add2((op_case){.op = op, .ndim = 3, .shape = {2, 77, 1024}});
        add2((op_case){.op = op, .ndim = 2, .shape = {3, 4101}, .scale = 8.0f});
    }

    /* Broadcasting add / mul. */
    for (int a = 0; a < 2; a++) {
        ltx2_op op = a ? LTX2_OP_MUL : LTX2_OP_ADD;
        add2((op_case){.op = op, .ndim = 3, .shape = {3, 5, 7}, .b_ndim = 3, .b_shape = {3, 5, 7}});
        add2((op_case){.op = op, .ndim = 3, .shape = {2, 77, 1024}, .b_ndim = 1, .b_shape = {1024}});
        add2((op_case){.op = op, .ndim = 3, .shape = {4, 1, 6}, .b_ndim = 2, .b_shape = {3, 1}});
        add2((op_case){.op = op, .ndim = 4, .shape = {2, 3, 4, 5}, .b_ndim = 3, .b_shape = {3, 1, 1}});
        add2((op_case){.op = op, .ndim = 2, .shape = {9, 33}, .b_ndim = 1, .b_shape = {1}});
        add2((op_case){.op = op, .ndim = 3, .shape = {2, 16, 64}, .b_ndim = 3, .b_shape = {2, 1, 64}}); /* AdaLN-like */
        add2((op_case){.op = op, .ndim = 2, .shape = {8, 16}, .b_ndim = 2, .b_shape = {8, 16}, .flags = F_STRIDED});
        add2((op_case){.op = op, .ndim = 1, .shape = {1}, .b_ndim = 3, .b_shape = {2, 3, 4}});
    }

    /* Conversion both ways; special values first. dtype is the destination. */
    add2((op_case){.op = LTX2_OP_CONVERT, .ndim = 1, .shape = {37}, .flags = F_SPECIAL, .scale = 1e3f});
    add2((op_case){.op = LTX2_OP_CONVERT, .ndim = 2, .shape = {77, 1024}});
    add2((op_case){.op = LTX2_OP_CONVERT, .ndim = 1, .shape = {4099}, .scale = 1e-30f});

    /* Attention (device: bf16 only; LTX-2 heads are 128 wide for video, 64 for audio): odd
     * lengths that are not multiples of any tile, cross-attention with a text padding mask, split
     * and interleaved RoPE, QK RMSNorm across heads, and LTX-2 shapes scaled down (video
     * self-attention H32 S6144 d128 -> H4 S384; text cross-attention S_kv 1024 -> 128). */
    const ltx2_op A = LTX2_OP_ATTENTION;
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {1, 77, 2 * 64}, .heads = 2, .sk = 77});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {2, 130, 2 * 128}, .heads = 2, .sk = 130,
                  .flags = F_ROPE});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {2, 64, 4 * 64}, .heads = 4, .sk = 77,
                  .flags = F_MASK});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {1, 5, 64}, .heads = 1, .sk = 1});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {1, 100, 3 * 64}, .heads = 3, .sk = 100,
                  .flags = F_ROPE_IL | F_QKNORM});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {1, 130, 2 * 128}, .heads = 2, .sk = 200,
                  .flags = F_QKNORM | F_ROPE});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {2, 384, 4 * 128}, .heads = 4, .sk = 384,
                  .flags = F_QKNORM | F_ROPE}); /* video self-attn, scaled */
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {2, 192, 4 * 128}, .heads = 4, .sk = 128,
                  .flags = F_QKNORM | F_MASK}); /* video -> text cross-attn, scaled */
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {1, 126, 4 * 64}, .heads = 4, .sk = 126,
                  .flags = F_ROPE, .scale = 2.0f}); /* audio self-attn, scaled; peaky softmax */
    /* Tile edges of both kernels (mma.sync: 64 query rows x 64 keys; wgmma: 128 query rows in two
     * 64-row warpgroups x 128 keys): S_kv one past / short of a tile with a mask whose batch 2
     * kills the leading tiles, fewer query rows than one warpgroup, d64 ragged with a mask, and
     * d128 at S 1024 (8 key tiles through the 2-stage ring: every slot reused several times). */
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {3, 200, 2 * 128}, .heads = 2, .sk = 333,
                  .flags = F_MASK});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {3, 129, 2 * 128}, .heads = 2, .sk = 257,
                  .flags = F_MASK | F_QKNORM | F_ROPE});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {1, 33, 128}, .heads = 1, .sk = 1});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {1, 70, 2 * 64}, .heads = 2, .sk = 129,
                  .flags = F_MASK | F_ROPE_IL});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {1, 1024, 2 * 128}, .heads = 2, .sk = 1024,
                  .flags = F_QKNORM | F_ROPE});

    /* RoPE alone, both layouts, f32 and bf16. */
    add2((op_case){.op = LTX2_OP_ROPE, .ndim = 3, .shape = {2, 77, 2 * 64}, .heads = 2, .flags = F_ROPE});
    add2((op_case){.op = LTX2_OP_ROPE, .ndim = 3, .shape = {1, 130, 4 * 128}, .heads = 4, .flags = F_ROPE});
    add2((op_case){.op = LTX2_OP_ROPE, .ndim = 3, .shape = {2, 33, 3 * 64}, .heads = 3, .flags = F_ROPE_IL});

    /* conv3d (device: bf16 only): VAE layer shapes scaled down (decoder channels 1024/512/256/128
     * -> 64/32; latent 128 -> 32; conv_out 3*4*4 = 48), causal and symmetric time padding, zeros
     * and reflect spatial padding, 1x1x1, bias, SiLU epilogue, odd spatial sizes. */
    const ltx2_op C3 = LTX2_OP_CONV3D;
    const ltx2_conv_tpad CAUSAL = LTX2_CONV_TPAD_CAUSAL, SYM = LTX2_CONV_TPAD_SYMMETRIC;
    add((op_case){.op = C3, .dtype = LTX2_BF16, .ndim = 5, .shape = {1, 3, 6, 5, 32}, .n = 64, .k3 = {3, 3, 3},
                  .tpad = CAUSAL, .flags = F_BIAS}); /* conv_in */
    add((op_case){.op = C3, .dtype = LTX2_BF16, .ndim = 5, .shape = {1, 4, 8, 8, 64}, .n = 64, .k3 = {3, 3, 3},
                  .tpad = CAUSAL, .flags = F_BIAS | F_REFLECT | F_SILU}); /* res block conv */
    add((op_case){.op = C3, .dtype = LTX2_BF16, .ndim = 5, .shape = {2, 5, 5, 7, 16}, .n = 24, .k3 = {3, 3, 3},
                  .tpad = SYM, .flags = F_BIAS}); /* non-causal decoder */
    add((op_case){.op = C3, .dtype = LTX2_BF16, .ndim = 5, .shape = {1, 3, 7, 9, 64}, .n = 48, .k3 = {3, 3, 3},
                  .tpad = CAUSAL, .flags = F_BIAS | F_REFLECT}); /* conv_out */
    add((op_case){.op = C3, .dtype = LTX2_BF16, .ndim = 5, .shape = {2, 2, 4, 5, 64}, .n = 32, .k3 = {1, 1, 1},
                  .tpad = CAUSAL, .flags = F_BIAS}); /* 1x1x1 shortcut */
    add((op_case){.op = C3, .dtype = LTX2_BF16, .ndim = 5, .shape = {1, 1, 3, 3, 8}, .n = 8, .k3 = {3, 3, 3},
                  .tpad = CAUSAL, .flags = F_REFLECT | F_SILU}); /* tiny, no bias */
    add((op_case){.op = C3, .dtype = LTX2_BF16, .ndim = 5, .shape = {1, 2, 16, 16, 128}, .n = 128, .k3 = {3, 3, 3},
                  .tpad = CAUSAL, .flags = F_BIAS}); /* several K and M tiles */

    /* PixelNorm (+ SiLU), the VAE's norm over channels. */
    add2((op_case){.op = LTX2_OP_PIXEL_NORM, .ndim = 5, .shape = {1, 3, 4, 5, 64}, .flags = F_SILU});
    add2((op_case){.op = LTX2_OP_PIXEL_NORM, .ndim = 5, .shape = {2, 2, 3, 3, 128}});
    add2((op_case){.op = LTX2_OP_PIXEL_NORM, .ndim = 5, .shape = {1, 1, 2, 2, 7}, .flags = F_SILU});
    add2((op_case){.op = LTX2_OP_PIXEL_NORM, .ndim = 5, .shape = {1, 2, 2, 2, 1024}, .flags = F_SILU});

    /* DepthToSpaceUpsample: (2,2,2) with first-frame drop and residual, spatial-only (1,2,2),
     * temporal-only (2,1,1) with a full-width residual. */
    const ltx2_op DS = LTX2_OP_DEPTH_TO_SPACE;
    add2((op_case){.op = DS, .ndim = 5, .shape = {1, 3, 4, 5, 4 * 8}, .k3 = {2, 2, 2}, .n = 2, .flags = F_DROP | F_RESID});
    add2((op_case){.op = DS, .ndim = 5, .shape = {2, 2, 3, 3, 3 * 4}, .k3 = {1, 2, 2}});
    add2((op_case){.op = DS, .ndim = 5, .shape = {1, 2, 2, 3, 16 * 2}, .k3 = {2, 1, 1}, .n = 16, .flags = F_DROP | F_RESID});
}

/* ---- helpers ---- */

static int64_t numel_of(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

static const char *shape_s(int ndim, const int64_t *shape, char *buf, size_t cap) {
    return ltx2_shape_str(shape, ndim, buf, cap);
}

static void case_name(const op_case *c, char *buf, size_t cap) {
    char s1[64], s2[64];
    shape_s(c->ndim, c->shape, s1, sizeof(s1));
    switch (c->op) {
    case LTX2_OP_GEMM:
        snprintf(buf, cap, "gemm %s x%s N=%lld %s%s", ltx2_dtype_name(c->dtype), s1, (long long)c->n,
                 c->flags & F_KN ? "w[K,N]" : "w[N,K]", c->flags & F_BIAS ? " +bias" : "");
        break;
    case LTX2_OP_ADD:
    case LTX2_OP_MUL:
        snprintf(buf, cap, "%s %s a%s%s b%s", ltx2_op_name(c->op), ltx2_dtype_name(c->dtype), s1,
                 c->flags & F_STRIDED ? "(stride 2)" : "", shape_s(c->b_ndim, c->b_shape, s2, sizeof(s2)));
        break;
    case LTX2_OP_ATTENTION:
        snprintf(buf, cap, "attention %s q%s H%lld Skv=%lld%s%s%s%s", ltx2_dtype_name(c->dtype), s1,
                 (long long)c->heads, (long long)c->sk, c->flags & F_MASK ? " +mask" : "",
                 c->flags & F_ROPE ? " +rope" : "", c->flags & F_ROPE_IL ? " +rope_il" : "",
                 c->flags & F_QKNORM ? " +qknorm" : "");
        break;
    case LTX2_OP_ROPE:
        snprintf(buf, cap, "rope %s x%s H%lld %s", ltx2_dtype_name(c->dtype), s1, (long long)c->heads,
                 c->flags & F_ROPE_IL ? "interleaved" : "split");
        break;
    case LTX2_OP_CONV3D:
        snprintf(buf, cap, "conv3d %s x%s Cout=%lld k%lldx%lldx%lld %s %s%s%s", ltx2_dtype_name(c->dtype), s1,
                 (long long)c->n, (long long)c->k3[0], (long long)c->k3[1], (long long)c->k3[2],
                 c->tpad == LTX2_CONV_TPAD_CAUSAL ? "causal" : "sym", c->flags & F_REFLECT ? "reflect" : "zeros",
                 c->flags & F_BIAS ? " +bias" : "", c->flags & F_SILU ? " +silu" : "");
        break;
    case LTX2_OP_PIXEL_NORM:
        snprintf(buf, cap, "pixel_norm %s x%s%s", ltx2_dtype_name(c->dtype), s1, c->flags & F_SILU ? " +silu" : "");
        break;
    case LTX2_OP_DEPTH_TO_SPACE:
        snprintf(buf, cap, "depth_to_space %s x%s s%lldx%lldx%lld%s%s", ltx2_dtype_name(c->dtype), s1,
                 (long long)c->k3[0], (long long)c->k3[1], (long long)c->k3[2], c->flags & F_DROP ? " drop" : "",
                 c->flags & F_RESID ? " +residual" : "");
        break;
    case LTX2_OP_CONVERT:
        snprintf(buf, cap, "convert %s->%s %s%s", c->dtype == LTX2_BF16 ? "f32" : "bf16",
                 ltx2_dtype_name(c->dtype), s1, c->flags & F_SPECIAL ? " specials" : "");
        break;
    default:
        snprintf(buf, cap, "%s %s x%s%s%s%s", ltx2_op_name(c->op), ltx2_dtype_name(c->dtype), s1,
                 c->flags & F_WEIGHT ? " +weight" : "", c->flags & F_BIAS ? " +bias" : "",
                 c->offset != 0.0f ? " offset" : (c->scale != 1.0f ? " scaled" : ""));
        break;
    }
}

/* Round-to-nearest-even to bf16 and back, written independently of src/core/dtype.c. */
static float naive_bf16_round(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) {
        u = (u | 0x00400000u) & 0xFFFF0000u; /* quiet NaN, keep sign */
    } else {
        u += 0x7FFFu + ((u >> 16) & 1u);
        u &= 0xFFFF0000u;
    }
    float r;
    memcpy(&r, &u, 4);
    return r;
}

static ltx2_conv3d_desc conv_desc_of(const op_case *c) {
    return (ltx2_conv3d_desc){.c_in = c->shape[4], .c_out = c->n, .kt = c->k3[0], .kh = c->k3[1], .kw = c->k3[2],
                              .st = 1, .sh = 1, .sw = 1, .tpad = (ltx2_conv_tpad)c->tpad,
                              .spad = c->flags & F_REFLECT ? LTX2_CONV_SPAD_REFLECT : LTX2_CONV_SPAD_ZEROS};
}

/* Host inputs (f32, already rounded to bf16 values for bf16 cases). */
typedef struct inputs {
    int64_t nx, nx_storage, nw, nb, nout;
    float *x, *w, *bias, *b; /* x holds nx_storage values for strided views */
    int out_ndim;
    int64_t out_shape[5];
    /* attention: k, v [B, Sk, D], norm weights [D], RoPE tables for q and k (f32), mask [B, Sk] */
    float *k, *v, *wq, *wk, *qc, *qs, *kc, *ks;
    int64_t nkv, ntq, ntk;
    uint8_t *mask;
} inputs;

static float *gen(uint64_t stream, int64_t n, float scale, float offset, bool round_bf16) {
    float *p = malloc((size_t)(n ? n : 1) * sizeof(float));
    ltx2_rng_normal(SEED, stream, 0, (size_t)n, p);
    for (int64_t i = 0; i < n; i++) {
        p[i] = offset + scale * p[i];
        if (round_bf16) p[i] = naive_bf16_round(p[i]);
    }
    return p;
}

static void inputs_make(const op_case *c, int idx, inputs *in) {
    memset(in, 0, sizeof(*in));
    uint64_t st = (uint64_t)idx * 8u;
    /* bf16 device cases (and bf16-sourced conversions) see bf16-exact inputs so both sides
     * compute on identical values. */
    bool rb = c->op == LTX2_OP_CONVERT ? c->dtype == LTX2_F32 : c->dtype == LTX2_BF16;
    in->nx = numel_of(c->ndim, c->shape);
    in->nx_storage = c->flags & F_STRIDED ? 2 * in->nx : in->nx;
    in->x = gen(st, in->nx_storage, c->scale, c->offset, rb);
    int64_t last = c->shape[c->ndim - 1];
    in->out_ndim = c->ndim;
    memcpy(in->out_shape, c->shape, sizeof(in->out_shape));
    switch (c->op) {
    case LTX2_OP_GEMM:
        in->nw = last * c->n;
        in->w = gen(st + 1, in->nw, 1.0f, 0.0f, rb);
        if (c->flags & F_BIAS) in->bias = gen(st + 2, c->n, 1.0f, 0.0f, rb);
        in->out_shape[c->ndim - 1] = c->n;
        break;
    case LTX2_OP_RMS_NORM:
    case LTX2_OP_LAYER_NORM:
        /* weights near 1 like trained norm gains, biases small */
        if (c->flags & F_WEIGHT) in->w = gen(st + 1, last, 0.2f, 1.0f, rb);
        if (c->flags & F_BIAS) in->bias = gen(st + 2, last, 0.1f, 0.0f, rb);
        break;
    case LTX2_OP_ADD:
    case LTX2_OP_MUL: {
        in->nb = numel_of(c->b_ndim, c->b_shape);
        in->b = gen(st + 1, in->nb, 1.0f, 0.0f, rb);
        int nd = c->ndim > c->b_ndim ? c->ndim : c->b_ndim;
        in->out_ndim = nd;
        for (int i = 0; i < nd; i++) {
            int ia = i - (nd - c->ndim), ib = i - (nd - c->b_ndim);
            int64_t da = ia >= 0 ? c->shape[ia] : 1, db = ib >= 0 ? c->b_shape[ib] : 1;
            in->out_shape[i] = da == 1 ? db : da;
        }
        break;
    }
    case LTX2_OP_CONVERT:
        if (c->flags & F_SPECIAL) {
            static const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, 1.00390625f /* tie: 1 + 2^-8 */,
                                       1.01171875f /* tie, rounds up to even */, 3.0e38f, -3.4e38f,
                                       1e-40f /* subnormal */};
            size_t k = sizeof(sp) / sizeof(sp[0]);
            for (size_t i = 0; i < k && (int64_t)i < in->nx; i++) in->x[i] = rb ? naive_bf16_round(sp[i]) : sp[i];
            if (in->nx > (int64_t)k + 2 && c->dtype == LTX2_BF16) { /* f32 source: NaN and inf */
                in->x[k] = NAN;
                in->x[k + 1] = -INFINITY;
            }
        }
        break;
    case LTX2_OP_ATTENTION: {
        const int64_t B = c->shape[0], Sq = c->shape[1], D = c->shape[2], Sk = c->sk, d = D / c->heads;
        in->out_shape[1] = Sq;
        in->nkv = B * Sk * D;
        in->k = gen(st + 1, in->nkv, c->scale, 0.0f, rb);
        in->v = gen(st + 2, in->nkv, c->scale, 0.0f, rb);
        if (c->flags & F_QKNORM) {
            in->wq = gen(st + 3, D, 0.2f, 1.0f, rb);
            in->wk = gen(st + 4, D, 0.2f, 1.0f, rb);
        }
        if (c->flags & (F_ROPE | F_ROPE_IL)) {
            /* split [B, H, S, d/2], interleaved [B, S, D] (the pair's angle repeated) */
            bool il = c->flags & F_ROPE_IL;
            in->ntq = il ? B * Sq * D : B * c->heads * Sq * (d / 2);
            in->ntk = il ? B * Sk * D : B * c->heads * Sk * (d / 2);
            float *aq = gen(st + 5, in->ntq, 2.0f, 0.0f, false), *ak = gen(st + 6, in->ntk, 2.0f, 0.0f, false);
            in->qc = malloc((size_t)in->ntq * sizeof(float));
            in->qs = malloc((size_t)in->ntq * sizeof(float));
            in->kc = malloc((size_t)in->ntk * sizeof(float));
            in->ks = malloc((size_t)in->ntk * sizeof(float));
            for (int64_t i = 0; i < in->ntq; i++) {
                float a = aq[il ? i & ~(int64_t)1 : i];
                in->qc[i] = (float)cos(a);
                in->qs[i] = (float)sin(a);
            }
            for (int64_t i = 0; i < in->ntk; i++) {
                float a = ak[il ? i & ~(int64_t)1 : i];
                in->kc[i] = (float)cos(a);
                in->ks[i] = (float)sin(a);
            }
            free(aq);
            free(ak);
        }
        if (c->flags & F_MASK) {
            /* batch 0: a text padding pattern; batch 1: every key masked (uniform average);
             * batch 2: only the last quarter of the keys attended */
            in->mask = malloc((size_t)(B * Sk));
            for (int64_t b = 0; b < B; b++)
                for (int64_t j = 0; j < Sk; j++)
                    in->mask[b * Sk + j] = b == 1   ? 0
                                           : b == 2 ? j >= Sk - Sk / 4
                                                    : (j < (2 * Sk) / 3 || j % 5 == 0);
        }
        break;
    }
    case LTX2_OP_ROPE: {
        const int64_t B = c->shape[0], S = c->shape[1], D = c->shape[2], d = D / c->heads;
        bool il = c->flags & F_ROPE_IL;
        in->ntq = il ? B * S * D : B * c->heads * S * (d / 2);
        float *aq = gen(st + 5, in->ntq, 2.0f, 0.0f, false);
        in->qc = malloc((size_t)in->ntq * sizeof(float));
        in->qs = malloc((size_t)in->ntq * sizeof(float));
        for (int64_t i = 0; i < in->ntq; i++) {
            float a = aq[il ? i & ~(int64_t)1 : i];
            in->qc[i] = (float)cos(a);
            in->qs[i] = (float)sin(a);
        }
        free(aq);
        break;
    }
    case LTX2_OP_CONV3D: {
        ltx2_conv3d_desc d = conv_desc_of(c);
        int64_t o[3];
        ltx2_cpu_conv3d_out_shape(NULL, &d, c->shape[1], c->shape[2], c->shape[3], o);
        int64_t K = ltx2_cpu_conv3d_packed_numel(&d) / d.c_out;
        in->nw = K * d.c_out;
        in->w = gen(st + 1, in->nw, (float)(CONV_W_SCALE_PER_SQRT_K / sqrt((double)K)), 0.0f, rb);
        if (c->flags & F_BIAS) in->bias = gen(st + 2, d.c_out, 0.5f, 0.0f, rb);
        in->out_shape[1] = o[0];
        in->out_shape[2] = o[1];
        in->out_shape[3] = o[2];
        in->out_shape[4] = d.c_out;
        break;
    }
    case LTX2_OP_DEPTH_TO_SPACE: {
        const int64_t *sd = c->k3, prod = sd[0] * sd[1] * sd[2];
        in->out_shape[1] = c->shape[1] * sd[0] - (c->flags & F_DROP ? 1 : 0);
        in->out_shape[2] = c->shape[2] * sd[1];
        in->out_shape[3] = c->shape[3] * sd[2];
        in->out_shape[4] = c->shape[4] / prod;
        if (c->flags & F_RESID) {
            in->nb = c->shape[0] * c->shape[1] * c->shape[2] * c->shape[3] * c->n * prod;
            in->b = gen(st + 1, in->nb, 1.0f, 0.0f, rb);
        }
        break;
    }
    default:
        break;
    }
    in->nout = numel_of(in->out_ndim, in->out_shape);
}

static void inputs_free(inputs *in) {
    free(in->x);
    free(in->w);
    free(in->bias);
    free(in->b);
    free(in->k);
    free(in->v);
    free(in->wq);
    free(in->wk);
    free(in->qc);
    free(in->qs);
    free(in->kc);
    free(in->ks);
    free(in->mask);
}

/* ---- naive double-precision references ---- */

/* q or k after RMSNorm across the whole inner dim and RoPE, in double: [B, S, D]. */
static double *naive_prep_qk(const op_case *c, const float *x, int64_t S, const float *w, const float *tc,
                             const float *ts) {
    const int64_t B = c->shape[0], D = c->shape[2], H = c->heads, d = D / H;
    double *o = malloc((size_t)(B * S * D) * sizeof(double));
    for (int64_t r = 0; r < B * S; r++) {
        const float *xr = x + r * D;
        double *orow = o + r * D;
        double inv = 1.0;
        if (w) {
            double ss = 0;
            for (int64_t i = 0; i < D; i++) ss += (double)xr[i] * xr[i];
            inv = 1.0 / sqrt(ss / (double)D + (double)QK_NORM_EPS);
        }
        for (int64_t i = 0; i < D; i++) orow[i] = xr[i] * inv * (w ? (double)w[i] : 1.0);
        if (!tc) continue;
        const int64_t b = r / S, t = r % S;
        if (c->flags & F_ROPE_IL) {
            const float *cr = tc + r * D, *sr = ts + r * D;
            for (int64_t i = 0; i < D; i += 2) {
                double a0 = orow[i], a1 = orow[i + 1];
                orow[i] = a0 * cr[i] - a1 * sr[i];
                orow[i + 1] = a1 * cr[i + 1] + a0 * sr[i + 1];
            }
        } else {
            for (int64_t h = 0; h < H; h++) {
                const float *cr = tc + ((b * H + h) * S + t) * (d / 2), *sr = ts + ((b * H + h) * S + t) * (d / 2);
                double *xh = orow + h * d;
                for (int64_t i = 0; i < d / 2; i++) {
                    double a0 = xh[i], a1 = xh[i + d / 2];
                    xh[i] = a0 * cr[i] - a1 * sr[i];
                    xh[i + d / 2] = a1 * cr[i] + a0 * sr[i];
                }
            }
        }
    }
    return o;
}

static void naive_attention(const op_case *c, const inputs *in, double *ref) {
    const int64_t B = c->shape[0], Sq = c->shape[1], D = c->shape[2], Sk = c->sk, H = c->heads, d = D / H;
    double *q = naive_prep_qk(c, in->x, Sq, in->wq, in->qc, in->qs);
    double *k = naive_prep_qk(c, in->k, Sk, in->wk, in->kc, in->ks);
    const double scale = 1.0 / sqrt((double)d);
#pragma omp parallel for collapse(2)
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++) {
            double *p = malloc((size_t)Sk * sizeof(double));
            int64_t kept = 0;
            for (int64_t j = 0; j < Sk; j++) kept += !in->mask || in->mask[b * Sk + j];
            for (int64_t i = 0; i < Sq; i++) {
                const double *qi = q + (b * Sq + i) * D + h * d;
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < Sk; j++) {
                    bool keep = !in->mask || in->mask[b * Sk + j] || kept == 0;
                    double sc = 0;
                    for (int64_t e = 0; e < d; e++) sc += qi[e] * k[(b * Sk + j) * D + h * d + e];
                    /* all keys masked: the reference's additive -max bias cancels -> uniform */
                    p[j] = !keep ? -INFINITY : (kept == 0 ? 0.0 : sc * scale);
                    if (p[j] > mx) mx = p[j];
                }
                for (int64_t j = 0; j < Sk; j++) sum += p[j] = exp(p[j] - mx);
                for (int64_t e = 0; e < d; e++) {
                    double o = 0;
                    for (int64_t j = 0; j < Sk; j++) o += p[j] * in->v[(b * Sk + j) * D + h * d + e];
                    ref[(b * Sq + i) * D + h * d + e] = o / sum;
                }
            }
            free(p);
        }
    free(q);
    free(k);
}

static void naive_conv3d(const op_case *c, const inputs *in, double *ref) {
    const ltx2_conv3d_desc dd = conv_desc_of(c);
    const int64_t N = c->shape[0], T = c->shape[1], Hh = c->shape[2], W = c->shape[3], Ci = dd.c_in, Co = dd.c_out;
    const int64_t To = in->out_shape[1], Ho = in->out_shape[2], Wo = in->out_shape[3];
    const int64_t front = dd.tpad == LTX2_CONV_TPAD_CAUSAL ? dd.kt - 1
                          : dd.tpad == LTX2_CONV_TPAD_SYMMETRIC ? (dd.kt - 1) / 2 : 0;
    const int64_t ph = dd.kh / 2, pw = dd.kw / 2;
    const bool reflect = dd.spad == LTX2_CONV_SPAD_REFLECT;
#pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < N; n++)
        for (int64_t to = 0; to < To; to++)
            for (int64_t ho = 0; ho < Ho; ho++)
                for (int64_t wo = 0; wo < Wo; wo++) {
                    double *y = ref + (((n * To + to) * Ho + ho) * Wo + wo) * Co;
                    for (int64_t o = 0; o < Co; o++) y[o] = in->bias ? in->bias[o] : 0.0;
                    for (int64_t a = 0; a < dd.kt; a++) {
                        int64_t ts = to + a - front;
                        ts = ts < 0 ? 0 : ts > T - 1 ? T - 1 : ts; /* edge frames replicated */
                        for (int64_t bb = 0; bb < dd.kh; bb++)
                            for (int64_t e = 0; e < dd.kw; e++) {
                                int64_t hs = ho + bb - ph, ws = wo + e - pw;
                                if (reflect) {
                                    hs = hs < 0 ? -hs : hs >= Hh ? 2 * (Hh - 1) - hs : hs;
                                    ws = ws < 0 ? -ws : ws >= W ? 2 * (W - 1) - ws : ws;
                                } else if (hs < 0 || hs >= Hh || ws < 0 || ws >= W) {
                                    continue;
                                }
                                const float *xs = in->x + (((n * T + ts) * Hh + hs) * W + ws) * Ci;
                                const float *wt = in->w + ((a * dd.kh + bb) * dd.kw + e) * Ci * Co;
                                for (int64_t i = 0; i < Ci; i++)
                                    for (int64_t o = 0; o < Co; o++) y[o] += (double)xs[i] * wt[i * Co + o];
                            }
                    }
                    if (c->flags & F_SILU)
                        for (int64_t o = 0; o < Co; o++) y[o] = y[o] / (1.0 + exp(-y[o]));
                }
}

static void naive_ref(const op_case *c, const inputs *in, double *ref) {
    int64_t last = c->shape[c->ndim - 1];
    switch (c->op) {
    case LTX2_OP_GEMM: {
        int64_t K = last, N = c->n, M = in->nx / (K ? K : 1);
        bool kn = c->flags & F_KN;
#pragma omp parallel for
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = in->bias ? in->bias[j] : 0.0;
                for (int64_t k = 0; k < K; k++)
                    s += (double)in->x[i * K + k] * (double)(kn ? in->w[k * N + j] : in->w[j * K + k]);
                ref[i * N + j] = s;
            }
        break;
    }
    case LTX2_OP_RMS_NORM:
    case LTX2_OP_LAYER_NORM:
    case LTX2_OP_SOFTMAX: {
        int64_t rows = in->nx / last;
        for (int64_t r = 0; r < rows; r++) {
            const float *x = in->x + r * last;
            double *y = ref + r * last;
            if (c->op == LTX2_OP_SOFTMAX) {
                double mx = -INFINITY, s = 0;
                for (int64_t i = 0; i < last; i++) mx = x[i] > mx ? x[i] : mx;
                for (int64_t i = 0; i < last; i++) s += exp(x[i] - mx);
                for (int64_t i = 0; i < last; i++) y[i] = exp(x[i] - mx) / s;
                continue;
            }
            double mean = 0, var = 0;
            if (c->op == LTX2_OP_LAYER_NORM) {
                for (int64_t i = 0; i < last; i++) mean += x[i];
                mean /= (double)last;
            }
            for (int64_t i = 0; i < last; i++) var += (x[i] - mean) * (x[i] - mean);
            double inv = 1.0 / sqrt(var / (double)last + 1e-6);
            for (int64_t i = 0; i < last; i++) {
                double v = (x[i] - mean) * inv;
                if (in->w) v *= in->w[i];
                if (in->bias) v += in->bias[i];
                y[i] = v;
            }
        }
        break;
    }
    case LTX2_OP_GELU_TANH:
        for (int64_t i = 0; i < in->nx; i++) {
            double v = in->x[i];
            ref[i] = 0.5 * v * (1.0 + tanh(sqrt(2.0 / PI_D) * (v + 0.044715 * v * v * v)));
        }
        break;
    case LTX2_OP_SILU:
        for (int64_t i = 0; i < in->nx; i++) ref[i] = in->x[i] / (1.0 + exp(-(double)in->x[i]));
        break;
    case LTX2_OP_ADD:
    case LTX2_OP_MUL: {
        /* Walk the output index and find each operand's element from its own shape. */
        int nd = in->out_ndim;
        int64_t xs = c->flags & F_STRIDED ? 2 : 1;
        for (int64_t o = 0; o < in->nout; o++) {
            int64_t rem = o, ia = 0, ib = 0, sa = xs, sb = 1;
            for (int d = nd - 1; d >= 0; d--) {
                int64_t coord = rem % in->out_shape[d];
                rem /= in->out_shape[d];
                int da = d - (nd - c->ndim), db = d - (nd - c->b_ndim);
                if (da >= 0) {
                    if (c->shape[da] != 1) ia += coord * sa;
                    sa *= c->shape[da];
                }
                if (db >= 0) {
                    if (c->b_shape[db] != 1) ib += coord * sb;
                    sb *= c->b_shape[db];
                }
            }
            double a = in->x[ia], b = in->b[ib];
            ref[o] = c->op == LTX2_OP_ADD ? a + b : a * b;
        }
        break;
    }
    case LTX2_OP_CONVERT:
        for (int64_t i = 0; i < in->nx; i++)
            ref[i] = c->dtype == LTX2_BF16 ? naive_bf16_round(in->x[i]) : in->x[i];
        break;
    case LTX2_OP_ATTENTION:
        naive_attention(c, in, ref);
        break;
    case LTX2_OP_ROPE: {
        op_case cc = *c;
        cc.flags &= ~(unsigned)F_QKNORM;
        double *r = naive_prep_qk(&cc, in->x, c->shape[1], NULL, in->qc, in->qs);
        memcpy(ref, r, (size_t)in->nout * sizeof(double));
        free(r);
        break;
    }
    case LTX2_OP_CONV3D:
        naive_conv3d(c, in, ref);
        break;
    case LTX2_OP_PIXEL_NORM:
        for (int64_t r = 0; r < in->nx / last; r++) {
            const float *x = in->x + r * last;
            double ss = 0;
            for (int64_t i = 0; i < last; i++) ss += (double)x[i] * x[i];
            double inv = 1.0 / sqrt(ss / (double)last + (double)PIXEL_NORM_EPS);
            for (int64_t i = 0; i < last; i++) {
                double v = x[i] * inv;
                ref[r * last + i] = c->flags & F_SILU ? v / (1.0 + exp(-v)) : v;
            }
        }
        break;
    case LTX2_OP_DEPTH_TO_SPACE: {
        /* walk the output and find each source element from the einops pattern */
        const int64_t *sd = c->k3, C = in->out_shape[4], T = in->out_shape[1], H = in->out_shape[2],
                      W = in->out_shape[3], drop = c->flags & F_DROP ? 1 : 0;
        const int64_t t0 = c->shape[1], h0 = c->shape[2], w0 = c->shape[3], xc = c->shape[4];
        const int64_t rcp = c->n * sd[0] * sd[1] * sd[2];
        int64_t o = 0;
        for (int64_t n = 0; n < c->shape[0]; n++)
            for (int64_t t = 0; t < T; t++)
                for (int64_t y = 0; y < H; y++)
                    for (int64_t x = 0; x < W; x++)
                        for (int64_t ch = 0; ch < C; ch++, o++) {
                            int64_t tt = t + drop, p1 = tt % sd[0], p2 = y % sd[1], p3 = x % sd[2];
                            int64_t vox = ((n * t0 + tt / sd[0]) * h0 + y / sd[1]) * w0 + x / sd[2];
                            double v = in->x[vox * xc + ((ch * sd[0] + p1) * sd[1] + p2) * sd[2] + p3];
                            if (in->b) v += in->b[vox * rcp + (((ch % c->n) * sd[0] + p1) * sd[1] + p2) * sd[2] + p3];
                            ref[o] = v;
                        }
        break;
    }
    default:
        break;
    }
}

/* ---- tolerance per op x dtype ---- */

typedef struct tol {
    double atol, rtol;
} tol;

static tol tol_for(const op_case *c, ltx2_dtype dt) {
    bool bf = dt == LTX2_BF16 && c->op != LTX2_OP_CONVERT;
    double sk = sqrt((double)c->shape[c->ndim - 1]);
    tol t = {0.0, 0.0};
    switch (c->op) {
    case LTX2_OP_GEMM:
        t.atol = (bf ? GEMM_BF16_ATOL_PER_SQRT_K : GEMM_F32_ATOL_PER_SQRT_K) * sk;
        t.rtol = GEMM_F32_RTOL;
        break;
    case LTX2_OP_RMS_NORM:
    case LTX2_OP_LAYER_NORM:
        t = (tol){ROW_F32_ATOL + ROW_OFFSET_ATOL_GAIN * fabs(c->offset) * sk, ROW_F32_RTOL};
        break;
    case LTX2_OP_SOFTMAX:
        t = (tol){SOFTMAX_F32_ATOL, ROW_F32_RTOL};
        break;
    case LTX2_OP_GELU_TANH:
    case LTX2_OP_SILU:
        t = (tol){ACT_F32_ATOL, ACT_F32_RTOL};
        break;
    case LTX2_OP_ADD:
    case LTX2_OP_MUL:
        t = (tol){0.0, BINARY_F32_RTOL};
        break;
    case LTX2_OP_ATTENTION: {
        /* score errors scale with |q||k| (scale^2) and move outputs of scale |v| (scale^1) */
        double s3 = (double)c->scale * c->scale * c->scale;
        t = bf ? (tol){ATTN_BF16_ATOL * s3, 0.0} /* + EPS_BF16 below */ : (tol){ATTN_F32_ATOL * s3, ATTN_F32_RTOL};
        break;
    }
    case LTX2_OP_ROPE:
        t = (tol){ROPE_F32_ATOL, ROPE_F32_RTOL};
        break;
    case LTX2_OP_CONV3D: {
        const ltx2_conv3d_desc d = conv_desc_of(c);
        double sK = sqrt((double)(ltx2_cpu_conv3d_packed_numel(&d) / d.c_out));
        t.atol = (bf ? GEMM_BF16_ATOL_PER_SQRT_K : GEMM_F32_ATOL_PER_SQRT_K) * sK;
        t.rtol = GEMM_F32_RTOL;
        break;
    }
    case LTX2_OP_PIXEL_NORM:
        t = (tol){ROW_F32_ATOL, ROW_F32_RTOL + ACT_F32_RTOL};
        break;
    case LTX2_OP_DEPTH_TO_SPACE:
        t = (tol){0.0, BINARY_F32_RTOL};
        break;
    default: /* convert: exact */
        break;
    }
    if (bf) {
        if (t.atol < BF16_ATOL) t.atol = BF16_ATOL;
        t.rtol += EPS_BF16;
    }
    return t;
}

/* ---- comparison ---- */

static bool compare(const char *label, const char *name, const float *out, const double *ref,
                    int64_t n, tol t) {
    double max_abs = 0, d2 = 0, r2 = 0, o2 = 0, dot = 0;
    int64_t n_bad = 0;
    int printed = 0;
    for (int64_t i = 0; i < n; i++) {
        double o = out[i], r = ref[i];
        bool bad;
        if (isnan(r)) {
            bad = !isnan(o);
        } else if (isinf(r)) {
            bad = !(isinf(o) && (o > 0) == (r > 0));
        } else if (!isfinite(o)) {
            bad = true; /* NaN or Inf where the reference is finite */
        } else {
            double e = fabs(o - r);
            if (e > max_abs) max_abs = e;
            d2 += e * e;
            r2 += r * r;
            o2 += o * o;
            dot += o * r;
            bad = e > t.atol + t.rtol * fabs(r);
        }
        if (bad) {
            if (printed < MAX_BAD_PRINT) {
                fprintf(stderr, "    [%s] %s: element %lld: out %.9g ref %.9g (allowed %.3g)\n", label, name,
                        (long long)i, o, r, t.atol + t.rtol * fabs(r));
                printed++;
            }
            n_bad++;
        }
    }
    double rel_l2 = r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
    double cosine = (o2 > 0 && r2 > 0) ? dot / sqrt(o2 * r2) : 1.0;
    if (n_bad)
        fprintf(stderr, "    [%s] %s: %lld/%lld bad, max abs err %.3g, rel-L2 %.3g, cosine %.9f (atol %.3g rtol %.3g)\n",
                label, name, (long long)n_bad, (long long)n, max_abs, rel_l2, cosine, t.atol, t.rtol);
    CHECK(n_bad == 0, "%s %s: %lld bad elements", label, name, (long long)n_bad);
    return n_bad == 0;
}

/* ---- running a case on a backend ---- */

typedef struct dev_buf {
    void *p;
    size_t bytes;
} dev_buf;

/* Uploads n host f32 values as dtype dt into fresh device memory. */
static ltx2_status upload_as(const ltx2_backend *be, ltx2_context *ctx, const float *host, int64_t n,
                             ltx2_dtype dt, dev_buf *out) {
    size_t bytes = (size_t)n * ltx2_dtype_size(dt);
    void *tmp = malloc(bytes ? bytes : 1);
    ltx2_status st = ltx2_convert(ctx, tmp, dt, host, LTX2_F32, (size_t)n);
    if (st == LTX2_OK) st = be->alloc(be, ctx, bytes, &out->p);
    if (st == LTX2_OK) st = be->upload(be, ctx, out->p, tmp, bytes);
    out->bytes = bytes;
    free(tmp);
    return st;
}

static ltx2_tensor view(void *p, ltx2_dtype dt, ltx2_device dev, int ndim, const int64_t *shape) {
    ltx2_tensor t = ltx2_tensor_make(p, dt, ndim, shape);
    t.device = dev;
    return t;
}

/* Runs case c on backend be with device dtype dt; writes n_out f32 results to host out.
 * Returns false (after recording a CHECK failure) on any error, guard damage included. */
static bool run_on(const ltx2_backend *be, ltx2_context *ctx, const op_case *c, const inputs *in,
                   ltx2_dtype dt, float *out, const char *label, const char *name) {
    ltx2_dtype in_dt = dt, out_dt = dt;
    if (c->op == LTX2_OP_CONVERT) in_dt = dt == LTX2_BF16 ? LTX2_F32 : LTX2_BF16;
    dev_buf bx = {0}, bw = {0}, bbias = {0}, bb = {0}, bo = {0};
    ltx2_status st = upload_as(be, ctx, in->x, in->nx_storage, in_dt, &bx);
    const bool wide_w = c->op == LTX2_OP_GEMM || c->op == LTX2_OP_CONV3D; /* w is a matrix, bias [n] */
    if (st == LTX2_OK && in->w) st = upload_as(be, ctx, in->w, wide_w ? in->nw : c->shape[c->ndim - 1], dt, &bw);
    if (st == LTX2_OK && in->bias) st = upload_as(be, ctx, in->bias, wide_w ? c->n : c->shape[c->ndim - 1], dt, &bbias);
    if (st == LTX2_OK && in->b) st = upload_as(be, ctx, in->b, in->nb, dt, &bb);
    /* attention / rope extras: k, v, norm weights in dt; RoPE tables always f32; the mask u8 */
    dev_buf bk = {0}, bv = {0}, bwq = {0}, bwk = {0}, bqc = {0}, bqs = {0}, bkc = {0}, bks = {0}, bm = {0};
    const int64_t Dm = c->shape[c->ndim - 1];
    if (st == LTX2_OK && in->k) st = upload_as(be, ctx, in->k, in->nkv, dt, &bk);
    if (st == LTX2_OK && in->v) st = upload_as(be, ctx, in->v, in->nkv, dt, &bv);
    if (st == LTX2_OK && in->wq) st = upload_as(be, ctx, in->wq, Dm, dt, &bwq);
    if (st == LTX2_OK && in->wk) st = upload_as(be, ctx, in->wk, Dm, dt, &bwk);
    if (st == LTX2_OK && in->qc) st = upload_as(be, ctx, in->qc, in->ntq, LTX2_F32, &bqc);
    if (st == LTX2_OK && in->qs) st = upload_as(be, ctx, in->qs, in->ntq, LTX2_F32, &bqs);
    if (st == LTX2_OK && in->kc) st = upload_as(be, ctx, in->kc, in->ntk, LTX2_F32, &bkc);
    if (st == LTX2_OK && in->ks) st = upload_as(be, ctx, in->ks, in->ntk, LTX2_F32, &bks);
    if (st == LTX2_OK && in->mask) {
        size_t mb = (size_t)(c->shape[0] * c->sk);
        st = be->alloc(be, ctx, mb, &bm.p);
        if (st == LTX2_OK) st = be->upload(be, ctx, bm.p, in->mask, mb);
    }

    size_t osz = ltx2_dtype_size(out_dt);
    size_t obytes = (size_t)(in->nout + GUARD_ELEMS) * osz;
    unsigned char *host_o = malloc(obytes);
    memset(host_o, FILL_BYTE, obytes);
    if (st == LTX2_OK) st = be->alloc(be, ctx, obytes, &bo.p);
    if (st == LTX2_OK) st = be->upload(be, ctx, bo.p, host_o, obytes);

    if (st == LTX2_OK) {
        ltx2_tensor x = view(bx.p, in_dt, be->device, c->ndim, c->shape);
        if (c->flags & F_STRIDED) {
            /* a view of every other element of the last dim */
            for (int i = 0; i < c->ndim; i++) x.strides[i] *= 2;
        }
        ltx2_tensor y = view(bo.p, out_dt, be->device, in->out_ndim, in->out_shape);
        int64_t last = c->shape[c->ndim - 1];
        int64_t vec_n = wide_w ? c->n : last;
        ltx2_tensor tw = view(bw.p, dt, be->device, 1, &vec_n);
        ltx2_tensor tbias = view(bbias.p, dt, be->device, 1, &vec_n);
        switch (c->op) {
        case LTX2_OP_GEMM: {
            int64_t wshape[2] = {c->n, last};
            if (c->flags & F_KN) {
                wshape[0] = last;
                wshape[1] = c->n;
            }
            tw = view(bw.p, dt, be->device, 2, wshape);
            st = ltx2_backend_gemm(be, ctx, &x, &tw, c->flags & F_KN ? LTX2_B_KN : LTX2_B_NK,
                                   in->bias ? &tbias : NULL, &y);
            break;
        }
        case LTX2_OP_RMS_NORM:
            st = ltx2_backend_rms_norm(be, ctx, &x, in->w ? &tw : NULL, 1e-6f, &y);
            break;
        case LTX2_OP_LAYER_NORM:
            st = ltx2_backend_layer_norm(be, ctx, &x, in->w ? &tw : NULL, in->bias ? &tbias : NULL, 1e-6f, &y);
            break;
        case LTX2_OP_SOFTMAX:
            st = ltx2_backend_softmax(be, ctx, &x, &y);
            break;
        case LTX2_OP_GELU_TANH:
        case LTX2_OP_SILU:
            st = ltx2_backend_unary(be, ctx, c->op, &x, &y);
            break;
        case LTX2_OP_ADD:
        case LTX2_OP_MUL: {
            ltx2_tensor b = view(bb.p, dt, be->device, c->b_ndim, c->b_shape);
            st = ltx2_backend_binary(be, ctx, c->op, &x, &b, &y);
            break;
        }
        case LTX2_OP_CONVERT:
            st = ltx2_backend_convert(be, ctx, &x, &y);
            break;
        case LTX2_OP_ATTENTION: {
            const int64_t B = c->shape[0], Sq = c->shape[1], Sk = c->sk, H = c->heads, d = Dm / H;
            const bool il = c->flags & F_ROPE_IL;
            int64_t kvs[3] = {B, Sk, Dm}, ms[2] = {B, Sk};
            int64_t tq_sp[4] = {B, H, Sq, d / 2}, tk_sp[4] = {B, H, Sk, d / 2}, tq_il[3] = {B, Sq, Dm},
                    tk_il[3] = {B, Sk, Dm};
            ltx2_tensor tk = view(bk.p, dt, be->device, 3, kvs), tv = view(bv.p, dt, be->device, 3, kvs);
            ltx2_tensor twq = view(bwq.p, dt, be->device, 1, &Dm), twk = view(bwk.p, dt, be->device, 1, &Dm);
            ltx2_tensor tm = view(bm.p, LTX2_U8, be->device, 2, ms);
            ltx2_tensor tqc = view(bqc.p, LTX2_F32, be->device, il ? 3 : 4, il ? tq_il : tq_sp);
            ltx2_tensor tqs = view(bqs.p, LTX2_F32, be->device, il ? 3 : 4, il ? tq_il : tq_sp);
            ltx2_tensor tkc = view(bkc.p, LTX2_F32, be->device, il ? 3 : 4, il ? tk_il : tk_sp);
            ltx2_tensor tks = view(bks.p, LTX2_F32, be->device, il ? 3 : 4, il ? tk_il : tk_sp);
            const bool rope = c->flags & (F_ROPE | F_ROPE_IL);
            ltx2_attn_args a = {.heads = H, .scale = (float)(1.0 / sqrt((double)d)),
                                .key_mask = in->mask ? &tm : NULL, .q_norm = in->wq ? &twq : NULL,
                                .k_norm = in->wk ? &twk : NULL, .norm_eps = QK_NORM_EPS,
                                .rope_type = il ? LTX2_ROPE_INTERLEAVED : LTX2_ROPE_SPLIT,
                                .q_cos = rope ? &tqc : NULL, .q_sin = rope ? &tqs : NULL,
                                .k_cos = rope ? &tkc : NULL, .k_sin = rope ? &tks : NULL};
            st = ltx2_backend_attention(be, ctx, &x, &tk, &tv, &a, &y);
            break;
        }
        case LTX2_OP_ROPE: {
            const int64_t B = c->shape[0], S = c->shape[1], H = c->heads, d = Dm / H;
            const bool il = c->flags & F_ROPE_IL;
            int64_t sp[4] = {B, H, S, d / 2}, ils[3] = {B, S, Dm};
            ltx2_tensor tc = view(bqc.p, LTX2_F32, be->device, il ? 3 : 4, il ? ils : sp);
            ltx2_tensor ts = view(bqs.p, LTX2_F32, be->device, il ? 3 : 4, il ? ils : sp);
            st = ltx2_backend_rope(be, ctx, &x, il ? LTX2_ROPE_INTERLEAVED : LTX2_ROPE_SPLIT, H, &tc, &ts, &y);
            break;
        }
        case LTX2_OP_CONV3D: {
            ltx2_conv3d_desc d = conv_desc_of(c);
            int64_t ws[2] = {in->nw / c->n, c->n};
            ltx2_tensor tw2 = view(bw.p, dt, be->device, 2, ws);
            st = ltx2_backend_conv3d(be, ctx, &d, &x, &tw2, in->bias ? &tbias : NULL, c->flags & F_SILU, &y);
            break;
        }
        case LTX2_OP_PIXEL_NORM:
            st = ltx2_backend_pixel_norm(be, ctx, &x, PIXEL_NORM_EPS, c->flags & F_SILU, &y);
            break;
        case LTX2_OP_DEPTH_TO_SPACE: {
            ltx2_d2s_args a = {.stride = {c->k3[0], c->k3[1], c->k3[2]}, .drop_first = c->flags & F_DROP};
            int64_t rs[5] = {c->shape[0], c->shape[1], c->shape[2], c->shape[3], c->n * c->k3[0] * c->k3[1] * c->k3[2]};
            ltx2_tensor tr = view(bb.p, dt, be->device, 5, rs);
            st = ltx2_backend_depth_to_space(be, ctx, &x, &a, in->b ? &tr : NULL, &y);
            break;
        }
        default:
            st = LTX2_ERR_INTERNAL;
            break;
        }
    }
    if (st == LTX2_OK) st = be->sync(be, ctx);
    if (st == LTX2_OK) st = be->download(be, ctx, host_o, bo.p, obytes);
    bool ok = st == LTX2_OK;
    CHECK(st == LTX2_OK, "[%s] %s: %s: %s", label, name, ltx2_status_name(st), ltx2_last_error(ctx));
    if (ok) {
        int64_t bad_guard = 0;
        for (size_t i = (size_t)in->nout * osz; i < obytes; i++) bad_guard += host_o[i] != FILL_BYTE;
        CHECK(bad_guard == 0, "[%s] %s: %lld guard bytes after the output were overwritten", label, name,
              (long long)bad_guard);
        ok = bad_guard == 0 && ltx2_convert(ctx, out, LTX2_F32, host_o, out_dt, (size_t)in->nout) == LTX2_OK;
    }
    free(host_o);
    be->free(be, bx.p);
    be->free(be, bw.p);
    be->free(be, bbias.p);
    be->free(be, bb.p);
    be->free(be, bo.p);
    dev_buf extra[] = {bk, bv, bwq, bwk, bqc, bqs, bkc, bks, bm};
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) be->free(be, extra[i].p);
    return ok;
}

/* ---- driver ---- */

/* The attention kernels each attention case runs on; see the header comment. */
#define ATTN_IMPL_ENV "LTX2_ATTN_IMPL"
#define N_ATTN_IMPLS 2
static const char *const attn_impl_names[N_ATTN_IMPLS] = {"mma_sync", "wgmma"};

/* Creates one CUDA backend per attention kernel this device runs; returns how many. */
static int attn_backends_create(ltx2_context *ctx, ltx2_backend **out, const char **names) {
    if (getenv(ATTN_IMPL_ENV)) return 0; /* the caller chose one: the default backend has it */
    int n = 0;
    for (int i = 0; i < N_ATTN_IMPLS; i++) {
        setenv(ATTN_IMPL_ENV, attn_impl_names[i], 1);
        if (ltx2_backend_cuda_create(ctx, 0, &out[n]) == LTX2_OK) {
            names[n++] = attn_impl_names[i];
        } else {
            printf("cuda attention [%s]: not run (%s)\n", attn_impl_names[i], ltx2_last_error(ctx));
            ltx2_clear_error(ctx);
        }
    }
    unsetenv(ATTN_IMPL_ENV);
    return n;
}

static void usage(void) {
    printf("usage: test_ops [-o OPNAME] [-b cpu|cuda] [--list] [-v]\n  ops:");
    for (int i = 0; i < LTX2_OP_COUNT; i++) printf(" %s", ltx2_op_name((ltx2_op)i));
    printf("\n");
}

static bool parse(int argc, char **argv, opts *o) {
    *o = (opts){.op = -1, .want_cpu = true, .want_cuda = true};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            ltx2_op op;
            if (!ltx2_op_from_name(argv[++i], &op)) return false;
            o->op = (int)op;
        } else if (!strcmp(argv[i], "-b") && i + 1 < argc) {
            const char *b = argv[++i];
            if (!strcmp(b, "cpu")) o->want_cuda = false;
            else if (!strcmp(b, "cuda")) o->want_cpu = false;
            else return false;
        } else if (!strcmp(argv[i], "--list")) {
            o->list = true;
        } else if (!strcmp(argv[i], "-v")) {
            o->verbose = true;
        } else {
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv) {
    opts o;
    if (!parse(argc, argv, &o)) {
        usage();
        return 2;
    }
    build_registry();
    ltx2_context *ctx = ltx2_context_create(NULL);
    const ltx2_backend *cpu = ltx2_backend_cpu();
    ltx2_backend *cuda = NULL;
    char cuda_why[LTX2_ERROR_CAP] = "";
    if (o.want_cuda && ltx2_backend_cuda_create(ctx, 0, &cuda) != LTX2_OK) {
        snprintf(cuda_why, sizeof(cuda_why), "%s", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }

    if (o.list) {
        printf("%-4s %-60s %-6s %-6s\n", "#", "case", "cpu", "cuda");
        for (int i = 0; i < g_ncases; i++) {
            const op_case *c = &g_cases[i];
            if (o.op >= 0 && (int)c->op != o.op) continue;
            char name[160];
            case_name(c, name, sizeof(name));
            ltx2_dtype cpu_dt = c->op == LTX2_OP_CONVERT ? c->dtype : LTX2_F32;
            printf("%-4d %-60s %-6s %-6s\n", i, name, ltx2_backend_supports(cpu, c->op, cpu_dt) ? "yes" : "no",
                   cuda ? (ltx2_backend_supports(cuda, c->op, c->dtype) ? "yes" : "no") : "n/a");
        }
        ltx2_backend_free(cuda);
        ltx2_context_free(ctx);
        return 0;
    }
    if (!o.want_cpu && !cuda) { /* -b cuda asked for the device comparison alone */
        ltx2_context_free(ctx);
        return test_skip(cuda_why);
    }
    if (o.want_cuda && !cuda)
        printf("cuda: not available (%s); CPU-vs-CUDA checks are skipped, CPU-vs-naive checks still run\n",
               cuda_why);
    ltx2_backend *attn_be[N_ATTN_IMPLS] = {0};
    const char *attn_names[N_ATTN_IMPLS] = {0};
    const int n_attn = cuda ? attn_backends_create(ctx, attn_be, attn_names) : 0;

    int n_run = 0, n_cuda = 0, n_fail_cases = 0;
    for (int i = 0; i < g_ncases; i++) {
        const op_case *c = &g_cases[i];
        if (o.op >= 0 && (int)c->op != o.op) continue;
        char name[160];
        case_name(c, name, sizeof(name));
        int failed_before = test_counts_g.failed;
        inputs in;
        inputs_make(c, i, &in);
        float *cpu_out = malloc((size_t)in.nout * sizeof(float));
        double *ref = malloc((size_t)in.nout * sizeof(double));
        /* The CPU backend runs f32 (it is the reference); conversions run in their own dtypes. */
        ltx2_dtype cpu_dt = c->op == LTX2_OP_CONVERT ? c->dtype : LTX2_F32;
        bool cpu_ok = run_on(cpu, ctx, c, &in, cpu_dt, cpu_out, "cpu", name);
        const char *cpu_res = "-", *cuda_res = "-";
        if (o.want_cpu) {
            naive_ref(c, &in, ref);
            cpu_res = cpu_ok && compare("cpu vs naive", name, cpu_out, ref, in.nout, tol_for(c, LTX2_F32)) ? "ok" : "FAIL";
        }
        if (o.want_cuda) {
            if (!cuda) {
                cuda_res = "skip";
            } else if (!ltx2_backend_supports(cuda, c->op, c->dtype)) {
                cuda_res = "unsupported";
            } else if (!cpu_ok) {
                cuda_res = "no-ref";
            } else {
                float *dev_out = malloc((size_t)in.nout * sizeof(float));
                for (int64_t k = 0; k < in.nout; k++) ref[k] = cpu_out[k];
                /* attention: every kernel variant; everything else: the default backend */
                const bool per_impl = c->op == LTX2_OP_ATTENTION && n_attn > 0;
                bool ok = true;
                for (int v = 0; v < (per_impl ? n_attn : 1); v++) {
                    char label[64], cmp_label[80];
                    if (per_impl)
                        snprintf(label, sizeof(label), "cuda[%s]", attn_names[v]);
                    else
                        snprintf(label, sizeof(label), "cuda");
                    snprintf(cmp_label, sizeof(cmp_label), "%s vs cpu", label);
                    ok = run_on(per_impl ? attn_be[v] : cuda, ctx, c, &in, c->dtype, dev_out, label, name) &&
                         compare(cmp_label, name, dev_out, ref, in.nout, tol_for(c, c->dtype)) && ok;
                }
                cuda_res = ok ? "ok" : "FAIL";
                free(dev_out);
                n_cuda++;
            }
        }
        if (test_counts_g.failed != failed_before) n_fail_cases++;
        if (o.verbose || test_counts_g.failed != failed_before)
            printf("%-4d %-64s cpu:%-5s cuda:%s\n", i, name, cpu_res, cuda_res);
        free(cpu_out);
        free(ref);
        inputs_free(&in);
        n_run++;
    }
    printf("%d cases run (%d against CUDA), %d failing\n", n_run, n_cuda, n_fail_cases);
    for (int v = 0; v < n_attn; v++) ltx2_backend_free(attn_be[v]);
    ltx2_backend_free(cuda);
    ltx2_context_free(ctx);
    return test_finish();
}
