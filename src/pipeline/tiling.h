/* Tiled (and tile-batched) video-VAE decode and encode on the CPU, reproducing ltx-core 1.0.0
 * `VideoDecoder.tiled_decode` / `VideoEncoder.tiled_encode` (tile geometry, blend masks, the
 * division by accumulated weights).
 *
 * Decode memory: tiles run in plan order (temporal group by group, raster order H then W inside a
 * group, exactly ltx-core's order), but a group is not blended into a full-frame buffer. The
 * frame is cut at every tile edge, rows and columns, into blocks; every tile of a group covers
 * whole blocks, and a block is covered by a fixed rectangle of tiles. A block's accumulator
 * exists from its first covering tile to its last one; then it is final for the group: frames
 * before the next temporal group's first frame are divided by their weights and emitted as a
 * block (`ltx2_vae_block_fn`), frames the next group overlaps go to a carry (overlap frames x full
 * frame) that the next group adds in as `prev + cur`. Per pixel the additions happen in the same
 * order as a full-frame blend (tiles in plan order, then prev + cur), so the output is bitwise
 * that of the full-buffer scheme. Live accumulators while tile (i, j) blends: the current tile,
 * the horizontal overlap strips above and below its band (overlap rows x width), nothing else;
 * with the temporal carry, the block being emitted and the pending tile results (at most
 * tile_batch per shape) that is the tiler's whole working memory, reported as
 * stats.peak_bytes. It does not depend on the height, grows with the width only by the overlap
 * strips, and the carry is the only full-frame buffer (none without temporal tiling). That much
 * is the floor for a single pass that emits frames in order without decoding a tile twice: the
 * overlap of the tile row not yet decoded, and of the temporal tile not yet decoded, must wait.
 * The VAE's own activations (the large, many-channel tensors) only ever exist for one tile call.
 * The full-frame callback (`ltx2_vae_frames_fn`) assembles blocks into frames, which adds a
 * buffer of the emitted frame range; the block callback leaves that to the caller.
 * Tile batching (after LTX-2 PR #215): same-shape tiles are stacked along the batch dimension
 * and run in one VAE call; blending still happens in the original tile order, so any batch size
 * gives bit-identical output to batch size 1. */
#ifndef LTX2_PIPELINE_TILING_H
#define LTX2_PIPELINE_TILING_H

#include <stdbool.h>
#include <stdint.h>

#include "ltx2/tensor.h"
#include "model/video_vae.h"

/* Sizes are in output units for decode (pixels, frames) and input units for encode, as in
 * ltx-core's SpatialTilingConfig / TemporalTilingConfig. A size of 0 disables tiling on that
 * axis. Sizes and overlaps must be multiples of the VAE's space (32) / time (8) factor, the
 * overlap smaller than the tile, the tile at least two latents. Encode overlaps must also be at
 * least two latents (64 px / 16 frames for the real VAE): ltx-core's tiled_encode silently
 * raises smaller ones (its rectangular masks drop one latent per side); here that is an error. */
typedef struct ltx2_vae_tiling {
    int64_t tile_px, overlap_px;         /* spatial (H and W) */
    int64_t tile_frames, overlap_frames; /* temporal */
    int tile_batch;                      /* tiles per VAE call, >= 1 */
    /* Decode only: timestep / noise options for conditioned or noise-injecting decoders (NULL =
     * ltx2_vae_decode_opts_default()). Such decoders run one tile per call whatever tile_batch
     * says (ltx-core draws noise per tile call, shared over the batch), and with the default
     * Philox source tile call k draws streams from stream_base + k * LTX2_VAE_TILE_STREAMS. */
    const ltx2_vae_decode_opts *decode_opts;
} ltx2_vae_tiling;

/* Philox streams reserved per tile call (one per noise draw; a decoder makes 1 + 2 x layers). */
#define LTX2_VAE_TILE_STREAMS 4096

/* Receives finished frames in order: `frames` is f32 NDHWC [B, n, H, W, C] (valid during the
 * call) holding video frames first_frame .. first_frame+n-1. */
typedef ltx2_status (*ltx2_vae_frames_fn)(ltx2_context *ctx, const ltx2_tensor *frames, int64_t first_frame,
                                          void *user);

/* Statistics of one tiled run (may be NULL). */
typedef struct ltx2_vae_tiling_stats {
    int64_t n_tiles;      /* tiles in the plan */
    int64_t n_shapes;     /* distinct tile shapes summed over temporal groups (decode) / overall (encode) */
    int64_t n_vae_calls;  /* decoder / encoder invocations */
    int64_t n_temporal;   /* temporal tiles */
    /* Decode streams: the most bytes of buffers the tiler held at once (block accumulators, temporal
     * carry, block / frame output, tile results and batch staging; not the VAE's activations).
     * 0 from ..._decode_plan and encode. */
    int64_t peak_bytes;
} ltx2_vae_tiling_stats;

/* Validates the tiling against the decoder and a latent shape (NDHWC) and reports the plan's
 * tile counts, without decoding. Every error a tiled decode could raise from its settings or
 * geometry is raised here. */
ltx2_status ltx2_vae_tiled_decode_plan(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                       const int64_t latent_ndhwc[5], const ltx2_vae_tiling *tiling,
                                       ltx2_vae_tiling_stats *stats);

/* Decodes `latent` (contiguous f32 CPU NDHWC) tile by tile, emitting frames through `emit`. */
ltx2_status ltx2_vae_tiled_decode_stream(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                         const ltx2_tensor *latent, const ltx2_vae_tiling *tiling,
                                         ltx2_vae_frames_fn emit, void *user, ltx2_vae_tiling_stats *stats);

/* Where a block of finished pixels sits. */
typedef struct ltx2_vae_block_pos {
    int64_t first_frame, first_row, first_col;
    bool range_done; /* this block completes its frame range */
} ltx2_vae_block_pos;

/* Receives finished pixels as a block: `block` is f32 NDHWC [B, n, rows, cols, C] (valid during
 * the call) holding rows first_row.. and columns first_col.. of video frames first_frame ..
 * first_frame+n-1 (a frame range: the frames one temporal group finishes). Every pixel of a range
 * arrives in exactly one block, the last one with range_done set; ranges arrive in frame order.
 * Blocks of a range come in no fixed spatial order (the order in which the blend finishes them). */
typedef ltx2_status (*ltx2_vae_block_fn)(ltx2_context *ctx, const ltx2_tensor *block, const ltx2_vae_block_pos *pos,
                                         void *user);

/* ltx2_vae_tiled_decode_stream emitting blocks: no frame-sized output buffer. */
ltx2_status ltx2_vae_tiled_decode_blocks(ltx2_context *ctx, const ltx2_video_decoder *dec, const ltx2_tensor *latent,
                                         const ltx2_vae_tiling *tiling, ltx2_vae_block_fn emit, void *user,
                                         ltx2_vae_tiling_stats *stats);

/* Same, into a full video tensor of ltx2_video_decoder_out_shape. */
ltx2_status ltx2_vae_tiled_decode(ltx2_context *ctx, const ltx2_video_decoder *dec, const ltx2_tensor *latent,
                                  const ltx2_vae_tiling *tiling, ltx2_tensor *video, ltx2_vae_tiling_stats *stats);

/* ---- Tile-level access, for spreading one decode's tiles over ranks (src/pipeline/vae_parallel.c) ---- */

/* One tile of a decode plan; plans list tiles in itertools.product order (T slowest, then H, W). */
typedef struct ltx2_vae_tile_info {
    int64_t index;            /* position in the plan */
    int64_t in0[3], in1[3];   /* latent slice (t, h, w) */
    int64_t out_shape[5];     /* the decoded tile, NDHWC [B, t, h, w, C] */
} ltx2_vae_tile_info;

/* Supplies tile info->index decoded (out_shape elements into out); called once per tile, in plan
 * order. A non-OK status stops the decode with it. */
typedef ltx2_status (*ltx2_vae_tile_source_fn)(ltx2_context *ctx, const ltx2_vae_tile_info *info, float *out,
                                               void *user);

/* The plan's tiles as a malloc'ed array (caller frees), with the checks of ..._decode_plan. */
ltx2_status ltx2_vae_tiled_decode_tiles(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                        const int64_t latent_ndhwc[5], const ltx2_vae_tiling *tiling,
                                        ltx2_vae_tile_info **tiles, int64_t *n_tiles);
/* Decodes one tile exactly as the tiled decode would (same slice, same noise streams: bitwise the
 * values the stream blends, whatever its tile_batch). */
ltx2_status ltx2_vae_tiled_decode_one(ltx2_context *ctx, const ltx2_video_decoder *dec, const ltx2_tensor *latent,
                                      const ltx2_vae_tiling *tiling, const ltx2_vae_tile_info *info, float *out);
/* ltx2_vae_tiled_decode_stream with every tile's values taken from `source` instead of running the
 * decoder: the blend (order, masks, division) is the same code, so equal tiles give equal frames.
 * Stats report 0 VAE calls. */
ltx2_status ltx2_vae_tiled_decode_stream_from(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                              const int64_t latent_ndhwc[5], const ltx2_vae_tiling *tiling,
                                              ltx2_vae_tile_source_fn source, void *source_user,
                                              ltx2_vae_frames_fn emit, void *user, ltx2_vae_tiling_stats *stats);

/* ltx2_vae_tiled_decode_stream_from emitting blocks (see ltx2_vae_tiled_decode_blocks). */
ltx2_status ltx2_vae_tiled_decode_blocks_from(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                              const int64_t latent_ndhwc[5], const ltx2_vae_tiling *tiling,
                                              ltx2_vae_tile_source_fn source, void *source_user, ltx2_vae_block_fn emit,
                                              void *user, ltx2_vae_tiling_stats *stats);

/* Tiled encode (ltx-core 1.0.0 tiled_encode: pixel-space split, rectangular masks in latent
 * units, division by the accumulated weights) into `latent` of ltx2_video_encoder_out_shape. */
ltx2_status ltx2_vae_tiled_encode(ltx2_context *ctx, const ltx2_video_encoder *enc, const ltx2_tensor *video,
                                  const ltx2_vae_tiling *tiling, ltx2_tensor *latent, ltx2_vae_tiling_stats *stats);

#endif
