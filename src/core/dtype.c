/* Scalar and bulk dtype conversions. One generic round-to-nearest-even routine serves f16 and both
 * fp8 formats (bf16 has its own two-line version); decoders are exact. NaN and overflow encodings
 * follow PyTorch's c10 CPU casts (see dtype.h) so files we write match torch-written ones. */
#include "core/dtype.h"

#include <math.h>
#include <string.h>

#include "core/context.h"

/* Bulk conversions run in chunks of this many elements through a small f32/f64/i64 staging buffer:
 * big enough to amortise the per-chunk dtype switch, small enough to stay in L1 (8 KiB of f64). */
#define CONVERT_CHUNK 1024
/* Below this many elements a conversion runs on one thread; OpenMP's fork/join would cost more. */
#define CONVERT_PARALLEL_MIN ((size_t)1 << 16)

/* Encodings torch produces for NaN (quiet, all-ones-ish patterns); the sign is added separately
 * except for bf16, whose c10 cast returns a positive canonical NaN whatever the input sign. */
#define BF16_NAN 0x7FC0u
#define F16_NAN 0x7E00u
#define F16_INF 0x7C00u
#define E5M2_NAN 0x7Fu
#define E5M2_INF 0x7Cu
#define E4M3_NAN 0x7Fu
#define E4M3_MAX 0x7Eu /* 448 */

static inline uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static inline float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* Rounds a finite non-negative f32 (its bits, sign cleared) to the nearest value, ties to even, of a
 * format with `mbits` stored mantissa bits and smallest normal exponent `emin`, as if the format's
 * exponent range were unbounded above. Returns the format's magnitude bits
 * ((biased exponent << mbits) + mantissa); on overflow the result is above the largest finite code,
 * and the caller maps it to inf / NaN / max. Subnormals fall out naturally: a rounding carry out of
 * the mantissa increments the exponent field, which is exactly the next representable value. */
static uint32_t round_to_small(uint32_t abs_bits, int mbits, int emin) {
    if (abs_bits == 0) return 0;
    if (abs_bits >= (uint32_t)(emin + 127) << 23) {
        /* Normal in the target (the common case): round the f32 bits directly; adding half-1 plus
         * the kept LSB is round-to-nearest-even, and a mantissa carry bumps the exponent. Then
         * rebias the exponent from 127 to the target's (1 - emin). */
        int sh = 23 - mbits;
        uint32_t r = (abs_bits + ((1u << (sh - 1)) - 1u) + ((abs_bits >> sh) & 1u)) >> sh;
        return r - ((uint32_t)(127 - (1 - emin)) << mbits);
    }
    uint32_t e32 = abs_bits >> 23;
    uint32_t m = abs_bits & 0x7FFFFFu;
    int e_lsb; /* value = m * 2^e_lsb */
    int bitlen = 24;
    if (e32 == 0) {
        e_lsb = -149;
        bitlen = 0;
        for (uint32_t t = m; t; t >>= 1) bitlen++;
    } else {
        m |= 0x800000u;
        e_lsb = (int)e32 - 150;
    }
    int ue = e_lsb + bitlen - 1;                   /* floor(log2(value)) */
    int q = (ue > emin ? ue : emin) - mbits;        /* weight of the target's last mantissa bit */
    int qmin = emin - mbits;
    uint32_t mant;
    if (q <= e_lsb) {
        mant = m << (e_lsb - q); /* exact; at most mbits+1 bits */
    } else {
        int sh = q - e_lsb;
        if (sh >= 25) {
            mant = 0; /* m < 2^24 so value < half of the last bit: rounds to zero */
        } else {
            uint32_t kept = m >> sh;
            uint32_t rem = m & ((1u << sh) - 1u);
            uint32_t half = 1u << (sh - 1);
            if (rem > half || (rem == half && (kept & 1u))) kept++;
            mant = kept;
        }
    }
    return ((uint32_t)(q - qmin) << mbits) + mant;
}

/* Decodes a small float's exponent field e (non-zero means normal) and mantissa m to f32 bits
 * without sign. Every value of these formats is exact in f32. */
static uint32_t small_to_f32_bits(uint32_t e, uint32_t m, int mbits, int bias) {
    if (e == 0) {
        if (m == 0) return 0;
        int e32 = 1 - bias + 127;
        while (!(m & (1u << mbits))) {
            m <<= 1;
            e32--;
        }
        m &= (1u << mbits) - 1u;
        return ((uint32_t)e32 << 23) | (m << (23 - mbits));
    }
    return ((uint32_t)((int)e - bias + 127) << 23) | (m << (23 - mbits));
}


uint16_t ltx2_f32_to_bf16(float f) {
    uint32_t u = f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)BF16_NAN;
    /* Adding 0x7FFF plus the kept LSB rounds to nearest-even; a carry past the largest finite
     * value lands on inf, which is the overflow rule we want. */
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

float ltx2_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu;
    uint32_t m = h & 0x3FFu;
    if (e == 0x1F) return bits_f32(sign | 0x7F800000u | (m << 13) | (m ? 0x400000u : 0u));
    return bits_f32(sign | small_to_f32_bits(e, m, 10, 15));
}

uint16_t ltx2_f32_to_f16(float f) {
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (uint16_t)(sign | F16_NAN);
    uint32_t r = a == 0x7F800000u ? F16_INF : round_to_small(a, 10, -14);
    if (r > F16_INF) r = F16_INF;
    return (uint16_t)(sign | r);
}

float ltx2_fp8e4m3_to_f32(uint8_t v) {
    uint32_t sign = (uint32_t)(v & 0x80u) << 24;
    uint32_t e = (v >> 3) & 0xFu;
    uint32_t m = v & 0x7u;
    if (e == 0xF && m == 0x7) return bits_f32(sign | 0x7FC00000u);
    return bits_f32(sign | small_to_f32_bits(e, m, 3, 7));
}

/* Shared body of the two e4m3fn encoders: `sat` clamps overflow (and inf) to +-448 (torch's cast,
 * and CUDA's __NV_SATFINITE); without it overflow becomes NaN (CUDA's __NV_NOSAT). */
static uint8_t f32_to_e4m3(float f, int sat) {
    uint32_t u = f32_bits(f);
    uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (uint8_t)(sign | E4M3_NAN);
    uint32_t r = a == 0x7F800000u ? E4M3_NAN : round_to_small(a, 3, -6);
    if (r > E4M3_MAX) r = sat ? E4M3_MAX : E4M3_NAN;
    return (uint8_t)(sign | r);
}

uint8_t ltx2_f32_to_fp8e4m3(float f) { return f32_to_e4m3(f, 1); }
uint8_t ltx2_f32_to_fp8e4m3_nosat(float f) { return f32_to_e4m3(f, 0); }

float ltx2_fp8e5m2_to_f32(uint8_t v) {
    uint32_t sign = (uint32_t)(v & 0x80u) << 24;
    uint32_t e = (v >> 2) & 0x1Fu;
    uint32_t m = v & 0x3u;
    if (e == 0x1F) return bits_f32(sign | 0x7F800000u | (m << 21) | (m ? 0x400000u : 0u));
    return bits_f32(sign | small_to_f32_bits(e, m, 2, 15));
}

uint8_t ltx2_f32_to_fp8e5m2(float f) {
    uint32_t u = f32_bits(f);
    uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (uint8_t)(sign | E5M2_NAN);
    uint32_t r = a == 0x7F800000u ? E5M2_INF : round_to_small(a, 2, -14);
    if (r > E5M2_INF) r = E5M2_INF;
    return (uint8_t)(sign | r);
}

/* ---- bulk conversion ---- */

static int is_small_float(ltx2_dtype dt) {
    return dt == LTX2_F32 || dt == LTX2_F16 || dt == LTX2_BF16 || dt == LTX2_F8_E4M3 ||
           dt == LTX2_F8_E5M2;
}

static int is_int_or_bool(ltx2_dtype dt) {
    return dt == LTX2_I64 || dt == LTX2_I32 || dt == LTX2_I16 || dt == LTX2_I8 || dt == LTX2_U8 ||
           dt == LTX2_BOOL;
}

/* Element size without the public function's range check (dtypes are validated up front). */
static size_t elem_size(ltx2_dtype dt) {
    switch (dt) {
    case LTX2_F64: case LTX2_I64: return 8;
    case LTX2_F32: case LTX2_I32: return 4;
    case LTX2_F16: case LTX2_BF16: case LTX2_I16: return 2;
    default: return 1;
    }
}

/* Loads n elements of a small-float dtype as f32. lut8 decodes fp8 bytes. All loads go through
 * memcpy so src may be unaligned (mmap'd safetensors data). */
static void load_f32(float *dst, const unsigned char *src, ltx2_dtype s, size_t n, const float *lut8) {
    switch (s) {
    case LTX2_F32: memcpy(dst, src, n * 4); break;
    case LTX2_F16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            dst[i] = ltx2_f16_to_f32(h);
        }
        break;
    case LTX2_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            dst[i] = ltx2_bf16_to_f32(h);
        }
        break;
    default: /* fp8 */
        for (size_t i = 0; i < n; i++) dst[i] = lut8[src[i]];
        break;
    }
}

static void store_f32(unsigned char *dst, ltx2_dtype d, const float *src, size_t n) {
    switch (d) {
    case LTX2_F32: memcpy(dst, src, n * 4); break;
    case LTX2_F16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h = ltx2_f32_to_f16(src[i]);
            memcpy(dst + 2 * i, &h, 2);
        }
        break;
    case LTX2_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h = ltx2_f32_to_bf16(src[i]);
            memcpy(dst + 2 * i, &h, 2);
        }
        break;
    case LTX2_F8_E4M3:
        for (size_t i = 0; i < n; i++) dst[i] = ltx2_f32_to_fp8e4m3(src[i]);
        break;
    default: /* LTX2_F8_E5M2 */
        for (size_t i = 0; i < n; i++) dst[i] = ltx2_f32_to_fp8e5m2(src[i]);
        break;
    }
}

/* Reads one integer / bool element as int64 (bool: any non-zero byte is true). */
static int64_t load_int(const unsigned char *p, ltx2_dtype s) {
    switch (s) {
    case LTX2_I64: { int64_t v; memcpy(&v, p, 8); return v; }
    case LTX2_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case LTX2_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case LTX2_I8: return (int8_t)p[0];
    case LTX2_U8: return p[0];
    default: return p[0] != 0; /* LTX2_BOOL */
    }
}

static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Writes an int64 into an integer dtype, saturating at the type's range (bool: v != 0). */
static void store_int(unsigned char *p, ltx2_dtype d, int64_t v) {
    switch (d) {
    case LTX2_I64: memcpy(p, &v, 8); break;
    case LTX2_I32: { int32_t t = (int32_t)clamp_i64(v, INT32_MIN, INT32_MAX); memcpy(p, &t, 4); break; }
    case LTX2_I16: { int16_t t = (int16_t)clamp_i64(v, INT16_MIN, INT16_MAX); memcpy(p, &t, 2); break; }
    case LTX2_I8: { int8_t t = (int8_t)clamp_i64(v, INT8_MIN, INT8_MAX); memcpy(p, &t, 1); break; }
    case LTX2_U8: p[0] = (uint8_t)clamp_i64(v, 0, UINT8_MAX); break;
    default: p[0] = v != 0; break; /* LTX2_BOOL */
    }
}

/* Float -> integer: truncation toward zero, saturating at the type's range, NaN -> 0. C leaves
 * out-of-range casts undefined, and numpy's results there are platform-specific, so we pick the
 * one well-defined rule. */
static int64_t f64_to_int_sat(double x, int64_t lo, int64_t hi) {
    if (x != x) return 0;
    if (x <= (double)lo) return lo;
    if (x >= (double)hi) return hi; /* (double)INT64_MAX rounds up to 2^63, so this also guards it */
    return (int64_t)x;
}

static void load_f64(double *dst, const unsigned char *src, ltx2_dtype s, size_t n, const float *lut8) {
    size_t sz = elem_size(s);
    if (s == LTX2_F64) {
        memcpy(dst, src, n * 8);
    } else if (is_small_float(s)) {
        float buf[CONVERT_CHUNK];
        load_f32(buf, src, s, n, lut8);
        for (size_t i = 0; i < n; i++) dst[i] = buf[i];
    } else {
        for (size_t i = 0; i < n; i++) dst[i] = (double)load_int(src + i * sz, s);
    }
}

static void store_f64(unsigned char *dst, ltx2_dtype d, const double *src, size_t n) {
    size_t sz = elem_size(d);
    if (d == LTX2_F64) {
        memcpy(dst, src, n * 8);
    } else if (is_small_float(d)) {
        /* Via f32, like torch's double -> half/bfloat16/fp8 casts (which round twice). */
        float buf[CONVERT_CHUNK];
        for (size_t i = 0; i < n; i++) buf[i] = (float)src[i];
        store_f32(dst, d, buf, n);
    } else if (d == LTX2_BOOL) {
        for (size_t i = 0; i < n; i++) dst[i] = src[i] != 0.0; /* NaN is true, as in numpy */
    } else {
        int64_t lo = 0, hi = 0;
        switch (d) {
        case LTX2_I64: lo = INT64_MIN; hi = INT64_MAX; break;
        case LTX2_I32: lo = INT32_MIN; hi = INT32_MAX; break;
        case LTX2_I16: lo = INT16_MIN; hi = INT16_MAX; break;
        case LTX2_I8: lo = INT8_MIN; hi = INT8_MAX; break;
        default: lo = 0; hi = UINT8_MAX; break; /* LTX2_U8 */
        }
        for (size_t i = 0; i < n; i++) store_int(dst + i * sz, d, f64_to_int_sat(src[i], lo, hi));
    }
}

typedef enum convert_path { PATH_COPY, PATH_F32, PATH_I64, PATH_F64 } convert_path;

/* Converts elements [i0, i0+cnt) of one chunk along the chosen path. */
static void convert_chunk(unsigned char *dst, ltx2_dtype d, const unsigned char *src, ltx2_dtype s,
                          size_t i0, size_t cnt, convert_path path, const float *lut8) {
    size_t ss = elem_size(s), ds = elem_size(d);
    const unsigned char *sp = src + i0 * ss;
    unsigned char *dp = dst + i0 * ds;
    switch (path) {
    case PATH_COPY: memcpy(dp, sp, cnt * ss); break;
    case PATH_F32: {
        float buf[CONVERT_CHUNK];
        load_f32(buf, sp, s, cnt, lut8);
        store_f32(dp, d, buf, cnt);
        break;
    }
    case PATH_I64:
        for (size_t i = 0; i < cnt; i++) store_int(dp + i * ds, d, load_int(sp + i * ss, s));
        break;
    case PATH_F64: {
        double buf[CONVERT_CHUNK];
        load_f64(buf, sp, s, cnt, lut8);
        store_f64(dp, d, buf, cnt);
        break;
    }
    }
}

ltx2_status ltx2_convert(ltx2_context *ctx, void *dst, ltx2_dtype d, const void *src, ltx2_dtype s,
                         size_t n) {
    if ((int)s < 0 || s >= LTX2_DTYPE_COUNT || (int)d < 0 || d >= LTX2_DTYPE_COUNT)
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "ltx2_convert: unknown dtype (src %d, dst %d)", (int)s,
                          (int)d);
    if (n == 0) return LTX2_OK;
    if (!dst || !src)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "ltx2_convert: NULL %s for %zu elements",
                          !dst ? "dst" : "src", n);
    size_t ss = elem_size(s), ds = elem_size(d);
    if (n > SIZE_MAX / 8)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "ltx2_convert: %zu elements overflow size_t", n);
    uintptr_t s0 = (uintptr_t)src, s1 = s0 + n * ss, d0 = (uintptr_t)dst, d1 = d0 + n * ds;
    if (s0 < d1 && d0 < s1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "ltx2_convert: src and dst overlap (%zu elements %s -> %s)", n,
                          ltx2_dtype_name(s), ltx2_dtype_name(d));

    convert_path path;
    if (s == d) path = PATH_COPY;
    else if (is_small_float(s) && is_small_float(d)) path = PATH_F32;
    else if (is_int_or_bool(s) && is_int_or_bool(d)) path = PATH_I64;
    else path = PATH_F64;

    float lut8[256];
    if (s == LTX2_F8_E4M3 || s == LTX2_F8_E5M2) {
        for (int i = 0; i < 256; i++)
            lut8[i] = s == LTX2_F8_E4M3 ? ltx2_fp8e4m3_to_f32((uint8_t)i) : ltx2_fp8e5m2_to_f32((uint8_t)i);
    }
    const float *lut = lut8;

    int64_t n_chunks = (int64_t)((n + CONVERT_CHUNK - 1) / CONVERT_CHUNK);
    unsigned char *dp = dst;
    const unsigned char *sp = src;
#pragma omp parallel for schedule(static) if (n >= CONVERT_PARALLEL_MIN)
    for (int64_t c = 0; c < n_chunks; c++) {
        size_t i0 = (size_t)c * CONVERT_CHUNK;
        size_t cnt = n - i0 < CONVERT_CHUNK ? n - i0 : CONVERT_CHUNK;
        convert_chunk(dp, d, sp, s, i0, cnt, path, lut);
    }
    return LTX2_OK;
}

double ltx2_load_as_f64(const void *data, ltx2_dtype dt, size_t i) {
    if ((int)dt < 0 || dt >= LTX2_DTYPE_COUNT || !data) return NAN;
    const unsigned char *p = (const unsigned char *)data + i * elem_size(dt);
    switch (dt) {
    case LTX2_F64: { double v; memcpy(&v, p, 8); return v; }
    case LTX2_F32: { float v; memcpy(&v, p, 4); return v; }
    case LTX2_F16: { uint16_t h; memcpy(&h, p, 2); return ltx2_f16_to_f32(h); }
    case LTX2_BF16: { uint16_t h; memcpy(&h, p, 2); return ltx2_bf16_to_f32(h); }
    case LTX2_F8_E4M3: return ltx2_fp8e4m3_to_f32(p[0]);
    case LTX2_F8_E5M2: return ltx2_fp8e5m2_to_f32(p[0]);
    default: return (double)load_int(p, dt);
    }
}

/* 8 significant bits (7 stored): the ulp is 2^-7 of the binade's power of two. */
#define BF16_MANT_BITS 7
#define BF16_MIN_EXP (-126)

double ltx2_bf16_ulp(double x) {
    if (!isfinite(x)) return NAN;
    int e = 0;
    (void)frexp(fabs(x), &e); /* |x| = m 2^e, m in [0.5, 1): floor(log2 |x|) = e - 1 */
    const int b = x == 0.0 || e - 1 < BF16_MIN_EXP ? BF16_MIN_EXP : e - 1;
    return ldexp(1.0, b - BF16_MANT_BITS);
}
