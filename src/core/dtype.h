/* Scalar and bulk conversions between f32 and bf16 / f16 / fp8 (e4m3fn, e5m2), round-to-nearest-even.
 * Overflow follows PyTorch's casts (checked bit for bit by tests/test_golden_dtype.c against torch
 * 2.15) so our files match torch-written ones:
 *   f32->bf16, f32->f16, f32->e5m2: overflow rounds to +-inf; NaN stays NaN (quiet).
 *   f32->e4m3fn: e4m3fn has no inf; |x| that rounds above 448, and +-inf, saturate to +-448.
 *   ltx2_f32_to_fp8e4m3_nosat: overflow and inf become NaN (0x7F|sign) instead, as CUDA's
 *   __nv_cvt_float_to_fp8(..., __NV_NOSAT, ...) does; kept to check GPU conversions against. */
#ifndef LTX2_CORE_DTYPE_H
#define LTX2_CORE_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

/* Exact: a bf16 is the high half of an f32 (inline: hot loops widen element by element). */
static inline float ltx2_bf16_to_f32(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
uint16_t ltx2_f32_to_bf16(float f);
/* f rounded to the nearest bf16 value, as an f32 (what a bf16 tensor op's result holds). */
static inline float ltx2_round_bf16(float f) { return ltx2_bf16_to_f32(ltx2_f32_to_bf16(f)); }
/* The spacing of bf16 values at |x| (one unit in the last place): 2^(floor(log2 |x|) - 7) for a normal
 * |x|, 2^-133 below 2^-126 (and for 0); inf and NaN give NaN. */
double ltx2_bf16_ulp(double x);
float ltx2_f16_to_f32(uint16_t h);
uint16_t ltx2_f32_to_f16(float f);
/* e4m3fn's NaN: exponent and mantissa bits all set (0x7F, 0xFF with the sign); it has no inf. */
#define LTX2_FP8_NAN_BITS 0x7Fu
static inline bool ltx2_fp8e4m3_is_nan(uint8_t v) { return (v & LTX2_FP8_NAN_BITS) == LTX2_FP8_NAN_BITS; }
float ltx2_fp8e4m3_to_f32(uint8_t v);
uint8_t ltx2_f32_to_fp8e4m3(float f);
uint8_t ltx2_f32_to_fp8e4m3_nosat(float f);
float ltx2_fp8e5m2_to_f32(uint8_t v);
uint8_t ltx2_f32_to_fp8e5m2(float f);

/* Converts n elements from src (dtype s) to dst (dtype d). Any pair of supported dtypes works
 * (floats, ints, bool; ints convert via f64 like numpy's astype). src and dst may be unaligned
 * (mmap'd safetensors data), must not overlap. OpenMP-parallel for large n. */
ltx2_status ltx2_convert(ltx2_context *ctx, void *dst, ltx2_dtype d, const void *src, ltx2_dtype s,
                         size_t n);

/* Reads element i of a contiguous buffer of dtype dt as double (for compare tools). */
double ltx2_load_as_f64(const void *data, ltx2_dtype dt, size_t i);

#endif
