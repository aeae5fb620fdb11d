/* Philox4x32-10 against the Random123 known-answer vectors, the (seed, stream, offset) layout,
 * sub-range consistency (any slice of a call equals a smaller call at that offset), determinism,
 * and the statistics of the uniform and normal transforms. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "test_util.h"

/* Statistics use this many samples. */
#define N_STAT 1000000
/* Every statistic is checked at 6 standard errors: a correct generator fails a given check with
 * probability ~2e-9, while a transform bug (wrong scale, off-by-one bit shift, lost sign) moves the
 * statistic by far more. The standard errors for N = 1e6:
 *   uniform mean: sqrt(1/12 / N)                      = 2.89e-4
 *   uniform var:  sqrt((1/80 - 1/144) / N)            = 7.45e-5  (Var of (u-1/2)^2)
 *   normal mean:  sqrt(1 / N)                         = 1.00e-3
 *   normal var:   sqrt(2 / N)                         = 1.41e-3  (Var of z^2 = 2)
 *   P(|z| < 1) = 0.682689: sqrt(p(1-p) / N)           = 4.65e-4
 *   normal 4th moment (3): sqrt((105 - 9) / N)        = 9.80e-3
 * The seeds are fixed, so these are deterministic anyway; the margin is what makes them honest. */
#define N_SIGMA 6.0
#define SE_UNI_MEAN 2.89e-4
#define SE_UNI_VAR 7.45e-5
#define SE_NORM_MEAN 1.00e-3
#define SE_NORM_VAR 1.41e-3
#define SE_NORM_P1 4.65e-4
#define SE_NORM_M4 9.80e-3
#define P_ABS_Z_LT_1 0.6826894921370859

static void test_kat(void) {
    /* Random123 kat_vectors, philox4x32 with 10 rounds. */
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
        {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
         {0xffffffffu, 0xffffffffu},
         {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
        {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
         {0xa4093822u, 0x299f31d0u},
         {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        ltx2_philox4x32_10(kat[i].ctr, kat[i].key, out);
        CHECK(memcmp(out, kat[i].out, sizeof(out)) == 0, "KAT %d: got %08x %08x %08x %08x", i, out[0], out[1],
              out[2], out[3]);
    }
}

static void test_layout(void) {
    /* block b of (seed, stream) is Philox(ctr = {b lo, b hi, stream lo, stream hi}, key = {seed lo, seed hi}) */
    uint64_t seed = 0x299f31d0a4093822ULL, stream = 0x0370734413198a2eULL, block = 0x85a308d3243f6a88ULL;
    uint32_t w[4];
    ltx2_rng_block(seed, stream, block, w);
    CHECK(w[0] == 0xd16cfe09u && w[1] == 0x94fdccebu && w[2] == 0x5001e420u && w[3] == 0x24126ea1u,
          "rng_block maps (seed, stream, block) onto key/counter as documented");

    /* the uniform transform of element i is word i%4 of block i/4 */
    float u[10];
    ltx2_rng_uniform(7, 3, 0, 10, u);
    int bad = 0;
    for (int i = 0; i < 10; i++) {
        ltx2_rng_block(7, 3, (uint64_t)i / 4, w);
        float want = (float)(((double)(w[i % 4] >> 9) + 0.5) / 8388608.0);
        if (u[i] != want) bad++;
    }
    CHECK(bad == 0, "uniform = ((w >> 9) + 0.5) * 2^-23 of word i%%4 of block i/4");

    /* the normal transform, pair by pair, in double */
    float z[8];
    ltx2_rng_normal(7, 3, 0, 8, z);
    bad = 0;
    for (int p = 0; p < 4; p++) {
        ltx2_rng_block(7, 3, (uint64_t)p / 2, w);
        double u1 = ((double)(w[(2 * p) % 4] >> 8) + 0.5) / 16777216.0;
        double u2 = ((double)(w[(2 * p + 1) % 4] >> 8) + 0.5) / 16777216.0;
        double r = sqrt(-2.0 * log(u1));
        if (z[2 * p] != (float)(r * cos(6.283185307179586 * u2))) bad++;
        if (z[2 * p + 1] != (float)(r * sin(6.283185307179586 * u2))) bad++;
    }
    CHECK(bad == 0, "normal = Box-Muller on word pairs as documented");

    /* uniform extremes: words 0 and 0xffffffff map strictly inside (0, 1) */
    CHECK((float)((0.0 + 0.5) / 8388608.0) > 0.0f && (float)((8388607.0 + 0.5) / 8388608.0) < 1.0f,
          "uniform range is open");
}

/* Slices of a big call equal smaller calls at the same offset, for odd offsets and lengths that
 * start and end mid-block; different seeds / streams differ. Run with many elements so the OpenMP
 * path (>= 4096 blocks) is exercised on both sides. */
static void test_subranges(void) {
    const size_t n = 100003;
    float *big = malloc(n * sizeof(float)), *part = malloc(n * sizeof(float));
    typedef void (*gen_fn)(uint64_t, uint64_t, uint64_t, size_t, float *);
    gen_fn gens[2] = {ltx2_rng_uniform, ltx2_rng_normal};
    const char *names[2] = {"uniform", "normal"};
    const uint64_t base = 5; /* big call starts mid-block too */
    const struct {
        uint64_t off;
        size_t len;
    } cuts[] = {{0, 1}, {1, 1}, {3, 2}, {1, 7}, {2, 4}, {4, 4}, {13, 50001}, {7, 99990}, {99998, 5}, {0, 100003}};
    for (int g = 0; g < 2; g++) {
        gens[g](42, 9, base, n, big);
        for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
            memset(part, 0, n * sizeof(float));
            gens[g](42, 9, base + cuts[c].off, cuts[c].len, part);
            CHECK(memcmp(part, big + cuts[c].off, cuts[c].len * sizeof(float)) == 0,
                  "%s slice [%llu, +%zu) equals the big call", names[g], (unsigned long long)cuts[c].off,
                  cuts[c].len);
        }
        /* determinism */
        gens[g](42, 9, base, n, part);
        CHECK(memcmp(part, big, n * sizeof(float)) == 0, "%s is deterministic", names[g]);
        /* other seed / stream give other numbers */
        gens[g](43, 9, base, 64, part);
        CHECK(memcmp(part, big, 64 * sizeof(float)) != 0, "%s: seed matters", names[g]);
        gens[g](42, 10, base, 64, part);
        CHECK(memcmp(part, big, 64 * sizeof(float)) != 0, "%s: stream matters", names[g]);
    }
    /* 64-bit fields: the high halves of seed and stream matter, and offsets past 2^32 blocks work */
    float a[8], b[8];
    ltx2_rng_normal(1, 0, 0, 8, a);
    ltx2_rng_normal(1 + (1ULL << 32), 0, 0, 8, b);
    CHECK(memcmp(a, b, sizeof(a)) != 0, "seed high bits matter");
    ltx2_rng_normal(1, 1ULL << 32, 0, 8, b);
    CHECK(memcmp(a, b, sizeof(a)) != 0, "stream high bits matter");
    uint64_t far = (1ULL << 36) + 2;
    ltx2_rng_uniform(1, 0, far, 8, a);
    uint32_t w[4];
    ltx2_rng_block(1, 0, far / 4, w);
    CHECK(a[0] == (float)(((double)(w[2] >> 9) + 0.5) / 8388608.0), "offset beyond 2^32 blocks");
    free(big);
    free(part);
}

static void test_stats(void) {
    float *x = malloc(N_STAT * sizeof(float));
    ltx2_rng_uniform(2024, 0, 0, N_STAT, x);
    double s = 0, s2 = 0;
    float lo = 1, hi = 0;
    for (int i = 0; i < N_STAT; i++) {
        s += x[i];
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    double mean = s / N_STAT;
    for (int i = 0; i < N_STAT; i++) s2 += (x[i] - mean) * (x[i] - mean);
    double var = s2 / N_STAT;
    CHECK(lo > 0.0f && hi < 1.0f, "uniform in (0,1): min %g max %g", lo, hi);
    CHECK(fabs(mean - 0.5) < N_SIGMA * SE_UNI_MEAN, "uniform mean %.6f", mean);
    CHECK(fabs(var - 1.0 / 12.0) < N_SIGMA * SE_UNI_VAR, "uniform var %.6f (1/12 = %.6f)", var, 1.0 / 12);

    ltx2_rng_normal(2024, 1, 0, N_STAT, x);
    s = s2 = 0;
    double s4 = 0;
    long in1 = 0, nonfinite = 0;
    for (int i = 0; i < N_STAT; i++) {
        double z = x[i];
        if (!isfinite(z)) nonfinite++;
        s += z;
        s2 += z * z;
        s4 += z * z * z * z;
        in1 += fabs(z) < 1.0;
    }
    mean = s / N_STAT;
    var = s2 / N_STAT - mean * mean;
    double m4 = s4 / N_STAT;
    double p1 = (double)in1 / N_STAT;
    CHECK(nonfinite == 0, "normal: %ld non-finite values", nonfinite);
    CHECK(fabs(mean) < N_SIGMA * SE_NORM_MEAN, "normal mean %.6f", mean);
    CHECK(fabs(var - 1.0) < N_SIGMA * SE_NORM_VAR, "normal var %.6f", var);
    CHECK(fabs(p1 - P_ABS_Z_LT_1) < N_SIGMA * SE_NORM_P1, "normal P(|z|<1) = %.6f", p1);
    CHECK(fabs(m4 - 3.0) < N_SIGMA * SE_NORM_M4, "normal 4th moment %.4f", m4);

    /* even and odd elements (cos and sin halves) are each standard normal, and uncorrelated */
    double se = 0, so = 0, see = 0, soo = 0, seo = 0;
    for (int i = 0; i + 1 < N_STAT; i += 2) {
        se += x[i];
        so += x[i + 1];
        see += (double)x[i] * x[i];
        soo += (double)x[i + 1] * x[i + 1];
        seo += (double)x[i] * x[i + 1];
    }
    double half = N_STAT / 2;
    /* half the samples: standard errors grow by sqrt(2) */
    CHECK(fabs(se / half) < N_SIGMA * SE_NORM_MEAN * sqrt(2.0) && fabs(so / half) < N_SIGMA * SE_NORM_MEAN * sqrt(2.0),
          "cos/sin halves have mean 0: %.5f %.5f", se / half, so / half);
    CHECK(fabs(see / half - 1) < N_SIGMA * SE_NORM_VAR * sqrt(2.0) && fabs(soo / half - 1) < N_SIGMA * SE_NORM_VAR * sqrt(2.0),
          "cos/sin halves have var 1: %.5f %.5f", see / half, soo / half);
    /* E[z0 z1] = 0 with standard error 1/sqrt(N/2) */
    CHECK(fabs(seo / half) < N_SIGMA * SE_NORM_MEAN * sqrt(2.0), "pair correlation %.5f", seo / half);
    free(x);
}

int main(void) {
    test_kat();
    test_layout();
    test_subranges();
    test_stats();
    return test_finish();
}
