/* XLA:CPU's f32 exp (see xla_math.h). */
#include "core/xla_math.h"

#include <math.h>

/* Cephes expf: exp(x) = 2^m * exp(r), m = floor(x log2(e) + 1/2), r = x - m ln2 in two parts, and a
 * degree-7 polynomial in r, every step a single-rounding FMA as XLA emits it. */
#define XLA_EXP_HI 88.3762626647949f
#define XLA_EXP_LO (-88.3762626647949f)
#define XLA_LOG2E 1.44269504088896341f
#define XLA_LN2_HI 0.693359375f     /* ln 2 = HI + LO, HI exact in 9 bits */
#define XLA_LN2_LO (-2.12194440e-4f)

float ltx2_xla_expf(float x) {
    static const float p[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
    if (isnan(x)) return x;
    x = fminf(fmaxf(x, XLA_EXP_LO), XLA_EXP_HI);
    const float m = floorf(fmaf(x, XLA_LOG2E, 0.5f));
    float r = fmaf(m, -XLA_LN2_HI, x);
    r = fmaf(m, -XLA_LN2_LO, r);
    const float r2 = r * r;
    float y = p[0];
    for (int i = 1; i < 6; i++) y = fmaf(y, r, p[i]);
    y = fmaf(y, r2, r) + 1.0f;
    return ldexpf(y, (int)m);
}
