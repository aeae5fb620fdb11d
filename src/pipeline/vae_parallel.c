/* Video-VAE decode over ranks (see vae_parallel.h): batch chunks or round-robin tiles, gathered by
 * broadcasts from each producing rank and blended by tiling.c's own stream, so the frames are the
 * single-rank ones bit for bit. */
#include "pipeline/vae_parallel.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"

static int64_t numel5(const int64_t s[5]) { return s[0] * s[1] * s[2] * s[3] * s[4]; }

static bool is_tiled(const ltx2_vae_tiling *t) { return t && (t->tile_px > 0 || t->tile_frames > 0); }

/* Samples [*b0, *b1) of rank j: balanced contiguous chunks, or all on rank 0. */
static void sample_range(int64_t B, int P, int j, bool all_on_root, int64_t *b0, int64_t *b1) {
    if (all_on_root) {
        *b0 = 0;
        *b1 = j == 0 ? B : 0;
        return;
    }
    *b0 = B * j / P;
    *b1 = B * (j + 1) / P;
}

/* Batch mode into video (contiguous [B, F, H, W, C]). */
static ltx2_status decode_batch(ltx2_context *ctx, ltx2_comm *comm, const ltx2_video_decoder *dec,
                                const ltx2_tensor *latent, const ltx2_vae_tiling *tiling, bool all_on_root,
                                float *video, const int64_t vs[5], ltx2_vae_parallel_stats *stats) {
    const int64_t B = latent->shape[0];
    const int64_t lat_per = numel5(latent->shape) / B, vid_per = numel5(vs) / B;
    int64_t b0, b1;
    sample_range(B, comm->size, comm->rank, all_on_root, &b0, &b1);
    ltx2_status st = LTX2_OK;
    if (b1 > b0) {
        const int64_t ls[5] = {b1 - b0, latent->shape[1], latent->shape[2], latent->shape[3], latent->shape[4]};
        const int64_t os[5] = {b1 - b0, vs[1], vs[2], vs[3], vs[4]};
        ltx2_tensor lt = ltx2_tensor_make((float *)latent->data + b0 * lat_per, LTX2_F32, 5, ls);
        ltx2_tensor vt = ltx2_tensor_make(video + b0 * vid_per, LTX2_F32, 5, os);
        ltx2_vae_tiling_stats ts = {0};
        st = is_tiled(tiling) ? ltx2_vae_tiled_decode(ctx, dec, &lt, tiling, &vt, &ts)
                              : ltx2_video_decoder_decode(ctx, dec, &lt, &vt, NULL, NULL);
        if (st != LTX2_OK) {
            ltx2_error_prefix(ctx, "parallel VAE decode, rank %d, samples [%lld, %lld)", comm->rank, (long long)b0,
                              (long long)b1);
            return st;
        }
        if (stats) stats->n_tiles = is_tiled(tiling) ? ts.n_tiles : 1;
    }
    if (stats) stats->decoded_here = b1 - b0;
    for (int j = 0; j < comm->size && st == LTX2_OK; j++) {
        int64_t s0, s1;
        sample_range(B, comm->size, j, all_on_root, &s0, &s1);
        if (s1 > s0) {
            float *p = video + s0 * vid_per;
            st = ltx2_comm_broadcast(comm, ctx, p, p, (size_t)((s1 - s0) * vid_per), LTX2_F32, j);
        }
    }
    return st;
}

/* Tile mode: the tile source of tiling.c's stream. */
typedef struct round_src {
    ltx2_comm *comm;
    const ltx2_video_decoder *dec;
    const ltx2_tensor *latent;
    const ltx2_vae_tiling *tiling;
    const ltx2_vae_tile_info *tiles;
    int64_t n_tiles;
    int64_t r0;   /* first tile of the round held in slot[], -1 before the first */
    float **slot; /* [P] buffers of the largest tile */
    int64_t decoded;
} round_src;

static ltx2_status round_source(ltx2_context *ctx, const ltx2_vae_tile_info *info, float *out, void *user) {
    round_src *s = user;
    const int P = s->comm->size, me = s->comm->rank;
    const int64_t k = info->index, r0 = k - k % P;
    if (s->r0 != r0) {
        s->r0 = -1; /* until the round is complete */
        const int64_t mine = r0 + me;
        if (mine < s->n_tiles) {
            ltx2_status st = ltx2_vae_tiled_decode_one(ctx, s->dec, s->latent, s->tiling, &s->tiles[mine], s->slot[me]);
            if (st != LTX2_OK) return ltx2_error_prefix(ctx, "parallel VAE decode, rank %d, tile %lld", me, (long long)mine);
            s->decoded++;
        }
        for (int j = 0; j < P && r0 + j < s->n_tiles; j++)
            LTX2_TRY(ltx2_comm_broadcast(s->comm, ctx, s->slot[j], s->slot[j], (size_t)numel5(s->tiles[r0 + j].out_shape),
                                         LTX2_F32, j));
        s->r0 = r0;
    }
    memcpy(out, s->slot[k - r0], (size_t)numel5(info->out_shape) * sizeof(float));
    return LTX2_OK;
}

static ltx2_status decode_tiles(ltx2_context *ctx, ltx2_comm *comm, const ltx2_video_decoder *dec,
                                const ltx2_tensor *latent, const ltx2_vae_tiling *tiling, ltx2_vae_frames_fn emit,
                                void *user, ltx2_vae_parallel_stats *stats) {
    round_src s = {.comm = comm, .dec = dec, .latent = latent, .tiling = tiling, .r0 = -1};
    ltx2_vae_tile_info *tiles = NULL;
    LTX2_TRY(ltx2_vae_tiled_decode_tiles(ctx, dec, latent->shape, tiling, &tiles, &s.n_tiles));
    s.tiles = tiles;
    int64_t biggest = 1;
    for (int64_t k = 0; k < s.n_tiles; k++)
        if (numel5(tiles[k].out_shape) > biggest) biggest = numel5(tiles[k].out_shape);
    ltx2_status st = LTX2_OK;
    s.slot = calloc((size_t)comm->size, sizeof(float *));
    for (int j = 0; s.slot && j < comm->size && st == LTX2_OK; j++)
        if (!(s.slot[j] = malloc((size_t)biggest * sizeof(float))))
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "parallel VAE decode: %d tile buffers of %lld floats", comm->size,
                            (long long)biggest);
    if (!s.slot) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "parallel VAE decode: tile buffers");
    if (st == LTX2_OK)
        st = ltx2_vae_tiled_decode_stream_from(ctx, dec, latent->shape, tiling, round_source, &s, emit, user, NULL);
    if (stats) {
        stats->n_tiles = s.n_tiles;
        stats->decoded_here = s.decoded;
    }
    for (int j = 0; s.slot && j < comm->size; j++) free(s.slot[j]);
    free(s.slot);
    free(tiles);
    return st;
}

/* Checks and the mode that runs. */
static ltx2_status prepare(ltx2_context *ctx, ltx2_comm *comm, const ltx2_video_decoder *dec, const ltx2_tensor *latent,
                           const ltx2_vae_tiling *tiling, ltx2_vae_parallel_mode mode, int64_t vs[5],
                           ltx2_vae_parallel_mode *run, bool *all_on_root) {
    if (!comm || !dec || !latent || !latent->data || latent->dtype != LTX2_F32 || latent->device != LTX2_DEVICE_CPU ||
        latent->ndim != 5 || !ltx2_tensor_is_contiguous(latent))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "parallel VAE decode: needs a communicator, a decoder and a contiguous f32 CPU NDHWC latent");
    LTX2_TRY(ltx2_video_decoder_out_shape(ctx, dec, latent->shape, vs));
    const bool tiled = is_tiled(tiling);
    if (tiled) LTX2_TRY(ltx2_vae_tiled_decode_plan(ctx, dec, latent->shape, tiling, NULL));
    /* A noise-drawing decoder draws over the whole batch per call: splitting the batch changes draws. */
    const bool batch_ok = latent->shape[0] > 1 && !dec->needs_noise;
    *all_on_root = false;
    switch (mode) {
    case LTX2_VAE_PAR_BATCH:
        if (!batch_ok)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel VAE decode: batch split needs B > 1 (got %lld) and a "
                              "decoder without noise draws (this one %s)", (long long)latent->shape[0],
                              dec->needs_noise ? "draws noise" : "does not");
        *run = LTX2_VAE_PAR_BATCH;
        break;
    case LTX2_VAE_PAR_TILES:
        if (!tiled)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel VAE decode: tile split needs a tiling (tile sizes > 0)");
        *run = LTX2_VAE_PAR_TILES;
        break;
    case LTX2_VAE_PAR_AUTO:
        /* Untiled and not splittable: one rank decodes (a plan of one tile would turn -0 into +0). */
        *run = batch_ok || !tiled ? LTX2_VAE_PAR_BATCH : LTX2_VAE_PAR_TILES;
        *all_on_root = !batch_ok && !tiled;
        break;
    default:
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel VAE decode: unknown mode %d", (int)mode);
    }
    return LTX2_OK;
}

static ltx2_status fail(ltx2_context *ctx, ltx2_comm *comm, ltx2_status st) {
    if (st != LTX2_OK && comm) ltx2_comm_abort(comm, ltx2_last_error(ctx));
    return st;
}

typedef struct copy_sink {
    float *video;
    const int64_t *vs;
} copy_sink;

static ltx2_status copy_frames(ltx2_context *ctx, const ltx2_tensor *frames, int64_t first, void *user) {
    (void)ctx;
    const copy_sink *s = user;
    const int64_t B = frames->shape[0], n = frames->shape[1], fs = s->vs[2] * s->vs[3] * s->vs[4];
    for (int64_t b = 0; b < B; b++)
        memcpy(s->video + (b * s->vs[1] + first) * fs, (const float *)frames->data + b * n * fs,
               (size_t)(n * fs) * sizeof(float));
    return LTX2_OK;
}

ltx2_status ltx2_vae_parallel_decode(ltx2_context *ctx, ltx2_comm *comm, const ltx2_video_decoder *dec,
                                     const ltx2_tensor *latent, const ltx2_vae_tiling *tiling,
                                     ltx2_vae_parallel_mode mode, ltx2_tensor *video, ltx2_vae_parallel_stats *stats) {
    int64_t vs[5];
    ltx2_vae_parallel_mode run = LTX2_VAE_PAR_BATCH;
    bool all_on_root = false;
    ltx2_status st = prepare(ctx, comm, dec, latent, tiling, mode, vs, &run, &all_on_root);
    if (st == LTX2_OK && (!video || !video->data || video->dtype != LTX2_F32 || video->ndim != 5 ||
                          !ltx2_tensor_is_contiguous(video) || memcmp(video->shape, vs, sizeof vs) != 0)) {
        char a[96], b[96];
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "parallel VAE decode: video buffer must be contiguous f32 %s, got %s",
                        ltx2_shape_str(vs, 5, a, sizeof a),
                        video ? ltx2_shape_str(video->shape, video->ndim, b, sizeof b) : "NULL");
    }
    if (st != LTX2_OK) return fail(ctx, comm, st);
    if (stats) *stats = (ltx2_vae_parallel_stats){.mode = run};
    if (run == LTX2_VAE_PAR_BATCH) {
        st = decode_batch(ctx, comm, dec, latent, tiling, all_on_root, video->data, vs, stats);
    } else {
        copy_sink s = {video->data, vs};
        st = decode_tiles(ctx, comm, dec, latent, tiling, copy_frames, &s, stats);
    }
    return fail(ctx, comm, st);
}

ltx2_status ltx2_vae_parallel_decode_stream(ltx2_context *ctx, ltx2_comm *comm, const ltx2_video_decoder *dec,
                                            const ltx2_tensor *latent, const ltx2_vae_tiling *tiling,
                                            ltx2_vae_parallel_mode mode, ltx2_vae_frames_fn emit, void *user,
                                            ltx2_vae_parallel_stats *stats) {
    int64_t vs[5];
    ltx2_vae_parallel_mode run = LTX2_VAE_PAR_BATCH;
    bool all_on_root = false;
    ltx2_status st = emit ? prepare(ctx, comm, dec, latent, tiling, mode, vs, &run, &all_on_root)
                          : LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel VAE decode: NULL frame callback");
    if (st != LTX2_OK) return fail(ctx, comm, st);
    if (stats) *stats = (ltx2_vae_parallel_stats){.mode = run};
    if (run == LTX2_VAE_PAR_TILES) return fail(ctx, comm, decode_tiles(ctx, comm, dec, latent, tiling, emit, user, stats));
    /* Batch mode finishes every sample at once: one buffer, one emit. */
    float *video = malloc((size_t)numel5(vs) * sizeof(float));
    if (!video) return fail(ctx, comm, LTX2_ERROR(ctx, LTX2_ERR_OOM, "parallel VAE decode: video of %lld floats",
                                                  (long long)numel5(vs)));
    st = decode_batch(ctx, comm, dec, latent, tiling, all_on_root, video, vs, stats);
    if (st == LTX2_OK) {
        ltx2_tensor t = ltx2_tensor_make(video, LTX2_F32, 5, vs);
        st = emit(ctx, &t, 0, user);
    }
    free(video);
    return fail(ctx, comm, st);
}
