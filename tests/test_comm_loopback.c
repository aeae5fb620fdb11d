/* The loopback communicator against serial computations: every collective for P in {1,2,4,8}
 * (and a ragged P=3) over ragged counts, f32 bitwise and bf16; sub-communicators by mesh axis on a
 * 2x2x2 mesh; abort, timeout and mismatched collectives end every rank with a message, never a hang.
 * Reduction order checked bitwise: out[i] = (((x_0[i] + x_1[i]) + x_2[i]) + ...) in f32, ranks in
 * communicator order (the order comm_loopback.c documents). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/context.h"
#include "core/dtype.h"
#include "dist/comm.h"
#include "test_util.h"

/* Element counts: empty, single, odd, and sizes that are not multiples of any P or SIMD width. */
static const size_t ragged_counts[] = {0, 1, 3, 17, 1000, 1027};
#define N_COUNTS (sizeof(ragged_counts) / sizeof(ragged_counts[0]))
/* Short enough that the timeout test ends quickly, long for everything else (loaded CI boxes). */
#define TIMEOUT_TEST_MS 300
#define ABORT_TEST_TIMEOUT_MS 20000
/* An abort must wake peers far sooner than the world timeout it was configured with. */
#define ABORT_WAKE_LIMIT_MS 10000

typedef struct rank_job rank_job;
typedef void (*rank_fn)(rank_job *j, ltx2_comm *c, ltx2_context *ctx);

struct rank_job {
    ltx2_loopback_world *w;
    int rank;
    rank_fn fn;
    const void *arg;
    int checks, fails;
    ltx2_status st;        /* last status a job wants reported */
    char err[LTX2_ERROR_CAP];
    char first_fail[256];
};

/* Per-thread checks: CHECK's counters are not thread-safe, so ranks tally here. */
#define RCHECK(j, cond, ...)                                                                     \
    do {                                                                                         \
        (j)->checks++;                                                                           \
        if (!(cond)) {                                                                           \
            if (!(j)->fails++) snprintf((j)->first_fail, sizeof((j)->first_fail), __VA_ARGS__); \
        }                                                                                        \
    } while (0)

static void *rank_main(void *p) {
    rank_job *j = p;
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_comm *c = NULL;
    if (!ctx || ltx2_loopback_comm(ctx, j->w, j->rank, &c) != LTX2_OK) {
        j->fails++;
        snprintf(j->first_fail, sizeof(j->first_fail), "rank %d: setup failed", j->rank);
    } else {
        j->fn(j, c, ctx);
    }
    ltx2_comm_free(c);
    ltx2_context_free(ctx);
    return NULL;
}

/* Runs fn on every rank of a fresh world; returns wall milliseconds. Results land in jobs[]. */
static double run_world(const ltx2_mesh *mesh, int timeout_ms, rank_fn fn, const void *arg, rank_job *jobs) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_loopback_world *w = NULL;
    int P = ltx2_mesh_world_size(mesh);
    CHECK(ltx2_loopback_world_create(ctx, mesh, timeout_ms, &w) == LTX2_OK, "world: %s", ltx2_last_error(ctx));
    pthread_t th[64];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < P; r++) {
        memset(&jobs[r], 0, sizeof(jobs[r]));
        jobs[r] = (rank_job){.w = w, .rank = r, .fn = fn, .arg = arg};
        pthread_create(&th[r], NULL, rank_main, &jobs[r]);
    }
    for (int r = 0; r < P; r++) pthread_join(th[r], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ltx2_loopback_world_free(w);
    ltx2_context_free(ctx);
    return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
}

static void report(const char *what, int P, const rank_job *jobs) {
    for (int r = 0; r < P; r++)
        CHECK(jobs[r].fails == 0, "%s P=%d rank %d: %d of %d checks failed; first: %s", what, P, r, jobs[r].fails,
              jobs[r].checks, jobs[r].first_fail);
}

/* Deterministic values of widely varying magnitude and sign, so summation order shows in the bits. */
static float val(int a, int b, size_t i) {
    uint32_t h = (uint32_t)a * 2654435761u ^ (uint32_t)b * 40503u ^ (uint32_t)i * 2246822519u;
    h ^= h >> 15;
    h *= 2654435769u;
    h ^= h >> 13;
    float m = (float)(h & 0xFFFF) / 65536.0f - 0.5f;
    int e = (int)((h >> 16) % 13) - 6;
    float s = 1.0f;
    while (e > 0) s *= 10.0f, e--;
    while (e < 0) s *= 0.1f, e++;
    return m * s;
}

static void fill(void *buf, ltx2_dtype dt, size_t n, int a, int b) {
    for (size_t i = 0; i < n; i++) {
        float v = val(a, b, i);
        if (dt == LTX2_F32) ((float *)buf)[i] = v;
        else ((uint16_t *)buf)[i] = ltx2_f32_to_bf16(v);
    }
}

static float elem(const void *buf, ltx2_dtype dt, size_t i) {
    return dt == LTX2_F32 ? ((const float *)buf)[i] : ltx2_bf16_to_f32(((const uint16_t *)buf)[i]);
}

/* The serial reduction the loopback backend promises: f32 left fold over ranks, one rounding. */
static void serial_sum(void *out, ltx2_dtype dt, int P, size_t n, size_t offset, int tag, int total) {
    size_t es = ltx2_dtype_size(dt);
    unsigned char *all = malloc((size_t)P * (size_t)total * es + es);
    for (int r = 0; r < P; r++) fill(all + (size_t)r * (size_t)total * es, dt, (size_t)total, r, tag);
    for (size_t i = 0; i < n; i++) {
        float acc = elem(all, dt, offset + i);
        for (int r = 1; r < P; r++) acc += elem(all + (size_t)r * (size_t)total * es, dt, offset + i);
        if (dt == LTX2_F32) ((float *)out)[i] = acc;
        else ((uint16_t *)out)[i] = ltx2_f32_to_bf16(acc);
    }
    free(all);
}

typedef struct coll_arg {
    ltx2_dtype dt;
} coll_arg;

static void all_collectives(rank_job *j, ltx2_comm *c, ltx2_context *ctx) {
    ltx2_dtype dt = ((const coll_arg *)j->arg)->dt;
    size_t es = ltx2_dtype_size(dt);
    int P = c->size, me = c->rank;
    for (size_t ci = 0; ci < N_COUNTS; ci++) {
        size_t n = ragged_counts[ci];
        size_t big = (size_t)P * n;
        unsigned char *send = malloc(big * es + es), *recv = malloc(big * es + es), *want = malloc(big * es + es);

        /* all_gather */
        fill(send, dt, n, me, 1);
        ltx2_status st = ltx2_comm_all_gather(c, ctx, send, recv, n, dt);
        RCHECK(j, st == LTX2_OK, "all_gather n=%zu: %s", n, ltx2_last_error(ctx));
        for (int r = 0; r < P; r++) fill(want + (size_t)r * n * es, dt, n, r, 1);
        RCHECK(j, !memcmp(recv, want, big * es), "all_gather n=%zu: wrong data", n);

        /* all_to_all: block k of rank r's send is val(r, 100 + k). */
        for (int k = 0; k < P; k++) fill(send + (size_t)k * n * es, dt, n, me, 100 + k);
        st = ltx2_comm_all_to_all(c, ctx, send, recv, n, dt);
        RCHECK(j, st == LTX2_OK, "all_to_all n=%zu: %s", n, ltx2_last_error(ctx));
        for (int r = 0; r < P; r++) fill(want + (size_t)r * n * es, dt, n, r, 100 + me);
        RCHECK(j, !memcmp(recv, want, big * es), "all_to_all n=%zu: wrong data", n);

        /* all_reduce, bitwise against the serial fold */
        fill(send, dt, n, me, 2);
        st = ltx2_comm_all_reduce(c, ctx, send, recv, n, dt);
        RCHECK(j, st == LTX2_OK, "all_reduce n=%zu: %s", n, ltx2_last_error(ctx));
        serial_sum(want, dt, P, n, 0, 2, (int)n);
        RCHECK(j, !memcmp(recv, want, n * es), "all_reduce n=%zu: not bitwise equal to the serial sum", n);

        /* in place */
        fill(recv, dt, n, me, 2);
        st = ltx2_comm_all_reduce(c, ctx, recv, recv, n, dt);
        RCHECK(j, st == LTX2_OK && !memcmp(recv, want, n * es), "in-place all_reduce n=%zu", n);

        /* reduce_scatter: send has P*n elements val(r, 3); rank me gets block me of the sum. */
        fill(send, dt, big, me, 3);
        st = ltx2_comm_reduce_scatter(c, ctx, send, recv, n, dt);
        RCHECK(j, st == LTX2_OK, "reduce_scatter n=%zu: %s", n, ltx2_last_error(ctx));
        serial_sum(want, dt, P, n, (size_t)me * n, 3, (int)big);
        RCHECK(j, !memcmp(recv, want, n * es), "reduce_scatter n=%zu: not bitwise equal", n);

        /* broadcast from the last rank and from rank 0 */
        for (int root = P - 1; root >= 0; root -= (P > 1 ? P - 1 : 1)) {
            fill(send, dt, n, me, 4);
            memset(recv, 0, n * es + es);
            st = ltx2_comm_broadcast(c, ctx, me == root ? send : NULL, recv, n, dt, root);
            RCHECK(j, st == LTX2_OK, "broadcast root %d n=%zu: %s", root, n, ltx2_last_error(ctx));
            fill(want, dt, n, root, 4);
            RCHECK(j, !memcmp(recv, want, n * es), "broadcast root %d n=%zu: wrong data", root, n);
        }
        RCHECK(j, ltx2_comm_barrier(c, ctx) == LTX2_OK, "barrier: %s", ltx2_last_error(ctx));
        free(send);
        free(recv);
        free(want);
    }
}

static void test_collectives(void) {
    static const int Ps[] = {1, 2, 3, 4, 8};
    rank_job jobs[8];
    for (size_t pi = 0; pi < sizeof(Ps) / sizeof(Ps[0]); pi++) {
        for (int d = 0; d < 2; d++) {
            coll_arg a = {d ? LTX2_BF16 : LTX2_F32};
            ltx2_mesh m = {{1, 1, Ps[pi], 1}};
            run_world(&m, 0, all_collectives, &a, jobs);
            report(d ? "collectives bf16" : "collectives f32", Ps[pi], jobs);
        }
    }
}

/* ---- sub-communicators on data=2, fsdp=1, context=2, tensor=2 ---- */

static void sub_comms(rank_job *j, ltx2_comm *c, ltx2_context *ctx) {
    static const unsigned masks[] = {LTX2_AXIS_BIT(LTX2_AXIS_DATA), LTX2_AXIS_BIT(LTX2_AXIS_CONTEXT),
                                     LTX2_AXIS_BIT(LTX2_AXIS_TENSOR),
                                     LTX2_AXIS_BIT(LTX2_AXIS_CONTEXT) | LTX2_AXIS_BIT(LTX2_AXIS_FSDP),
                                     LTX2_AXIS_BIT(LTX2_AXIS_DATA) | LTX2_AXIS_BIT(LTX2_AXIS_TENSOR), LTX2_AXIS_ALL};
    int coords[LTX2_AXIS_COUNT];
    ltx2_mesh_coords(&c->mesh, c->rank, coords);
    for (size_t mi = 0; mi < sizeof(masks) / sizeof(masks[0]); mi++) {
        unsigned mask = masks[mi];
        ltx2_comm *sub = NULL;
        ltx2_status st = ltx2_comm_split_axes(c, ctx, mask, &sub);
        RCHECK(j, st == LTX2_OK && sub, "split mask 0x%x: %s", mask, ltx2_last_error(ctx));
        if (!sub) continue;
        /* Expected members: every world rank sharing my coordinates outside the mask, row-major. */
        int expect_size = ltx2_mesh_axes_size(&c->mesh, mask), expect_rank = 0;
        for (int a = 0; a < LTX2_AXIS_COUNT; a++)
            if (mask & LTX2_AXIS_BIT(a)) expect_rank = expect_rank * c->mesh.size[a] + coords[a];
        RCHECK(j, sub->size == expect_size && sub->rank == expect_rank,
               "split mask 0x%x: got rank %d of %d, want %d of %d", mask, sub->rank, sub->size, expect_rank, expect_size);
        float mine = (float)c->rank, got[8] = {0}, sum = 0;
        st = ltx2_comm_all_gather(sub, ctx, &mine, got, 1, LTX2_F32);
        RCHECK(j, st == LTX2_OK, "sub all_gather: %s", ltx2_last_error(ctx));
        for (int k = 0; k < sub->size && k < 8; k++) {
            int kc[LTX2_AXIS_COUNT];
            memcpy(kc, coords, sizeof(kc));
            ltx2_mesh_coords(&sub->mesh, k, kc); /* sub mesh: masked axes only, others size 1 -> 0 */
            int wc[LTX2_AXIS_COUNT];
            for (int a = 0; a < LTX2_AXIS_COUNT; a++) wc[a] = (mask & LTX2_AXIS_BIT(a)) ? kc[a] : coords[a];
            RCHECK(j, got[k] == (float)ltx2_mesh_rank(&c->mesh, wc), "split mask 0x%x member %d is world rank %g, want %d",
                   mask, k, (double)got[k], ltx2_mesh_rank(&c->mesh, wc));
        }
        st = ltx2_comm_all_reduce(sub, ctx, &mine, &sum, 1, LTX2_F32);
        float want = 0;
        for (int k = 0; k < sub->size && k < 8; k++) want += got[k];
        RCHECK(j, st == LTX2_OK && sum == want, "sub all_reduce mask 0x%x: %g vs %g", mask, (double)sum, (double)want);
        /* Split again by a single axis inside the sub-communicator. */
        if (mask == (LTX2_AXIS_BIT(LTX2_AXIS_DATA) | LTX2_AXIS_BIT(LTX2_AXIS_TENSOR))) {
            ltx2_comm *t = NULL;
            st = ltx2_comm_split_axes(sub, ctx, LTX2_AXIS_BIT(LTX2_AXIS_TENSOR), &t);
            RCHECK(j, st == LTX2_OK && t && t->size == 2 && t->rank == coords[LTX2_AXIS_TENSOR], "nested split");
            ltx2_comm_free(t);
        }
        ltx2_comm_free(sub);
    }
}

static void test_sub_comms(void) {
    rank_job jobs[8];
    ltx2_mesh m = {{2, 1, 2, 2}};
    run_world(&m, 0, sub_comms, NULL, jobs);
    report("sub-communicators", 8, jobs);
}

/* ---- a string from rank 0 (ltx2_comm_broadcast_text) ---- */

/* Lengths 0 .. 6 mod 4 around the word size, multi-byte UTF-8, and a byte that is a NaN's in a float
 * word (0xff 0xff 0xff 0x7f): moved, never computed on. */
static const char *const texts[] = {"", "a", "abcd", "h\xc3\xa9llo, \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x99\x82",
                                    "\xff\xff\xff\x7f nan bits"};

static void texts_rank(rank_job *j, ltx2_comm *c, ltx2_context *ctx) {
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        char *got = NULL;
        const ltx2_status st = ltx2_comm_broadcast_text(c, ctx, j->rank == 0 ? texts[k] : "not mine", &got);
        RCHECK(j, st == LTX2_OK, "text %zu: %s", k, ltx2_last_error(ctx));
        if (texts[k][0])
            RCHECK(j, got && !strcmp(got, texts[k]), "text %zu: got '%s'", k, got ? got : "(none)");
        else
            RCHECK(j, got == NULL, "text %zu: the empty string must arrive as none, got '%s'", k, got ? got : "");
        free(got);
    }
    char *none = NULL; /* rank 0 has none */
    RCHECK(j, ltx2_comm_broadcast_text(c, ctx, NULL, &none) == LTX2_OK && !none, "NULL text: %s", ltx2_last_error(ctx));
}

static void test_texts(void) {
    rank_job jobs[3];
    ltx2_mesh m = {{1, 1, 3, 1}};
    run_world(&m, 0, texts_rank, NULL, jobs);
    report("broadcast_text", 3, jobs);
}

/* ---- which ranks pass equal keys (ltx2_comm_count_equal) ---- */

/* 16-byte keys (a GPU UUID's size) over 5 ranks: ranks 0, 2 and 3 equal, rank 1 differing from
 * them in its last byte only, rank 4 differing in its first; then a 5-byte key (a partial word)
 * that every rank shares, and an oversized one refused. */
static void keys_rank(rank_job *j, ltx2_comm *c, ltx2_context *ctx) {
    unsigned char key[16];
    for (int i = 0; i < 16; i++) key[i] = (unsigned char)(0xa0 + i);
    if (j->rank == 1) key[15] ^= 1;
    if (j->rank == 4) key[0] = 0xff; /* with 0xff 0xff 0x7f after it: a NaN's bytes */
    if (j->rank == 4) key[1] = 0xff, key[2] = 0xff, key[3] = 0x7f;
    const int want[5] = {3, 1, 3, 3, 1};
    int n = -1;
    RCHECK(j, ltx2_comm_count_equal(c, ctx, key, sizeof key, &n) == LTX2_OK && n == want[j->rank],
           "16-byte key: %d ranks, expected %d (%s)", n, want[j->rank], ltx2_last_error(ctx));
    RCHECK(j, ltx2_comm_count_equal(c, ctx, "abcde", 5, &n) == LTX2_OK && n == 5, "5-byte key: %d ranks (%s)", n,
           ltx2_last_error(ctx));
    char big[LTX2_COMM_KEY_MAX + 1] = {0};
    RCHECK(j, ltx2_comm_count_equal(c, ctx, big, sizeof big, &n) == LTX2_ERR_INVALID_ARG, "an oversized key passed");
}

static void test_keys(void) {
    rank_job jobs[5];
    ltx2_mesh m = {{1, 1, 5, 1}};
    run_world(&m, 0, keys_rank, NULL, jobs);
    report("count_equal", 5, jobs);
}

/* ---- failures end every rank ---- */

#define ABORT_RANK 2

static void abort_mid(rank_job *j, ltx2_comm *c, ltx2_context *ctx) {
    float x[5] = {1, 2, 3, 4, 5}, y[5];
    /* One good collective first, so the abort really lands mid-job. */
    RCHECK(j, ltx2_comm_all_reduce(c, ctx, x, y, 5, LTX2_F32) == LTX2_OK, "warm-up: %s", ltx2_last_error(ctx));
    if (c->rank == ABORT_RANK) {
        ltx2_comm_abort(c, "simulated out-of-memory in the attention kernel");
        return;
    }
    j->st = ltx2_comm_all_reduce(c, ctx, x, y, 5, LTX2_F32);
    snprintf(j->err, sizeof(j->err), "%s", ltx2_last_error(ctx));
    /* The abort is sticky: later calls fail at once too. */
    RCHECK(j, ltx2_comm_barrier(c, ctx) == LTX2_ERR_DEVICE, "barrier after abort should fail");
}

static void skip_barrier(rank_job *j, ltx2_comm *c, ltx2_context *ctx) {
    if (c->rank == c->size - 1) return; /* a rank that crashed without telling anyone */
    j->st = ltx2_comm_barrier(c, ctx);
    snprintf(j->err, sizeof(j->err), "%s", ltx2_last_error(ctx));
}

static void mismatch(rank_job *j, ltx2_comm *c, ltx2_context *ctx) {
    float x[4] = {0}, y[16];
    if (c->rank == 1) j->st = ltx2_comm_all_gather(c, ctx, x, y, 4, LTX2_F32);
    else j->st = ltx2_comm_all_reduce(c, ctx, x, y, 4, LTX2_F32);
    snprintf(j->err, sizeof(j->err), "%s", ltx2_last_error(ctx));
}

static void test_failures(void) {
    rank_job jobs[8];
    ltx2_mesh m = {{1, 1, 4, 1}};
    double ms = run_world(&m, ABORT_TEST_TIMEOUT_MS, abort_mid, NULL, jobs);
    report("abort", 4, jobs);
    CHECK(ms < ABORT_WAKE_LIMIT_MS, "abort took %.0f ms to wake the other ranks", ms);
    for (int r = 0; r < 4; r++) {
        if (r == ABORT_RANK) continue;
        CHECK(jobs[r].st == LTX2_ERR_DEVICE, "rank %d: status %s after a peer aborted", r, ltx2_status_name(jobs[r].st));
        CHECK(strstr(jobs[r].err, "rank 2") && strstr(jobs[r].err, "simulated out-of-memory"),
              "rank %d message does not name the failing rank and reason: %s", r, jobs[r].err);
    }

    ms = run_world(&m, TIMEOUT_TEST_MS, skip_barrier, NULL, jobs);
    CHECK(ms < TIMEOUT_TEST_MS + ABORT_WAKE_LIMIT_MS, "timeout took %.0f ms", ms);
    for (int r = 0; r < 3; r++) {
        CHECK(jobs[r].st == LTX2_ERR_DEVICE, "rank %d: status %s when a peer never arrived", r,
              ltx2_status_name(jobs[r].st));
        CHECK(strstr(jobs[r].err, "timed out") && strstr(jobs[r].err, "3 of 4"), "rank %d timeout message: %s", r,
              jobs[r].err);
    }

    run_world(&m, ABORT_TEST_TIMEOUT_MS, mismatch, NULL, jobs);
    for (int r = 0; r < 4; r++)
        CHECK(jobs[r].st == LTX2_ERR_DEVICE && strstr(jobs[r].err, "mismatch") && strstr(jobs[r].err, "all_gather"),
              "rank %d: mismatched collectives: %s", r, jobs[r].err);
}

/* ---- argument checks and the mesh ---- */

static void bad_dtype(rank_job *j, ltx2_comm *c, ltx2_context *ctx) {
    uint16_t x[2] = {0}, y[2];
    RCHECK(j, ltx2_comm_all_reduce(c, ctx, x, y, 2, LTX2_F16) == LTX2_ERR_DTYPE, "f16 must be refused");
    RCHECK(j, ltx2_comm_broadcast(c, ctx, x, y, 1, LTX2_BF16, 5) == LTX2_ERR_INVALID_ARG, "bad root must be refused");
    RCHECK(j, ltx2_comm_all_gather(c, ctx, NULL, y, 1, LTX2_F32) == LTX2_ERR_INVALID_ARG, "NULL send must be refused");
    ltx2_comm *sub = NULL;
    RCHECK(j, ltx2_comm_split_axes(c, ctx, 0, &sub) == LTX2_ERR_INVALID_ARG && !sub, "empty axis mask must be refused");
}

static void test_args_and_mesh(void) {
    rank_job jobs[2];
    ltx2_mesh m = {{1, 1, 2, 1}};
    run_world(&m, 0, bad_dtype, NULL, jobs);
    report("argument checks", 2, jobs);

    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_mesh p;
    CHECK(ltx2_mesh_parse(ctx, "2,1,2,2", &p) == LTX2_OK && p.size[0] == 2 && p.size[2] == 2 && p.size[3] == 2,
          "parse 2,1,2,2");
    CHECK(ltx2_mesh_world_size(&p) == 8, "world size");
    for (int r = 0; r < 8; r++) {
        int co[LTX2_AXIS_COUNT];
        ltx2_mesh_coords(&p, r, co);
        CHECK(ltx2_mesh_rank(&p, co) == r, "rank %d round trip", r);
        CHECK(co[LTX2_AXIS_TENSOR] == r % 2 && co[LTX2_AXIS_DATA] == r / 4, "rank %d: tensor must be fastest", r);
    }
    static const char *const bad[] = {"", "1,1,1", "1,1,1,1,1", "0,1,1,1", "1,-1,1,1", "a,1,1,1", "1,1,1,2x", NULL};
    for (int i = 0; bad[i]; i++) {
        CHECK(ltx2_mesh_parse(ctx, bad[i], &p) == LTX2_ERR_INVALID_ARG, "mesh '%s' must be refused", bad[i]);
        CHECK(strstr(ltx2_last_error(ctx), "mesh") != NULL, "message: %s", ltx2_last_error(ctx));
    }
    ltx2_comm *nc = NULL;
    unsigned char id[LTX2_NCCL_UNIQUE_ID_BYTES] = {0};
#ifndef LTX2_HAVE_NCCL
    CHECK(ltx2_comm_nccl_init(ctx, &m, 0, 0, id, &nc) == LTX2_ERR_UNSUPPORTED && !nc, "no NCCL: unsupported");
#else
    (void)nc, (void)id;
#endif
    ltx2_context_free(ctx);
}

int main(void) {
    test_collectives();
    test_sub_comms();
    test_texts();
    test_keys();
    test_failures();
    test_args_and_mesh();
    return test_finish();
}
