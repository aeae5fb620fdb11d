/* Monotonic wall-clock time and a pausable stopwatch, for progress, logs and benches. */
#ifndef LTX2_CORE_TIMER_H
#define LTX2_CORE_TIMER_H

#include <stdbool.h>

/* Seconds on a monotonic clock with an arbitrary origin (only differences mean anything). */
double ltx2_timer_now(void);

typedef struct ltx2_stopwatch {
    double started;  /* ltx2_timer_now() at the last start, when running */
    double total;    /* seconds accumulated over previous start/stop intervals */
    bool running;
} ltx2_stopwatch;

void ltx2_stopwatch_reset(ltx2_stopwatch *sw);  /* stopped, 0 s */
void ltx2_stopwatch_start(ltx2_stopwatch *sw);  /* no-op when already running */
void ltx2_stopwatch_stop(ltx2_stopwatch *sw);   /* no-op when stopped */
double ltx2_stopwatch_elapsed(const ltx2_stopwatch *sw); /* includes the running interval */

#endif
