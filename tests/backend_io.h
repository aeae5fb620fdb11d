/* Host <-> backend tensors for the op tests (test_ops_fused.c and the fused norms' emulated-kernel
 * tests): seeded inputs, host f32 data put on a backend in any float dtype, results brought back as
 * f32, and the count of values beyond a tolerance. */
#ifndef LTX2_TESTS_BACKEND_IO_H
#define LTX2_TESTS_BACKEND_IO_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "backend/backend_pool.h"
#include "core/dtype.h"
#include "core/rng.h"

/* n normals of (seed, stream) as offset + scale * x, rounded to bf16 values when bf16. */
static inline float *bio_gen(uint64_t seed, uint64_t stream, int64_t n, float scale, float offset, bool bf16) {
    float *p = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!p) return NULL;
    ltx2_rng_normal(seed, stream, 0, (size_t)n, p);
    for (int64_t i = 0; i < n; i++) {
        p[i] = offset + scale * p[i];
        if (bf16) p[i] = ltx2_round_bf16(p[i]);
    }
    return p;
}

/* Host f32 data as a new tensor of dtype dt on be (free with be->free; data NULL when out of memory). */
static inline ltx2_tensor bio_put(ltx2_context *ctx, const ltx2_backend *be, const float *h, ltx2_dtype dt, int ndim,
                                  const int64_t *shape) {
    ltx2_tensor t = ltx2_tensor_make(NULL, dt, ndim, shape);
    t.device = be->device;
    if (be->alloc(be, ctx, ltx2_tensor_nbytes(&t), &t.data) == LTX2_OK) ltx2_backend_from_host_f32(ctx, be, h, &t);
    return t;
}

/* t as a new host f32 array (free()), once the backend's queued work is done. */
static inline float *bio_get(ltx2_context *ctx, const ltx2_backend *be, const ltx2_tensor *t) {
    const int64_t n = ltx2_tensor_numel(t);
    float *out = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (out) ltx2_backend_to_host_f32(ctx, be, t, out);
    return out;
}

/* How many a[i] lie beyond atol + rtol |ref[i]| (NaN counts); the largest error into *maxe. */
static inline int64_t bio_n_far(const float *a, const float *ref, int64_t n, double atol, double rtol, double *maxe) {
    int64_t bad = 0;
    *maxe = 0;
    for (int64_t i = 0; i < n; i++) {
        const double e = fabs((double)a[i] - ref[i]);
        if (!(e <= atol + rtol * fabs(ref[i]))) bad++;
        if (e > *maxe || isnan(e)) *maxe = e;
    }
    return bad;
}

#endif
