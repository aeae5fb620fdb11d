/* The DiT forward over a mesh of ranks (one call per rank, every rank gets the whole result):
 *   data (x fsdp): the batch - CFG / STG branches and videos - split into contiguous chunks;
 *   context: the video tokens split into contiguous chunks, padded to a multiple of the group
 *            size (padded keys masked, RoPE from each token's own global position); video
 *            self-attention by Ulysses all-to-all (heads scattered, sequence gathered) or, when
 *            the heads do not divide, by all-gathering K/V; video->audio attention all-gathers the
 *            video K/V; audio, text and a2v stay local (audio replicated);
 *   tensor:  Megatron heads / mlp: column-parallel Q/K/V/gate/FFN-in, row-parallel out / FFN-out
 *            followed by an all-reduce, the across-heads QK RMSNorm's sum of squares all-reduced.
 * Each rank keeps only its tensor shard of every block weight (sliced by sharding.c's layouts).
 * See src/dist/MODEL.md for the bytes each collective moves. */
#ifndef LTX2_DIST_DIT_PARALLEL_H
#define LTX2_DIST_DIT_PARALLEL_H

#include "dist/comm.h"
#include "dist/sharding.h"
#include "model/dit.h"

/* How video self-attention crosses the context group. */
typedef enum ltx2_sp_attention {
    LTX2_SP_AUTO = 0,     /* Ulysses when the per-rank heads divide by the context size, else all-gather */
    LTX2_SP_ULYSSES,      /* 3 all-to-all in, 1 back (Lightricks' choice); error if heads do not divide */
    LTX2_SP_ALLGATHER_KV  /* all-gather K and V (MaxDiffusion's default `flash` layout) */
} ltx2_sp_attention;

/* Called on every rank before block `block`; a non-OK status fails that rank, which then aborts
 * the world so every other rank returns too (cancellation; fault injection in tests). */
typedef ltx2_status (*ltx2_dit_block_cb)(ltx2_context *ctx, int rank, int64_t block, void *user);

typedef struct ltx2_dit_parallel_opts {
    ltx2_shard_profile profile; /* weight layouts; LTX2_PROFILE_GPU by default */
    ltx2_sp_attention sp_attention;
    ltx2_dit_block_cb on_block; /* may be NULL */
    void *on_block_user;
} ltx2_dit_parallel_opts;

void ltx2_dit_parallel_opts_init(ltx2_dit_parallel_opts *o);

typedef struct ltx2_dit_parallel ltx2_dit_parallel;

/* Collective over `world` (every rank calls it): splits the batch/context/tensor groups and
 * copies this rank's shard of every block weight out of `full`. The non-block weights
 * (embeddings, AdaLN, output head: replicated in every profile we run) are borrowed from `full`,
 * which must outlive the result. Heads, audio heads and the FFN width must divide by the tensor
 * size; profiles that shard `embed` (trillium) are refused. */
ltx2_status ltx2_dit_parallel_create(ltx2_context *ctx, ltx2_comm *world, const ltx2_dit_weights *full,
                                     const ltx2_dit_parallel_opts *opts, ltx2_dit_parallel **out);

/* Collective: p holds the whole (global) inputs, identical on every rank; video_out
 * [B, Tv, out_channels] and audio_out [B, Ta, audio_out_channels] get the whole outputs on every
 * rank. On any failure this rank aborts the world (the reason reaches every rank). p->dump is not
 * supported (sharded intermediates have no reference names). */
ltx2_status ltx2_dit_parallel_forward(ltx2_context *ctx, ltx2_dit_parallel *dp, const ltx2_dit_forward_params *p,
                                      float *video_out, float *audio_out);

/* Per-rank counts of the last forward, for tests and the bench: collectives issued and f32
 * elements this rank sent through them. */
typedef struct ltx2_dit_parallel_stats {
    int64_t n_all_to_all, n_all_gather, n_all_reduce;
    int64_t sent_elems;
} ltx2_dit_parallel_stats;
void ltx2_dit_parallel_get_stats(const ltx2_dit_parallel *dp, ltx2_dit_parallel_stats *out);

void ltx2_dit_parallel_free(ltx2_dit_parallel *dp);

#endif
