/* FSDP for the parallel DiT (ZeRO-3 style, what XLA does implicitly for MaxDiffusion's trillium
 * profile): a rank stores 1/G of the `embed` dim of a block's layer tensors (G = context x fsdp);
 * right before the block runs, one all-gather over that group rebuilds this rank's whole tensor
 * shards in a scratch buffer, the block runs on them exactly as without FSDP, and the scratch is
 * freed when the block ends, so one block's gathered weights are alive at a time. The gather only
 * copies bytes (an fp8 weight's codes beside the others' floats), so the weights the block reads
 * are bitwise those a non-FSDP profile stores. */
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "model/dit_parallel_internal.h"

/* Piece j of a [rows, cols] tensor split along dim into G pieces, from src, into its place in dst
 * (elements of es bytes, on be). */
static ltx2_status place_piece(const ltx2_backend *be, ltx2_context *ctx, const fsdp_piece *p, int64_t G, int64_t j,
                               const char *src, char *dst, size_t es) {
    if (p->dim == 0) {
        const size_t n = (size_t)(p->rows / G * p->cols) * es; /* row blocks are contiguous */
        return be->copy(be, ctx, dst + (size_t)j * n, src, n);
    }
    const size_t w = (size_t)(p->cols / G) * es;
    return be->copy_2d(be, ctx, dst + (size_t)j * w, (size_t)p->cols * es, src, w, w, (size_t)p->rows);
}

/* A piece's element size: the shards' dtype, or a byte for an fp8 weight's codes. */
static size_t piece_es(const fsdp_piece *p) { return ltx2_dtype_size(p->slot->dtype); }

ltx2_status dit_par_fsdp_gather(ltx2_context *ctx, ltx2_dit_parallel *dp, int64_t i, void **scratch) {
    *scratch = NULL;
    const fsdp_block *fb = &dp->fsdp[i];
    if (fb->n == 0) return LTX2_OK;
    const ltx2_backend *be = dp->be;
    const int64_t G = dp->wg->size; /* every piece is 1/G of its tensor shard */
    /* The pieces travel packed as bytes in elements of the shards' dtype (the collective's unit): a
     * block of fp8 codes beside bf16 / f32 ones pads the pack to a whole unit. Without fp8 the count
     * is the pieces' elements, as the stats say. */
    const size_t unit = ltx2_dtype_size(dp->dtype);
    size_t per_rank = 0, whole = 0;
    for (size_t k = 0; k < fb->n; k++) {
        const size_t n = (size_t)(fb->pieces[k].rows * fb->pieces[k].cols);
        per_rank += n / (size_t)G * piece_es(&fb->pieces[k]);
        whole += n * piece_es(&fb->pieces[k]);
    }
    const size_t count = (per_rank + unit - 1) / unit, bytes = count * unit;
    void *out = NULL, *buf = NULL; /* buf: send, then the G received blocks */
    ltx2_status st = be->alloc(be, ctx, whole, &out);
    if (st == LTX2_OK) st = be->alloc(be, ctx, bytes * (size_t)(1 + G), &buf);
    if (st != LTX2_OK) {
        if (out) be->free(be, out);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel block %lld: FSDP gather of %lld weights (%s)", (long long)i,
                          (long long)fb->floats, ltx2_last_error(ctx));
    }
    char *send = buf, *recv = send + bytes;
    size_t o = 0;
    for (size_t k = 0; k < fb->n && st == LTX2_OK; k++) {
        const size_t n = (size_t)(fb->pieces[k].rows * fb->pieces[k].cols / G) * piece_es(&fb->pieces[k]);
        st = be->copy(be, ctx, send + o, fb->pieces[k].piece, n);
        o += n;
    }
    if (st == LTX2_OK)
        st = dit_par_collective(dp, ctx, DIT_PAR_WEIGHT_GATHER, dp->wg, be, send, recv, count, dp->dtype);
    size_t src_off = 0, dst_off = 0;
    for (size_t k = 0; k < fb->n && st == LTX2_OK; k++) {
        const fsdp_piece *p = &fb->pieces[k];
        const size_t es = piece_es(p);
        for (int64_t g = 0; g < G && st == LTX2_OK; g++)
            st = place_piece(be, ctx, p, G, dp->wg_piece[g], recv + (size_t)g * bytes + src_off, (char *)out + dst_off,
                             es);
        p->slot->data = (char *)out + dst_off;
        src_off += (size_t)(p->rows * p->cols / G) * es;
        dst_off += (size_t)(p->rows * p->cols) * es;
    }
    /* the copies out of buf are queued on be: they complete before buf's memory is reused */
    if (st == LTX2_OK) st = be->sync(be, ctx);
    be->free(be, buf);
    if (st != LTX2_OK) {
        for (size_t k = 0; k < fb->n; k++) fb->pieces[k].slot->data = NULL;
        be->free(be, out);
        return st;
    }
    *scratch = out;
    return LTX2_OK;
}

void dit_par_fsdp_release(ltx2_dit_parallel *dp, int64_t i, void *scratch) {
    const fsdp_block *fb = &dp->fsdp[i];
    for (size_t k = 0; k < fb->n; k++) fb->pieces[k].slot->data = NULL;
    if (scratch) dp->be->free(dp->be, scratch);
}
