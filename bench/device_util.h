/* Device-side helpers the GPU benches share: seeded random buffers uploaded in any dtype, device
 * tensor views, and the measured tensor-core ceiling (one large bf16 cuBLASLt GEMM) that rows are
 * reported against. Linked into every bench with bench.c. */
#ifndef LTX2_BENCH_DEVICE_UTIL_H
#define LTX2_BENCH_DEVICE_UTIL_H

#include <stdint.h>

#include "backend/backend.h"
#include "bench.h"

/* GEMM size of the ceiling measurement: large enough to run at full tensor-core rate. */
#define BENCH_CEIL_GEMM_DIM 8192

/* n Philox normals (seed, stream) times scale, converted to dt and uploaded to be; NULL on any
 * failure (nothing left allocated). */
void *bench_dev_randn(const ltx2_backend *be, ltx2_context *ctx, ltx2_dtype dt, int64_t n, uint64_t seed,
                      uint64_t stream, float scale);
/* A tensor view of device memory p. */
ltx2_tensor bench_dev_view(void *p, ltx2_dtype dt, int nd, const int64_t *shape);
/* FLOP/s of a bf16 cuBLASLt GEMM of BENCH_CEIL_GEMM_DIM^3, timed as `inner` back-to-back calls per
 * sample; 0 on failure. */
double bench_gemm_ceiling(const bench_opts *o, const ltx2_backend *be, ltx2_context *ctx, int inner);

#endif
