/* Shared by test_sampler.c and test_guidance.c: read cases of tests/golden/data/sampler.safetensors
 * (written by tests/golden/gen_sampler_goldens.py) as aligned f32/f64 buffers. */
#ifndef LTX2_TEST_SAMPLER_GOLDEN_UTIL_H
#define LTX2_TEST_SAMPLER_GOLDEN_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "io/safetensors.h"

/* Case tensor "<kind>.<i>.<what>" converted to `dt`; NULL when absent. Caller frees. */
static void *sg_load(ltx2_context *ctx, const ltx2_st_file *f, const char *kind, int i, const char *what,
                     ltx2_dtype dt, int64_t *numel) {
    char name[128];
    snprintf(name, sizeof name, "%s.%d.%s", kind, i, what);
    const ltx2_st_tensor *t = ltx2_st_find(f, name);
    if (!t) return NULL;
    ltx2_tensor v = ltx2_st_view(t);
    int64_t n = ltx2_tensor_numel(&v);
    void *buf = malloc((size_t)(n ? n : 1) * ltx2_dtype_size(dt));
    if (!buf || ltx2_convert(ctx, buf, dt, t->data, t->dtype, (size_t)n) != LTX2_OK) {
        free(buf);
        return NULL;
    }
    if (numel) *numel = n;
    return buf;
}

/* Largest |a-b| / max(1, |b|) over n values (NaN counts as infinite). */
static double sg_max_rel(const float *a, const float *b, int64_t n) {
    double w = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        double s = fabs((double)b[i]) > 1.0 ? fabs((double)b[i]) : 1.0;
        if (isnan(d)) return INFINITY;
        if (d / s > w) w = d / s;
    }
    return w;
}

#endif
