/* `ltx2 generate --nproc N --mesh d,f,c,t --sharding PROFILE [--launch threads|processes]`: the
 * flags' checks (before any work) and the launch: one rank (plain ltx2_generate); N loopback ranks
 * as threads in this process (`threads`, the default, every build); N processes of this executable,
 * one per GPU (round-robin over the visible GPUs) joined by NCCL through a TCP rendezvous on
 * 127.0.0.1 (`processes`, NCCL builds with a GPU); or, when LTX2_WORLD_SIZE is set (srun, the
 * process launcher's children), this process's rank of the job. Test hook:
 * LTX2_FAULT_INJECT=RANK:BLOCK fails that rank before that DiT block. */
#ifndef LTX2_CLI_GENERATE_LAUNCH_H
#define LTX2_CLI_GENERATE_LAUNCH_H

#include <stdbool.h>

#include "backend/backend.h"
#include "dist/bootstrap.h"
#include "pipeline/generate_parallel.h"
#include "ltx2/ltx2.h"

/* Far above one node's GPUs or useful loopback threads; keeps mistakes (--nproc 100000) cheap. */
#define CLI_MAX_NPROC 256

typedef struct cli_launch {
    long long nproc;             /* 0: not given */
    const char *mesh_text, *sharding_text, *launch_text;
    bool processes;              /* --launch processes */
    ltx2_generate_parallel_opts opts;
    ltx2_dist_env env;           /* from the environment */
    int fault_rank;              /* -1: none */
    long long fault_block;
    bool writer;                 /* this process writes the outputs (rank 0 / single) */
    const ltx2_backend *be;      /* one process, one rank: the device it computes on */
} cli_launch;

/* Checks and resolves the flags and environment; prints the reason and returns false on bad input. */
bool cli_launch_prepare(ltx2_context *ctx, const char *cmd, cli_launch *l);
/* Opens the device (--device spec: cpu, cuda, cuda:N, auto / NULL) for a one-rank run; for several
 * ranks checks that rank 0's device opens (each rank opens its own: ltx2_backend_open_rank) and
 * refuses cuda:N for process ranks. desc gets the line to print. Prints the reason and returns
 * false when the device cannot be used. After cli_launch_prepare; cli_launch_free releases it. */
bool cli_launch_device(ltx2_context *ctx, const char *cmd, cli_launch *l, const char *spec, char *desc, size_t cap);
void cli_launch_free(cli_launch *l);
/* Runs the generation as prepared. args/argc: the generate subcommand's arguments (re-used to
 * start the NCCL ranks). */
ltx2_status cli_launch_run(ltx2_context *ctx, cli_launch *l, const ltx2_generate_params *p, int argc, char **argv,
                           ltx2_generate_result *r);

#endif
