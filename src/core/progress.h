/* A progress bar for long work (sampling steps, VAE tiles). On a terminal it redraws one line in
 * place (bar, done/total, rate, ETA), at most every LTX2_PROGRESS_REDRAW_S; when the output is not
 * a terminal (logs, batch jobs, CI) it stays quiet, or with `log` set prints a plain line at the
 * first update, then at most every LTX2_PROGRESS_LOG_S, and at the last; if asked, one summary
 * line at the end. State lives in the caller's struct. The formatting is a pure function so it can
 * be tested. */
#ifndef LTX2_CORE_PROGRESS_H
#define LTX2_CORE_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Redraws closer together than this are skipped: ~10 per second looks live without costing
 * measurable time when updates come from a tight loop. */
#define LTX2_PROGRESS_REDRAW_S 0.1
/* Log lines (not a terminal) no closer than this: a 40-step run of seconds per step logs every
 * step it can without flooding a log with sub-second steps. */
#define LTX2_PROGRESS_LOG_S 10.0
/* Line width when $COLUMNS is unset or unusable. */
#define LTX2_PROGRESS_DEFAULT_WIDTH 80
/* Narrower bars carry no information; below this the bar is left out of the line. */
#define LTX2_PROGRESS_MIN_BAR 5
#define LTX2_PROGRESS_LABEL_CAP 64
#define LTX2_PROGRESS_LINE_CAP 512

typedef struct ltx2_progress {
    FILE *out;
    char label[LTX2_PROGRESS_LABEL_CAP];
    int64_t total; /* <= 0: unknown, shows a count and rate only */
    int64_t done;
    double t_start;
    double t_last_draw;
    int last_len; /* length of the line last drawn, to blank what a shorter one leaves */
    int64_t drawn_done; /* `done` as last drawn (-1: nothing drawn yet) */
    int width;    /* columns for the line */
    bool tty;     /* redraw in place; false: quiet */
    bool summary; /* when not a TTY, print one line at end; set it after begin */
    bool log;     /* when not a TTY, print log lines as it goes; set it after begin */
    bool active;
} ltx2_progress;

void ltx2_progress_begin(ltx2_progress *p, const char *label, int64_t total, FILE *out);
void ltx2_progress_update(ltx2_progress *p, int64_t done);
/* Draws the final state and ends the line (TTY), or prints the summary (not a TTY, if asked). */
void ltx2_progress_end(ltx2_progress *p);

/* One progress line, tqdm-style, at most `width` columns (and cap-1 bytes):
 *   "denoise  40%|####      | 12/30 [00:05<00:07, 2.31it/s]"
 * rate = done / elapsed ("s/it" below 1 it/s, "?" before any progress); ETA = remaining / rate;
 * times as MM:SS, or H:MM:SS from one hour. Returns the length written. */
size_t ltx2_progress_format(char *buf, size_t cap, const char *label, int64_t done, int64_t total,
                            double elapsed, int width);
/* "denoise: 30/30 in 00:12 (2.50it/s)". Returns the length written. */
size_t ltx2_progress_format_summary(char *buf, size_t cap, const char *label, int64_t done,
                                    int64_t total, double elapsed);
/* A log line: "denoise: 12/30, 00:05 elapsed, 2.40it/s, ETA 00:07". Returns the length written. */
size_t ltx2_progress_format_log(char *buf, size_t cap, const char *label, int64_t done, int64_t total,
                                double elapsed);
/* Seconds as "MM:SS" or "H:MM:SS" ("??:??" when negative or not finite). */
void ltx2_progress_format_time(char *buf, size_t cap, double seconds);

#endif
