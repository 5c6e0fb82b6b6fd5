/* A one-line progress bar on standard error (file, file N of M, percent,
 * speed, hits so far, time left), and the closing summary line. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
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

const char *cli_thousands(uint64_t value, char *buf, size_t size) {
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)value);
    size_t at = 0;
    for (int i = 0; i < n && at + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0) buf[at++] = ',';
        buf[at++] = digits[i];
    }
    buf[at] = '\0';
    return buf;
}

void cli_progress_init(cli_progress *p, int enabled) {
    memset(p, 0, sizeof *p);
    p->enabled = enabled;
    p->start = now_seconds();
    if (enabled) p->width = terminal_width();
}

void cli_progress_set_files(cli_progress *p, char *const *paths, size_t count) {
    p->files = (unsigned)count;
    p->files_bytes = 0;
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") == 0 || stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode)) {
            p->files_bytes = 0; /* a pipe: no time left can be told */
            return;
        }
        p->files_bytes += (uint64_t)st.st_size;
    }
}

void cli_progress_begin_file(cli_progress *p, const char *name) {
    if (p->file > 0 && p->name && strcmp(p->name, "standard input") != 0) {
        struct stat st;
        if (stat(p->name, &st) == 0) p->done_bytes += (uint64_t)st.st_size;
    }
    p->file++;
    p->name = strcmp(name, "-") == 0 ? "standard input" : name;
    p->file_start = now_seconds();
    p->bytes_scanned = 0;
    p->last_draw = p->file_start;
}

/* h:mm:ss or m:ss */
static void format_duration(double seconds, char *buf, size_t size) {
    unsigned long s = (unsigned long)(seconds + 0.5);
    if (s >= 3600) snprintf(buf, size, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
    else snprintf(buf, size, "%lu:%02lu", s / 60, s % 60);
}

void cli_progress_update(cli_progress *p, const sm_reader *reader, size_t bytes_scanned, uint64_t hits) {
    if (!p->enabled) return;
    p->bytes_scanned += bytes_scanned;
    p->total_scanned += bytes_scanned;
    p->hits = hits;
    double now = now_seconds();
    if (now - p->last_draw < REDRAW_INTERVAL) return;
    p->last_draw = now;

    uint64_t done = 0, total = 0;
    sm_reader_progress(reader, &done, &total);
    double elapsed = now - p->file_start;
    /* Speed in sequence bytes: for gzip input, what was read from the file
       says little about the work done. */
    double rate = elapsed > 0 ? (double)p->bytes_scanned / 1e6 / elapsed : 0.0;

    char tail[160], count[32];
    size_t at = 0;
    if (p->files > 1) at += (size_t)snprintf(tail + at, sizeof tail - at, "  file %u of %u", p->file, p->files);
    if (total > 0) {
        double percent = 100.0 * (double)done / (double)total;
        if (percent > 100.0) percent = 100.0;
        at += (size_t)snprintf(tail + at, sizeof tail - at, "  %5.1f%%", percent);
    } else {
        at += (size_t)snprintf(tail + at, sizeof tail - at, "  %9.1f MB", (double)p->bytes_scanned / 1e6);
    }
    at += (size_t)snprintf(tail + at, sizeof tail - at, "  %8.1f MB/s  %s hit%s", rate,
                           cli_thousands(hits, count, sizeof count), hits == 1 ? "" : "s");
    /* Time left: of all the files when their sizes are known, else of this one. */
    double fraction = 0;
    if (p->files_bytes > 0 && total > 0) fraction = (double)(p->done_bytes + done) / (double)p->files_bytes;
    else if (p->files <= 1 && total > 0) fraction = (double)done / (double)total;
    double so_far = p->files_bytes > 0 ? now - p->start : elapsed;
    if (fraction >= 0.01 && fraction < 1.0 && so_far >= 1.0) {
        char eta[32];
        format_duration(so_far * (1.0 - fraction) / fraction, eta, sizeof eta);
        snprintf(tail + at, sizeof tail - at, "  %s left", eta);
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

void cli_progress_summary(cli_progress *p, const char *fmt, ...) {
    if (!p->enabled) return;
    cli_progress_clear(p);
    double seconds = now_seconds() - p->start;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char files[48] = "";
    if (p->files > 1) snprintf(files, sizeof files, "%u files, ", p->files);
    fprintf(stderr, "seqmatch: %s; %s%.1f MB of sequence in %.1f s (%.0f MB/s)\n", what, files,
            (double)p->total_scanned / 1e6, seconds, seconds > 0 ? (double)p->total_scanned / 1e6 / seconds : 0.0);
    fflush(stderr);
}

unsigned cli_threads(unsigned asked) {
    if (asked) return asked;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}
