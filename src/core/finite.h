/* "No silent NaN": the one check every input, weight and stage output goes through. A
 * non-finite value is reported with where it is (tensor, index, how many) instead of turning into
 * black frames and silence. */
#ifndef LTX2_CORE_FINITE_H
#define LTX2_CORE_FINITE_H

#include <stdint.h>

#include "core/context.h"

/* The flat index of the first NaN or infinity of x[0, n) (-1 if none) and, when count is not
 * NULL, how many there are. */
int64_t ltx2_first_nonfinite(const float *x, int64_t n, int64_t *count);

/* LTX2_OK when x (shape[ndim] elements, row-major) is finite; else code with the message
 * "<what>: a non-finite value (nan) at [i, j, ...]; K of N values are not finite", what formatted
 * from fmt. */
ltx2_status ltx2_check_finite(ltx2_context *ctx, ltx2_status code, const float *x, int ndim, const int64_t *shape,
                              const char *fmt, ...) LTX2_PRINTF(6, 7);

#endif
