/* The non-finite check (finite.h). */
#include "core/finite.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/metrics.h"

int64_t ltx2_first_nonfinite(const float *x, int64_t n, int64_t *count) {
    int64_t first = -1, k = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i])) {
            if (first < 0) first = i;
            k++;
        }
    if (count) *count = k;
    return first;
}

ltx2_status ltx2_check_finite(ltx2_context *ctx, ltx2_status code, const float *x, int ndim, const int64_t *shape,
                              const char *fmt, ...) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    int64_t count = 0;
    const int64_t at = ltx2_first_nonfinite(x, n, &count);
    if (at < 0) return LTX2_OK;
    char what[512], where[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ltx2_index_str(at, shape, ndim, where, sizeof where);
    return LTX2_ERROR(ctx, code, "%s: a non-finite value (%g) at %s; %lld of %lld values are not finite", what,
                      (double)x[at], where, (long long)count, (long long)n);
}
