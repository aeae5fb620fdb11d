/* Device-side helpers shared by the GPU benches (see device_util.h). */
#include "device_util.h"

#include "lt_baseline.h"

#include <stdlib.h>

#include "core/dtype.h"
#include "core/rng.h"

void *bench_dev_randn(const ltx2_backend *be, ltx2_context *ctx, ltx2_dtype dt, int64_t n, uint64_t seed,
                      uint64_t stream, float scale) {
    const size_t bytes = (size_t)n * ltx2_dtype_size(dt);
    float *h = malloc((size_t)(n ? n : 1) * sizeof(float));
    void *hc = malloc(bytes ? bytes : 1);
    void *d = NULL;
    if (h && hc) {
        ltx2_rng_normal(seed, stream, 0, (size_t)n, h);
        for (int64_t i = 0; i < n; i++) h[i] *= scale;
        if (ltx2_convert(ctx, hc, dt, h, LTX2_F32, (size_t)n) != LTX2_OK || be->alloc(be, ctx, bytes, &d) != LTX2_OK ||
            be->upload(be, ctx, d, hc, bytes) != LTX2_OK) {
            be->free(be, d);
            d = NULL;
        }
    }
    free(h);
    free(hc);
    return d;
}

ltx2_tensor bench_dev_view(void *p, ltx2_dtype dt, int nd, const int64_t *shape) {
    ltx2_tensor t = ltx2_tensor_make(p, dt, nd, shape);
    t.device = LTX2_DEVICE_CUDA;
    return t;
}

typedef struct ceil_job {
    const ltx2_backend *be;
    bench_lt *lt;
    ltx2_context *ctx;
    void *x, *w, *y;
    int inner;
    ltx2_status st;
} ceil_job;

static void run_ceiling(void *u) {
    ceil_job *j = u;
    if (j->st == LTX2_OK)
        j->st = bench_lt_gemm(j->lt, j->ctx, LTX2_BF16, BENCH_CEIL_GEMM_DIM, BENCH_CEIL_GEMM_DIM, BENCH_CEIL_GEMM_DIM,
                              j->x, j->w, j->y, j->inner);
    if (j->st == LTX2_OK) j->st = j->be->sync(j->be, j->ctx);
}

double bench_gemm_ceiling(const bench_opts *o, const ltx2_backend *be, ltx2_context *ctx, int inner) {
    const int64_t n = (int64_t)BENCH_CEIL_GEMM_DIM * BENCH_CEIL_GEMM_DIM;
    ceil_job j = {be, NULL, ctx, bench_dev_randn(be, ctx, LTX2_BF16, n, 7, 1, 1.0f),
                  bench_dev_randn(be, ctx, LTX2_BF16, n, 7, 2, 1.0f), bench_dev_randn(be, ctx, LTX2_BF16, n, 7, 3, 1.0f),
                  inner, LTX2_OK};
    double rate = 0.0;
    if (j.x && j.w && j.y && bench_lt_create(be, ctx, &j.lt) == LTX2_OK) {
        const bench_stats st = bench_measure(o, run_ceiling, &j, inner);
        if (j.st == LTX2_OK) rate = 2.0 * (double)n * BENCH_CEIL_GEMM_DIM / st.median_s;
    }
    bench_lt_free(j.lt);
    be->free(be, j.x);
    be->free(be, j.w);
    be->free(be, j.y);
    return rate;
}
