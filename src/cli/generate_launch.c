/* Multi-rank launch of `ltx2 generate` (see generate_launch.h). */
#include "cli/generate_launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LTX2_HAVE_NCCL
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "core/context.h"
#include "dist/comm.h"
#include "pipeline/pipeline.h"
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
    /* the mesh and profile as the library reads them (ltx2_parallel_params); --nproc or the job's
     * world fixes the ranks, else --mesh alone does */
    ltx2_parallel_params pp;
    ltx2_parallel_params_init(&pp);
    pp.ranks = l->nproc || l->env.world_size > 1 ? (int)world : (l->mesh_text ? 0 : 1);
    pp.mesh = l->mesh_text;
    pp.sharding = l->sharding_text;
    if (ltx2_generate_parallel_opts_from(ctx, &pp, "--", &l->opts) != LTX2_OK) {
        fprintf(stderr, "ltx2 %s: %s\n", cmd, ltx2_last_error(ctx));
        return false;
    }
    const int n = ltx2_mesh_world_size(&l->opts.mesh);
    if (n > CLI_MAX_NPROC) {
        fprintf(stderr, "ltx2 %s: --mesh %s has %d ranks, more than %d\n", cmd, l->mesh_text, n, CLI_MAX_NPROC);
        return false;
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
    if (l->launch_text) {
        if (!strcmp(l->launch_text, "processes")) {
            l->processes = true;
        } else if (strcmp(l->launch_text, "threads") != 0) {
            fprintf(stderr, "ltx2 %s: --launch must be threads or processes, got '%s'\n", cmd, l->launch_text);
            return false;
        }
    }
    if (l->processes && l->env.world_size <= 1) {
#ifndef LTX2_HAVE_NCCL
        fprintf(stderr, "ltx2 %s: --launch processes joins its ranks with NCCL, which this build lacks (configure "
                "with -DLTX2_CUDA=ON and NCCL installed); --launch threads runs the ranks in this process\n", cmd);
        return false;
#else
        char why[256];
        const int n_dev = ltx2_backend_cuda_device_count_why(why, sizeof why);
        if (n_dev < 1) {
            fprintf(stderr, "ltx2 %s: --launch processes puts one rank per GPU, but no CUDA device is usable (%s); "
                    "--launch threads runs the ranks in this process\n", cmd, why);
            return false;
        }
        if (l->nproc > n_dev && !ltx2_comm_nccl_can_share_gpu()) {
            const int v = ltx2_comm_nccl_version();
            fprintf(stderr, "ltx2 %s: --launch processes with --nproc %lld puts ranks on a shared GPU (%d here), "
                    "which needs NCCL >= %d.%d and NCCL_MULTI_RANK_GPU_ENABLE=1 (this is NCCL %d.%d.%d); use "
                    "--launch threads, or --nproc %d\n", cmd, l->nproc, n_dev, LTX2_NCCL_SHARED_GPU_VERSION / 10000,
                    LTX2_NCCL_SHARED_GPU_VERSION / 100 % 100, v / 10000, v / 100 % 100, v % 100, n_dev);
            return false;
        }
#endif
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


#ifdef LTX2_HAVE_NCCL
/* A free TCP port on this host for rank 0's rendezvous (the kernel picks; released right away, so
 * another process could take it first: the rendezvous then fails with a clear error). */
static int free_port(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(s, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(s, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(s);
    return port;
}

/* Starts one process of this executable per rank (LTX2_RANK / LTX2_LOCAL_RANK / LTX2_WORLD_SIZE /
 * LTX2_RENDEZVOUS set, the same arguments) and waits for all; the first failing rank stops the
 * rest. Rank 0 (a child) writes the outputs. */
static ltx2_status fork_ranks(ltx2_context *ctx, int n, int argc, char **argv) {
    const int port = free_port();
    if (port < 0) return LTX2_ERROR(ctx, LTX2_ERR_IO, "--nproc: no free TCP port for the rendezvous: %s", strerror(errno));
    char **args = calloc((size_t)argc + 3, sizeof(char *));
    pid_t *pids = calloc((size_t)n, sizeof(pid_t));
    if (!args || !pids) {
        free(args);
        free(pids);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "--nproc: out of memory");
    }
    args[0] = (char *)"ltx2";
    args[1] = (char *)"generate";
    for (int i = 0; i < argc; i++) args[i + 2] = argv[i];
    fflush(stdout);
    fflush(stderr);
    ltx2_status st = LTX2_OK;
    int started = 0;
    for (int r = 0; r < n; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            st = LTX2_ERROR(ctx, LTX2_ERR_IO, "--nproc: fork of rank %d failed: %s", r, strerror(errno));
            break;
        }
        if (pid == 0) {
            char v[32], addr[64];
            snprintf(v, sizeof v, "%d", r);
            setenv("LTX2_RANK", v, 1);
            setenv("LTX2_LOCAL_RANK", v, 1);
            snprintf(v, sizeof v, "%d", n);
            setenv("LTX2_WORLD_SIZE", v, 1);
            snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
            setenv("LTX2_RENDEZVOUS", addr, 1);
            execv("/proc/self/exe", args);
            _exit(127);
        }
        pids[started++] = pid;
    }
    int failed_rc = 0;
    for (int left = started; left > 0; left--) {
        int status = 0;
        const pid_t done = wait(&status);
        if (done < 0) break;
        const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        if (rc != 0 && !failed_rc) {
            failed_rc = rc;
            for (int r = 0; r < started; r++) /* only the ranks this call started */
                if (pids[r] != done) kill(pids[r], SIGTERM);
        }
    }
    if (st == LTX2_OK && failed_rc)
        st = LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "--nproc %d --launch processes: a rank exited with status %d; every "
                        "rank was stopped", n, failed_rc);
    free(args);
    free(pids);
    return st;
}
#endif

bool cli_launch_device(ltx2_context *ctx, const char *cmd, cli_launch *l, const char *spec, char *desc, size_t cap) {
    const bool ranks = l->env.world_size > 1 || ltx2_mesh_world_size(&l->opts.mesh) > 1 || l->opts.dit.on_block;
    if (!ranks) {
        if (ltx2_backend_open(ctx, spec, &l->be, desc, cap) != LTX2_OK) {
            fprintf(stderr, "ltx2 %s: %s\n", cmd, ltx2_last_error(ctx));
            return false;
        }
        return true;
    }
    /* Each rank opens its own device as it starts (ltx2_backend_open_rank); rank 0's is opened here
     * once, so an unusable one is refused before any rank runs, and described. */
    const bool procs = l->processes || l->env.world_size > 1;
    if (procs && spec && !strncmp(spec, "cuda:", 5)) {
        fprintf(stderr, "ltx2 %s: --device %s would put every process rank on one GPU; each computes on the GPU of its "
                "local rank: use --device cuda\n", cmd, spec);
        return false;
    }
    const int index = l->env.world_size > 1 ? l->env.local_rank : 0;
    const ltx2_backend *probe = NULL;
    char first[384];
    if (ltx2_backend_open_rank(ctx, spec, index, &probe, first, sizeof first) != LTX2_OK) {
        fprintf(stderr, "ltx2 %s: %s\n", cmd, ltx2_last_error(ctx));
        return false;
    }
    const bool gpu = probe->device != LTX2_DEVICE_CPU;
    ltx2_backend_free(probe);
    const int n_dev = ltx2_backend_cuda_device_count();
    if (!gpu)
        snprintf(desc, cap, "%s (every rank)", first);
    else if (spec && !strncmp(spec, "cuda:", 5))
        snprintf(desc, cap, "%s (every rank on this GPU)", first);
    else if (l->env.world_size > 1)
        snprintf(desc, cap, "%s (this process: rank %d, local rank %d)", first, l->env.rank, l->env.local_rank);
    else
        snprintf(desc, cap, "%s for rank 0; rank r on cuda:(r mod %d)", first, n_dev);
    return true;
}

void cli_launch_free(cli_launch *l) {
    ltx2_backend_free(l->be);
    l->be = NULL;
}

ltx2_status cli_launch_run(ltx2_context *ctx, cli_launch *l, const ltx2_generate_params *p, int argc, char **argv,
                           ltx2_generate_result *r) {
    memset(r, 0, sizeof *r);
    if (l->env.world_size > 1) return ltx2_generate_env_rank(ctx, p, &l->opts, &l->env, r);
    const int n = ltx2_mesh_world_size(&l->opts.mesh);
    if (n <= 1 && !l->opts.dit.on_block) return l->be ? ltx2_generate_on(ctx, p, l->be, r) : ltx2_generate(ctx, p, r);
#ifdef LTX2_HAVE_NCCL
    if (l->processes && n > 1) {
        l->writer = false; /* the children write the outputs (rank 0) */
        return fork_ranks(ctx, n, argc, argv);
    }
#endif
    /* Threads by default: one process, each rank on its own device, the collectives through host
     * memory (loopback); --launch processes joins one process per GPU with NCCL on device buffers. */
    (void)argc;
    (void)argv;
    return ltx2_generate_loopback(ctx, p, &l->opts, r);
}
