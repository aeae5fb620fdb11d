/* A profiling backend for benches: it runs every call on an inner backend (CPU, CUDA) and, around
 * each op, waits for the inner backend's queue and adds the op's wall time to that op's account, so
 * a model forward run through it says where its time goes (GEMMs, attention, the elementwise ops,
 * transfers). The waits serialise the device and add a launch-and-sync gap per op: the shares are
 * those of a profiled run; the bench times the real total on the inner backend itself. */
#ifndef LTX2_BENCH_PROFILE_BACKEND_H
#define LTX2_BENCH_PROFILE_BACKEND_H

#include <stdint.h>

#include "backend/backend.h"

/* The account of uploads, downloads and device copies (after the ops'). */
#define PROF_TRANSFER LTX2_OP_COUNT
#define PROF_SLOTS (LTX2_OP_COUNT + 1)

typedef struct prof_account {
    double seconds[PROF_SLOTS];
    int64_t calls[PROF_SLOTS];
} prof_account;

/* A backend over inner (which must outlive it); free with ltx2_backend_free. */
ltx2_status prof_backend_create(ltx2_context *ctx, const ltx2_backend *inner, ltx2_backend **out);
struct bench_report;
/* Where one profiled run spent its time (titled `what`), as shares of the ops' total: GEMMs, attention
 * and RoPE, norms and elementwise, transfers; then each op's calls and time. wall_s > 0: the run's
 * wall time too, and what lay outside every op (host work between ops: tables, conversions, plans). */
void prof_report(struct bench_report *r, const prof_account *a, double wall_s, const char *what);

/* The time and calls per op since creation or the last reset. */
prof_account prof_backend_account(const ltx2_backend *be);
void prof_backend_reset(ltx2_backend *be);

#endif
