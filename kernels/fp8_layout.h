// fp8 e4m3fn <-> f32 bit arithmetic used by kernels/fp8.cu, in plain C so that
// tests/test_layout_fp8.c checks it against the format's definition (and src/core/dtype.c's
// cast) on the CPU. e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; only
// S.1111.111 is NaN, so the largest finite value is 448 (S.1111.110). The encoder is torch's
// saturating cast: round to nearest even, |x| >= 448 and +-inf give +-448, NaN keeps its sign.
// Integer arithmetic rather than a convert instruction, so sm_80 (which has none) and sm_90
// give the same bits as the CPU.
#ifndef LTX2_KERNELS_FP8_LAYOUT_H
#define LTX2_KERNELS_FP8_LAYOUT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hostdev.h"

// Largest finite e4m3 (448) as f32 bits, its code, the NaN code, the f32 biased exponent of the
// smallest e4m3 normal (2^-6: 127 - 6), and 1 / the subnormal step 2^-9.
#define LTX2_E4M3_MAX_F32_BITS 0x43E00000u
#define LTX2_E4M3_MAX_CODE 0x7Eu
#define LTX2_E4M3_NAN_CODE 0x7Fu
#define LTX2_E4M3_MIN_NORMAL_E32 121u
#define LTX2_E4M3_SUBNORMAL_INV_STEP 512.0f
// f32 mantissa bits an e4m3 normal drops (23 - 3), and the exponent rebias 127 - 7 = 120.
#define LTX2_E4M3_DROP_BITS 20
#define LTX2_E4M3_REBIAS 120u

LTX2_HD uint32_t ltx2_fp8_f32_bits(float f) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

LTX2_HD float ltx2_fp8_bits_f32(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

// Round to nearest, ties to even, as an int (the argument is in [0, 8]).
LTX2_HD int ltx2_fp8_rint(float x) {
#ifdef __CUDA_ARCH__
    return __float2int_rn(x);
#else
    return (int)rintf(x); // the default rounding mode is to nearest even
#endif
}

LTX2_HD uint32_t ltx2_f32_to_e4m3(float f) {
    uint32_t u = ltx2_fp8_f32_bits(f);
    uint32_t sign = (u >> 24) & 0x80u;
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return sign | LTX2_E4M3_NAN_CODE;
    // Anything >= 448 rounds to 448 or to the NaN pattern, which saturates to 448; inf too.
    if (a >= LTX2_E4M3_MAX_F32_BITS) return sign | LTX2_E4M3_MAX_CODE;
    if ((a >> 23) >= LTX2_E4M3_MIN_NORMAL_E32) {
        // Keep 3 mantissa bits, round to nearest even on the 20 dropped ones; a carry moves
        // into the exponent, which is the correct result. Rebias 127 -> 7.
        uint32_t half_m1 = (1u << (LTX2_E4M3_DROP_BITS - 1)) - 1u;
        uint32_t r = (a + half_m1 + ((a >> LTX2_E4M3_DROP_BITS) & 1u)) >> LTX2_E4M3_DROP_BITS;
        return sign | (r - (LTX2_E4M3_REBIAS << 3));
    }
    // Subnormal range: value / 2^-9 rounded half-even is the code itself (8 = smallest normal).
    int n = ltx2_fp8_rint(ltx2_fp8_bits_f32(a) * LTX2_E4M3_SUBNORMAL_INV_STEP);
    return sign | (uint32_t)n;
}

// f rounded to bf16 (nearest, ties to even) and widened back, in integer arithmetic; a NaN is
// returned as it is.
LTX2_HD float ltx2_fp8_round_bf16(float f) {
    uint32_t u = ltx2_fp8_f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return f;
    u += 0x7FFFu + ((u >> 16) & 1u);
    return ltx2_fp8_bits_f32(u & 0xFFFF0000u);
}

// The quantiser of the fp8 kernels, torch's FP8Linear input cast: e4m3(x * inv_scale), where a bf16
// x times the f32 reciprocal is a bf16 tensor in torch, so the product is rounded to bf16 first
// (round_bf16; an f32 x keeps it in f32). A NaN skips the multiply: the GPU's FMUL returns the
// canonical (positive) NaN, while the CPU reference and torch keep the input's sign (0xFF for -NaN;
// seen on an H100).
LTX2_HD uint32_t ltx2_fp8_quant_scaled(float v, float inv_scale, bool round_bf16) {
    if (isnan(v)) return ltx2_f32_to_e4m3(v);
    const float p = v * inv_scale;
    return ltx2_f32_to_e4m3(round_bf16 ? ltx2_fp8_round_bf16(p) : p);
}

LTX2_HD float ltx2_e4m3_to_f32(uint32_t c) {
    uint32_t sign = (c & 0x80u) << 24;
    uint32_t e = (c >> 3) & 0xFu, m = c & 7u;
    if (e == 0xFu && m == 7u) return ltx2_fp8_bits_f32(sign | 0x7FC00000u);
    if (e == 0) {
        float v = (float)m * (1.0f / LTX2_E4M3_SUBNORMAL_INV_STEP); // exact: m < 8
        return sign ? -v : v;
    }
    return ltx2_fp8_bits_f32(sign | ((e + LTX2_E4M3_REBIAS) << 23) | (m << LTX2_E4M3_DROP_BITS));
}

#endif
