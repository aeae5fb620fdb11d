/* Progress bar: the pure line/summary/time formatting (rates, ETA, 100%, widths) and the driver's
 * behaviour on a non-terminal (quiet, optional one-line summary) and, forced, on a terminal
 * (throttled redraws, final newline). Also the stopwatch from timer.h. */
#include <string.h>

#include "core/progress.h"
#include "core/timer.h"
#include "test_util.h"

static int count_char(const char *s, char c) {
    int n = 0;
    for (; *s; s++) n += *s == c;
    return n;
}

static void test_time(void) {
    char b[32];
    ltx2_progress_format_time(b, sizeof(b), 12.7);
    CHECK(strcmp(b, "00:12") == 0, "12.7 s -> %s", b);
    ltx2_progress_format_time(b, sizeof(b), 65);
    CHECK(strcmp(b, "01:05") == 0, "65 s -> %s", b);
    ltx2_progress_format_time(b, sizeof(b), 3723);
    CHECK(strcmp(b, "1:02:03") == 0, "3723 s -> %s", b);
    ltx2_progress_format_time(b, sizeof(b), -1);
    CHECK(strcmp(b, "??:??") == 0, "negative -> %s", b);
    ltx2_progress_format_time(b, sizeof(b), 1.0 / 0.0);
    CHECK(strcmp(b, "??:??") == 0, "inf -> %s", b);
}

static void test_format(void) {
    char b[LTX2_PROGRESS_LINE_CAP];
    size_t n = ltx2_progress_format(b, sizeof(b), "denoise", 12, 30, 5.0, 80);
    CHECK(n == strlen(b) && n == 80, "line fills the width: %zu '%s'", n, b);
    CHECK(strncmp(b, "denoise  40%|", 13) == 0, "label and percent: '%s'", b);
    CHECK(strstr(b, "| 12/30 [00:05<00:07, 2.40it/s]") != NULL, "count, elapsed<ETA, rate: '%s'", b);
    /* the bar is 40% full */
    const char *bar = strchr(b, '|') + 1;
    int bar_len = (int)(strchr(bar, '|') - bar);
    int filled = 0;
    for (int i = 0; i < bar_len; i++) filled += bar[i] == '#';
    CHECK(filled == (int)(0.4 * bar_len), "bar %d of %d filled", filled, bar_len);

    ltx2_progress_format(b, sizeof(b), "denoise", 30, 30, 12.0, 80);
    CHECK(strstr(b, "100%|") && strstr(b, "| 30/30 [00:12<00:00, 2.50it/s]"), "done: '%s'", b);
    bar = strchr(b, '|') + 1;
    bar_len = (int)(strchr(bar, '|') - bar);
    CHECK(bar_len > 0 && count_char(b, '#') == bar_len, "full bar: '%s'", b);
    ltx2_progress_format(b, sizeof(b), "x", 29, 30, 12.0, 80);
    CHECK(strstr(b, " 96%|") != NULL, "percent floors, never 100%% early: '%s'", b);

    ltx2_progress_format(b, sizeof(b), "vae", 0, 8, 0.0, 80);
    CHECK(strstr(b, "0/8 [00:00<?, ?it/s]") != NULL, "no rate yet: '%s'", b);
    ltx2_progress_format(b, sizeof(b), "step", 2, 10, 10.0, 80);
    CHECK(strstr(b, "2/10 [00:10<00:40, 5.00s/it]") != NULL, "slow steps show s/it: '%s'", b);

    n = ltx2_progress_format(b, sizeof(b), "denoise", 12, 30, 5.0, 20);
    CHECK(!strchr(b, '|') && strstr(b, "denoise  40% 12/30") == b, "too narrow: no bar: '%s'", b);
    n = ltx2_progress_format(b, sizeof(b), "tiles", 12, 0, 5.0, 80);
    CHECK(strcmp(b, "tiles 12it [00:05, 2.40it/s]") == 0, "unknown total: '%s'", b);

    char small[10];
    n = ltx2_progress_format(small, sizeof(small), "denoise", 12, 30, 5.0, 80);
    CHECK(n == 9 && strlen(small) == 9, "truncates to the buffer: %zu", n);

    ltx2_progress_format_log(b, sizeof(b), "denoise", 12, 30, 5.0);
    CHECK(strcmp(b, "denoise: 12/30, 00:05 elapsed, 2.40it/s, ETA 00:07") == 0, "log line: '%s'", b);
    ltx2_progress_format_log(b, sizeof(b), "denoise", 0, 40, 0.0);
    CHECK(strcmp(b, "denoise: 0/40, 00:00 elapsed, ?it/s, ETA ?") == 0, "log line before progress: '%s'", b);
    ltx2_progress_format_summary(b, sizeof(b), "denoise", 30, 30, 12.0);
    CHECK(strcmp(b, "denoise: 30/30 in 00:12 (2.50it/s)") == 0, "summary: '%s'", b);
}

/* Reads the whole stream back. */
static size_t slurp(FILE *f, char *buf, size_t cap) {
    fflush(f);
    rewind(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    return n;
}

static void test_driver(void) {
    char buf[8192];
    FILE *f = tmpfile();
    if (!f) {
        CHECK(0, "tmpfile failed");
        return;
    }
    ltx2_progress p;
    ltx2_progress_begin(&p, "quiet", 100, f);
    CHECK(!p.tty, "a file is not a TTY");
    for (int i = 1; i <= 100; i++) ltx2_progress_update(&p, i);
    ltx2_progress_end(&p);
    CHECK(slurp(f, buf, sizeof(buf)) == 0, "not a TTY and no summary: nothing written ('%s')", buf);
    fclose(f);

    f = tmpfile();
    ltx2_progress_begin(&p, "quiet", 100, f);
    p.summary = true;
    for (int i = 1; i <= 100; i++) ltx2_progress_update(&p, i);
    ltx2_progress_end(&p);
    slurp(f, buf, sizeof(buf));
    CHECK(count_char(buf, '\n') == 1 && strncmp(buf, "quiet: 100/100 in 00:00 (", 25) == 0,
          "one summary line: '%s'", buf);
    fclose(f);

    /* not a terminal, logging: the first update, then at most every LTX2_PROGRESS_LOG_S (so none in
     * between here), and the last */
    f = tmpfile();
    ltx2_progress_begin(&p, "steps", 40, f);
    p.log = true;
    for (int i = 1; i <= 40; i++) ltx2_progress_update(&p, i);
    ltx2_progress_end(&p);
    slurp(f, buf, sizeof(buf));
    CHECK(count_char(buf, '\n') == 2 && strncmp(buf, "steps: 1/40, 00:00 elapsed, ", 28) == 0 &&
              strstr(buf, "\nsteps: 40/40, 00:00 elapsed, ") != NULL && strstr(buf, "ETA 00:00\n") != NULL,
          "log lines: '%s'", buf);
    fclose(f);

    /* forced terminal mode: redraws are throttled, the final state is drawn, the line ends */
    f = tmpfile();
    ltx2_progress_begin(&p, "tty", 100000, f);
    p.tty = true;
    p.width = 60;
    double t0 = ltx2_timer_now();
    for (int i = 1; i <= 100000; i++) ltx2_progress_update(&p, i);
    double dt = ltx2_timer_now() - t0;
    ltx2_progress_end(&p);
    slurp(f, buf, sizeof(buf));
    int draws = count_char(buf, '\r');
    /* 100000 updates: at most one redraw per LTX2_PROGRESS_REDRAW_S, plus the forced final ones */
    int max_draws = (int)(dt / LTX2_PROGRESS_REDRAW_S) + 3;
    CHECK(draws >= 2 && draws <= max_draws, "%d redraws in %.3f s (max %d)", draws, dt, max_draws);
    CHECK(strstr(buf, "100000/100000") != NULL && buf[strlen(buf) - 1] == '\n', "final state and newline");
    fclose(f);
}

static void test_stopwatch(void) {
    ltx2_stopwatch sw;
    ltx2_stopwatch_reset(&sw);
    CHECK(ltx2_stopwatch_elapsed(&sw) == 0.0, "reset stopwatch reads 0");
    double a = ltx2_timer_now(), b = ltx2_timer_now();
    CHECK(b >= a, "monotonic");
    ltx2_stopwatch_start(&sw);
    double t0 = ltx2_timer_now();
    while (ltx2_timer_now() - t0 < 0.01) {
    }
    ltx2_stopwatch_stop(&sw);
    double e = ltx2_stopwatch_elapsed(&sw);
    CHECK(e >= 0.01 && e < 5.0, "elapsed %.4f", e);
    CHECK(ltx2_stopwatch_elapsed(&sw) == e, "stopped stopwatch does not advance");
    ltx2_stopwatch_start(&sw);
    ltx2_stopwatch_stop(&sw);
    CHECK(ltx2_stopwatch_elapsed(&sw) >= e, "accumulates");
}

int main(void) {
    test_time();
    test_format();
    test_driver();
    test_stopwatch();
    return test_finish();
}
