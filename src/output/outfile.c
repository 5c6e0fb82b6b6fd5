/* Output files (include/seqmatch_output.h, sm_outfile_* and sm_outdir_*):
 * never one of the inputs, and never half written under their final name.
 *
 * A regular file (or a name not there yet) is written to a temporary file
 * beside it, which is renamed over the name when the caller keeps it and
 * removed otherwise, also when SIGINT, SIGTERM or SIGHUP ends the process.
 * A device or FIFO is written in place. Public calls only. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/internal.h"
#include "output/output.h"
#include "seqmatch_output.h"

struct sm_outfile {
    FILE *file;
    char *final;       /* the name the temporary file becomes; NULL when in place */
    int temp_slot;     /* its entry among the temporary files open at once */
};

struct sm_outdir {
    char *path;        /* the temporary folder */
    size_t files;
    int *fd;           /* per file, -1 when closed */
    uint64_t *last_use;
    unsigned char *created; /* truncated once; appended to since */
    unsigned open_files, max_open;
    uint64_t tick;
    char *made;        /* the folder, when opening made it: removed again by a run that commits nothing */
    int committing;    /* a file was committed: the run got to its end */
};

int sm_output_check(const char *output, const char *const *inputs, size_t count, sm_error *err) {
    struct stat out, in;
    if (!output || strcmp(output, "-") == 0 || stat(output, &out) != 0 || !S_ISREG(out.st_mode)) return SM_OK;
    for (size_t i = 0; i < count; i++) {
        const char *input = inputs[i];
        if (!input || strcmp(input, "-") == 0 || stat(input, &in) != 0) continue;
        /* the same file, whatever the names (links, ./x, x) */
        if (in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
            if (strcmp(input, output) == 0) return sm_set_error(err, SM_ERR_INVALID, "output %s is also an input", output);
            return sm_set_error(err, SM_ERR_INVALID, "output %s is also an input (%s)", output, input);
        }
    }
    return SM_OK;
}

int sm_output_check_file(const char *output, const char *const *inputs, size_t count, sm_error *err) {
    int rc = sm_output_check(output, inputs, count, err);
    struct stat st;
    if (rc == SM_OK && output && strcmp(output, "-") != 0 && stat(output, &st) == 0 && !S_ISREG(st.st_mode))
        return sm_set_error(err, SM_ERR_INVALID, "%s: %s", output, S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
    return rc;
}

/* -------------------------------------------- removal on a fatal signal */

/* The temporary names of the output files open at once (seqmatch filter
   writes up to six), for the handler (async-signal-safe: it only unlinks
   and re-raises). */
#define PENDING_MAX 8
static char pending_temp[PENDING_MAX][PATH_MAX + 32];
static volatile sig_atomic_t temp_pending[PENDING_MAX];
static int pending_count;
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved_actions[3];
static int handlers_installed;

/* A temporary folder of numbered files (sm_outdir), at most one. */
static char pending_dir[PATH_MAX + 64];
static volatile sig_atomic_t dir_pending;
static volatile size_t pending_dir_files;

/* Removes pending_dir's files 0 .. pending_dir_files - 1 and the folder,
   with async-signal-safe calls only. */
static void remove_pending_dir(void) {
    if (!dir_pending) return;
    size_t n = strlen(pending_dir);
    char name[PATH_MAX + 96];
    memcpy(name, pending_dir, n);
    name[n] = '/';
    for (size_t i = 0; i < pending_dir_files; i++) {
        char digits[24];
        size_t d = 0, v = i;
        do {
            digits[d++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        for (size_t k = 0; k < d; k++) name[n + 1 + k] = digits[d - 1 - k];
        name[n + 1 + d] = 0;
        unlink(name);
    }
    rmdir(pending_dir);
    dir_pending = 0;
}

static void remove_temp_and_die(int sig) {
    for (int i = 0; i < PENDING_MAX; i++)
        if (temp_pending[i]) unlink(pending_temp[i]);
    for (int i = 0; i < PENDING_MAX; i++) temp_pending[i] = 0;
    remove_pending_dir();
    /* SA_RESETHAND put the default action back: the signal ends the process
       once the handler returns */
    raise(sig);
}

static void install_handlers(void) {
    if (handlers_installed) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temp_and_die;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    for (int i = 0; i < 3; i++) {
        sigaction(fatal_signals[i], NULL, &saved_actions[i]);
        /* a signal ignored on entry (nohup, a background job) stays ignored */
        if (saved_actions[i].sa_handler != SIG_IGN) sigaction(fatal_signals[i], &sa, NULL);
    }
    handlers_installed = 1;
}

/* The handlers go once no temporary file or folder is left. */
static void restore_handlers_if_idle(void) {
    if (!handlers_installed || pending_count != 0 || dir_pending) return;
    for (int i = 0; i < 3; i++) sigaction(fatal_signals[i], &saved_actions[i], NULL);
    handlers_installed = 0;
}

/* ---------------------------------------------------------- open, close */

/* In place (a device, a FIFO, or a file in a folder that may not be written). */
static sm_outfile *open_in_place(sm_outfile *o, const char *path, sm_error *err) {
    o->file = fopen(path, "wb");
    if (!o->file) {
        sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(errno));
        free(o);
        return NULL;
    }
    return o;
}

sm_outfile *sm_outfile_open(const char *path, sm_error *err) {
    sm_outfile *o = calloc(1, sizeof *o);
    if (!o) {
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    o->temp_slot = -1;
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(EISDIR));
        free(o);
        return NULL;
    }
    if (exists && !S_ISREG(st.st_mode)) return open_in_place(o, path, err);
    /* An existing file keeps its permissions, as a file truncated in place
       would; one it could not have written is refused as before. */
    if (exists && access(path, W_OK) != 0) {
        sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(errno));
        free(o);
        return NULL;
    }
    /* A symbolic link stays one: the file it names is replaced. */
    char *final = exists ? realpath(path, NULL) : NULL;
    if (!final) final = strdup(path);
    if (!final || strlen(final) + 12 > sizeof pending_temp[0]) {
        sm_set_error(err, final ? SM_ERR_IO : SM_ERR_NOMEM, "%s: %s", path, final ? strerror(ENAMETOOLONG) : "out of memory");
        free(final);
        free(o);
        return NULL;
    }
    int slot = 0;
    while (slot < PENDING_MAX && temp_pending[slot]) slot++;
    if (slot == PENDING_MAX) {
        sm_set_error(err, SM_ERR_LIMIT, "%s: too many output files at once", path);
        free(final);
        free(o);
        return NULL;
    }
    mode_t mode;
    if (exists) {
        mode = st.st_mode & 0777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    install_handlers();
    snprintf(pending_temp[slot], sizeof pending_temp[slot], "%s.tmp-XXXXXX", final);
    int fd = mkstemp(pending_temp[slot]);
    if (fd >= 0) {
        temp_pending[slot] = 1;
        pending_count++;
        o->temp_slot = slot;
    }
    if (fd < 0 && exists && (errno == EACCES || errno == EPERM || errno == EROFS || errno == ENOENT)) {
        /* a file that may be written in a folder that may not (or that takes
           no new files at all, as /proc): in place, as before, without the
           guarantee against half-written files; opening it names the real
           reason when it cannot be written either */
        restore_handlers_if_idle();
        free(final);
        return open_in_place(o, path, err);
    }
    if (fd < 0 || fchmod(fd, mode) != 0 || !(o->file = fdopen(fd, "wb"))) {
        int e = errno;
        if (fd >= 0) close(fd);
        if (o->temp_slot >= 0) {
            unlink(pending_temp[slot]);
            temp_pending[slot] = 0;
            pending_count--;
        }
        restore_handlers_if_idle();
        sm_set_error(err, SM_ERR_IO, "%s: %s", path, strerror(e));
        free(final);
        free(o);
        return NULL;
    }
    o->final = final;
    return o;
}

FILE *sm_outfile_file(const sm_outfile *o) { return o->file; }

int sm_outfile_close(sm_outfile *o, int keep) {
    if (!o) return 0;
    errno = 0;
    int e = fclose(o->file) != 0 ? (errno ? errno : EIO) : 0;
    if (o->final) {
        int slot = o->temp_slot;
        if (keep && !e && rename(pending_temp[slot], o->final) != 0) e = errno;
        if (!keep || e) unlink(pending_temp[slot]);
        temp_pending[slot] = 0;
        pending_count--;
        restore_handlers_if_idle();
        free(o->final);
    }
    free(o);
    return e;
}

/* ------------------------------------------------ many files (demux) */

static void outdir_free(sm_outdir *t) {
    if (!t) return;
    if (t->fd)
        for (size_t i = 0; i < t->files; i++)
            if (t->fd[i] >= 0) close(t->fd[i]);
    free(t->fd);
    free(t->last_use);
    free(t->created);
    free(t->path);
    free(t->made);
    free(t);
}

/* The folder itself, made when missing (*made: by this call). */
static int make_dir(const char *dir, int *made, sm_error *err) {
    struct stat st;
    *made = 0;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return SM_OK;
        return sm_set_error(err, SM_ERR_IO, "%s: %s", dir, strerror(ENOTDIR));
    }
    if (mkdir(dir, 0777) == 0) *made = 1;
    else if (errno != EEXIST) return sm_set_error(err, SM_ERR_IO, "%s: %s", dir, strerror(errno));
    return SM_OK;
}

sm_outdir *sm_outdir_open(const char *dir, size_t files, unsigned max_open, sm_error *err) {
    int made;
    if (make_dir(dir, &made, err) != SM_OK) return NULL;
    if (dir_pending || strlen(dir) + 40 > sizeof pending_dir) {
        if (made) rmdir(dir);
        if (dir_pending) sm_set_error(err, SM_ERR_LIMIT, "%s: a temporary folder is open already", dir);
        else sm_set_error(err, SM_ERR_IO, "%s: %s", dir, strerror(ENAMETOOLONG));
        return NULL;
    }
    snprintf(pending_dir, sizeof pending_dir, "%s/.seqmatch-tmp-XXXXXX", dir);
    install_handlers();
    if (!mkdtemp(pending_dir)) {
        int e = errno;
        if (made) rmdir(dir);
        restore_handlers_if_idle();
        sm_set_error(err, SM_ERR_IO, "%s: %s", dir, strerror(e));
        return NULL;
    }
    sm_outdir *t = calloc(1, sizeof *t);
    size_t n = files ? files : 1;
    if (t) {
        t->files = files;
        t->path = strdup(pending_dir);
        t->fd = malloc(n * sizeof *t->fd);
        t->last_use = calloc(n, sizeof *t->last_use);
        t->created = calloc(n, 1);
        t->made = made ? strdup(dir) : NULL;
    }
    if (!t || !t->path || !t->fd || !t->last_use || !t->created || (made && !t->made)) {
        if (t) t->files = 0;
        outdir_free(t);
        rmdir(pending_dir);
        if (made) rmdir(dir);
        restore_handlers_if_idle();
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < files; i++) t->fd[i] = -1;
    if (!max_open) {
        /* room for the inputs, a summary, the runner and the libraries */
        struct rlimit lim;
        rlim_t fds = getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : 256;
        max_open = fds > 1024 + 32 ? 1024 : fds > 40 ? (unsigned)(fds - 32) : 8;
    }
    t->max_open = max_open;
    pending_dir_files = files;
    dir_pending = 1;
    return t;
}

/* Closes the least recently used descriptor. Returns 0 or the errno of its
   close (*failed: its file). */
static int close_lru(sm_outdir *t, size_t *failed) {
    size_t oldest = t->files;
    for (size_t i = 0; i < t->files; i++)
        if (t->fd[i] >= 0 && (oldest == t->files || t->last_use[i] < t->last_use[oldest])) oldest = i;
    if (oldest == t->files) return 0;
    int e = close(t->fd[oldest]) != 0 ? errno : 0;
    t->fd[oldest] = -1;
    t->open_files--;
    if (e) *failed = oldest;
    return e;
}

int sm_outdir_append(sm_outdir *t, size_t i, const void *data, size_t len, size_t *failed) {
    size_t ignored;
    if (!failed) failed = &ignored;
    if (len == 0 && t->created[i]) return 0;
    t->last_use[i] = ++t->tick;
    int close_error = 0;  /* a descriptor closed to make room had failed: said after this file's own errors */
    size_t close_failed = 0;
    if (t->fd[i] < 0) {
        while (t->open_files >= t->max_open) {
            size_t which = 0;
            int e = close_lru(t, &which);
            if (e && !close_error) close_error = e, close_failed = which;
        }
        char *temp = sm_outdir_name(t, i);
        if (!temp) {
            *failed = t->files;
            return ENOMEM;
        }
        int flags = O_WRONLY | O_CREAT | (t->created[i] ? O_APPEND : O_TRUNC);
        t->fd[i] = open(temp, flags, 0666);
        int e = errno;
        free(temp);
        if (t->fd[i] < 0) {
            *failed = i;
            return e;
        }
        t->created[i] = 1;
        t->open_files++;
    }
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t w = write(t->fd[i], p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            *failed = i;
            return w < 0 ? errno : EIO;
        }
        p += w;
        len -= (size_t)w;
    }
    if (close_error) *failed = close_failed;
    return close_error;
}

int sm_outdir_end(sm_outdir *t, size_t *failed) {
    int first = 0;
    for (size_t i = 0; i < t->files; i++)
        if (t->fd[i] >= 0) {
            if (close(t->fd[i]) != 0 && !first) {
                first = errno;
                if (failed) *failed = i;
            }
            t->fd[i] = -1;
        }
    t->open_files = 0;
    return first;
}

char *sm_outdir_name(const sm_outdir *t, size_t i) {
    size_t n = strlen(t->path) + 24;
    char *name = malloc(n);
    if (name) snprintf(name, n, "%s/%zu", t->path, i);
    return name;
}

int sm_outdir_commit(sm_outdir *t, size_t i, const char *final) {
    t->committing = 1;
    char *name = sm_outdir_name(t, i);
    if (!name) return ENOMEM;
    struct stat st;
    int e = 0;
    /* an existing file keeps its permissions, as one truncated in place would */
    if (lstat(final, &st) == 0 && S_ISREG(st.st_mode) && chmod(name, st.st_mode & 07777) != 0) e = errno;
    if (!e && rename(name, final) != 0) e = errno;
    free(name);
    return e;
}

void sm_outdir_close(sm_outdir *t) {
    if (!t) return;
    for (size_t i = 0; i < t->files; i++)
        if (t->fd[i] >= 0) close(t->fd[i]), t->fd[i] = -1;
    remove_pending_dir();
    /* a failed run leaves DIR as it was: one it made goes again */
    if (t->made && !t->committing) rmdir(t->made);
    restore_handlers_if_idle();
    outdir_free(t);
}

/* ------------------------------------------------- a writer over a name */

sm_writer *sm_writer_open(const char *path, sm_error *err) {
    sm_outfile *o = NULL;
    if (path && strcmp(path, "-") != 0 && !(o = sm_outfile_open(path, err))) return NULL;
    sm_writer *w = sm_writer_new(o ? o->file : stdout);
    if (!w) {
        sm_outfile_close(o, 0);
        sm_set_error(err, SM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    w->outfile = o;
    return w;
}

FILE *sm_writer_file(const sm_writer *w) { return w->file; }

int sm_writer_close(sm_writer *w, int keep) {
    if (!w) return 0;
    int error = sm_writer_flush(w);
    errno = 0;
    if (w->outfile) {
        int e = sm_outfile_close(w->outfile, keep && !error);
        if (e && !error) error = e;
    } else if ((fflush(w->file) != 0 || ferror(w->file)) && !error) {
        error = errno ? errno : EIO;
    }
    sm_writer_free(w);
    return error;
}
