/* Exhaustive tests of the bf16 / f16 / fp8 (e4m3fn, e5m2) conversions against an independent slow
 * reference written here from the format definitions, plus the bulk ltx2_convert over every dtype
 * pair (unaligned buffers, the OpenMP path, saturating ints) and ltx2_load_as_f64. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "test_util.h"

/* Random encode checks per format: a few million in total, well under a second in Release. */
#define N_RANDOM_PER_FORMAT 2000000
/* Print at most this many examples per failing category (the CHECK then counts the category once). */
#define MAX_REPORTED 8
/* Bulk-conversion size that certainly takes the OpenMP path (dtype.c parallelises from 2^16). */
#define N_BULK_LARGE 300001

/* ---- format descriptions and the reference codec ---- */

typedef struct fmt {
    const char *name;
    int nbits, ebits, mbits, bias;
    int fn; /* "fn" format (e4m3fn): no inf; only exponent and mantissa all ones is NaN */
    float (*dec)(uint32_t);
    uint32_t (*enc)(float);
    uint32_t nan_code; /* the positive NaN encoding torch produces */
    int nan_keeps_sign; /* torch's bf16 NaN is always positive */
} fmt;

static float dec_bf16(uint32_t b) { return ltx2_bf16_to_f32((uint16_t)b); }
static float dec_f16(uint32_t b) { return ltx2_f16_to_f32((uint16_t)b); }
static float dec_e4m3(uint32_t b) { return ltx2_fp8e4m3_to_f32((uint8_t)b); }
static float dec_e5m2(uint32_t b) { return ltx2_fp8e5m2_to_f32((uint8_t)b); }
static uint32_t enc_bf16(float f) { return ltx2_f32_to_bf16(f); }
static uint32_t enc_f16(float f) { return ltx2_f32_to_f16(f); }
static uint32_t enc_e4m3(float f) { return ltx2_f32_to_fp8e4m3(f); }
static uint32_t enc_e5m2(float f) { return ltx2_f32_to_fp8e5m2(f); }

static const fmt k_fmts[] = {
    {"bf16", 16, 8, 7, 127, 0, dec_bf16, enc_bf16, 0x7FC0, 0},
    {"f16", 16, 5, 10, 15, 0, dec_f16, enc_f16, 0x7E00, 1},
    {"e4m3fn", 8, 4, 3, 7, 1, dec_e4m3, enc_e4m3, 0x7F, 1},
    {"e5m2", 8, 5, 2, 15, 0, dec_e5m2, enc_e5m2, 0x7F, 1},
};
#define N_FMTS (int)(sizeof(k_fmts) / sizeof(k_fmts[0]))

static uint32_t sign_bit(const fmt *f) { return 1u << (f->nbits - 1); }

/* Value of a code straight from the definition: (-1)^s * 2^(e-bias) * 1.m, or 2^(1-bias) * 0.m. */
static double ref_decode(const fmt *f, uint32_t code) {
    uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
    int s = (code >> (f->nbits - 1)) & 1;
    uint32_t e = (code >> f->mbits) & emask, m = code & mmask;
    double v;
    if (!f->fn && e == emask) v = m ? NAN : INFINITY;
    else if (f->fn && e == emask && m == mmask) v = NAN;
    else if (e == 0) v = ldexp((double)m, 1 - f->bias - f->mbits);
    else v = ldexp((double)(m + (1u << f->mbits)), (int)e - f->bias - f->mbits);
    return s ? -v : v;
}

/* Largest finite positive code; the code after it is inf (IEEE) or NaN (fn), and is also what
 * rounding past the maximum produces before the overflow rule applies. */
static uint32_t max_code(const fmt *f) {
    if (f->fn) return sign_bit(f) - 2;
    return (((1u << f->ebits) - 1) << f->mbits) - 1;
}

/* The value the code after max_code would have if the exponent range went on. */
static double virtual_next(const fmt *f) {
    uint32_t c = max_code(f) + 1;
    uint32_t m = c & ((1u << f->mbits) - 1), e = c >> f->mbits;
    return ldexp((double)(m + (1u << f->mbits)), (int)e - f->bias - f->mbits);
}

/* Sorted positive finite values, vals[code] for code in [0, max_code]. */
typedef struct table {
    double *vals;
    uint32_t n;
    double next; /* virtual_next */
} table;

static table make_table(const fmt *f) {
    table t;
    t.n = max_code(f) + 1;
    t.vals = malloc(sizeof(double) * t.n);
    for (uint32_t c = 0; c < t.n; c++) t.vals[c] = ref_decode(f, c);
    t.next = virtual_next(f);
    return t;
}

/* Code for an overflowing magnitude (before adding the sign). */
static uint32_t overflow_code(const fmt *f, int sat) {
    if (sat) return max_code(f);
    return max_code(f) + 1; /* IEEE: inf; fn: the NaN code 0x7F */
}

/* Slow reference encoder: round |x| to nearest by comparing with the neighbouring representable
 * values (binary search for the one below), ties to the even code. x must be finite or inf. */
static uint32_t ref_encode(const fmt *f, const table *t, double x, int sat) {
    uint32_t s = signbit(x) ? sign_bit(f) : 0;
    double a = fabs(x);
    uint32_t lo = 0, hi = t->n - 1;
    if (a >= t->vals[hi]) {
        lo = hi;
    } else {
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) / 2;
            if (t->vals[mid] <= a) lo = mid;
            else hi = mid;
        }
    }
    uint32_t code;
    if (t->vals[lo] == a) {
        code = lo;
    } else {
        double below = t->vals[lo];
        double above = lo + 1 < t->n ? t->vals[lo + 1] : t->next;
        double dlo = a - below, dhi = above - a;
        if (isinf(a)) code = lo + 1;
        else if (dlo < dhi) code = lo;
        else if (dlo > dhi) code = lo + 1;
        else code = (lo & 1) ? lo + 1 : lo;
    }
    if (code > max_code(f)) code = overflow_code(f, sat);
    return s | code;
}

static int is_nan_code(const fmt *f, uint32_t code) { return isnan(ref_decode(f, code)); }

static uint32_t expected_nan(const fmt *f, float x) {
    return f->nan_code | (f->nan_keeps_sign && signbit(x) ? sign_bit(f) : 0);
}

static uint32_t bits_of(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static float float_of(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* ---- per-format tests ---- */

static void test_decode_roundtrip(const fmt *f) {
    int bad_dec = 0, bad_rt = 0;
    uint32_t n = 1u << f->nbits;
    for (uint32_t c = 0; c < n; c++) {
        double ref = ref_decode(f, c);
        float got = f->dec(c);
        int ok = isnan(ref) ? isnan(got) : ((double)got == ref && !signbit(got) == !signbit(ref));
        if (!ok && bad_dec++ < MAX_REPORTED)
            fprintf(stderr, "  %s decode 0x%X: got %.9g want %.9g\n", f->name, c, got, ref);
        uint32_t back = f->enc(got);
        ok = isnan(ref) ? is_nan_code(f, back) : back == c;
        if (!ok && bad_rt++ < MAX_REPORTED)
            fprintf(stderr, "  %s round trip 0x%X -> %.9g -> 0x%X\n", f->name, c, got, back);
    }
    CHECK(bad_dec == 0, "%s: %d of %u codes decode differently from the reference", f->name, bad_dec, n);
    CHECK(bad_rt == 0, "%s: %d of %u codes do not survive decode->encode", f->name, bad_rt, n);
}

/* For every adjacent pair (a, b) of positive representable values (and max with the virtual next
 * value past it): the exact midpoint ties to the even code, one f32 ulp either side goes to the
 * nearer; both signs. This covers zero / min subnormal, subnormal -> normal and overflow. */
static void test_midpoints(const fmt *f, const table *t) {
    int bad = 0, bad_ref = 0, not_exact = 0;
    for (uint32_t k = 0; k < t->n; k++) {
        double a = t->vals[k], b = k + 1 < t->n ? t->vals[k + 1] : t->next;
        double mid = 0.5 * (a + b);
        float mf = (float)mid;
        if ((double)mf != mid) {
            not_exact++;
            continue;
        }
        uint32_t tie = (k & 1) ? k + 1 : k, up = k + 1, dn = k;
        if (tie > max_code(f)) tie = overflow_code(f, f->fn);
        if (up > max_code(f)) up = overflow_code(f, f->fn);
        float above = nextafterf(mf, INFINITY), below = nextafterf(mf, 0.0f);
        for (int neg = 0; neg < 2; neg++) {
            uint32_t s = neg ? sign_bit(f) : 0;
            float sg = neg ? -1.0f : 1.0f;
            const float xs[3] = {sg * mf, sg * above, sg * below};
            const uint32_t want[3] = {s | tie, s | up, s | dn};
            for (int i = 0; i < 3; i++) {
                uint32_t got = f->enc(xs[i]);
                if (got != want[i] && bad++ < MAX_REPORTED)
                    fprintf(stderr, "  %s encode %.9g (%s pair 0x%X/0x%X): got 0x%X want 0x%X\n", f->name,
                            xs[i], i == 0 ? "midpoint of" : i == 1 ? "above mid of" : "below mid of", k,
                            k + 1, got, want[i]);
                /* the reference encoder must agree, or the random test below proves nothing */
                if (ref_encode(f, t, xs[i], f->fn) != want[i] && bad_ref++ < MAX_REPORTED)
                    fprintf(stderr, "  %s reference encoder disagrees at %.9g\n", f->name, xs[i]);
            }
        }
    }
    CHECK(not_exact == 0, "%s: %d midpoints not exact in f32", f->name, not_exact);
    CHECK(bad == 0, "%s: %d midpoint/neighbour encodings wrong", f->name, bad);
    CHECK(bad_ref == 0, "%s: %d reference-encoder disagreements", f->name, bad_ref);
}

static void test_specials(const fmt *f, const table *t) {
    uint32_t s = sign_bit(f);
    CHECK(f->enc(0.0f) == 0, "%s: +0", f->name);
    CHECK(f->enc(-0.0f) == s, "%s: -0 -> 0x%X", f->name, f->enc(-0.0f));
    /* f32 subnormals and tiny values round to a signed zero (bf16 shares f32's exponent range, so
     * the smallest f32 subnormal is below its half-ulp only for 2^-149). */
    float tiny = float_of(1);
    CHECK(f->enc(tiny) == 0 && f->enc(-tiny) == s, "%s: smallest f32 subnormal -> signed zero", f->name);
    /* half the smallest subnormal ties to zero; a hair more rounds up to it */
    float hmin = (float)(0.5 * t->vals[1]);
    CHECK(f->enc(hmin) == 0 && f->enc(-hmin) == s, "%s: half min subnormal -> 0", f->name);
    CHECK(f->enc(nextafterf(hmin, 1.0f)) == 1, "%s: just above half min subnormal -> 1", f->name);
    /* largest subnormal and smallest normal */
    uint32_t min_normal = 1u << f->mbits;
    CHECK(f->enc((float)t->vals[min_normal]) == min_normal, "%s: min normal", f->name);
    CHECK(f->enc((float)t->vals[min_normal - 1]) == min_normal - 1, "%s: max subnormal", f->name);
    /* overflow */
    const float huge[] = {FLT_MAX, 1e30f, (float)(2.0 * t->next), INFINITY};
    for (int i = 0; i < 4; i++) {
        if ((double)huge[i] < t->next) continue; /* 1e30 is finite in bf16 */
        uint32_t want = overflow_code(f, f->fn); /* e4m3fn saturates to 448 as torch; others go to inf */
        CHECK(f->enc(huge[i]) == want, "%s: %g -> 0x%X want 0x%X", f->name, huge[i], f->enc(huge[i]), want);
        CHECK(f->enc(-huge[i]) == (want | s), "%s: -%g -> 0x%X", f->name, huge[i], f->enc(-huge[i]));
    }
    /* max itself, and values just past max that still round down to it */
    float mx = (float)t->vals[max_code(f)];
    CHECK(f->enc(mx) == max_code(f), "%s: max", f->name);
    CHECK(f->enc(nextafterf(mx, INFINITY)) == max_code(f), "%s: just above max rounds to max", f->name);
    if (!f->fn) {
        CHECK(f->enc(INFINITY) == max_code(f) + 1 && f->dec(max_code(f) + 1) == INFINITY, "%s: inf", f->name);
        CHECK(f->dec(s | (max_code(f) + 1)) == -INFINITY, "%s: -inf decodes", f->name);
    }
    /* NaNs: quiet, signalling and negative; torch's exact NaN codes */
    const uint32_t nans[] = {0x7FC00000u, 0x7F800001u, 0xFFC00000u, 0x7FFFFFFFu, 0xFF800001u};
    for (int i = 0; i < 5; i++) {
        float x = float_of(nans[i]);
        CHECK(f->enc(x) == expected_nan(f, x), "%s: NaN 0x%08X -> 0x%X want 0x%X", f->name, nans[i],
              f->enc(x), expected_nan(f, x));
    }
}

/* Cheap deterministic generator for test inputs (xorshift64*). */
static uint64_t rng_next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* Half of the inputs are uniform f32 bit patterns (every exponent, inf, NaN), half are spread over
 * the format's own range (random exponent from below the smallest subnormal to past the max). */
static void test_random(const fmt *f, const table *t, uint64_t seed) {
    int bad = 0, bad_sat = 0;
    int emin_sub = 1 - f->bias - f->mbits - 2;
    int emax = (int)ceil(log2(t->next)) + 1;
    for (int i = 0; i < N_RANDOM_PER_FORMAT; i++) {
        uint64_t r = rng_next(&seed);
        float x;
        if (i & 1) {
            x = float_of((uint32_t)(r >> 32));
        } else {
            int e = emin_sub + (int)((r >> 40) % (uint64_t)(emax - emin_sub + 1));
            uint32_t mant = (uint32_t)r & 0x7FFFFFu;
            x = (float)ldexp(1.0 + mant / 8388608.0, e);
            if (r & (1ULL << 63)) x = -x;
        }
        uint32_t got = f->enc(x);
        uint32_t want = isnan(x) ? expected_nan(f, x) : ref_encode(f, t, x, f->fn);
        if (got != want && bad++ < MAX_REPORTED)
            fprintf(stderr, "  %s random encode %.9g (0x%08X): got 0x%X want 0x%X\n", f->name, x, bits_of(x),
                    got, want);
        if (f->fn) { /* the non-saturating e4m3 variant: same except overflow/inf become NaN */
            uint32_t gs = ltx2_f32_to_fp8e4m3_nosat(x);
            uint32_t ws = isnan(x) ? expected_nan(f, x) : ref_encode(f, t, x, 0);
            if (gs != ws && bad_sat++ < MAX_REPORTED)
                fprintf(stderr, "  e4m3 sat %.9g: got 0x%X want 0x%X\n", x, gs, ws);
        }
    }
    CHECK(bad == 0, "%s: %d of %d random encodings differ from the reference", f->name, bad,
          N_RANDOM_PER_FORMAT);
    CHECK(bad_sat == 0, "%s: %d non-saturating encodings differ", f->name, bad_sat);
}

static void test_e4m3_overflow_specials(void) {
    CHECK(ltx2_f32_to_fp8e4m3(1e9f) == 0x7E && ltx2_f32_to_fp8e4m3(-1e9f) == 0xFE, "torch cast clamps");
    CHECK(ltx2_f32_to_fp8e4m3(INFINITY) == 0x7E && ltx2_f32_to_fp8e4m3(-INFINITY) == 0xFE, "torch cast: inf -> 448");
    CHECK(ltx2_f32_to_fp8e4m3_nosat(464.0f) == 0x7E && ltx2_f32_to_fp8e4m3(464.0f) == 0x7E, "464 ties to 448");
    CHECK(ltx2_f32_to_fp8e4m3_nosat(465.0f) == 0x7F && ltx2_f32_to_fp8e4m3(465.0f) == 0x7E, "465 -> NaN / 448");
    CHECK(ltx2_f32_to_fp8e4m3_nosat(INFINITY) == 0x7F, "nosat: inf -> NaN");
    CHECK(ltx2_f32_to_fp8e4m3(NAN) == 0x7F && ltx2_f32_to_fp8e4m3_nosat(NAN) == 0x7F, "NaN stays NaN");
    CHECK(ltx2_f32_to_fp8e5m2(61440.0f) == 0x7C, "e5m2 midpoint past max -> inf");
    CHECK(ltx2_f32_to_fp8e5m2(61439.0f) == 0x7B, "e5m2 just below -> max");
    CHECK(ltx2_f32_to_f16(65520.0f) == 0x7C00 && ltx2_f32_to_f16(65519.0f) == 0x7BFF, "f16 overflow edge");
    CHECK(ltx2_f32_to_bf16(FLT_MAX) == 0x7F80, "bf16 FLT_MAX rounds to inf");
}

/* ---- bulk conversion ---- */

static const ltx2_dtype k_all[] = {LTX2_F32, LTX2_F16, LTX2_BF16, LTX2_F8_E4M3, LTX2_F8_E5M2, LTX2_F64,
                                   LTX2_I64, LTX2_I32, LTX2_I16, LTX2_I8, LTX2_U8, LTX2_BOOL};
#define N_ALL (int)(sizeof(k_all) / sizeof(k_all[0]))

static int t_is_float(ltx2_dtype dt) { return dt <= LTX2_F64; }

static double t_clamp_trunc(double x, double lo, double hi) {
    if (isnan(x)) return 0;
    if (x <= lo) return lo;
    if (x >= hi) return hi;
    return trunc(x);
}

/* The test's own writer: the contract of ltx2_convert for one element given its exact value. */
static void t_put(ltx2_dtype dt, unsigned char *p, double x) {
    switch (dt) {
    case LTX2_F64: memcpy(p, &x, 8); break;
    case LTX2_F32: { float v = (float)x; memcpy(p, &v, 4); break; }
    case LTX2_F16: { uint16_t v = ltx2_f32_to_f16((float)x); memcpy(p, &v, 2); break; }
    case LTX2_BF16: { uint16_t v = ltx2_f32_to_bf16((float)x); memcpy(p, &v, 2); break; }
    case LTX2_F8_E4M3: p[0] = ltx2_f32_to_fp8e4m3((float)x); break;
    case LTX2_F8_E5M2: p[0] = ltx2_f32_to_fp8e5m2((float)x); break;
    case LTX2_I64: {
        /* 2^63 is exact in double; anything >= it saturates */
        int64_t v = isnan(x) ? 0 : x >= 9223372036854775808.0 ? INT64_MAX : x <= -9223372036854775808.0 ? INT64_MIN : (int64_t)x;
        memcpy(p, &v, 8);
        break;
    }
    case LTX2_I32: { int32_t v = (int32_t)t_clamp_trunc(x, INT32_MIN, INT32_MAX); memcpy(p, &v, 4); break; }
    case LTX2_I16: { int16_t v = (int16_t)t_clamp_trunc(x, INT16_MIN, INT16_MAX); memcpy(p, &v, 2); break; }
    case LTX2_I8: { int8_t v = (int8_t)t_clamp_trunc(x, INT8_MIN, INT8_MAX); memcpy(p, &v, 1); break; }
    case LTX2_U8: p[0] = (uint8_t)t_clamp_trunc(x, 0, 255); break;
    case LTX2_BOOL: p[0] = x != 0.0; break;
    default: break;
    }
}

static double t_get(ltx2_dtype dt, const unsigned char *p) {
    switch (dt) {
    case LTX2_F64: { double v; memcpy(&v, p, 8); return v; }
    case LTX2_F32: { float v; memcpy(&v, p, 4); return v; }
    case LTX2_F16: { uint16_t v; memcpy(&v, p, 2); return ltx2_f16_to_f32(v); }
    case LTX2_BF16: { uint16_t v; memcpy(&v, p, 2); return ltx2_bf16_to_f32(v); }
    case LTX2_F8_E4M3: return ltx2_fp8e4m3_to_f32(p[0]);
    case LTX2_F8_E5M2: return ltx2_fp8e5m2_to_f32(p[0]);
    case LTX2_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case LTX2_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case LTX2_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case LTX2_I8: return (int8_t)p[0];
    case LTX2_U8: return p[0];
    case LTX2_BOOL: return p[0] != 0;
    default: return NAN;
    }
}

static void test_convert_all_pairs(ltx2_context *ctx) {
    const double vals[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.75, 3.999, 127.6, 128.0, -129.0, 255.5, 256.0,
                           40000.0, -40000.0, 65504.0, 70000.0, 448.0, 500.0, -3e9, 5e9, 1e-3, -1e-8,
                           1e300, -1e300, 0.1, NAN, INFINITY, -INFINITY, 2147483647.0, -2147483648.0,
                           33.3, 7.0, -7.5};
    enum { N = (int)(sizeof(vals) / sizeof(vals[0])) };
    unsigned char src[N * 8 + 8], dst[N * 8 + 8], want[N * 8 + 8];
    int bad = 0;
    for (int si = 0; si < N_ALL; si++) {
        ltx2_dtype s = k_all[si];
        size_t ss = ltx2_dtype_size(s);
        unsigned char *sp = src + 1; /* deliberately unaligned */
        for (int i = 0; i < N; i++) {
            /* ints cannot hold NaN/inf: the source simply holds what t_put makes of them */
            t_put(s, sp + i * ss, vals[i]);
        }
        for (int di = 0; di < N_ALL; di++) {
            ltx2_dtype d = k_all[di];
            size_t ds = ltx2_dtype_size(d);
            unsigned char *dp = dst + 3;
            memset(dst, 0xAB, sizeof(dst));
            ltx2_status st = ltx2_convert(ctx, dp, d, sp, s, N);
            CHECK(st == LTX2_OK, "convert %s->%s: %s", ltx2_dtype_name(s), ltx2_dtype_name(d), ltx2_last_error(ctx));
            for (int i = 0; i < N; i++) {
                if (s == d) memcpy(want + i * ds, sp + i * ss, ss);
                else t_put(d, want + i * ds, t_get(s, sp + i * ss));
            }
            /* compare bytes, except NaN payloads in float results (any NaN is fine there) */
            for (int i = 0; i < N; i++) {
                int same = memcmp(dp + i * ds, want + i * ds, ds) == 0;
                if (!same && t_is_float(d) && isnan(t_get(d, dp + i * ds)) && isnan(t_get(d, want + i * ds)))
                    same = 1;
                if (!same && bad++ < MAX_REPORTED)
                    fprintf(stderr, "  convert %s->%s element %d (%.9g): got %.9g want %.9g\n",
                            ltx2_dtype_name(s), ltx2_dtype_name(d), i, t_get(s, sp + i * ss),
                            t_get(d, dp + i * ds), t_get(d, want + i * ds));
            }
            CHECK(dst[2] == 0xAB && dst[3 + N * ds] == 0xAB, "convert %s->%s wrote out of bounds",
                  ltx2_dtype_name(s), ltx2_dtype_name(d));
        }
    }
    CHECK(bad == 0, "%d element mismatches over all dtype pairs", bad);

    /* int -> int keeps full 64-bit precision and saturates */
    int64_t big[3] = {((int64_t)1 << 62) + 1, -300, 70000};
    int64_t back[3];
    int8_t small[3];
    CHECK(ltx2_convert(ctx, small, LTX2_I8, big, LTX2_I64, 3) == LTX2_OK, "i64->i8");
    CHECK(small[0] == 127 && small[1] == -128 && small[2] == 127, "i64->i8 saturates: %d %d %d", small[0],
          small[1], small[2]);
    int32_t mid[3];
    CHECK(ltx2_convert(ctx, mid, LTX2_I32, big, LTX2_I64, 3) == LTX2_OK, "i64->i32");
    CHECK(ltx2_convert(ctx, back, LTX2_I64, mid, LTX2_I32, 3) == LTX2_OK, "i32->i64");
    CHECK(back[0] == INT32_MAX && back[1] == -300 && back[2] == 70000, "i32 round trip");
    float fl[4] = {NAN, -0.9f, 1e20f, -1e20f};
    int32_t iv[4];
    CHECK(ltx2_convert(ctx, iv, LTX2_I32, fl, LTX2_F32, 4) == LTX2_OK, "f32->i32");
    CHECK(iv[0] == 0 && iv[1] == 0 && iv[2] == INT32_MAX && iv[3] == INT32_MIN, "f32->i32 NaN/trunc/sat");
}

/* Large unaligned conversions (the OpenMP path) agree with the scalar functions element by element. */
static void test_convert_large(ltx2_context *ctx) {
    size_t n = N_BULK_LARGE;
    unsigned char *a = malloc(n * 4 + 1), *b = malloc(n * 4 + 3), *c = malloc(n * 4 + 5);
    float *fa = (float *)malloc(n * 4);
    uint64_t seed = 12345;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next(&seed);
        fa[i] = (float)ldexp((double)(int32_t)(r >> 32), -20 - (int)(r % 16));
    }
    memcpy(a + 1, fa, n * 4);
    const ltx2_dtype narrow[] = {LTX2_BF16, LTX2_F16, LTX2_F8_E4M3, LTX2_F8_E5M2};
    for (int k = 0; k < 4; k++) {
        ltx2_dtype d = narrow[k];
        size_t ds = ltx2_dtype_size(d);
        CHECK(ltx2_convert(ctx, b + 3, d, a + 1, LTX2_F32, n) == LTX2_OK, "large f32->%s", ltx2_dtype_name(d));
        CHECK(ltx2_convert(ctx, c + 5, LTX2_F32, b + 3, d, n) == LTX2_OK, "large %s->f32", ltx2_dtype_name(d));
        int bad = 0;
        unsigned char tmp[8]; /* t_put may write any dtype */
        for (size_t i = 0; i < n; i++) {
            t_put(d, tmp, fa[i]);
            float back;
            memcpy(&back, c + 5 + 4 * i, 4);
            int ok = memcmp(tmp, b + 3 + i * ds, ds) == 0;
            double want = t_get(d, tmp);
            ok = ok && (back == want || (isnan(back) && isnan(want)));
            if (!ok) bad++;
        }
        CHECK(bad == 0, "large f32<->%s: %d mismatches", ltx2_dtype_name(d), bad);
    }
    free(a);
    free(b);
    free(c);
    free(fa);
}

static void test_convert_errors(ltx2_context *ctx) {
    float x[4] = {0};
    uint16_t y[4];
    ltx2_clear_error(ctx);
    CHECK(ltx2_convert(ctx, y, (ltx2_dtype)99, x, LTX2_F32, 4) == LTX2_ERR_DTYPE, "bad dtype");
    CHECK(strstr(ltx2_last_error(ctx), "dtype") != NULL, "message names dtype: %s", ltx2_last_error(ctx));
    CHECK(ltx2_convert(ctx, NULL, LTX2_BF16, x, LTX2_F32, 4) == LTX2_ERR_INVALID_ARG, "NULL dst");
    CHECK(ltx2_convert(ctx, (char *)x + 2, LTX2_BF16, x, LTX2_F32, 4) == LTX2_ERR_INVALID_ARG, "overlap");
    CHECK(strstr(ltx2_last_error(ctx), "overlap") != NULL, "overlap message: %s", ltx2_last_error(ctx));
    CHECK(ltx2_convert(ctx, NULL, LTX2_BF16, NULL, LTX2_F32, 0) == LTX2_OK, "n = 0 is a no-op");
}

static void test_load_as_f64(void) {
    unsigned char buf[32];
    for (int k = 0; k < N_ALL; k++) {
        ltx2_dtype dt = k_all[k];
        size_t sz = ltx2_dtype_size(dt);
        double want = dt == LTX2_BOOL ? 1.0 : dt == LTX2_U8 ? 5.0 : -3.0; /* exact in every dtype */
        t_put(dt, buf + 1 + 2 * sz, want);
        double got = ltx2_load_as_f64(buf + 1, dt, 2);
        CHECK(got == want, "load_as_f64 %s: got %g want %g", ltx2_dtype_name(dt), got, want);
    }
    CHECK(isnan(ltx2_load_as_f64(buf, (ltx2_dtype)99, 0)), "load_as_f64 of a bad dtype is NaN");
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    for (int i = 0; i < N_FMTS; i++) {
        const fmt *f = &k_fmts[i];
        table t = make_table(f);
        test_decode_roundtrip(f);
        test_midpoints(f, &t);
        test_specials(f, &t);
        test_random(f, &t, 0x9E3779B97F4A7C15ULL + (uint64_t)i);
        free(t.vals);
    }
    test_e4m3_overflow_specials();
    test_convert_all_pairs(ctx);
    test_convert_large(ctx);
    test_convert_errors(ctx);
    test_load_as_f64();
    ltx2_context_free(ctx);
    return test_finish();
}
