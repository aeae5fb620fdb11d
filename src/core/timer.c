/* Monotonic clock via clock_gettime(CLOCK_MONOTONIC) (POSIX; C11 only has wall-clock time). */
#include "core/timer.h"

#include <time.h>

double ltx2_timer_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ltx2_stopwatch_reset(ltx2_stopwatch *sw) {
    sw->started = 0.0;
    sw->total = 0.0;
    sw->running = false;
}

void ltx2_stopwatch_start(ltx2_stopwatch *sw) {
    if (sw->running) return;
    sw->started = ltx2_timer_now();
    sw->running = true;
}

void ltx2_stopwatch_stop(ltx2_stopwatch *sw) {
    if (!sw->running) return;
    sw->total += ltx2_timer_now() - sw->started;
    sw->running = false;
}

double ltx2_stopwatch_elapsed(const ltx2_stopwatch *sw) {
    return sw->total + (sw->running ? ltx2_timer_now() - sw->started : 0.0);
}
