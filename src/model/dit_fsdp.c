/* FSDP for the parallel DiT (ZeRO-3 style, what XLA does implicitly for MaxDiffusion's trillium
 * profile): a rank stores 1/G of the `embed` dim of a block's layer tensors (G = context x fsdp);
 * right before the block runs, one all-gather over that group rebuilds this rank's whole tensor
 * shards in a scratch buffer, the block runs on them exactly as without FSDP, and the scratch is
 * freed when the block ends, so one block's gathered weights are alive at a time. The gather only
 * copies floats, so the weights the block reads are bitwise those a non-FSDP profile stores. */
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "model/dit_parallel_internal.h"

/* Piece j of a [rows, cols] tensor split along dim into G pieces, from src, into its place in dst. */
static void place_piece(const fsdp_piece *p, int64_t G, int64_t j, const float *src, float *dst) {
    if (p->dim == 0) {
        const int64_t n = p->rows / G * p->cols; /* row blocks are contiguous */
        memcpy(dst + j * n, src, (size_t)n * sizeof(float));
        return;
    }
    const int64_t w = p->cols / G;
    for (int64_t r = 0; r < p->rows; r++) memcpy(dst + r * p->cols + j * w, src + r * w, (size_t)w * sizeof(float));
}

ltx2_status dit_par_fsdp_gather(ltx2_context *ctx, ltx2_dit_parallel *dp, int64_t i, float **scratch) {
    *scratch = NULL;
    const fsdp_block *fb = &dp->fsdp[i];
    if (fb->n == 0) return LTX2_OK;
    const int64_t G = dp->wg->size, count = fb->floats / G; /* every piece is 1/G of its tensor */
    float *out = malloc((size_t)fb->floats * sizeof(float));
    float *buf = malloc((size_t)(count + G * count) * sizeof(float)); /* send, then the G received blocks */
    if (!out || !buf) {
        free(out);
        free(buf);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "dit parallel block %lld: FSDP gather of %lld floats", (long long)i,
                          (long long)fb->floats);
    }
    float *send = buf, *recv = buf + count;
    int64_t o = 0;
    for (size_t k = 0; k < fb->n; k++) {
        const int64_t n = fb->pieces[k].rows * fb->pieces[k].cols / G;
        memcpy(send + o, fb->pieces[k].piece, (size_t)n * sizeof(float));
        o += n;
    }
    dp->stats.n_weight_gather++;
    dp->stats.weight_sent_elems += count * (G - 1);
    dp->stats.sent_elems += count * (G - 1);
    ltx2_status st = ltx2_comm_all_gather(dp->wg, ctx, send, recv, (size_t)count, LTX2_F32);
    if (st == LTX2_OK) {
        int64_t src_off = 0, dst_off = 0;
        for (size_t k = 0; k < fb->n; k++) {
            const fsdp_piece *p = &fb->pieces[k];
            for (int64_t g = 0; g < G; g++)
                place_piece(p, G, dp->wg_piece[g], recv + g * count + src_off, out + dst_off);
            p->slot->data = out + dst_off;
            src_off += p->rows * p->cols / G;
            dst_off += p->rows * p->cols;
        }
        *scratch = out;
    } else {
        free(out);
    }
    free(buf);
    return st;
}

void dit_par_fsdp_release(ltx2_dit_parallel *dp, int64_t i, float *scratch) {
    const fsdp_block *fb = &dp->fsdp[i];
    for (size_t k = 0; k < fb->n; k++) fb->pieces[k].slot->data = NULL;
    free(scratch);
}
