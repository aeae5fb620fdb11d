/* Bench harness implementation (see bench.h). */
#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Default budget per measured case: long enough for a stable median on a shared machine; --quick
 * cuts it for smoke runs. */
#define BENCH_BUDGET_S 1.0
#define BENCH_QUICK_BUDGET_S 0.2
#define BENCH_MIN_REPS 3
#define BENCH_MAX_REPS 1000

int bench_parse_args(int argc, char **argv, bench_opts *o, const char *usage_extra) {
    memset(o, 0, sizeof(*o));
    o->budget_s = BENCH_BUDGET_S;
    o->min_reps = BENCH_MIN_REPS;
    o->max_reps = BENCH_MAX_REPS;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            o->json_path = argv[++i];
        } else if (!strcmp(argv[i], "--quick")) {
            o->quick = true;
            o->budget_s = BENCH_QUICK_BUDGET_S;
        } else {
            bool help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
            printf("usage: %s [--json PATH] [--quick]\n%s", argv[0], usage_extra ? usage_extra : "");
            return help ? 0 : 2;
        }
    }
    return -1;
}

double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

bench_stats bench_measure(const bench_opts *o, bench_fn fn, void *user, int inner) {
    bench_stats st = {0, 0, 0, 0};
    if (inner < 1) inner = 1;
    fn(user); /* warm-up: first-touch pages, caches, clocks, lazy GPU module loading */
    double *t = malloc((size_t)o->max_reps * sizeof(double));
    if (!t) return st;
    double start = bench_now();
    int n = 0;
    while (n < o->max_reps && (n < o->min_reps || bench_now() - start < o->budget_s)) {
        double t0 = bench_now();
        fn(user);
        t[n++] = (bench_now() - t0) / inner;
    }
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    st.reps = n;
    st.min_s = t[0];
    st.max_s = t[n - 1];
    st.median_s = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    free(t);
    return st;
}

bool bench_report_open(bench_report *r, const bench_opts *o) {
    memset(r, 0, sizeof(*r));
    if (o->json_path) {
        r->json = fopen(o->json_path, "a");
        if (!r->json) {
            fprintf(stderr, "bench: cannot open %s for writing\n", o->json_path);
            return false;
        }
    }
    return true;
}

void bench_report_row(bench_report *r, const bench_row *row) {
    if (!r->header_done) {
        printf("%-44s %-5s %10s %10s %10s %-18s %9s\n", "case", "dev", "median_ms", "GFLOP/s", "GB/s",
               "x baseline", "roof");
        r->header_done = true;
    }
    double t = row->st.median_s;
    double gflops = row->flops > 0 && t > 0 ? row->flops / t * 1e-9 : 0.0;
    double gbs = row->bytes > 0 && t > 0 ? row->bytes / t * 1e-9 : 0.0;
    double ratio = row->baseline && row->baseline_s > 0 && t > 0 ? row->baseline_s / t : 0.0;
    double rate = row->flops > 0 ? row->flops / t : row->bytes / t;
    double roof = row->roof_rate > 0 && t > 0 ? rate / row->roof_rate : 0.0;
    char base[40] = "-", roofs[24] = "-";
    if (ratio > 0) snprintf(base, sizeof(base), "%.3f %s", ratio, row->baseline);
    if (roof > 0) snprintf(roofs, sizeof(roofs), "%.3f", roof);
    printf("%-44s %-5s %10.4f %10.1f %10.1f %-18s %9s\n", row->name, row->device, t * 1e3, gflops, gbs, base,
           roofs);
    fflush(stdout);
    if (r->json) {
        fprintf(r->json,
                "{\"bench\":\"%s\",\"case\":\"%s\",\"device\":\"%s\",\"median_s\":%.9g,\"min_s\":%.9g,"
                "\"max_s\":%.9g,\"reps\":%d,\"flops\":%.6g,\"bytes\":%.6g,\"gflops\":%.6g,\"gbs\":%.6g,"
                "\"baseline\":\"%s\",\"baseline_s\":%.9g,\"x_baseline\":%.6g,\"roof\":\"%s\","
                "\"roof_rate\":%.6g,\"roof_frac\":%.6g}\n",
                row->bench, row->name, row->device, t, row->st.min_s, row->st.max_s, row->st.reps, row->flops,
                row->bytes, gflops, gbs, row->baseline ? row->baseline : "", row->baseline_s, ratio,
                row->roof ? row->roof : "", row->roof_rate, roof);
        fflush(r->json);
    }
}

void bench_report_note(bench_report *r, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    printf("# %s\n", buf);
    if (r->json) {
        fputs("{\"note\":\"", r->json);
        for (const char *p = buf; *p; p++) {
            if (*p == '"' || *p == '\\') fputc('\\', r->json);
            fputc(*p, r->json);
        }
        fputs("\"}\n", r->json);
    }
}

void bench_report_close(bench_report *r) {
    if (r->json) fclose(r->json);
    r->json = NULL;
}
