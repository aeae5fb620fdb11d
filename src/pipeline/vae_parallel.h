/* The video-VAE decode over the ranks of a communicator. Weights are replicated (every profile's
 * VAE rule, sharding.h); the work is split one of two ways:
 *   batch: B > 1 and a decoder without noise draws - each rank decodes a contiguous chunk of the
 *          samples (tiled or not, exactly as one rank would), chunks are broadcast to every rank;
 *   tiles: one video (or a noise-drawing decoder, whose draws span the batch) - the tiles of the
 *          tiled-decode plan are dealt round-robin: in round r rank j decodes tile r*P + j, the
 *          round's tiles are broadcast, and every rank blends them in the plan's original order.
 * Either way every rank ends with the whole video, bitwise equal to the single-rank
 * ltx2_vae_tiled_decode (ltx2_video_decoder_decode when untiled). Working memory in tile mode:
 * P decoded tiles plus the stream's one temporal group. */
#ifndef LTX2_PIPELINE_VAE_PARALLEL_H
#define LTX2_PIPELINE_VAE_PARALLEL_H

#include "dist/comm.h"
#include "model/video_vae.h"
#include "pipeline/tiling.h"

typedef enum ltx2_vae_parallel_mode {
    LTX2_VAE_PAR_AUTO = 0, /* batch when it applies, else tiles */
    LTX2_VAE_PAR_BATCH,    /* error when it does not apply */
    LTX2_VAE_PAR_TILES
} ltx2_vae_parallel_mode;

typedef struct ltx2_vae_parallel_stats {
    ltx2_vae_parallel_mode mode; /* the mode that ran */
    int64_t n_tiles;             /* tiles in the plan (per sample chunk in batch mode) */
    int64_t decoded_here;        /* tiles (tile mode) or samples (batch mode) this rank decoded */
} ltx2_vae_parallel_stats;

/* Collective over comm: every rank passes the same latent (contiguous f32 CPU NDHWC) and tiling
 * (NULL or all sizes 0: untiled, i.e. a plan of one tile), and gets the whole video (shape
 * ltx2_video_decoder_out_shape) in `video`. Any failure aborts comm, so every rank returns. */
ltx2_status ltx2_vae_parallel_decode(ltx2_context *ctx, ltx2_comm *comm, const ltx2_video_decoder *dec,
                                     const ltx2_tensor *latent, const ltx2_vae_tiling *tiling,
                                     ltx2_vae_parallel_mode mode, ltx2_tensor *video, ltx2_vae_parallel_stats *stats);

/* Same, handing finished frames to emit in order (see ltx2_vae_frames_fn) on every rank. */
ltx2_status ltx2_vae_parallel_decode_stream(ltx2_context *ctx, ltx2_comm *comm, const ltx2_video_decoder *dec,
                                            const ltx2_tensor *latent, const ltx2_vae_tiling *tiling,
                                            ltx2_vae_parallel_mode mode, ltx2_vae_frames_fn emit, void *user,
                                            ltx2_vae_parallel_stats *stats);

#endif
