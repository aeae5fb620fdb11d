/* The public face of multi-rank generation (ltx2.h: ltx2_parallel_params, ltx2_generate_parallel,
 * ltx2_generate_rank): the mesh and sharding profile read from their names, then the launchers of
 * generate_parallel.h, which the CLI's --nproc / --mesh / --sharding reach through the same
 * reading (ltx2_generate_parallel_opts_from). */
#include <stdio.h>
#include <string.h>

#include "core/context.h"
#include "dist/bootstrap.h"
#include "dist/sharding.h"
#include "pipeline/generate_parallel.h"

void ltx2_parallel_params_init(ltx2_parallel_params *pp) {
    if (!pp) return;
    memset(pp, 0, sizeof *pp);
    pp->ranks = 1;
}

/* The hardware a sharding profile's "default" resolves for: this build's devices. */
#if defined(LTX2_HAVE_CUDA)
#define PARALLEL_PROFILE_HW LTX2_HW_GPU
#else
#define PARALLEL_PROFILE_HW LTX2_HW_CPU
#endif

ltx2_status ltx2_generate_parallel_opts_from(ltx2_context *ctx, const ltx2_parallel_params *pp, const char *prefix,
                                             ltx2_generate_parallel_opts *o) {
    ltx2_generate_parallel_opts_init(o);
    if (!pp) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel generate: NULL parameters");
    if (!prefix) prefix = "";
    if (pp->ranks < 0 || pp->ranks > LTX2_MESH_MAX_RANKS || pp->threads_per_rank < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel generate: %d ranks, %d threads a rank (ranks in [1, %d], "
                          "0 with a mesh to take its size; threads >= 0)", pp->ranks, pp->threads_per_rank,
                          LTX2_MESH_MAX_RANKS);
    char why[LTX2_ERROR_CAP];
    if (pp->mesh) {
        if (ltx2_mesh_parse(ctx, pp->mesh, &o->mesh) != LTX2_OK) {
            snprintf(why, sizeof why, "%s", ltx2_last_error(ctx));
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%smesh %s: %s", prefix, pp->mesh, why);
        }
        const int n = ltx2_mesh_world_size(&o->mesh);
        if (pp->ranks && n != pp->ranks)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%smesh %s has %d ranks but %d were asked for", prefix, pp->mesh,
                              n, pp->ranks);
    } else {
        /* every rank on context: MaxDiffusion's video mesh puts its ranks on the sequence */
        LTX2_TRY(ltx2_mesh_init(ctx, &o->mesh, 1, 1, pp->ranks ? pp->ranks : 1, 1));
    }
    if (pp->sharding && ltx2_shard_profile_parse(ctx, pp->sharding, PARALLEL_PROFILE_HW, &o->dit.profile) != LTX2_OK) {
        snprintf(why, sizeof why, "%s", ltx2_last_error(ctx));
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%ssharding %s: %s", prefix, pp->sharding, why);
    }
    o->threads_per_rank = pp->threads_per_rank;
    return LTX2_OK;
}

ltx2_status ltx2_generate_parallel(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_parallel_params *pp,
                                   ltx2_generate_result *result) {
    if (!p || !result) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel generate: NULL argument");
    memset(result, 0, sizeof *result);
    ltx2_generate_parallel_opts o;
    LTX2_TRY(ltx2_generate_parallel_opts_from(ctx, pp, "", &o));
    if (ltx2_mesh_world_size(&o.mesh) == 1) return ltx2_generate(ctx, p, result);
    return ltx2_generate_loopback(ctx, p, &o, result);
}

ltx2_status ltx2_generate_rank(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_parallel_params *pp,
                               ltx2_generate_result *result) {
    if (!p || !result) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "parallel generate: NULL argument");
    memset(result, 0, sizeof *result);
    ltx2_dist_env env;
    LTX2_TRY(ltx2_dist_env_read(ctx, &env));
    if (env.world_size <= 1)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "ltx2_generate_rank: this process is not a rank of a job "
                          "(LTX2_WORLD_SIZE is %s): set LTX2_RANK, LTX2_WORLD_SIZE, LTX2_LOCAL_RANK and NCCL_COMM_ID or "
                          "LTX2_RENDEZVOUS, or run the ranks in this process with ltx2_generate_parallel",
                          env.world_size == 1 ? "1" : "unset");
    ltx2_parallel_params own;
    if (pp) {
        own = *pp;
    } else {
        ltx2_parallel_params_init(&own);
        own.ranks = 0;
    }
    if (own.ranks && own.ranks != env.world_size)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "ltx2_generate_rank: %d ranks asked for, LTX2_WORLD_SIZE is %d",
                          own.ranks, env.world_size);
    own.ranks = env.world_size;
    ltx2_generate_parallel_opts o;
    LTX2_TRY(ltx2_generate_parallel_opts_from(ctx, &own, "", &o));
    return ltx2_generate_env_rank(ctx, p, &o, &env, result);
}
