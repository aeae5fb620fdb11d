/* Launch bootstrap without MPI: each process learns its place from the environment
 * (LTX2_RANK, LTX2_WORLD_SIZE, LTX2_LOCAL_RANK, as a launcher such as torchrun-style scripts or
 * Slurm wrappers export them), and the ranks agree on one NCCL unique id either through
 * NCCL_COMM_ID (NCCL derives the same id on every rank) or through our own TCP rendezvous: rank 0
 * listens on LTX2_RENDEZVOUS=host:port and hands its bytes to every other rank. */
#ifndef LTX2_DIST_BOOTSTRAP_H
#define LTX2_DIST_BOOTSTRAP_H

#include <stddef.h>

#include "ltx2/ltx2.h"

#define LTX2_DIST_ADDR_MAX 256
/* How long a rank waits for the rendezvous by default (rank 0 for its peers, peers for rank 0
 * to come up): long enough for staggered process starts on a busy node. */
#define LTX2_RENDEZVOUS_DEFAULT_TIMEOUT_MS 120000

typedef struct ltx2_dist_env {
    int rank, world_size, local_rank;
    char comm_id[LTX2_DIST_ADDR_MAX];    /* NCCL_COMM_ID, "" when unset */
    char rendezvous[LTX2_DIST_ADDR_MAX]; /* LTX2_RENDEZVOUS host:port, "" when unset */
} ltx2_dist_env;

/* From explicit strings (NULL = unset); what ltx2_dist_env_read does with getenv. All of rank,
 * world size unset means a single process (0 of 1). Errors name the variable and its value: a
 * non-integer, rank outside [0, world), one of the pair set without the other, local rank
 * negative, a world size > 1 with neither NCCL_COMM_ID nor LTX2_RENDEZVOUS, a malformed
 * host:port. */
ltx2_status ltx2_dist_env_parse(ltx2_context *ctx, const char *rank, const char *world_size, const char *local_rank,
                                const char *comm_id, const char *rendezvous, ltx2_dist_env *out);
ltx2_status ltx2_dist_env_read(ltx2_context *ctx, ltx2_dist_env *out);

/* Splits "host:port" (host may be a name, an IPv4 address or [IPv6]). */
ltx2_status ltx2_dist_parse_addr(ltx2_context *ctx, const char *addr, char *host, size_t host_cap, int *port);

/* Collective over the world_size processes: rank 0 listens on addr and sends blob[n] to every
 * other rank, which connect (retrying while rank 0 is not up yet) and receive it into blob.
 * Each peer announces (magic, rank, world size, n) and rank 0 checks them, so a mixed-up launch is
 * an error, not a hang. Everything is bounded by timeout_ms (<= 0: the default). While waiting, a
 * rank logs who it waits for (rank 0: the ranks not joined yet) every 10 s, or 4 times over a
 * shorter timeout; rank 0's timeout error names the missing ranks. */
ltx2_status ltx2_dist_rendezvous(ltx2_context *ctx, const char *addr, int rank, int world_size, void *blob, size_t n,
                                 int timeout_ms);

#endif
