/* Launching one generation over several ranks:
 *   ltx2_generate_loopback: P ranks as threads of this process on the loopback communicator (the
 *     CPU build's `ltx2 generate --nproc P`); returns rank 0's result;
 *   ltx2_generate_env_rank: this process is one rank of a multi-process job described by the
 *     environment (dist/bootstrap.h: LTX2_RANK / LTX2_WORLD_SIZE / LTX2_LOCAL_RANK, NCCL_COMM_ID or
 *     LTX2_RENDEZVOUS), as srun or `ltx2 generate --nproc` with NCCL start it; NCCL world on GPU
 *     LTX2_LOCAL_RANK.
 * Both run pipeline/generate_dist.h's ltx2_generate_ranked on every rank. */
#ifndef LTX2_PIPELINE_GENERATE_PARALLEL_H
#define LTX2_PIPELINE_GENERATE_PARALLEL_H

#include "dist/bootstrap.h"
#include "dist/comm.h"
#include "model/dit_parallel.h"
#include "ltx2/ltx2.h"

/* How long a loopback rank may wait in one collective before it declares the job hung: ranks do
 * unequal work between collectives (one rank decoding an untiled video while the others wait),
 * so this is far above the comm's test default. Real failures abort at once, not by timeout. */
#define LTX2_GENERATE_LOOPBACK_TIMEOUT_MS 1800000
/* A rank's failure reason as its context holds it (core/context.h's LTX2_ERROR_CAP). */
#define LTX2_RANK_MSG_CAP 1024

typedef struct ltx2_generate_parallel_opts {
    ltx2_mesh mesh;             /* the job's mesh; its world size is the number of ranks */
    ltx2_dit_parallel_opts dit; /* profile, sequence attention, per-block hook (fault injection) */
    int timeout_ms;             /* loopback: <= 0 selects LTX2_GENERATE_LOOPBACK_TIMEOUT_MS */
    int threads_per_rank;       /* loopback: OpenMP threads per rank; 0 = max(1, all / ranks) */
} ltx2_generate_parallel_opts;

/* Mesh 1,1,1,1, default DiT options. */
void ltx2_generate_parallel_opts_init(ltx2_generate_parallel_opts *o);

/* The options of the public ltx2_parallel_params (ltx2.h): the mesh read from its text or every
 * rank on context, checked against pp->ranks (0: the mesh's size), the sharding profile read for
 * this build's hardware. Errors name the field after prefix ("--" gives the CLI's flag names,
 * "" the struct's). */
ltx2_status ltx2_generate_parallel_opts_from(ltx2_context *ctx, const ltx2_parallel_params *pp, const char *prefix,
                                             ltx2_generate_parallel_opts *o);

/* ---- what the in-process launchers (ltx2_generate_loopback, model_ranks.h) share ---- */

/* What a rank thread reports for one step: its status, the reason (its context's last error) and,
 * for a generation, its result. */
typedef struct ltx2_rank_outcome {
    ltx2_status st;
    char msg[LTX2_RANK_MSG_CAP];
    ltx2_generate_result result;
} ltx2_rank_outcome;

/* OpenMP threads each of P rank threads runs (o->threads_per_rank, or the process's share). */
int ltx2_rank_threads(const ltx2_generate_parallel_opts *o, int P);
/* A rank thread's context logs through the caller's log function (parent; NULL: the defaults):
 * rank 0 at the caller's level, the others warnings only (one voice for progress). */
void ltx2_rank_logging(ltx2_context *ctx, const ltx2_context *parent, int rank);
/* Records st as o's, with ctx's last error when it failed (ctx NULL: the rank had no context). */
void ltx2_rank_outcome_set(ltx2_rank_outcome *o, ltx2_context *ctx, ltx2_status st);
/* After all P ranks reported a step: OK with rank 0's result moved to *result (NULL: none wanted),
 * or the status and reason of the rank where the failure started (the others only say that the
 * communicator was aborted) on ctx. Every outcome's result is freed. */
ltx2_status ltx2_rank_outcomes_collect(ltx2_context *ctx, ltx2_rank_outcome *o, int P, ltx2_generate_result *result);

/* Runs every rank to completion; *result gets rank 0's outputs. If any rank fails, every rank
 * stops, result holds nothing, and ctx carries the failing rank's reason. */
ltx2_status ltx2_generate_loopback(ltx2_context *ctx, const ltx2_generate_params *p,
                                   const ltx2_generate_parallel_opts *o, ltx2_generate_result *result);

/* This process's rank of an environment-described job (o->mesh must have env->world_size ranks).
 * Every rank returns the whole result; the caller writes outputs on rank 0 only. Builds without
 * NCCL: LTX2_ERR_UNSUPPORTED. */
ltx2_status ltx2_generate_env_rank(ltx2_context *ctx, const ltx2_generate_params *p,
                                   const ltx2_generate_parallel_opts *o, const ltx2_dist_env *env,
                                   ltx2_generate_result *result);

#endif
