/* The launch bootstrap: environment parsing (defaults, every error names its variable) and the
 * TCP rendezvous on 127.0.0.1 with 2-4 ranks as threads (every rank gets rank 0's bytes), plus a
 * peer with no rank 0 and a rank 0 with a missing peer, both ending in a timeout error in bounded
 * time. */
#define _POSIX_C_SOURCE 200809L
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dist/bootstrap.h"
#include "dist/comm.h"
#include "test_util.h"

/* Generous on a loaded machine; the exchange itself takes milliseconds. */
#define RDV_TIMEOUT_MS 20000
/* For the failure cases: short, and the test checks they end within a few times this. */
#define RDV_SHORT_MS 300

static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

typedef struct job {
    char addr[64];
    int rank, world, timeout_ms;
    unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES];
    ltx2_status st;
    char msg[512];
} job;

static void *rank_main(void *p) {
    job *j = p;
    ltx2_context *ctx = ltx2_context_create(NULL);
    j->st = ltx2_dist_rendezvous(ctx, j->addr, j->rank, j->world, j->id, sizeof j->id, j->timeout_ms);
    if (j->st != LTX2_OK) snprintf(j->msg, sizeof j->msg, "%s", ltx2_last_error(ctx));
    ltx2_context_free(ctx);
    return NULL;
}

static double ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

static void test_exchange(int world) {
    job jobs[4];
    pthread_t th[4];
    int port = free_port();
    CHECK(port > 0, "no free port");
    /* peers start first: they must retry until rank 0 listens */
    for (int r = world - 1; r >= 0; r--) {
        memset(&jobs[r], 0, sizeof jobs[r]);
        snprintf(jobs[r].addr, sizeof jobs[r].addr, "127.0.0.1:%d", port);
        jobs[r].rank = r;
        jobs[r].world = world;
        jobs[r].timeout_ms = RDV_TIMEOUT_MS;
        for (size_t i = 0; i < sizeof jobs[r].id; i++) jobs[r].id[i] = r == 0 ? (unsigned char)(i * 7 + 3) : 0;
        pthread_create(&th[r], NULL, rank_main, &jobs[r]);
    }
    for (int r = 0; r < world; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < world; r++) {
        CHECK(jobs[r].st == LTX2_OK, "world %d rank %d: %s", world, r, jobs[r].msg);
        CHECK(memcmp(jobs[r].id, jobs[0].id, sizeof jobs[0].id) == 0, "world %d rank %d: id differs", world, r);
    }
}

/* The log lines of the waits (what a rank says while it waits). */
typedef struct wait_log {
    int rank0_lines, peer_lines;
    char last[256];
} wait_log;

static void on_log(ltx2_log_level level, const char *msg, void *user) {
    wait_log *w = user;
    (void)level;
    if (strstr(msg, "rank 0 on") && strstr(msg, "waiting for ranks 1, 2 (1 of 3 joined")) w->rank0_lines++;
    if (strstr(msg, "rank 1 waiting for rank 0 at")) w->peer_lines++;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

static void test_timeouts(void) {
    wait_log wl = {0};
    ltx2_context_params cp;
    ltx2_context_params_init(&cp);
    cp.log_fn = on_log;
    cp.log_user = &wl;
    ltx2_context *ctx = ltx2_context_create(&cp);
    unsigned char id[16] = {0};
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", free_port());
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ltx2_status st = ltx2_dist_rendezvous(ctx, addr, 1, 2, id, sizeof id, RDV_SHORT_MS);
    double el = ms_since(&t0);
    CHECK(st == LTX2_ERR_DEVICE && strstr(ltx2_last_error(ctx), "could not reach rank 0"), "no rank 0: %d '%s'",
          (int)st, ltx2_last_error(ctx));
    CHECK(el < 10 * RDV_SHORT_MS, "no rank 0: took %.0f ms", el);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = ltx2_dist_rendezvous(ctx, addr, 0, 3, id, sizeof id, RDV_SHORT_MS);
    el = ms_since(&t0);
    CHECK(st == LTX2_ERR_DEVICE && strstr(ltx2_last_error(ctx), "1 of 3 ranks joined (missing: 1, 2)"),
          "missing peers: %d '%s'", (int)st, ltx2_last_error(ctx));
    CHECK(el < 10 * RDV_SHORT_MS, "missing peers: took %.0f ms", el);
    /* a 300 ms wait reports 4 times a timeout's quarter apart: at least twice before it ends */
    CHECK(wl.peer_lines >= 2 && wl.rank0_lines >= 2, "waiting ranks said who they wait for %d / %d times (last: %s)",
          wl.peer_lines, wl.rank0_lines, wl.last);
    CHECK(ltx2_dist_rendezvous(ctx, addr, 3, 2, id, sizeof id, 0) == LTX2_ERR_INVALID_ARG, "rank >= world accepted");
    ltx2_context_free(ctx);
}

static void test_env(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_dist_env e;
    CHECK(ltx2_dist_env_parse(ctx, NULL, NULL, NULL, NULL, NULL, &e) == LTX2_OK && e.rank == 0 && e.world_size == 1,
          "unset: single process");
    CHECK(ltx2_dist_env_parse(ctx, "3", "8", "1", NULL, "node0:29500", &e) == LTX2_OK && e.rank == 3 &&
              e.world_size == 8 && e.local_rank == 1 && strcmp(e.rendezvous, "node0:29500") == 0,
          "full env: %s", ltx2_last_error(ctx));
    CHECK(ltx2_dist_env_parse(ctx, "2", "4", NULL, "10.0.0.1:1234", NULL, &e) == LTX2_OK && e.local_rank == 2 &&
              strcmp(e.comm_id, "10.0.0.1:1234") == 0,
          "NCCL_COMM_ID: %s", ltx2_last_error(ctx));
    struct {
        const char *r, *w, *l, *id, *rdv, *needle;
    } bad[] = {
        {"1", NULL, NULL, NULL, "h:1", "set together"},
        {"x", "2", NULL, NULL, "h:1", "LTX2_RANK='x'"},
        {"2", "2", NULL, NULL, "h:1", "outside [0, LTX2_WORLD_SIZE=2)"},
        {"0", "0", NULL, NULL, "h:1", "LTX2_WORLD_SIZE=0"},
        {"0", "2", "-1", NULL, "h:1", "LTX2_LOCAL_RANK=-1"},
        {"0", "2", NULL, NULL, NULL, "needs NCCL_COMM_ID"},
        {"0", "2", NULL, NULL, "nohost", "not host:port"},
        {"0", "2", NULL, "h:99999", NULL, "1..65535"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ltx2_status st = ltx2_dist_env_parse(ctx, bad[i].r, bad[i].w, bad[i].l, bad[i].id, bad[i].rdv, &e);
        CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), bad[i].needle), "bad env %zu: %d '%s'", i,
              (int)st, ltx2_last_error(ctx));
    }
    char host[64];
    int port = 0;
    CHECK(ltx2_dist_parse_addr(ctx, "[::1]:80", host, sizeof host, &port) == LTX2_OK && strcmp(host, "::1") == 0 &&
              port == 80, "IPv6 address");
    ltx2_context_free(ctx);
}

int main(void) {
    test_env();
    for (int world = 2; world <= 4; world++) test_exchange(world);
    test_timeouts();
    return test_finish();
}
