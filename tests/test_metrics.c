/* ltx2_diff: the metrics every comparison in ltx2c reports, checked on hand-computed cases. */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "core/metrics.h"
#include "test_util.h"

/* Metrics are computed in double from f32 inputs: allow only double rounding noise. */
#define METRICS_EPS 1e-12

static void test_identical(void) {
    float a[5] = {1, -2, 3, 0, 5};
    int64_t shape[1] = {5};
    ltx2_tensor ta = ltx2_tensor_make(a, LTX2_F32, 1, shape);
    ltx2_diff_stats st;
    ltx2_diff(&ta, &ta, 0, 0, &st);
    CHECK(st.n == 5 && st.n_within == 5, "n=%lld within=%lld", (long long)st.n, (long long)st.n_within);
    CHECK(st.max_abs == 0 && st.rel_l2 == 0, "max_abs=%g rel_l2=%g", st.max_abs, st.rel_l2);
    CHECK(fabs(st.cosine - 1) < METRICS_EPS, "cosine=%.17g", st.cosine);
}

static void test_planted(void) {
    enum { R = 3, C = 7 };
    float a[R * C], b[R * C];
    for (int i = 0; i < R * C; i++) a[i] = b[i] = (float)(i % 5) - 1.5f;
    b[2 * C + 5] += 0.5f;
    int64_t shape[2] = {R, C};
    ltx2_tensor ta = ltx2_tensor_make(a, LTX2_F32, 2, shape), tb = ltx2_tensor_make(b, LTX2_F32, 2, shape);
    ltx2_diff_stats st;
    ltx2_diff(&ta, &tb, 1e-5, 1e-4, &st);
    CHECK(st.worst_index == 2 * C + 5, "worst index %lld", (long long)st.worst_index);
    CHECK(st.n_within == R * C - 1, "within %lld", (long long)st.n_within);
    CHECK(fabs(st.max_abs - 0.5) < METRICS_EPS, "max_abs %g", st.max_abs);
    CHECK(fabs(st.mean_abs - 0.5 / (R * C)) < METRICS_EPS, "mean_abs %g", st.mean_abs);
    double norm = 0;
    for (int i = 0; i < R * C; i++) norm += (double)a[i] * a[i];
    CHECK(fabs(st.rel_l2 - 0.5 / sqrt(norm)) < METRICS_EPS, "rel_l2 %g", st.rel_l2);
    char buf[64];
    CHECK(strcmp(ltx2_index_str(st.worst_index, shape, 2, buf, sizeof(buf)), "[2, 5]") == 0, "index %s", buf);
}

static void test_nonfinite_and_dtypes(void) {
    float a[4] = {NAN, INFINITY, 1, 2};
    double b[4] = {NAN, INFINITY, 1, NAN};
    int64_t shape[1] = {4};
    ltx2_tensor ta = ltx2_tensor_make(a, LTX2_F32, 1, shape), tb = ltx2_tensor_make(b, LTX2_F64, 1, shape);
    ltx2_diff_stats st;
    ltx2_diff(&ta, &tb, 0, 0, &st);
    CHECK(st.n_within == 3, "NaN==NaN and inf==inf count as within: %lld", (long long)st.n_within);
    CHECK(st.n_nonfinite_mismatch == 1 && st.worst_index == 3, "mismatch %lld at %lld",
          (long long)st.n_nonfinite_mismatch, (long long)st.worst_index);
}

/* Large enough to span many OpenMP chunks: the worst element must be the first of equal ones. */
static void test_large_deterministic(void) {
    enum { N = 1000003 };
    static float a[N], b[N];
    for (int i = 0; i < N; i++) a[i] = b[i] = (float)(i % 97) * 0.01f;
    b[123457] += 1.0f;
    b[900001] += 1.0f; /* same |diff| and same tolerance (a equal at both): first one wins */
    a[900001] = a[123457];
    b[900001] = b[123457];
    int64_t shape[1] = {N};
    ltx2_tensor ta = ltx2_tensor_make(a, LTX2_F32, 1, shape), tb = ltx2_tensor_make(b, LTX2_F32, 1, shape);
    ltx2_diff_stats st;
    ltx2_diff(&ta, &tb, 1e-6, 0, &st);
    CHECK(st.worst_index == 123457, "worst %lld", (long long)st.worst_index);
    CHECK(st.n_within == N - 2, "within %lld", (long long)st.n_within);
}

/* bf16 ulps: the spacing at 1 is 2^-7, at 3 it is 2^-6, below 2^-126 and at 0 it is 2^-133; the
 * --bf16-ulps rule counts in those units. */
static void test_bf16_ulps(void) {
    CHECK(ltx2_bf16_ulp(1.0) == 0x1p-7 && ltx2_bf16_ulp(-1.5) == 0x1p-7 && ltx2_bf16_ulp(3.0) == 0x1p-6 &&
              ltx2_bf16_ulp(0.75) == 0x1p-8 && ltx2_bf16_ulp(0.0) == 0x1p-133 && ltx2_bf16_ulp(0x1p-130) == 0x1p-133 &&
              isnan(ltx2_bf16_ulp(INFINITY)),
          "bf16 ulps: 1 -> %g, 3 -> %g, 0 -> %g", ltx2_bf16_ulp(1.0), ltx2_bf16_ulp(3.0), ltx2_bf16_ulp(0.0));
    float a[4] = {1.0f, 1.0f, 3.0f, -0.5f}, b[4] = {1.0f, 1.0f + 0x1p-7f, 3.0f + 3 * 0x1p-6f, -0.5f};
    int64_t shape[1] = {4};
    ltx2_tensor ta = ltx2_tensor_make(a, LTX2_F32, 1, shape), tb = ltx2_tensor_make(b, LTX2_F32, 1, shape);
    ltx2_diff_stats st;
    const ltx2_diff_rule one = {.bf16_ulps = 1.0}, three = {.bf16_ulps = 3.0};
    ltx2_diff_by(&ta, &tb, &one, &st);
    CHECK(st.max_bf16_ulps == 3.0 && st.n_over_bf16_ulp == 1 && st.n_within == 3 && st.worst_index == 2,
          "1-ulp rule: max %g ulps, %lld over one, %lld within, worst %lld", st.max_bf16_ulps,
          (long long)st.n_over_bf16_ulp, (long long)st.n_within, (long long)st.worst_index);
    ltx2_diff_by(&ta, &tb, &three, &st);
    CHECK(st.n_within == 4, "3-ulp rule: %lld within", (long long)st.n_within);
}

int main(void) {
    test_identical();
    test_bf16_ulps();
    test_planted();
    test_nonfinite_and_dtypes();
    test_large_deterministic();
    return test_finish();
}
