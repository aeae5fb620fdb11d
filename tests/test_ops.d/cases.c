/* The op harness's registry: op x dtype x shape cases, including odd sizes, broadcasts and LTX-2
 * shapes scaled down by 4, and the audio vocoders' ops at their real kernel / stride / filter
 * settings (see tests/test_ops.c for how each is checked). */
#include <stdio.h>
#include <string.h>

#include "ops_case.h"

#define MAX_CASES 512

static op_case g_cases[MAX_CASES];
static int g_ncases;
static int g_dropped; /* cases past MAX_CASES: the registry refuses to run short (ops_cases) */

static void add(op_case c) {
    if (c.scale == 0.0f) c.scale = 1.0f;
    if (c.stride == 0) c.stride = 1;
    if (c.dilation == 0) c.dilation = 1;
    if (g_ncases < MAX_CASES)
        g_cases[g_ncases++] = c;
    else
        g_dropped++;
}
/* The same case for f32 and bf16. */
static void add2(op_case c) {
    c.dtype = LTX2_F32;
    add(c);
    c.dtype = LTX2_BF16;
    add(c);
}

/* The vocoders' pointwise ops with their parameter: LeakyReLU at HiFi-GAN's 0.1 and torch's default
 * 0.01 (act_post), tanh / hardtanh (the final activation, the BWE clamp) on inputs well past
 * saturation, the log-mel floor 1e-5 on inputs that straddle it (scaled to 2e-5), go negative, or
 * stay positive, and div_scalar by 3 (the mean of 3 resblocks). The short case of each starts with
 * NaN, +-inf, +-0, +-1 and +-alpha. */
static void add_unary_a_cases(void) {
    static const struct {
        ltx2_op op;
        float alpha, scale, offset;
    } ops[] = {
        {LTX2_OP_LEAKY_RELU, 0.1f, 2.0f, 0.0f}, {LTX2_OP_LEAKY_RELU, 0.01f, 2.0f, 0.0f},
        {LTX2_OP_TANH, 0.0f, 4.0f, 0.0f},       {LTX2_OP_HARDTANH, 0.0f, 2.0f, 0.0f},
        {LTX2_OP_LOG_FLOOR, 1e-5f, 2e-5f, 0.0f}, {LTX2_OP_LOG_FLOOR, 1e-5f, 1.0f, 0.0f},
        {LTX2_OP_LOG_FLOOR, 1e-5f, 2.0f, 5.0f}, {LTX2_OP_DIV_SCALAR, 3.0f, 1.0f, 0.0f},
    };
    /* a short vector with the special values, a long odd row, the vocoder's [N, L, C] */
    static const int64_t shapes[][3] = {{37, 0, 0}, {3, 4101, 0}, {2, 500, 96}};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        for (int k = 0; k < 3; k++)
            add2((op_case){.op = ops[i].op, .alpha = ops[i].alpha, .scale = ops[i].scale, .offset = ops[i].offset,
                           .ndim = k + 1, .shape = {shapes[k][0], shapes[k][1], shapes[k][2]},
                           .flags = k == 0 ? F_SPECIAL : 0u});
}

/* conv1d over [N, L, C]: the vocoders' kernels (conv_pre / conv_post k 7 pad 3, resblock k 3 / 7 /
 * 11 at dilations 1 / 3 / 5 with 'same' padding d*(k-1)/2), the BWE's causal STFT as one conv
 * (n_fft 16 / hop 4 for 512 / 80: pad_left n_fft - hop, stride hop, two input channels), the
 * k 1 GEMM path, an input shorter than the kernel, widths that are not a multiple of 4, and one
 * case of several output tiles in both dimensions. Channel widths are scaled down (LTX-2.3: 768 ->
 * 24 over its six stages). */
static void add_conv1d_cases(void) {
    const ltx2_op C1 = LTX2_OP_CONV1D;
    add2((op_case){.op = C1, .ndim = 3, .shape = {2, 37, 16}, .n = 24, .taps = 7, .pad = {3, 3}, .flags = F_BIAS});
    add2((op_case){.op = C1, .ndim = 3, .shape = {1, 50, 30}, .n = 30, .taps = 3, .dilation = 3, .pad = {3, 3}});
    add2((op_case){.op = C1, .ndim = 3, .shape = {2, 60, 24}, .n = 24, .taps = 11, .dilation = 5, .pad = {25, 25},
                   .flags = F_BIAS});
    add2((op_case){.op = C1, .ndim = 3, .shape = {1, 64, 2}, .n = 36, .taps = 16, .stride = 4, .pad = {12, 0}});
    add2((op_case){.op = C1, .ndim = 3, .shape = {2, 66, 2}, .n = 36, .taps = 16, .stride = 4, .pad = {12, 0},
                   .flags = F_BIAS}); /* the STFT with a length that is not a multiple of the hop */
    add2((op_case){.op = C1, .ndim = 3, .shape = {1, 45, 16}, .n = 2, .taps = 7, .pad = {3, 3}}); /* conv_post */
    add2((op_case){.op = C1, .ndim = 3, .shape = {2, 21, 24}, .n = 40, .taps = 1, .flags = F_BIAS});
    add2((op_case){.op = C1, .ndim = 3, .shape = {1, 3, 8}, .n = 8, .taps = 7, .pad = {3, 3}, .flags = F_BIAS});
    add2((op_case){.op = C1, .ndim = 3, .shape = {1, 200, 128}, .n = 128, .taps = 7, .pad = {3, 3},
                   .flags = F_BIAS});
}

/* ConvTranspose1d with the vocoder's padding (k - stride) / 2: the x2 stages (k 4), LTX-2.3's first
 * stage (x5, k 11), LTX-2.0's first (x6, k 16), and an odd k - stride (x3, k 6: padding 1, out
 * 3L + 1); channel widths scaled down. */
static void add_convt1d_cases(void) {
    const ltx2_op CT = LTX2_OP_CONV_TRANSPOSE1D;
    add2((op_case){.op = CT, .ndim = 3, .shape = {2, 25, 32}, .n = 16, .taps = 4, .stride = 2, .pad = {1, 1},
                   .flags = F_BIAS});
    add2((op_case){.op = CT, .ndim = 3, .shape = {1, 20, 48}, .n = 24, .taps = 11, .stride = 5, .pad = {3, 3},
                   .flags = F_BIAS});
    add2((op_case){.op = CT, .ndim = 3, .shape = {1, 17, 15}, .n = 9, .taps = 6, .stride = 3, .pad = {1, 1}});
    add2((op_case){.op = CT, .ndim = 3, .shape = {2, 12, 64}, .n = 32, .taps = 16, .stride = 6, .pad = {5, 5},
                   .flags = F_BIAS});
    add2((op_case){.op = CT, .ndim = 3, .shape = {1, 100, 128}, .n = 64, .taps = 4, .stride = 2, .pad = {1, 1},
                   .flags = F_BIAS});
}

/* The FIR resamplers: BigVGAN-v2's anti-aliased activation (x2, 12 taps: up pads 5 / 5 and crops
 * 15 / 15, down pads 5 / 6) on odd lengths and many channels, an input shorter than the padding
 * (replicate reaches past both ends), and the BWE's Hann resampler of a stereo [N, L, 2] signal (x3; 37 taps with
 * pads 6 / 6 and crops 36 / 34, and LTX-2.3's own 43 taps: width ceil(6 / 0.99) = 7, pads 7 / 7,
 * crops 42 / 40). */
static void add_fir_cases(void) {
    const ltx2_op UP = LTX2_OP_FIR_UPSAMPLE, DN = LTX2_OP_FIR_DOWNSAMPLE;
    add2((op_case){.op = UP, .ndim = 3, .shape = {2, 33, 24}, .taps = 12, .stride = 2, .pad = {5, 5}, .crop = {15, 15}});
    add2((op_case){.op = UP, .ndim = 3, .shape = {1, 2, 8}, .taps = 12, .stride = 2, .pad = {5, 5}, .crop = {15, 15}});
    add2((op_case){.op = UP, .ndim = 3, .shape = {1, 40, 2}, .taps = 37, .stride = 3, .pad = {6, 6}, .crop = {36, 34}});
    add2((op_case){.op = UP, .ndim = 3, .shape = {2, 50, 2}, .taps = 43, .stride = 3, .pad = {7, 7}, .crop = {42, 40}});
    /* the descriptor's general case: asymmetric pads and no right crop, so the last taps - ratio
     * samples see the end of the padded input (inputs past it do not exist) */
    add2((op_case){.op = UP, .ndim = 3, .shape = {1, 9, 4}, .taps = 12, .stride = 2, .pad = {3, 7}, .crop = {5, 0}});
    add2((op_case){.op = UP, .ndim = 3, .shape = {1, 64, 256}, .taps = 12, .stride = 2, .pad = {5, 5}, .crop = {15, 15}});
    add2((op_case){.op = DN, .ndim = 3, .shape = {2, 66, 24}, .taps = 12, .stride = 2, .pad = {5, 6}});
    add2((op_case){.op = DN, .ndim = 3, .shape = {1, 37, 16}, .taps = 12, .stride = 2, .pad = {5, 6}});
    add2((op_case){.op = DN, .ndim = 3, .shape = {1, 3, 8}, .taps = 12, .stride = 2, .pad = {5, 6}});
    add2((op_case){.op = DN, .ndim = 3, .shape = {1, 128, 256}, .taps = 12, .stride = 2, .pad = {5, 6}});
}

/* SnakeBeta at a scaled width, an odd one, and LTX-2.3's first-stage width 768 on inputs whose
 * angle x * alpha reaches ~30; the STFT magnitude on [N, frames, 2 channels, 2F] with F = 257
 * (n_fft 512), an odd F, and the smallest shape. */
static void add_snake_abs_cases(void) {
    add2((op_case){.op = LTX2_OP_SNAKE, .ndim = 3, .shape = {2, 50, 24}});
    add2((op_case){.op = LTX2_OP_SNAKE, .ndim = 3, .shape = {1, 37, 7}, .scale = 3.0f});
    add2((op_case){.op = LTX2_OP_SNAKE, .ndim = 3, .shape = {1, 100, 768}, .scale = 3.0f});
    add2((op_case){.op = LTX2_OP_COMPLEX_ABS, .ndim = 4, .shape = {1, 20, 2, 2 * 257}});
    add2((op_case){.op = LTX2_OP_COMPLEX_ABS, .ndim = 3, .shape = {3, 7, 2 * 9}, .scale = 10.0f});
    add2((op_case){.op = LTX2_OP_COMPLEX_ABS, .ndim = 1, .shape = {2}});
}

static void add_vocoder_cases(void) {
    add_unary_a_cases();
    add_conv1d_cases();
    add_convt1d_cases();
    add_fir_cases();
    add_snake_abs_cases();
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
    /* Tensor-parallel RMSNorm: one rank's sum of squares (warp and block rows, odd widths), and the
     * normalisation of one rank's columns from a whole-row sum (its own plus the other ranks'). */
    static const int64_t tp_shapes[][2] = {{6, 7}, {9, 128}, {3, 1030}, {4, 2048}};
    for (size_t i = 0; i < sizeof(tp_shapes) / sizeof(tp_shapes[0]); i++) {
        add2((op_case){.op = LTX2_OP_ROW_SUMSQ, .ndim = 2, .shape = {tp_shapes[i][0], tp_shapes[i][1]}});
        /* LTX-2.0's text statistics (row_stats) on the same warp and block rows, around an offset */
        add2((op_case){.op = LTX2_OP_ROW_STATS, .ndim = 2, .shape = {tp_shapes[i][0], tp_shapes[i][1]},
                       .offset = i % 2 ? 0.0f : 0.5f});
        add2((op_case){.op = LTX2_OP_RMS_APPLY, .ndim = 2, .shape = {tp_shapes[i][0], tp_shapes[i][1]},
                       .flags = i % 2 ? 0u : F_WEIGHT});
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

    /* Head dims the tensor-core kernels do not take (the tiny models' 16 and 8; an odd-sized 40):
     * the per-row kernel behind the same launcher, with the pre-pass's norm and RoPE. */
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {2, 18, 4 * 16}, .heads = 4, .sk = 18,
                  .flags = F_QKNORM | F_ROPE});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {2, 10, 4 * 8}, .heads = 4, .sk = 16,
                  .flags = F_QKNORM | F_MASK});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {1, 33, 2 * 40}, .heads = 2, .sk = 21,
                  .flags = F_ROPE_IL});

    /* RoPE alone, both layouts, f32 and bf16. */
    add2((op_case){.op = LTX2_OP_ROPE, .ndim = 3, .shape = {2, 77, 2 * 64}, .heads = 2, .flags = F_ROPE});
    add2((op_case){.op = LTX2_OP_ROPE, .ndim = 3, .shape = {1, 130, 4 * 128}, .heads = 4, .flags = F_ROPE});
    add2((op_case){.op = LTX2_OP_ROPE, .ndim = 3, .shape = {2, 33, 3 * 64}, .heads = 3, .flags = F_ROPE_IL});

    /* conv3d (device: bf16 only): VAE layer shapes scaled down (decoder channels 1024/512/256/128
     * -> 64/32; latent 128 -> 32; conv_out 3*4*4 = 48), causal, symmetric and zero-frame time padding, zeros
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
    /* the audio VAE's causal conv over [B, time, 1, mel, C] (zero frames in front) and its
     * upsampler's phase conv (time kernel 2) */
    add((op_case){.op = C3, .dtype = LTX2_BF16, .ndim = 5, .shape = {2, 5, 1, 8, 32}, .n = 16, .k3 = {3, 1, 3},
                  .tpad = LTX2_CONV_TPAD_CAUSAL_ZEROS, .flags = F_BIAS});
    add((op_case){.op = C3, .dtype = LTX2_BF16, .ndim = 5, .shape = {1, 4, 1, 6, 16}, .n = 64, .k3 = {2, 1, 3},
                  .tpad = LTX2_CONV_TPAD_CAUSAL_ZEROS, .flags = F_BIAS});
    /* the latent upsampler's Conv3d(padding=1): one zero frame on each side */
    add((op_case){.op = C3, .dtype = LTX2_BF16, .ndim = 5, .shape = {2, 3, 4, 5, 32}, .n = 64, .k3 = {3, 3, 3},
                  .tpad = LTX2_CONV_TPAD_SYMMETRIC_ZEROS, .flags = F_BIAS});

    /* PixelNorm (+ SiLU), the VAE's norm over channels. */
    add2((op_case){.op = LTX2_OP_PIXEL_NORM, .ndim = 5, .shape = {1, 3, 4, 5, 64}, .flags = F_SILU});
    add2((op_case){.op = LTX2_OP_PIXEL_NORM, .ndim = 5, .shape = {2, 2, 3, 3, 128}});
    add2((op_case){.op = LTX2_OP_PIXEL_NORM, .ndim = 5, .shape = {1, 1, 2, 2, 7}, .flags = F_SILU});
    add2((op_case){.op = LTX2_OP_PIXEL_NORM, .ndim = 5, .shape = {1, 2, 2, 2, 1024}, .flags = F_SILU});

    /* GroupNorm(32) (+ SiLU), the latent upsampler's norm: its width (1024) with few positions, many
     * positions with few channels per group, a 3-D [N, L, C] shape with 4 groups, and inputs far
     * from zero mean (the variance must be centred). */
    const ltx2_op GN = LTX2_OP_GROUP_NORM;
    add2((op_case){.op = GN, .ndim = 5, .shape = {1, 3, 4, 5, 64}, .heads = 32, .flags = F_WEIGHT | F_BIAS | F_SILU});
    add2((op_case){.op = GN, .ndim = 5, .shape = {2, 2, 3, 3, 128}, .heads = 32, .flags = F_WEIGHT | F_BIAS});
    add2((op_case){.op = GN, .ndim = 5, .shape = {1, 2, 2, 3, 1024}, .heads = 32, .flags = F_WEIGHT | F_BIAS | F_SILU});
    add2((op_case){.op = GN, .ndim = 3, .shape = {3, 37, 12}, .heads = 4});
    add2((op_case){.op = GN, .ndim = 5, .shape = {1, 4, 6, 5, 64}, .heads = 32, .flags = F_WEIGHT | F_BIAS,
                   .offset = 20.0f});

    /* BlurDownsample, the rational upsampler's anti-alias: stride 2 (x1.5 = 3/2) on even and odd
     * extents, stride 4 (x0.75), and stride 1 (a blur alone). */
    const ltx2_op BL = LTX2_OP_BLUR_DOWNSAMPLE;
    add2((op_case){.op = BL, .ndim = 5, .shape = {1, 2, 12, 15, 32}, .k3 = {2, 0, 0}});
    add2((op_case){.op = BL, .ndim = 5, .shape = {2, 1, 9, 6, 40}, .k3 = {2, 0, 0}});
    add2((op_case){.op = BL, .ndim = 5, .shape = {1, 3, 12, 12, 16}, .k3 = {4, 0, 0}});
    add2((op_case){.op = BL, .ndim = 5, .shape = {1, 1, 5, 7, 8}, .k3 = {1, 0, 0}});

    /* DepthToSpaceUpsample: (2,2,2) with first-frame drop and residual, spatial-only (1,2,2),
     * temporal-only (2,1,1) with a full-width residual. */
    const ltx2_op DS = LTX2_OP_DEPTH_TO_SPACE;
    add2((op_case){.op = DS, .ndim = 5, .shape = {1, 3, 4, 5, 4 * 8}, .k3 = {2, 2, 2}, .n = 2, .flags = F_DROP | F_RESID});
    add2((op_case){.op = DS, .ndim = 5, .shape = {2, 2, 3, 3, 3 * 4}, .k3 = {1, 2, 2}});
    add2((op_case){.op = DS, .ndim = 5, .shape = {1, 2, 2, 3, 16 * 2}, .k3 = {2, 1, 1}, .n = 16, .flags = F_DROP | F_RESID});
    /* SpaceToDepthDownsample as the encoder runs it: (2,2,2) with a 4-channel group mean of the
     * block input, spatial-only (1,2,2) without a skip, temporal-only (2,1,1) with g = 1. */
    const ltx2_op SD = LTX2_OP_SPACE_TO_DEPTH;
    add2((op_case){.op = SD, .ndim = 5, .shape = {1, 4, 4, 6, 2}, .k3 = {2, 2, 2}, .n = 8, .flags = F_RESID});
    add2((op_case){.op = SD, .ndim = 5, .shape = {2, 3, 4, 4, 4}, .k3 = {1, 2, 2}});
    add2((op_case){.op = SD, .ndim = 5, .shape = {1, 4, 3, 3, 5}, .k3 = {2, 1, 1}, .n = 5, .flags = F_RESID});

    /* Gemma-3's attention (last, so the cases above keep their seeds): grouped-query heads, causal
     * over the tokenizer's left padding with empty rows 0, sliding windows shorter than the
     * sequence (global and local layers), at the 12B's head dim 256 (32-key tiles) and at 128 / 64;
     * grouped heads alone with the all-masked batch averaged; a causal mask without empty_zero
     * (rows averaged one by one: the per-row kernel on the device). */
    const int64_t G = 256; /* Gemma-3 12B head dim */
    const unsigned GEMMA = F_CAUSAL | F_LEFTPAD | F_EMPTY0;
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {2, 200, 4 * G}, .heads = 4, .sk = 200,
                  .kv_heads = 2, .flags = GEMMA});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {1, 300, 4 * G}, .heads = 4, .sk = 300,
                  .kv_heads = 2, .window = 100, .flags = GEMMA});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {2, 150, 4 * 128}, .heads = 4, .sk = 150,
                  .kv_heads = 1, .flags = GEMMA});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {2, 130, 4 * 64}, .heads = 4, .sk = 130,
                  .kv_heads = 2, .window = 37, .flags = GEMMA});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {3, 64, 4 * 128}, .heads = 4, .sk = 100,
                  .kv_heads = 2, .flags = F_MASK});
    add((op_case){.op = A, .dtype = LTX2_BF16, .ndim = 3, .shape = {2, 90, 2 * 64}, .heads = 2, .sk = 90,
                  .flags = F_CAUSAL | F_LEFTPAD});

    add_vocoder_cases(); /* last, so every case above keeps its seed */

    /* RoPE with split tables shared by every batch row and / or head (Gemma-3's one table for a
     * prompt pair's 16 query and 8 key heads), after the vocoders' so their seeds stay */
    add2((op_case){.op = LTX2_OP_ROPE, .ndim = 3, .shape = {2, 77, 4 * 64}, .heads = 4,
                   .flags = F_ROPE | F_ROPE_ONE_ROW | F_ROPE_ONE_HEAD});
    add2((op_case){.op = LTX2_OP_ROPE, .ndim = 3, .shape = {3, 33, 2 * 128}, .heads = 2, .flags = F_ROPE | F_ROPE_ONE_HEAD});
    add2((op_case){.op = LTX2_OP_ROPE, .ndim = 3, .shape = {2, 40, 3 * 64}, .heads = 3, .flags = F_ROPE | F_ROPE_ONE_ROW});
}


const op_case *ops_cases(int *n) {
    if (!g_ncases) build_registry();
    if (g_dropped) { /* a case silently not run would pass a test it never took */
        fprintf(stderr, "test_ops: %d cases past MAX_CASES (%d); raise it\n", g_dropped, MAX_CASES);
        *n = 0;
        return NULL;
    }
    *n = g_ncases;
    return g_cases;
}
