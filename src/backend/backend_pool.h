/* Scratch tensors on a backend for one model run: taken in a stack discipline (mark, take...,
 * release to the mark) and kept when released, so the next take of the same byte size reuses the
 * buffer instead of allocating again. A transformer's blocks allocate the same sizes in the same
 * order, so after the first block no allocation reaches the device allocator (cudaMalloc is
 * synchronous and slow). Everything is freed with the pool. Not thread-safe: one run, one pool. */
#ifndef LTX2_BACKEND_BACKEND_POOL_H
#define LTX2_BACKEND_BACKEND_POOL_H

#include "backend/backend.h"

typedef struct ltx2_bpool ltx2_bpool;

ltx2_status ltx2_bpool_create(ltx2_context *ctx, const ltx2_backend *be, ltx2_bpool **out);
/* Frees every buffer (taken or not); NULL is ignored. */
void ltx2_bpool_free(ltx2_bpool *p);
const ltx2_backend *ltx2_bpool_backend(const ltx2_bpool *p);

/* A contiguous tensor of dt and shape on the pool's backend (contents undefined). */
ltx2_status ltx2_bpool_tensor(ltx2_context *ctx, ltx2_bpool *p, ltx2_dtype dt, int ndim, const int64_t *shape,
                              ltx2_tensor *out);
/* The same with the host data uploaded (converted from f32 when dt is not f32; i32 from int64 via
 * ltx2_bpool_rows). */
ltx2_status ltx2_bpool_upload_f32(ltx2_context *ctx, ltx2_bpool *p, const float *host, ltx2_dtype dt, int ndim,
                                  const int64_t *shape, ltx2_tensor *out);
/* An i32 [n] tensor of the row indices rows[0..n) (each must fit in int32). */
ltx2_status ltx2_bpool_rows(ltx2_context *ctx, ltx2_bpool *p, const int64_t *rows, int64_t n, ltx2_tensor *out);

/* The current depth of the take stack; ltx2_bpool_release(p, mark) returns every tensor taken
 * since to the pool (their memory may be handed out again). */
size_t ltx2_bpool_mark(const ltx2_bpool *p);
void ltx2_bpool_release(ltx2_bpool *p, size_t mark);
/* Bytes currently allocated from the backend, and the most ever. */
size_t ltx2_bpool_bytes(const ltx2_bpool *p);
size_t ltx2_bpool_peak_bytes(const ltx2_bpool *p);
/* Allocations made from the backend since creation (a pool kept across runs of one shape makes
 * none after the first). */
int64_t ltx2_bpool_allocs(const ltx2_bpool *p);

/* For a pool kept across runs (nothing may be taken): free every buffer (clear), or only those no
 * take has used since the last trim or clear (trim_unused), so what stays is what the last run
 * needed. */
void ltx2_bpool_clear(ltx2_bpool *p);
void ltx2_bpool_trim_unused(ltx2_bpool *p);

/* A pool kept across runs of one shape (the DiT's calls in a denoising loop, generation's decoding
 * steps), so the runs after a shape's first take no buffer from the backend's allocator:
 * begin_run empties it first when key (n <= LTX2_BPOOL_KEY_MAX values: what fixes the run's buffer
 * sizes) differs from the last run's, and returns whether it did; end_run releases everything and
 * frees the buffers the run did not use (all of them when !ok). Between runs it then holds one
 * run's buffers at most, and during one never two shapes' at once. */
#define LTX2_BPOOL_KEY_MAX 8
bool ltx2_bpool_begin_run(ltx2_bpool *p, const int64_t *key, int n);
void ltx2_bpool_end_run(ltx2_bpool *p, bool ok);

/* Host <-> backend helpers every model uses: t (any float dtype on the pool's backend) to host f32
 * (dst holds numel(t) floats), and host f32 into an existing tensor t (converted to t's dtype). */
ltx2_status ltx2_backend_to_host_f32(ltx2_context *ctx, const ltx2_backend *be, const ltx2_tensor *t, float *dst);
ltx2_status ltx2_backend_from_host_f32(ltx2_context *ctx, const ltx2_backend *be, const float *src, ltx2_tensor *t);

#endif
