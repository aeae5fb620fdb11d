/* ltx2_generate as one rank of a multi-rank job: the DiT runs sharded over the world communicator
 * (model/dit_parallel.h), the video VAE decode is spread over the ranks (pipeline/vae_parallel.h);
 * a text prompt is encoded by rank 0 alone, its hidden states broadcast (ltx2_gen_text_ranked);
 * noise, guidance and the audio decode are replicated (cheap, deterministic). Each rank
 * computes on its own backend (its GPU: its DiT shards and models live there; or the CPU). Every
 * rank returns the whole result; only rank 0 dumps and reports progress. A failure on any rank
 * aborts the world, so every rank returns an error carrying the reason. */
#ifndef LTX2_PIPELINE_GENERATE_DIST_H
#define LTX2_PIPELINE_GENERATE_DIST_H

#include "dist/comm.h"
#include "model/dit_parallel.h"
#include "ltx2/ltx2.h"

typedef struct ltx2_generate_dist {
    ltx2_comm *world;            /* this rank's world communicator (its mesh is the job's mesh) */
    ltx2_dit_parallel_opts dit;  /* profile, sequence-parallel attention, per-block hook */
    /* Where this rank computes (borrowed); NULL: opened from the params' device for local rank
     * device_index (ltx2_backend_open_rank) and freed on return. */
    const ltx2_backend *be;
    int device_index;
} ltx2_generate_dist;

/* Collective over dist->world: every rank passes the same params. */
ltx2_status ltx2_generate_ranked(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_generate_dist *dist,
                                 ltx2_generate_result *result);

#endif
