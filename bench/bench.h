/* Bench harness shared by bench/bench_*.c: argument parsing (--json PATH, --quick), a monotonic
 * clock, warm-up + median-of-N timing under a time budget, and one table row (plus one JSON line)
 * per case with time, GFLOP/s or GB/s, the ratio to a named baseline and the roofline fraction.
 * GPU rows are timed on the host clock around `inner` back-to-back launches closed by a device
 * sync, which measures the same throughput as cudaEvents without CUDA headers in bench code. */
#ifndef LTX2_BENCH_H
#define LTX2_BENCH_H

#include <stdbool.h>
#include <stdio.h>

typedef struct bench_opts {
    const char *json_path; /* NULL: table on stdout only */
    bool quick;            /* fewer shapes, shorter budgets (smoke runs) */
    double budget_s;       /* time budget per measurement */
    int min_reps, max_reps;
} bench_opts;

/* Parses --json PATH, --quick, --help. Returns -1 to continue, else the exit code main should
 * return (0 after --help, 2 after a bad argument; usage is printed). */
int bench_parse_args(int argc, char **argv, bench_opts *o, const char *usage_extra);

/* Monotonic seconds. */
double bench_now(void);

typedef struct bench_stats {
    double median_s, min_s, max_s; /* per call (elapsed / inner) */
    int reps;
} bench_stats;

/* Calls fn once to warm up, then repeatedly (each call = `inner` operations) until the budget is
 * spent and at least min_reps samples exist (at most max_reps). */
typedef void (*bench_fn)(void *user);
bench_stats bench_measure(const bench_opts *o, bench_fn fn, void *user, int inner);

typedef struct bench_row {
    const char *bench;    /* "gemm", "ops" */
    const char *name;     /* case name */
    const char *device;   /* "cpu", "cuda" */
    bench_stats st;
    double flops;         /* per call; 0 for memory-bound rows */
    double bytes;         /* per call; ideal traffic (each input read once, output written once) */
    const char *baseline; /* name of the baseline ("naive_ikj", "cublaslt", "memcpy"), or NULL */
    double baseline_s;    /* its time for the same work */
    double roof_rate;     /* FLOP/s (flops rows) or B/s (bytes rows) of the roofline, 0 = none */
    const char *roof;     /* what the roofline is ("fma_peak", "copy_bw") */
} bench_row;

typedef struct bench_report {
    FILE *json;
    bool header_done;
} bench_report;

/* Opens the JSON-lines file (append) when asked. Returns false when it cannot be opened. */
bool bench_report_open(bench_report *r, const bench_opts *o);
void bench_report_row(bench_report *r, const bench_row *row);
/* A free-form note: printed as "# text" and written as {"note": ...}. */
void bench_report_note(bench_report *r, const char *fmt, ...);
void bench_report_close(bench_report *r);

#endif
