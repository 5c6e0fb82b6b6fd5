/* A one-line progress display of a scan of files (include/seqmatch_output.h,
 * sm_progress_*): file, file N of M, percent, speed, hits so far, time
 * left, redrawn in place; and a closing summary line. Public calls only. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "seqmatch_output.h"

struct sm_progress {
    FILE *out;
    int enabled;
    int drawn;
    const char *name;
    double start;             /* the scan's start */
    double file_start;
    double last_draw;
    uint64_t bytes_scanned;   /* sequence bytes of the current file so far */
    uint64_t total_scanned;   /* ... of every file so far */
    unsigned file, files;     /* the current file (from 1) of how many */
    uint64_t files_bytes;     /* the files' sizes together (0: some unknown) */
    uint64_t done_bytes;      /* the sizes of the files before the current one */
    unsigned width;
};

#define REDRAW_INTERVAL 0.2   /* seconds: at most five redraws a second */

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned terminal_width(FILE *out) {
    struct winsize ws;
    if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
    return 80;
}

const char *sm_thousands(uint64_t value, char *buf, size_t size) {
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

sm_progress *sm_progress_new(FILE *out, int enabled) {
    sm_progress *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->out = out;
    p->enabled = enabled;
    p->start = now_seconds();
    if (enabled) p->width = terminal_width(out);
    return p;
}

void sm_progress_free(sm_progress *p) { free(p); }

void sm_progress_set_files(sm_progress *p, char *const *paths, size_t count) {
    if (!p) return;
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

void sm_progress_begin_file(sm_progress *p, const char *name) {
    if (!p) return;
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

static void update(sm_progress *p, const sm_reader *reader, size_t bytes_scanned, uint64_t hits);

/* Called per piece read: the disabled line costs a test, not update's frame. */
void sm_progress_update(sm_progress *p, const sm_reader *reader, size_t bytes_scanned, uint64_t hits) {
    if (p && !p->enabled) p->total_scanned += bytes_scanned; /* for sm_progress_bytes */
    if (p && p->enabled) update(p, reader, bytes_scanned, hits);
}

uint64_t sm_progress_bytes(const sm_progress *p) { return p ? p->total_scanned : 0; }

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void update(sm_progress *p, const sm_reader *reader, size_t bytes_scanned, uint64_t hits) {
    p->bytes_scanned += bytes_scanned;
    p->total_scanned += bytes_scanned;
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
                           sm_thousands(hits, count, sizeof count), hits == 1 ? "" : "s");
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
    fprintf(p->out, "\r%s%s%s\033[K", ellipsis, name, tail);
    fflush(p->out);
    p->drawn = 1;
}

void sm_progress_clear(sm_progress *p) {
    if (!p || !p->enabled || !p->drawn) return;
    fputs("\r\033[K", p->out);
    fflush(p->out);
    p->drawn = 0;
}

void sm_progress_before_write(void *ctx) { sm_progress_clear(ctx); }

void sm_progress_summary(sm_progress *p, const char *prefix, const char *what) {
    if (!p || !p->enabled) return;
    sm_progress_clear(p);
    double seconds = now_seconds() - p->start;
    char files[48] = "";
    if (p->files > 1) snprintf(files, sizeof files, "%u files, ", p->files);
    fprintf(p->out, "%s%s; %s%.1f MB of sequence in %.1f s (%.0f MB/s)\n", prefix, what, files,
            (double)p->total_scanned / 1e6, seconds, seconds > 0 ? (double)p->total_scanned / 1e6 / seconds : 0.0);
    fflush(p->out);
}
