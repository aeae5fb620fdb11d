/* Comparing a model's dump stages with the same-named tensors of a golden file (f32, same
 * layout as our dump): usable directly as a dump hook. Each stage must exist in the golden file,
 * have its shape, and match within rel-L2 `tol` with the same non-finite pattern; `compared`
 * counts the stages checked. Plus a copy of a golden f32 input. Header-only, like test_util.h. */
#ifndef LTX2_TEST_GOLDEN_STAGES_H
#define LTX2_TEST_GOLDEN_STAGES_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "io/safetensors.h"
#include "test_util.h"

typedef struct golden_stages {
    const ltx2_st_file *golden;
    const char *version; /* prefixes every message */
    double tol;          /* rel-L2 bound */
    int compared;
} golden_stages;

static inline void golden_stage_check(const char *name, const ltx2_tensor *t, void *user) {
    golden_stages *d = user;
    const ltx2_st_tensor *g = ltx2_st_find(d->golden, name);
    CHECK(g != NULL, "%s: our stage %s has no golden", d->version, name);
    if (!g) return;
    bool same = g->ndim == t->ndim && g->dtype == LTX2_F32;
    for (int i = 0; same && i < t->ndim; i++) same = g->shape[i] == t->shape[i];
    char a[96], b[96];
    CHECK(same, "%s %s: shape %s, reference %s", d->version, name, ltx2_shape_str(t->shape, t->ndim, a, 96),
          ltx2_shape_str(g->shape, g->ndim, b, 96));
    if (!same) return;
    const size_t n = (size_t)ltx2_tensor_numel(t);
    float *ref = malloc((n ? n : 1) * sizeof(float));
    if (!ref) return;
    memcpy(ref, g->data, n * sizeof(float)); /* the mapping may be unaligned */
    ltx2_tensor rv = ltx2_tensor_make(ref, LTX2_F32, t->ndim, t->shape);
    ltx2_diff_stats s;
    ltx2_diff(&rv, t, 0.0, 0.0, &s);
    CHECK(s.rel_l2 <= d->tol && s.n_nonfinite_mismatch == 0, "%s %s: rel-L2 %.3g (max abs %.3g, ref max %.3g)",
          d->version, name, s.rel_l2, s.max_abs, s.max_abs_ref);
    if (getenv("LTX2_TEST_VERBOSE")) printf("%s %-40s rel-L2 %.3g\n", d->version, name, s.rel_l2);
    d->compared++;
    free(ref);
}

/* A malloc'd copy of golden f32 tensor `name` of at most 4 dims (shape and ndim filled), or NULL. */
static inline float *golden_stage_copy(const ltx2_st_file *g, const char *name, int64_t shape[4], int *ndim) {
    const ltx2_st_tensor *t = ltx2_st_find(g, name);
    if (!t || t->dtype != LTX2_F32 || t->ndim > 4) return NULL;
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= (size_t)(shape[i] = t->shape[i]);
    *ndim = t->ndim;
    float *p = malloc((n ? n : 1) * sizeof(float));
    if (p) memcpy(p, t->data, n * sizeof(float));
    return p;
}

#endif
