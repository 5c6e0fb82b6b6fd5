/* A one-line progress bar on standard error: file, percent, speed. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

#define REDRAW_INTERVAL 0.2   /* seconds: at most five redraws a second */

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned terminal_width(void) {
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
    return 80;
}

void cli_progress_init(cli_progress *p, int enabled) {
    memset(p, 0, sizeof *p);
    p->enabled = enabled;
    if (enabled) p->width = terminal_width();
}

void cli_progress_begin_file(cli_progress *p, const char *name) {
    if (!p->enabled) return;
    p->name = strcmp(name, "-") == 0 ? "standard input" : name;
    p->file_start = now_seconds();
    p->bytes_scanned = 0;
    p->last_draw = p->file_start;
}

void cli_progress_update(cli_progress *p, const sm_reader *reader, size_t bytes_scanned) {
    if (!p->enabled) return;
    p->bytes_scanned += bytes_scanned;
    double now = now_seconds();
    if (now - p->last_draw < REDRAW_INTERVAL) return;
    p->last_draw = now;

    uint64_t done = 0, total = 0;
    sm_reader_progress(reader, &done, &total);
    double elapsed = now - p->file_start;
    /* Speed in sequence bytes: for gzip input, what was read from the file
       says little about the work done. */
    double rate = elapsed > 0 ? (double)p->bytes_scanned / 1e6 / elapsed : 0.0;

    char tail[64];
    if (total > 0) {
        double percent = 100.0 * (double)done / (double)total;
        if (percent > 100.0) percent = 100.0;
        snprintf(tail, sizeof tail, "  %5.1f%%  %8.1f MB/s", percent, rate);
    } else {
        snprintf(tail, sizeof tail, "  %9.1f MB  %8.1f MB/s", (double)p->bytes_scanned / 1e6, rate);
    }
    /* The name gets what is left of the line; long names keep their end. */
    size_t tail_len = strlen(tail);
    size_t room = p->width > tail_len + 2 ? p->width - tail_len - 2 : 8;
    size_t name_len = strlen(p->name);
    const char *name = p->name;
    const char *ellipsis = "";
    if (name_len > room) {
        name += name_len - (room - 3);
        ellipsis = "...";
    }
    fprintf(stderr, "\r%s%s%s\033[K", ellipsis, name, tail);
    fflush(stderr);
    p->drawn = 1;
}

void cli_progress_clear(cli_progress *p) {
    if (!p->enabled || !p->drawn) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->drawn = 0;
}

void cli_progress_before_write(void *ctx) {
    cli_progress_clear(ctx);
}

unsigned cli_threads(unsigned asked) {
    if (asked) return asked;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}
