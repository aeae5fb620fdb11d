/* Progress bar (see progress.h): pure formatting plus a small TTY-aware driver. */
#include "core/progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/timer.h"

void ltx2_progress_format_time(char *buf, size_t cap, double seconds) {
    if (!buf || cap == 0) return;
    if (!(seconds >= 0.0) || isinf(seconds) || seconds > 1e9) {
        snprintf(buf, cap, "??:??");
        return;
    }
    long s = (long)seconds;
    long h = s / 3600, m = (s / 60) % 60, sec = s % 60;
    if (h > 0) snprintf(buf, cap, "%ld:%02ld:%02ld", h, m, sec);
    else snprintf(buf, cap, "%02ld:%02ld", m, sec);
}

/* "2.31it/s", "3.20s/it", or "?it/s" before there is a rate. */
static void format_rate(char *buf, size_t cap, int64_t done, double elapsed) {
    if (done <= 0 || !(elapsed > 0.0)) {
        snprintf(buf, cap, "?it/s");
        return;
    }
    double rate = (double)done / elapsed;
    if (rate >= 1.0) snprintf(buf, cap, "%.2fit/s", rate);
    else snprintf(buf, cap, "%.2fs/it", 1.0 / rate);
}

static size_t clamp_len(int n, size_t cap) {
    if (n < 0) return 0;
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

size_t ltx2_progress_format(char *buf, size_t cap, const char *label, int64_t done, int64_t total,
                            double elapsed, int width) {
    if (!buf || cap == 0) return 0;
    if (!label) label = "";
    char el[32], eta[32], rate[32];
    ltx2_progress_format_time(el, sizeof(el), elapsed);
    format_rate(rate, sizeof(rate), done, elapsed);
    if (total <= 0) {
        int n = snprintf(buf, cap, "%s %lldit [%s, %s]", label, (long long)done, el, rate);
        return clamp_len(n, cap);
    }
    int64_t shown = done < 0 ? 0 : done > total ? total : done;
    double frac = (double)shown / (double)total;
    int pct = (int)(100 * shown / total); /* integer: 100% only when done == total */
    if (shown >= total) {
        snprintf(eta, sizeof(eta), "00:00");
    } else if (shown > 0 && elapsed > 0.0) {
        ltx2_progress_format_time(eta, sizeof(eta), (double)(total - shown) * elapsed / (double)shown);
    } else {
        snprintf(eta, sizeof(eta), "?");
    }
    char left[LTX2_PROGRESS_LABEL_CAP + 16], right[128];
    int nl = snprintf(left, sizeof(left), "%s %3d%%", label, pct);
    int nr = snprintf(right, sizeof(right), " %lld/%lld [%s<%s, %s]", (long long)done,
                      (long long)total, el, eta, rate);
    int bar = width - nl - nr - 2; /* the two '|' */
    if (bar < LTX2_PROGRESS_MIN_BAR) {
        int n = snprintf(buf, cap, "%s%s", left, right);
        return clamp_len(n, cap);
    }
    char bars[LTX2_PROGRESS_LINE_CAP];
    if (bar > (int)sizeof(bars) - 1) bar = (int)sizeof(bars) - 1;
    int filled = (int)(frac * bar);
    for (int i = 0; i < bar; i++) bars[i] = i < filled ? '#' : ' ';
    bars[bar] = '\0';
    int n = snprintf(buf, cap, "%s|%s|%s", left, bars, right);
    return clamp_len(n, cap);
}

size_t ltx2_progress_format_summary(char *buf, size_t cap, const char *label, int64_t done,
                                    int64_t total, double elapsed) {
    if (!buf || cap == 0) return 0;
    char el[32], rate[32];
    ltx2_progress_format_time(el, sizeof(el), elapsed);
    format_rate(rate, sizeof(rate), done, elapsed);
    int n;
    if (total > 0)
        n = snprintf(buf, cap, "%s: %lld/%lld in %s (%s)", label ? label : "", (long long)done,
                     (long long)total, el, rate);
    else
        n = snprintf(buf, cap, "%s: %lld in %s (%s)", label ? label : "", (long long)done, el, rate);
    return clamp_len(n, cap);
}

size_t ltx2_progress_format_log(char *buf, size_t cap, const char *label, int64_t done, int64_t total,
                                double elapsed) {
    if (!buf || cap == 0) return 0;
    char el[32], rate[32], eta[32];
    ltx2_progress_format_time(el, sizeof(el), elapsed);
    format_rate(rate, sizeof(rate), done, elapsed);
    int n;
    if (total > 0) {
        if (done > 0 && elapsed > 0.0)
            ltx2_progress_format_time(eta, sizeof(eta), (double)(total - (done < total ? done : total)) * elapsed /
                                                            (double)done);
        else
            snprintf(eta, sizeof(eta), "?");
        n = snprintf(buf, cap, "%s: %lld/%lld, %s elapsed, %s, ETA %s", label ? label : "", (long long)done,
                     (long long)total, el, rate, eta);
    } else {
        n = snprintf(buf, cap, "%s: %lld, %s elapsed, %s", label ? label : "", (long long)done, el, rate);
    }
    return clamp_len(n, cap);
}

static int terminal_width(void) {
    const char *c = getenv("COLUMNS");
    long w = c ? strtol(c, NULL, 10) : 0;
    if (w < 20 || w > LTX2_PROGRESS_LINE_CAP) w = LTX2_PROGRESS_DEFAULT_WIDTH;
    return (int)w - 1; /* writing the last column makes some terminals wrap */
}

static void draw(ltx2_progress *p, double now) {
    char line[LTX2_PROGRESS_LINE_CAP];
    size_t n = ltx2_progress_format(line, sizeof(line), p->label, p->done, p->total, now - p->t_start,
                                    p->width);
    int pad = p->last_len > (int)n ? p->last_len - (int)n : 0;
    fprintf(p->out, "\r%s%*s", line, pad, "");
    fflush(p->out);
    p->last_len = (int)n;
    p->drawn_done = p->done;
    p->t_last_draw = now;
}

void ltx2_progress_begin(ltx2_progress *p, const char *label, int64_t total, FILE *out) {
    memset(p, 0, sizeof(*p));
    p->out = out;
    snprintf(p->label, sizeof(p->label), "%s", label ? label : "");
    p->total = total;
    p->drawn_done = -1;
    p->t_start = ltx2_timer_now();
    p->width = terminal_width();
    p->tty = out && isatty(fileno(out));
    p->active = true;
    if (p->tty) draw(p, p->t_start);
}

void ltx2_progress_update(ltx2_progress *p, int64_t done) {
    if (!p->active) return;
    p->done = done;
    if (!p->out) return;
    double now = ltx2_timer_now();
    if (!p->tty) {
        const bool finished = p->total > 0 && done >= p->total;
        if (!p->log || (p->drawn_done >= 0 && !finished && now - p->t_last_draw < LTX2_PROGRESS_LOG_S)) return;
        char line[LTX2_PROGRESS_LINE_CAP];
        ltx2_progress_format_log(line, sizeof(line), p->label, done, p->total, now - p->t_start);
        fprintf(p->out, "%s\n", line);
        fflush(p->out);
        p->drawn_done = done;
        p->t_last_draw = now;
        return;
    }
    bool finished = p->total > 0 && done >= p->total;
    if (!finished && now - p->t_last_draw < LTX2_PROGRESS_REDRAW_S) return;
    draw(p, now);
}

void ltx2_progress_end(ltx2_progress *p) {
    if (!p->active) return;
    p->active = false;
    if (!p->out) return;
    double now = ltx2_timer_now();
    if (p->tty) {
        if (p->drawn_done != p->done) draw(p, now); /* the last update usually drew it already */
        fputc('\n', p->out);
        fflush(p->out);
    } else if (p->summary) {
        char line[LTX2_PROGRESS_LINE_CAP];
        ltx2_progress_format_summary(line, sizeof(line), p->label, p->done, p->total, now - p->t_start);
        fprintf(p->out, "%s\n", line);
        fflush(p->out);
    }
}
