/* Multi-rank launch of `ltx2 generate` (see generate_launch.h). */
#include "cli/generate_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "dist/sharding.h"
#include "pipeline/generate_dist.h"

static ltx2_status inject(ltx2_context *ctx, int rank, int64_t block, void *user) {
    const cli_launch *l = user;
    if (rank == l->fault_rank && block == l->fault_block)
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "injected failure (LTX2_FAULT_INJECT) on rank %d before block %lld",
                          rank, (long long)block);
    return LTX2_OK;
}

bool cli_launch_prepare(ltx2_context *ctx, const char *cmd, cli_launch *l) {
    ltx2_generate_parallel_opts_init(&l->opts);
    l->fault_rank = -1;
    l->writer = true;
    if (ltx2_dist_env_read(ctx, &l->env) != LTX2_OK) {
        fprintf(stderr, "ltx2 %s: %s\n", cmd, ltx2_last_error(ctx));
        return false;
    }
    if (l->nproc && (l->nproc < 1 || l->nproc > CLI_MAX_NPROC)) {
        fprintf(stderr, "ltx2 %s: --nproc must be in 1..%d, got %lld\n", cmd, CLI_MAX_NPROC, l->nproc);
        return false;
    }
    const long long world = l->env.world_size > 1 ? l->env.world_size : (l->nproc ? l->nproc : 1);
    if (l->env.world_size > 1 && l->nproc && l->nproc != l->env.world_size) {
        fprintf(stderr, "ltx2 %s: --nproc %lld disagrees with LTX2_WORLD_SIZE=%d\n", cmd, l->nproc, l->env.world_size);
        return false;
    }
    if (l->mesh_text) {
        if (ltx2_mesh_parse(ctx, l->mesh_text, &l->opts.mesh) != LTX2_OK) {
            fprintf(stderr, "ltx2 %s: --mesh %s: %s\n", cmd, l->mesh_text, ltx2_last_error(ctx));
            return false;
        }
        const int n = ltx2_mesh_world_size(&l->opts.mesh);
        if ((l->nproc || l->env.world_size > 1) && n != world) {
            fprintf(stderr, "ltx2 %s: --mesh %s has %d ranks but %lld processes/threads were asked for\n", cmd,
                    l->mesh_text, n, world);
            return false;
        }
        if (n > CLI_MAX_NPROC) {
            fprintf(stderr, "ltx2 %s: --mesh %s has %d ranks, more than %d\n", cmd, l->mesh_text, n, CLI_MAX_NPROC);
            return false;
        }
    } else if (ltx2_mesh_init(ctx, &l->opts.mesh, 1, 1, (int)world, 1) != LTX2_OK) {
        /* default: sequence parallel over every rank (MaxDiffusion's video mesh puts ranks on context) */
        fprintf(stderr, "ltx2 %s: %s\n", cmd, ltx2_last_error(ctx));
        return false;
    }
    if (l->sharding_text) {
#ifdef LTX2_HAVE_CUDA
        const ltx2_shard_hardware hw = LTX2_HW_GPU;
#else
        const ltx2_shard_hardware hw = LTX2_HW_CPU;
#endif
        if (ltx2_shard_profile_parse(ctx, l->sharding_text, hw, &l->opts.dit.profile) != LTX2_OK) {
            fprintf(stderr, "ltx2 %s: --sharding %s: %s\n", cmd, l->sharding_text, ltx2_last_error(ctx));
            return false;
        }
    }
    const char *fi = getenv("LTX2_FAULT_INJECT");
    if (fi && *fi) {
        int rank = -1;
        long long block = -1;
        char tail = 0;
        if (sscanf(fi, "%d:%lld%c", &rank, &block, &tail) != 2 || rank < 0 || block < 0) {
            fprintf(stderr, "ltx2 %s: LTX2_FAULT_INJECT must be RANK:BLOCK, got '%s'\n", cmd, fi);
            return false;
        }
        l->fault_rank = rank;
        l->fault_block = block;
        l->opts.dit.on_block = inject;
        l->opts.dit.on_block_user = l;
    }
#ifndef LTX2_HAVE_NCCL
    if (l->env.world_size > 1) {
        fprintf(stderr, "ltx2 %s: LTX2_WORLD_SIZE=%d asks for a multi-process job, which needs NCCL; this build has "
                "none (configure with -DLTX2_CUDA=ON and NCCL installed), or use --nproc N for in-process ranks\n",
                cmd, l->env.world_size);
        return false;
    }
#endif
    l->writer = l->env.world_size <= 1 || l->env.rank == 0;
    return true;
}


ltx2_status cli_launch_run(ltx2_context *ctx, cli_launch *l, const ltx2_generate_params *p, int argc, char **argv,
                           ltx2_generate_result *r) {
    memset(r, 0, sizeof *r);
    if (l->env.world_size > 1) return ltx2_generate_env_rank(ctx, p, &l->opts, &l->env, r);
    const int n = ltx2_mesh_world_size(&l->opts.mesh);
    if (n <= 1 && !l->opts.dit.on_block) return ltx2_generate(ctx, p, r);
    /* --nproc runs its ranks in this process over the loopback communicator, NCCL build or not:
     * the sharded DiT and VAE compute on the CPU, so one process per GPU (NCCL staging host
     * buffers) would only add copies until the CUDA pipeline exists. */
    (void)argc;
    (void)argv;
    return ltx2_generate_loopback(ctx, p, &l->opts, r);
}
