/* kernels/fp8_layout.h (the CUDA fp8 kernels' e4m3 encoder / decoder) on the CPU, against
 * (1) an oracle built from the e4m3fn definition alone: the 127 finite non-negative values
 *     e == 0: m * 2^-9, else (1 + m/8) * 2^(e-7), nearest value with ties to the even code,
 *     saturating at 448, NaN -> 0x7F | sign; and
 * (2) src/core/dtype.c's cast, which the CPU backend's fp8 op uses, so both backends give the same
 *     bits. Inputs: every f32 whose low 9 mantissa bits are 0, 1 or 0x1FF (every exponent, every
 *     tie and both neighbours of it, since e4m3 normals drop 20 bits), plus all 256 codes; and
 * (3) the quantiser's bf16 rounding of a bf16 source's scaled value against dtype.c's, on the same
 *     inputs (bf16 ties among them). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/dtype.h"
#include "fp8_layout.h"
#include "test_util.h"

#define E4M3_FINITE_POS 127 /* codes 0x00 .. 0x7E */

static double oracle_value(int code) {
    const int e = (code >> 3) & 15, m = code & 7;
    return e == 0 ? m * ldexp(1.0, -9) : (1.0 + m / 8.0) * ldexp(1.0, e - 7);
}

static double vals[E4M3_FINITE_POS];

static uint32_t oracle_encode(float f) {
    const uint32_t sign = signbit(f) ? 0x80u : 0u;
    if (isnan(f)) return sign | 0x7Fu;
    const double x = fabs((double)f);
    if (x >= vals[E4M3_FINITE_POS - 1]) return sign | (uint32_t)(E4M3_FINITE_POS - 1);
    int lo = 0, hi = E4M3_FINITE_POS - 1; /* vals[lo] <= x < vals[hi] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (vals[mid] <= x) lo = mid;
        else hi = mid;
    }
    const double dlo = x - vals[lo], dhi = vals[hi] - x;
    const int c = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
    return sign | (uint32_t)c;
}

static float f32_of(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

int main(void) {
    for (int c = 0; c < E4M3_FINITE_POS; c++) vals[c] = oracle_value(c);
    CHECK(vals[E4M3_FINITE_POS - 1] == 448.0, "largest finite e4m3 is %g", vals[E4M3_FINITE_POS - 1]);

    /* decoder: all 256 codes */
    int dec_bad = 0;
    for (uint32_t c = 0; c < 256; c++) {
        const float got = ltx2_e4m3_to_f32(c);
        const bool nan_code = (c & 0x7Fu) == 0x7Fu;
        const double want = nan_code ? NAN : ((c & 0x80u) ? -1.0 : 1.0) * oracle_value((int)(c & 0x7Fu));
        const bool ok = nan_code ? isnan(got) && !!signbit(got) == !!(c & 0x80u)
                                 : (double)got == want && !!signbit(got) == !!(c & 0x80u);
        const float cpu = ltx2_fp8e4m3_to_f32((uint8_t)c);
        const bool same_cpu = nan_code ? isnan(cpu) : memcmp(&cpu, &got, sizeof got) == 0;
        if ((!ok || !same_cpu) && dec_bad++ < 5)
            fprintf(stderr, "decode 0x%02X: got %g, want %g, cpu %g\n", (unsigned)c, (double)got, want, (double)cpu);
    }
    CHECK(dec_bad == 0, "%d of 256 codes decode wrongly", dec_bad);

    /* encoder */
    static const uint32_t lows[] = {0x000u, 0x001u, 0x1FFu};
    long long bad_oracle = 0, bad_cpu = 0, n = 0;
    for (uint64_t hi = 0; hi < (1ull << 23); hi++)
        for (size_t l = 0; l < sizeof(lows) / sizeof(lows[0]); l++) {
            const uint32_t u = (uint32_t)(hi << 9) | lows[l];
            const float f = f32_of(u);
            const uint32_t got = ltx2_f32_to_e4m3(f);
            const uint32_t want = oracle_encode(f), cpu = ltx2_f32_to_fp8e4m3(f);
            n++;
            if (got != want && bad_oracle++ < 5)
                fprintf(stderr, "encode 0x%08X (%g): got 0x%02X, oracle 0x%02X\n", (unsigned)u, (double)f,
                        (unsigned)got, (unsigned)want);
            if (got != cpu && bad_cpu++ < 5)
                fprintf(stderr, "encode 0x%08X (%g): got 0x%02X, dtype.c 0x%02X\n", (unsigned)u, (double)f,
                        (unsigned)got, (unsigned)cpu);
        }
    CHECK(bad_oracle == 0, "%lld of %lld f32 inputs encode differently from the e4m3fn definition", bad_oracle, n);
    CHECK(bad_cpu == 0, "%lld of %lld f32 inputs encode differently from src/core/dtype.c", bad_cpu, n);

    /* the bf16 rounding of a bf16 source's scaled value against src/core/dtype.c's, on the same
     * inputs (every exponent, ties, neighbours, NaN and infinities among them) */
    long long bad_bf16 = 0;
    for (uint64_t hi = 0; hi < (1ull << 23); hi++)
        for (size_t l = 0; l < sizeof(lows) / sizeof(lows[0]); l++) {
            const uint32_t u = (uint32_t)(hi << 9) | lows[l] | (lows[l] == 1 ? 0x8000u : 0u);
            const float f = f32_of(u), got = ltx2_fp8_round_bf16(f), want = ltx2_round_bf16(f);
            const bool same = isnan(f) ? isnan(got) && !!signbit(got) == !!signbit(f) : memcmp(&got, &want, 4) == 0;
            if (!same && bad_bf16++ < 5)
                fprintf(stderr, "bf16 round 0x%08X (%g): got %g, dtype.c %g\n", (unsigned)u, (double)f, (double)got,
                        (double)want);
        }
    CHECK(bad_bf16 == 0, "%lld f32 inputs round to bf16 differently from src/core/dtype.c", bad_bf16);
    CHECK(ltx2_fp8_quant_scaled(3.0f, 1.0f / 3.0f, true) == ltx2_f32_to_e4m3(ltx2_round_bf16(3.0f * (1.0f / 3.0f))),
          "the quantiser rounds a bf16 source's product");
    CHECK(ltx2_fp8_quant_scaled(-NAN, 2.0f, true) == 0xFFu, "the quantiser keeps -NaN's sign");

    /* named edge cases, so a failure reads plainly */
    CHECK(ltx2_f32_to_e4m3(448.0f) == 0x7Eu && ltx2_f32_to_e4m3(-1e30f) == 0xFEu, "saturation to +-448");
    CHECK(ltx2_f32_to_e4m3(INFINITY) == 0x7Eu && ltx2_f32_to_e4m3(-INFINITY) == 0xFEu, "+-inf saturates");
    CHECK(ltx2_f32_to_e4m3(464.0f) == 0x7Eu, "464 (the tie between 448 and the NaN pattern) saturates");
    CHECK(ltx2_f32_to_e4m3(ldexpf(1.0f, -10)) == 0x00u, "2^-10, half the smallest subnormal, ties to 0");
    CHECK(ltx2_f32_to_e4m3(ldexpf(3.0f, -10)) == 0x02u, "1.5 * 2^-9 ties to the even code 2");
    CHECK(ltx2_f32_to_e4m3(-0.0f) == 0x80u, "-0 keeps its sign");
    CHECK(ltx2_f32_to_e4m3(ldexpf(1.0f, -6)) == 0x08u, "2^-6 is the smallest normal, code 0x08");
    CHECK(ltx2_f32_to_e4m3(ldexpf(15.0f, -10)) == 0x08u, "7.5 * 2^-9 rounds up into the smallest normal");
    return test_finish();
}
