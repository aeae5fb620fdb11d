/* Environment parsing and the TCP rendezvous that hands rank 0's NCCL unique id to the other
 * ranks (POSIX sockets, poll() for every wait so a missing peer ends in a timeout error). */
#define _POSIX_C_SOURCE 200809L
#include "dist/bootstrap.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/context.h"

/* "LTX2" - first word of every hello, so a stray client is told apart from a peer. */
#define RDV_MAGIC 0x4c545832u
/* Pause between connection attempts while rank 0 is not listening yet. */
#define RDV_RETRY_MS 20
/* A waiting rank says who it waits for this often (a launch with a dead or misconfigured rank is
 * otherwise silent for the whole timeout), or four times over a shorter timeout. */
#define RDV_REPORT_MS 10000
#define RDV_REPORTS_PER_TIMEOUT 4
/* Room for the list of missing ranks in a message. */
#define RDV_MISSING_CAP 160

static ltx2_status parse_int(ltx2_context *ctx, const char *var, const char *s, int *out) {
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < -1000000000L || v > 1000000000L)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: %s='%s' is not an integer", var, s);
    *out = (int)v;
    return LTX2_OK;
}

ltx2_status ltx2_dist_parse_addr(ltx2_context *ctx, const char *addr, char *host, size_t host_cap, int *port) {
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    if (!colon || colon == addr)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: address '%s' is not host:port", addr ? addr : "(null)");
    const char *h = addr;
    size_t hl = (size_t)(colon - addr);
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') h++, hl -= 2;
    if (hl == 0 || hl >= host_cap)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: host of '%s' is empty or too long", addr);
    int p = 0;
    if (parse_int(ctx, "port", colon + 1, &p) != LTX2_OK || p <= 0 || p > 65535)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: port of '%s' must be 1..65535", addr);
    memcpy(host, h, hl);
    host[hl] = 0;
    *port = p;
    return LTX2_OK;
}

ltx2_status ltx2_dist_env_parse(ltx2_context *ctx, const char *rank, const char *world_size, const char *local_rank,
                                const char *comm_id, const char *rendezvous, ltx2_dist_env *out) {
    memset(out, 0, sizeof *out);
    out->world_size = 1;
    if (!rank != !world_size)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: LTX2_RANK and LTX2_WORLD_SIZE must be set together "
                          "(LTX2_RANK %s, LTX2_WORLD_SIZE %s)", rank ? "set" : "unset", world_size ? "set" : "unset");
    if (rank) {
        LTX2_TRY(parse_int(ctx, "LTX2_RANK", rank, &out->rank));
        LTX2_TRY(parse_int(ctx, "LTX2_WORLD_SIZE", world_size, &out->world_size));
        if (out->world_size < 1)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: LTX2_WORLD_SIZE=%d must be >= 1", out->world_size);
        if (out->rank < 0 || out->rank >= out->world_size)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: LTX2_RANK=%d outside [0, LTX2_WORLD_SIZE=%d)",
                              out->rank, out->world_size);
    }
    out->local_rank = out->rank;
    if (local_rank) {
        LTX2_TRY(parse_int(ctx, "LTX2_LOCAL_RANK", local_rank, &out->local_rank));
        if (out->local_rank < 0)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: LTX2_LOCAL_RANK=%d must be >= 0", out->local_rank);
    }
    char host[LTX2_DIST_ADDR_MAX];
    int port = 0;
    if (comm_id && *comm_id) {
        if (strlen(comm_id) >= sizeof out->comm_id)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: NCCL_COMM_ID too long");
        LTX2_TRY(ltx2_dist_parse_addr(ctx, comm_id, host, sizeof host, &port));
        snprintf(out->comm_id, sizeof out->comm_id, "%s", comm_id);
    }
    if (rendezvous && *rendezvous) {
        if (strlen(rendezvous) >= sizeof out->rendezvous)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: LTX2_RENDEZVOUS too long");
        LTX2_TRY(ltx2_dist_parse_addr(ctx, rendezvous, host, sizeof host, &port));
        snprintf(out->rendezvous, sizeof out->rendezvous, "%s", rendezvous);
    }
    if (out->world_size > 1 && !out->comm_id[0] && !out->rendezvous[0])
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "bootstrap: LTX2_WORLD_SIZE=%d needs NCCL_COMM_ID=host:port or "
                          "LTX2_RENDEZVOUS=host:port to agree on the NCCL id", out->world_size);
    return LTX2_OK;
}

ltx2_status ltx2_dist_env_read(ltx2_context *ctx, ltx2_dist_env *out) {
    return ltx2_dist_env_parse(ctx, getenv("LTX2_RANK"), getenv("LTX2_WORLD_SIZE"), getenv("LTX2_LOCAL_RANK"),
                               getenv("NCCL_COMM_ID"), getenv("LTX2_RENDEZVOUS"), out);
}

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits for `events` on fd until the deadline; 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline) {
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) return 0;
        struct pollfd p = {fd, events, 0};
        int r = poll(&p, 1, (int)left);
        if (r > 0) return (p.revents & (POLLERR | POLLNVAL)) && !(p.revents & events) ? -1 : 1;
        if (r < 0 && errno != EINTR) return -1;
    }
}

/* Moves exactly n bytes (send when out != NULL, else receive into in) before the deadline. */
static ltx2_status xfer(ltx2_context *ctx, int fd, const void *out, void *in, size_t n, int64_t deadline,
                        const char *what) {
    size_t done = 0;
    while (done < n) {
        int w = wait_fd(fd, out ? POLLOUT : POLLIN, deadline);
        if (w == 0) return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "rendezvous: timed out during %s (%zu of %zu bytes)", what, done, n);
        if (w < 0) return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "rendezvous: socket error during %s", what);
        ssize_t k = out ? send(fd, (const char *)out + done, n - done, MSG_NOSIGNAL)
                        : recv(fd, (char *)in + done, n - done, 0);
        if (k == 0) return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "rendezvous: peer closed during %s", what);
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
            return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "rendezvous: %s failed: %s", what, strerror(errno));
        }
        done += (size_t)k;
    }
    return LTX2_OK;
}

static ltx2_status resolve(ltx2_context *ctx, const char *addr, bool passive, struct addrinfo **res) {
    char host[LTX2_DIST_ADDR_MAX], port_s[16];
    int port = 0;
    LTX2_TRY(ltx2_dist_parse_addr(ctx, addr, host, sizeof host, &port));
    snprintf(port_s, sizeof port_s, "%d", port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    int e = getaddrinfo(host, port_s, &hints, res);
    if (e) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "rendezvous: cannot resolve '%s': %s", addr, gai_strerror(e));
    return LTX2_OK;
}

static void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

/* The interval between "still waiting" lines for a wait of timeout_ms. */
static int64_t report_every(int64_t timeout_ms) {
    const int64_t q = timeout_ms / RDV_REPORTS_PER_TIMEOUT;
    return q < RDV_REPORT_MS ? (q > 0 ? q : 1) : RDV_REPORT_MS;
}

/* "2, 5, 6" of the ranks 1..world-1 not seen yet (truncated with "..." past cap). */
static void missing_ranks(const uint8_t *seen, int world_size, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (int r = 1; r < world_size && used + 16 < cap; r++)
        if (!seen[r]) used += (size_t)snprintf(buf + used, cap - used, "%s%d", used ? ", " : "", r);
    if (used + 16 >= cap) snprintf(buf + used, cap - used, ", ...");
}

static ltx2_status serve(ltx2_context *ctx, const char *addr, int world_size, const void *blob, size_t n,
                         int64_t deadline, int64_t every) {
    struct addrinfo *ai = NULL;
    LTX2_TRY(resolve(ctx, addr, true, &ai));
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    int one = 1;
    ltx2_status st = LTX2_OK;
    if (fd < 0) st = LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "rendezvous: socket: %s", strerror(errno));
    if (st == LTX2_OK) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (st == LTX2_OK && (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, world_size) != 0))
        st = LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "rendezvous: rank 0 cannot listen on %s: %s", addr, strerror(errno));
    freeaddrinfo(ai);
    if (st == LTX2_OK) set_nonblocking(fd);
    uint8_t *seen = calloc((size_t)world_size, 1);
    if (st == LTX2_OK && !seen) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "rendezvous: %d ranks", world_size);
    char missing[RDV_MISSING_CAP];
    int64_t next_report = now_ms() + every;
    for (int got = 1; st == LTX2_OK && got < world_size;) {
        const int64_t until = next_report < deadline ? next_report : deadline;
        int w = wait_fd(fd, POLLIN, until);
        if (w == 0 && until < deadline) { /* not over: say who is missing, and wait on */
            missing_ranks(seen, world_size, missing, sizeof missing);
            LTX2_LOGI(ctx, "rendezvous: rank 0 on %s waiting for rank%s %s (%d of %d joined, %.0f s left)", addr,
                      world_size - got > 1 ? "s" : "", missing, got, world_size, (double)(deadline - now_ms()) / 1e3);
            next_report += every;
            continue;
        }
        if (w <= 0) {
            missing_ranks(seen, world_size, missing, sizeof missing);
            st = LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "rendezvous: rank 0 on %s %s with %d of %d ranks joined (missing: %s)",
                            addr, w == 0 ? "timed out" : "failed", got, world_size, missing);
            break;
        }
        int c = accept(fd, NULL, NULL);
        if (c < 0) continue;
        set_nonblocking(c);
        uint32_t hello[4];
        st = xfer(ctx, c, NULL, hello, sizeof hello, deadline, "the hello from a peer");
        if (st == LTX2_OK && (hello[0] != RDV_MAGIC || (int)hello[2] != world_size || hello[3] != (uint32_t)n ||
                              (int)hello[1] <= 0 || (int)hello[1] >= world_size || seen[hello[1]]))
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                            "rendezvous: bad peer hello (magic %08x, rank %u, world %u, %u bytes; expected world %d, "
                            "%zu bytes, a new rank in 1..%d)", hello[0], hello[1], hello[2], hello[3], world_size, n,
                            world_size - 1);
        if (st == LTX2_OK) {
            seen[hello[1]] = 1;
            got++;
            st = xfer(ctx, c, blob, NULL, n, deadline, "sending the id");
        }
        close(c);
    }
    free(seen);
    if (fd >= 0) close(fd);
    return st;
}

static ltx2_status join(ltx2_context *ctx, const char *addr, int rank, int world_size, void *blob, size_t n,
                        int64_t deadline, int64_t every) {
    int64_t next_report = now_ms() + every;
    for (;;) {
        struct addrinfo *ai = NULL;
        LTX2_TRY(resolve(ctx, addr, false, &ai));
        int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        int ok = fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0;
        freeaddrinfo(ai);
        if (ok) {
            set_nonblocking(fd);
            uint32_t hello[4] = {RDV_MAGIC, (uint32_t)rank, (uint32_t)world_size, (uint32_t)n};
            ltx2_status st = xfer(ctx, fd, hello, NULL, sizeof hello, deadline, "the hello to rank 0");
            if (st == LTX2_OK) st = xfer(ctx, fd, NULL, blob, n, deadline, "receiving the id from rank 0");
            close(fd);
            return st;
        }
        if (fd >= 0) close(fd);
        if (now_ms() + RDV_RETRY_MS >= deadline)
            return LTX2_ERROR(ctx, LTX2_ERR_DEVICE, "rendezvous: rank %d could not reach rank 0 at %s before the "
                              "timeout (is rank 0 running, and LTX2_RENDEZVOUS the same on every rank?)", rank, addr);
        if (now_ms() >= next_report) {
            LTX2_LOGI(ctx, "rendezvous: rank %d waiting for rank 0 at %s (%.0f s left)", rank, addr,
                      (double)(deadline - now_ms()) / 1e3);
            next_report += every;
        }
        struct timespec ts = {0, RDV_RETRY_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
}

ltx2_status ltx2_dist_rendezvous(ltx2_context *ctx, const char *addr, int rank, int world_size, void *blob, size_t n,
                                 int timeout_ms) {
    if (!addr || !blob || n == 0 || n > UINT32_MAX || world_size < 1 || rank < 0 || rank >= world_size)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "rendezvous: bad arguments (rank %d of %d, %zu bytes)", rank,
                          world_size, n);
    if (world_size == 1) return LTX2_OK;
    const int64_t timeout = timeout_ms > 0 ? timeout_ms : LTX2_RENDEZVOUS_DEFAULT_TIMEOUT_MS;
    const int64_t deadline = now_ms() + timeout, every = report_every(timeout);
    return rank == 0 ? serve(ctx, addr, world_size, blob, n, deadline, every)
                     : join(ctx, addr, rank, world_size, blob, n, deadline, every);
}
