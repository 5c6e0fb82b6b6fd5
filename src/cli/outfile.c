/* Output files (-o): never one of the inputs, and never half written under
 * their final name.
 *
 * A regular file (or a name not there yet) is written to a temporary file
 * beside it, which is renamed over the name once the command has succeeded
 * (exit status 0 or 1) and removed otherwise, also when SIGINT, SIGTERM or
 * SIGHUP ends the process. A device or FIFO is written in place. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

int cli_check_output(const char *output, const char *const *inputs, size_t count) {
    struct stat out, in;
    if (!output || strcmp(output, "-") == 0 || stat(output, &out) != 0 || !S_ISREG(out.st_mode)) return 0;
    for (size_t i = 0; i < count; i++) {
        const char *input = inputs[i];
        if (!input || strcmp(input, "-") == 0 || stat(input, &in) != 0) continue;
        /* the same file, whatever the names (links, ./x, x) */
        if (in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
            if (strcmp(input, output) == 0) cli_error("output %s is also an input", output);
            else cli_error("output %s is also an input (%s)", output, input);
            return -1;
        }
    }
    return 0;
}

/* -------------------------------------------- removal on a fatal signal */

/* The temporary names of the output files open at once (filter writes up
   to six), for the handler (async-signal-safe: it only unlinks and
   re-raises). */
#define PENDING_MAX 8
static char pending_temp[PENDING_MAX][PATH_MAX + 32];
static volatile sig_atomic_t temp_pending[PENDING_MAX];
static int pending_count;
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved_actions[3];
static int handlers_installed;

/* A temporary folder of numbered files (cli_tempdir), at most one. */
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

static void restore_handlers(void) {
    if (!handlers_installed) return;
    for (int i = 0; i < 3; i++) sigaction(fatal_signals[i], &saved_actions[i], NULL);
    handlers_installed = 0;
}

/* ---------------------------------------------------------- open, close */

int cli_outfile_open(cli_outfile *o, const char *path) {
    memset(o, 0, sizeof *o);
    o->path = path;
    o->temp_slot = -1;
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        cli_error("%s: %s", path, strerror(EISDIR));
        return -1;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        o->file = fopen(path, "wb");
        if (!o->file) {
            cli_error("%s: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    /* An existing file keeps its permissions, as a file truncated in place
       would; one it could not have written is refused as before. */
    if (exists && access(path, W_OK) != 0) {
        cli_error("%s: %s", path, strerror(errno));
        return -1;
    }
    /* A symbolic link stays one: the file it names is replaced. */
    char *final = exists ? realpath(path, NULL) : NULL;
    if (!final) final = strdup(path);
    if (!final || strlen(final) + 12 > sizeof pending_temp[0]) {
        cli_error("%s: %s", path, final ? strerror(ENAMETOOLONG) : "out of memory");
        free(final);
        return -1;
    }
    int slot = 0;
    while (slot < PENDING_MAX && temp_pending[slot]) slot++;
    if (slot == PENDING_MAX) {
        cli_error("%s: too many output files at once", path);
        free(final);
        return -1;
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
    if (fd < 0 && errno == EACCES && exists) {
        /* a file that may be written in a folder that may not: in place, as
           before, without the guarantee against half-written files */
        if (pending_count == 0 && !dir_pending) restore_handlers();
        free(final);
        o->file = fopen(path, "wb");
        if (!o->file) {
            cli_error("%s: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (fd < 0 || fchmod(fd, mode) != 0 || !(o->file = fdopen(fd, "wb"))) {
        int e = errno;
        if (fd >= 0) close(fd);
        if (o->temp_slot >= 0) {
            unlink(pending_temp[slot]);
            temp_pending[slot] = 0;
            pending_count--;
            o->temp_slot = -1;
        }
        if (pending_count == 0 && !dir_pending) restore_handlers();
        cli_error("%s: %s", path, strerror(e));
        free(final);
        return -1;
    }
    o->final = final;
    return 0;
}

int cli_outfile_close(cli_outfile *o, int keep) {
    if (!o->file) return 0;
    errno = 0;
    int e = fclose(o->file) != 0 ? (errno ? errno : EIO) : 0;
    o->file = NULL;
    if (!o->final) return e;
    int slot = o->temp_slot;
    if (keep && !e && rename(pending_temp[slot], o->final) != 0) e = errno;
    if (!keep || e) unlink(pending_temp[slot]);
    temp_pending[slot] = 0;
    o->temp_slot = -1;
    if (--pending_count == 0 && !dir_pending) restore_handlers();
    free(o->final);
    o->final = NULL;
    return e;
}

/* ------------------------------------------------ many files (demux) */

int cli_tempdir_open(cli_tempdir *t, const char *dir, size_t files) {
    memset(t, 0, sizeof t[0]);
    if (dir_pending) {
        cli_error("%s: a temporary folder is open already", dir);
        return -1;
    }
    if (strlen(dir) + 40 > sizeof pending_dir) {
        cli_error("%s: %s", dir, strerror(ENAMETOOLONG));
        return -1;
    }
    snprintf(pending_dir, sizeof pending_dir, "%s/.seqmatch-tmp-XXXXXX", dir);
    install_handlers();
    if (!mkdtemp(pending_dir)) {
        int e = errno;
        if (pending_count == 0 && !dir_pending) restore_handlers();
        cli_error("%s: %s", dir, strerror(e));
        return -1;
    }
    t->path = strdup(pending_dir);
    if (!t->path) {
        rmdir(pending_dir);
        if (pending_count == 0 && !dir_pending) restore_handlers();
        cli_error("out of memory");
        return -1;
    }
    t->files = files;
    t->open = 1;
    pending_dir_files = files;
    dir_pending = 1;
    return 0;
}

char *cli_tempdir_name(const cli_tempdir *t, size_t i) {
    size_t n = strlen(t->path) + 24;
    char *name = malloc(n);
    if (name) snprintf(name, n, "%s/%zu", t->path, i);
    return name;
}

int cli_tempdir_commit(cli_tempdir *t, size_t i, const char *final) {
    char *name = cli_tempdir_name(t, i);
    if (!name) return ENOMEM;
    struct stat st;
    int e = 0;
    /* an existing file keeps its permissions, as one truncated in place would */
    if (lstat(final, &st) == 0 && S_ISREG(st.st_mode) && chmod(name, st.st_mode & 07777) != 0) e = errno;
    if (!e && rename(name, final) != 0) e = errno;
    free(name);
    return e;
}

void cli_tempdir_close(cli_tempdir *t) {
    if (!t->open) return;
    remove_pending_dir();
    if (pending_count == 0 && !dir_pending) restore_handlers();
    free(t->path);
    memset(t, 0, sizeof t[0]);
}

/* ------------------------------------------------------ hit output writer */

int cli_writer_open(cli_writer *w, const char *path) {
    memset(w, 0, sizeof *w);
    if (!path || strcmp(path, "-") == 0) {
        w->file = stdout;
        w->display_name = "standard output";
    } else {
        if (cli_outfile_open(&w->out, path) != 0) return -1;
        w->file = w->out.file;
        w->display_name = path;
        w->owns_file = 1;
    }
    if (!(w->w = sm_writer_new(w->file))) {
        cli_error("out of memory");
        if (w->owns_file) cli_outfile_close(&w->out, 0);
        w->file = NULL;
        return -1;
    }
    return 0;
}

int cli_writer_close(cli_writer *w, int keep) {
    if (!w->file) return w->error ? -1 : 0;
    w->error = sm_writer_flush(w->w);
    errno = 0;
    if (w->owns_file) {
        int e = cli_outfile_close(&w->out, keep && !w->error);
        if (e && !w->error) w->error = e;
    } else if ((fflush(w->file) != 0 || ferror(w->file)) && !w->error) {
        w->error = errno ? errno : EIO;
    }
    w->file = NULL;
    sm_writer_free(w->w);
    w->w = NULL;
    return w->error ? -1 : 0;
}

void cli_writer_report(const cli_writer *w) {
    /* A reader that went away (| head) is not an error worth a message. */
    int error = w->error ? w->error : w->w ? sm_writer_error(w->w) : 0;
    if (error && error != EPIPE) cli_error("%s: %s", w->display_name, strerror(error));
}
