/* Single-pass error metrics in double precision, OpenMP over chunks with a deterministic merge. */
#include "core/metrics.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"

/* Work per chunk: big enough to amortise the merge, small enough to balance 2..64 threads. */
#define METRICS_CHUNK 65536

typedef struct partial {
    double max_abs, sum_abs, sum_rr, sum_oo, sum_ro, sum_dd, max_ref, worst_excess, max_ulps;
    int64_t within, nonfinite, worst, over_ulp;
    double worst_ref, worst_out;
} partial;

static void merge(partial *into, const partial *p) {
    if (p->max_abs > into->max_abs) into->max_abs = p->max_abs;
    if (p->max_ref > into->max_ref) into->max_ref = p->max_ref;
    into->sum_abs += p->sum_abs;
    into->sum_rr += p->sum_rr;
    into->sum_oo += p->sum_oo;
    into->sum_ro += p->sum_ro;
    into->sum_dd += p->sum_dd;
    into->within += p->within;
    into->nonfinite += p->nonfinite;
    if (p->max_ulps > into->max_ulps) into->max_ulps = p->max_ulps;
    into->over_ulp += p->over_ulp;
    /* Strictly greater keeps the first (lowest-index) worst element, whatever the thread count. */
    if (p->worst >= 0 && (into->worst < 0 || p->worst_excess > into->worst_excess)) {
        into->worst_excess = p->worst_excess;
        into->worst = p->worst;
        into->worst_ref = p->worst_ref;
        into->worst_out = p->worst_out;
    }
}

/* A pair's bf16 ulp: the larger magnitude's, so a value against 0 counts in the value's ulps, not 0's. */
static double pair_ulp(double ref, double out) {
    return ltx2_bf16_ulp(fabs(ref) > fabs(out) ? ref : out);
}

static double tolerance_of(const ltx2_diff_rule *rule, double ref, double ulp) {
    return rule->bf16_ulps > 0 ? rule->bf16_ulps * ulp : rule->atol + rule->rtol * fabs(ref);
}

double ltx2_diff_tolerance(const ltx2_diff_rule *rule, double ref, double out) {
    return tolerance_of(rule, ref, pair_ulp(ref, out));
}

static void scan(const ltx2_tensor *ref, const ltx2_tensor *out, const ltx2_diff_rule *rule, int64_t lo, int64_t hi,
                 partial *p) {
    memset(p, 0, sizeof(*p));
    p->worst = -1;
    p->worst_excess = -INFINITY;
    for (int64_t i = lo; i < hi; i++) {
        double r = ltx2_load_as_f64(ref->data, ref->dtype, (size_t)i);
        double o = ltx2_load_as_f64(out->data, out->dtype, (size_t)i);
        double excess; /* how far past the tolerance this element is (<= 0 means within) */
        if (!isfinite(r) || !isfinite(o)) {
            bool same = (isnan(r) && isnan(o)) || r == o;
            if (same) {
                p->within++;
                excess = -INFINITY;
            } else {
                p->nonfinite++;
                excess = INFINITY;
            }
        } else {
            double d = fabs(r - o);
            const double ulp = pair_ulp(r, o), tol = tolerance_of(rule, r, ulp), ulps = d / ulp;
            if (ulps > p->max_ulps) p->max_ulps = ulps;
            p->over_ulp += ulps > 1.0;
            if (d > p->max_abs) p->max_abs = d;
            if (fabs(r) > p->max_ref) p->max_ref = fabs(r);
            p->sum_abs += d;
            p->sum_rr += r * r;
            p->sum_oo += o * o;
            p->sum_ro += r * o;
            p->sum_dd += d * d;
            if (d <= tol) p->within++;
            excess = d - tol;
        }
        if (p->worst < 0 || excess > p->worst_excess) {
            p->worst_excess = excess;
            p->worst = i;
            p->worst_ref = r;
            p->worst_out = o;
        }
    }
}

void ltx2_diff(const ltx2_tensor *ref, const ltx2_tensor *out, double atol, double rtol,
               ltx2_diff_stats *st) {
    const ltx2_diff_rule rule = {.atol = atol, .rtol = rtol};
    ltx2_diff_by(ref, out, &rule, st);
}

void ltx2_diff_by(const ltx2_tensor *ref, const ltx2_tensor *out, const ltx2_diff_rule *rule, ltx2_diff_stats *st) {
    memset(st, 0, sizeof(*st));
    int64_t n = ltx2_tensor_numel(ref);
    st->n = n;
    st->worst_index = -1;
    partial total;
    memset(&total, 0, sizeof(total));
    total.worst = -1;
    total.worst_excess = -INFINITY;
    int64_t n_chunks = (n + METRICS_CHUNK - 1) / METRICS_CHUNK;
#pragma omp parallel
    {
        partial mine;
        memset(&mine, 0, sizeof(mine));
        mine.worst = -1;
        mine.worst_excess = -INFINITY;
#pragma omp for schedule(static)
        for (int64_t c = 0; c < n_chunks; c++) {
            partial p;
            int64_t lo = c * METRICS_CHUNK, hi = lo + METRICS_CHUNK < n ? lo + METRICS_CHUNK : n;
            scan(ref, out, rule, lo, hi, &p);
            merge(&mine, &p);
        }
        /* Static schedule gives each thread ascending chunks; merge threads in order. */
#pragma omp for ordered schedule(static, 1)
        for (int t = 0; t < omp_get_num_threads(); t++) {
#pragma omp ordered
            merge(&total, &mine);
        }
    }
    st->max_abs = total.max_abs;
    st->mean_abs = n ? total.sum_abs / (double)n : 0.0;
    st->max_abs_ref = total.max_ref;
    double nr = sqrt(total.sum_rr), no = sqrt(total.sum_oo);
    if (nr > 0) st->rel_l2 = sqrt(total.sum_dd) / nr;
    else st->rel_l2 = total.sum_dd > 0 ? INFINITY : 0.0;
    if (nr > 0 && no > 0) st->cosine = total.sum_ro / (nr * no);
    else st->cosine = (nr == 0 && no == 0) ? 1.0 : 0.0;
    st->n_within = total.within;
    st->n_nonfinite_mismatch = total.nonfinite;
    st->worst_index = total.worst;
    st->worst_ref = total.worst_ref;
    st->worst_out = total.worst_out;
    st->max_bf16_ulps = total.max_ulps;
    st->n_over_bf16_ulp = total.over_ulp;
}

const char *ltx2_index_str(int64_t flat, const int64_t *shape, int ndim, char *buf, size_t cap) {
    int64_t idx[LTX2_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t s = shape[d] > 0 ? shape[d] : 1;
        idx[d] = flat % s;
        flat /= s;
    }
    size_t used = 0;
    used += (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < ndim && used < cap; d++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%lld", d ? ", " : "", (long long)idx[d]);
    if (used < cap) snprintf(buf + used, cap - used, "]");
    return buf;
}
