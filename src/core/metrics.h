/* Error metrics between a reference tensor and another: what `ltx2 compare`, the op harness and the
 * golden tests all report. Pass rule (DESIGN.md): |ref - out| <= atol + rtol * |ref|. */
#ifndef LTX2_CORE_METRICS_H
#define LTX2_CORE_METRICS_H

#include <stdint.h>

#include "ltx2/tensor.h"

typedef struct ltx2_diff_stats {
    int64_t n;              /* elements compared */
    double max_abs;         /* max |ref - out| over finite pairs */
    double mean_abs;
    double rel_l2;          /* ||ref - out|| / ||ref|| (0 when both are zero; inf when only ref is) */
    double cosine;          /* <ref,out> / (||ref|| ||out||); 1 when both are all zero */
    double max_abs_ref;     /* max |ref|, for scale */
    int64_t n_within;       /* elements passing the tolerance rule */
    int64_t n_nonfinite_mismatch; /* NaN/Inf in one but not the same in the other */
    int64_t worst_index;    /* flat index of the largest violation (or largest |diff| if none) */
    double worst_ref, worst_out;
    /* |ref - out| in bf16 ulps (ltx2_bf16_ulp) of the larger of |ref| and |out|: the largest, and how many finite pairs are
     * more than one apart. Two bf16 runs that round the same values the same way differ by at most
     * one ulp where an f32 difference tipped a rounding; a different rule moves most values more. */
    double max_bf16_ulps;
    int64_t n_over_bf16_ulp;
} ltx2_diff_stats;

/* The tolerance rule: |ref - out| <= atol + rtol * |ref|, or with bf16_ulps > 0, |ref - out| <=
 * bf16_ulps bf16 ulps of the larger of |ref| and |out| (atol and rtol then unused). */
typedef struct ltx2_diff_rule {
    double atol, rtol;
    double bf16_ulps;
} ltx2_diff_rule;

/* ltx2_diff under a rule. */
void ltx2_diff_by(const ltx2_tensor *ref, const ltx2_tensor *out, const ltx2_diff_rule *rule, ltx2_diff_stats *st);
/* The tolerance of one pair (reference, output) under a rule. */
double ltx2_diff_tolerance(const ltx2_diff_rule *rule, double ref, double out);

/* ref and out: contiguous CPU tensors of any dtypes with the same number of elements. NaN == NaN
 * and equal infinities count as matching (within); any other non-finite pair is a violation. */
void ltx2_diff(const ltx2_tensor *ref, const ltx2_tensor *out, double atol, double rtol,
               ltx2_diff_stats *st);

/* Flat index -> "[i, j, k]" for the given shape. */
const char *ltx2_index_str(int64_t flat, const int64_t *shape, int ndim, char *buf, size_t cap);

#endif
