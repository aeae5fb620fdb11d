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
    /* This rank's DiT shards made once (a model handle's over ranks: ltx2_generate_ranked_models),
     * borrowed; NULL: read from the checkpoint for the call and freed after it. */
    ltx2_dit_parallel *dp;
} ltx2_generate_dist;

/* Collective over dist->world: every rank passes the same params. */
ltx2_status ltx2_generate_ranked(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_generate_dist *dist,
                                 ltx2_generate_result *result);

/* The same on models this rank loaded once (ltx2_pipe_models_load_dit_replicated on dist->be, which
 * must be set, with their shards in dist->dp): a model handle's generation over ranks. No memory
 * plan (the weights are resident) and no LoRAs, as ltx2_generate_with_models. */
struct ltx2_pipe_models;
/* The checks a generation makes of its parameters alone before any work, for models loaded once
 * (loaded) over `ranks` ranks (each rank makes them again): for a caller that must refuse bad
 * parameters before it involves its ranks. */
ltx2_status ltx2_generate_check_params(ltx2_context *ctx, const ltx2_generate_params *p, bool loaded, int ranks);
ltx2_status ltx2_generate_ranked_models(ltx2_context *ctx, const ltx2_generate_params *p,
                                        const ltx2_generate_dist *dist, struct ltx2_pipe_models *m,
                                        ltx2_generate_result *result);

#endif
