/* Output files that are never half written (sm_output_check, sm_outfile_*,
 * sm_outdir_*; seqmatch_output.h), through the installed headers only,
 * linked against libseqmatch.so and libseqmatch.a: an output that is an
 * input (by name, by another name, by a link) is refused; a new or existing
 * file appears under its name only when kept, with an existing file's
 * permissions; a refused close leaves the old content; a folder is refused;
 * a device is written in place and its write error comes back from the
 * close; SIGTERM removes the temporary file; the folder of many files
 * creates each one on first use, keeps no more than max_open descriptors,
 * moves the files it is told to and removes the rest; a writer over a name
 * (sm_writer_open/close) and records written to a file by name, plain or
 * gzip (sm_record_file_*), kept or not, and their write errors. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <seqmatch_output.h>

#include "check.h"

static char base[256];

static const char *at(const char *name) {
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", base, name);
    return p;
}

static void put_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The file's content (static buffer), or "(none)". */
static const char *content(const char *path) {
    static char buf[256];
    FILE *f = fopen(path, "rb");
    if (!f) return "(none)";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Entries of dir other than . and .. whose name starts with prefix. */
static int entries(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
    closedir(d);
    return n;
}

static void check_inputs(void) {
    sm_error err;
    put_file(at("in.txt"), "x");
    put_file(at("other.txt"), "y");
    CHECK(symlink("in.txt", at("link.txt")) == 0, "symlink");
    char other[512], in[512];
    snprintf(other, sizeof other, "%s", at("other.txt"));
    snprintf(in, sizeof in, "%s", at("in.txt"));
    const char *inputs[] = {NULL, "-", other, in};
    CHECK(sm_output_check(at("out.txt"), inputs, 4, &err) == SM_OK, "a new name");
    CHECK(sm_output_check(at("other2.txt"), inputs, 4, &err) == SM_OK, "another name");
    CHECK(sm_output_check(NULL, inputs, 4, &err) == SM_OK, "no output");
    CHECK(sm_output_check("-", inputs, 4, &err) == SM_OK, "standard output");
    CHECK(sm_output_check(at("in.txt"), inputs, 4, &err) == SM_ERR_INVALID, "the input itself");
    char want[600];
    snprintf(want, sizeof want, "output %s is also an input", at("in.txt"));
    CHECK(strcmp(err.message, want) == 0, "message '%s'", err.message);
    CHECK(sm_output_check(at("link.txt"), inputs, 4, &err) == SM_ERR_INVALID, "a link to an input");
    snprintf(want, sizeof want, "output %s is also an input (%s)", at("link.txt"), at("in.txt"));
    CHECK(strcmp(err.message, want) == 0, "message '%s'", err.message);
    CHECK(sm_output_check(at("in.txt"), inputs, 3, &err) == SM_OK, "not among the inputs given");
}

static void check_outfile(void) {
    sm_error err;
    /* a new file: nothing under its name until kept */
    sm_outfile *o = sm_outfile_open(at("new.txt"), &err);
    CHECK(o != NULL, "open new: %s", err.message);
    if (o) {
        fputs("hello", sm_outfile_file(o));
        fflush(sm_outfile_file(o));
        CHECK(access(at("new.txt"), F_OK) != 0, "new.txt there before the close");
        CHECK(entries(base, "new.txt.tmp-") == 1, "one temporary file");
        CHECK(sm_outfile_close(o, 1) == 0, "close");
        CHECK(strcmp(content(at("new.txt")), "hello") == 0, "kept: '%s'", content(at("new.txt")));
        CHECK(entries(base, "new.txt.tmp-") == 0, "temporary file left");
    }
    /* not kept: a new name stays absent */
    o = sm_outfile_open(at("dropped.txt"), &err);
    CHECK(o != NULL, "open dropped");
    if (o) {
        fputs("x", sm_outfile_file(o));
        CHECK(sm_outfile_close(o, 0) == 0, "close without keep");
        CHECK(access(at("dropped.txt"), F_OK) != 0, "dropped.txt made");
        CHECK(entries(base, "dropped.txt") == 0, "temporary file left");
    }
    /* an existing file: its content until kept, its permissions after */
    put_file(at("old.txt"), "old");
    CHECK(chmod(at("old.txt"), 0640) == 0, "chmod");
    o = sm_outfile_open(at("old.txt"), &err);
    if (o) {
        fputs("new", sm_outfile_file(o));
        CHECK(sm_outfile_close(o, 0) == 0, "close without keep");
        CHECK(strcmp(content(at("old.txt")), "old") == 0, "old content lost: '%s'", content(at("old.txt")));
    }
    o = sm_outfile_open(at("old.txt"), &err);
    if (o) {
        fputs("new", sm_outfile_file(o));
        CHECK(sm_outfile_close(o, 1) == 0, "close");
        struct stat st;
        CHECK(stat(at("old.txt"), &st) == 0 && (st.st_mode & 0777) == 0640, "permissions %o", st.st_mode & 0777);
        CHECK(strcmp(content(at("old.txt")), "new") == 0, "replaced: '%s'", content(at("old.txt")));
    }
    /* a symbolic link stays one, its target replaced */
    CHECK(symlink("old.txt", at("to_old.txt")) == 0, "symlink");
    o = sm_outfile_open(at("to_old.txt"), &err);
    if (o) {
        fputs("through", sm_outfile_file(o));
        CHECK(sm_outfile_close(o, 1) == 0, "close");
        struct stat st;
        CHECK(lstat(at("to_old.txt"), &st) == 0 && S_ISLNK(st.st_mode), "the link replaced by a file");
        CHECK(strcmp(content(at("old.txt")), "through") == 0, "target: '%s'", content(at("old.txt")));
    }
    /* a folder: refused, named */
    CHECK(sm_outfile_open(base, &err) == NULL, "a folder opened");
    char want[600];
    snprintf(want, sizeof want, "%s: %s", base, strerror(EISDIR));
    CHECK(strcmp(err.message, want) == 0, "message '%s'", err.message);
    /* a folder that does not exist */
    CHECK(sm_outfile_open(at("no/such.txt"), &err) == NULL, "no folder");
    snprintf(want, sizeof want, "%s: %s", at("no/such.txt"), strerror(ENOENT));
    CHECK(strcmp(err.message, want) == 0, "message '%s'", err.message);
    /* a device: in place, its write error from the close */
    o = sm_outfile_open("/dev/full", &err);
    CHECK(o != NULL, "open /dev/full: %s", err.message);
    if (o) {
        setvbuf(sm_outfile_file(o), NULL, _IOFBF, 4096);
        fputs("lost", sm_outfile_file(o));
        CHECK(sm_outfile_close(o, 1) == ENOSPC, "the close of /dev/full");
    }
    o = sm_outfile_open("/dev/null", &err);
    CHECK(o != NULL, "open /dev/null");
    if (o) CHECK(sm_outfile_close(o, 1) == 0, "close /dev/null");
    CHECK(sm_outfile_close(NULL, 1) == 0, "close NULL");
    /* eight at once, a ninth refused */
    sm_outfile *many[9];
    for (int i = 0; i < 9; i++) {
        char name[32];
        snprintf(name, sizeof name, "many%d.txt", i);
        many[i] = sm_outfile_open(at(name), &err);
        CHECK((many[i] != NULL) == (i < 8), "file %d of 9", i);
    }
    CHECK(strstr(err.message, "too many output files at once") != NULL, "message '%s'", err.message);
    for (int i = 0; i < 9; i++) sm_outfile_close(many[i], 0);
    CHECK(entries(base, "many") == 0, "many files left");
    /* SIGTERM while open: the temporary file goes with the process */
    pid_t child = fork();
    if (child == 0) {
        sm_outfile *c = sm_outfile_open(at("killed.txt"), &err);
        if (!c) _exit(3);
        fputs("half", sm_outfile_file(c));
        fflush(sm_outfile_file(c));
        raise(SIGTERM);
        _exit(4);
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "the child's end: %d", status);
    CHECK(entries(base, "killed.txt") == 0, "killed.txt or its temporary file left");
}

/* This process's open descriptors. */
static int open_fds(void) { return entries("/proc/self/fd", "") - 1; /* the listing's own */ }

static void check_outdir(void) {
    sm_error err;
    int fds_before = open_fds();
    const char *dir = at("dir");
    sm_outdir *t = sm_outdir_open(dir, 5, 2, &err);
    CHECK(t != NULL, "outdir: %s", err.message);
    if (!t) return;
    CHECK(sm_outdir_open(dir, 1, 0, &err) == NULL, "a second folder at once");
    CHECK(strstr(err.message, "a temporary folder is open already") != NULL, "message '%s'", err.message);
    CHECK(entries(dir, ".seqmatch-tmp-") == 1, "the temporary folder");
    /* file i gets "i:" three times, round robin over four files through two descriptors */
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < 4; i++) {
            char text[8];
            snprintf(text, sizeof text, "%zu:", i);
            size_t failed = 99;
            CHECK(sm_outdir_append(t, i, text, strlen(text), &failed) == 0, "append %zu", i);
            if (fds_before > 0) CHECK(open_fds() <= fds_before + 2, "%d descriptors open", open_fds() - fds_before);
        }
    CHECK(sm_outdir_append(t, 4, "", 0, NULL) == 0, "an empty file");
    CHECK(sm_outdir_append(t, 0, "", 0, NULL) == 0, "nothing more");
    CHECK(sm_outdir_end(t, NULL) == 0, "end");
    char *name = sm_outdir_name(t, 2);
    CHECK(name && strcmp(content(name), "2:2:2:") == 0, "file 2: '%s'", name ? content(name) : "");
    free(name);
    const char *finals[] = {"a.txt", "b.txt", "c.txt", "d.txt", "e.txt"};
    char path[600];
    snprintf(path, sizeof path, "%s/b.txt", dir);
    put_file(path, "old");
    chmod(path, 0600);
    for (size_t i = 0; i < 5; i++) {
        if (i == 3) continue; /* not moved: removed with the folder */
        snprintf(path, sizeof path, "%s/%s", dir, finals[i]);
        CHECK(sm_outdir_commit(t, i, path) == 0, "commit %zu", i);
    }
    sm_outdir_close(t);
    const char *want[] = {"0:0:0:", "1:1:1:", "2:2:2:", "(none)", ""};
    for (size_t i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, finals[i]);
        CHECK(strcmp(content(path), want[i]) == 0, "%s: '%s'", finals[i], content(path));
    }
    struct stat st;
    snprintf(path, sizeof path, "%s/b.txt", dir);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "b.txt's permissions %o", st.st_mode & 0777);
    CHECK(entries(dir, ".seqmatch-tmp-") == 0, "the temporary folder left");
    /* a name that is a file, not a folder */
    CHECK(sm_outdir_open(at("new.txt"), 1, 0, &err) == NULL, "a file as the folder");
    char msg[600];
    snprintf(msg, sizeof msg, "%s: %s", at("new.txt"), strerror(ENOTDIR));
    CHECK(strcmp(err.message, msg) == 0, "message '%s'", err.message);
    /* closed without a commit: nothing left, not even the folder it made */
    t = sm_outdir_open(at("dir2"), 3, 0, &err);
    CHECK(t != NULL, "outdir 2");
    if (t) {
        CHECK(sm_outdir_append(t, 1, "x", 1, NULL) == 0, "append");
        sm_outdir_close(t);
        CHECK(entries(at("dir2"), "") == -1, "dir2, made by the open, left behind");
    }
    /* a folder that was there stays, empty */
    CHECK(mkdir(at("dir3"), 0777) == 0, "mkdir dir3");
    t = sm_outdir_open(at("dir3"), 2, 0, &err);
    CHECK(t != NULL, "outdir 3");
    if (t) {
        CHECK(sm_outdir_append(t, 0, "x", 1, NULL) == 0, "append");
        sm_outdir_close(t);
        CHECK(entries(at("dir3"), "") == 0, "dir3 gone or not empty");
    }
}

static void check_writer(void) {
    sm_error err;
    sm_writer *w = sm_writer_open(at("w.txt"), &err);
    CHECK(w != NULL && sm_writer_file(w) != NULL && sm_writer_file(w) != stdout, "writer: %s", err.message);
    if (w) {
        sm_writer_write(w, "abc", 3);
        CHECK(access(at("w.txt"), F_OK) != 0, "w.txt there before the close");
        CHECK(sm_writer_close(w, 1) == 0, "close");
        CHECK(strcmp(content(at("w.txt")), "abc") == 0, "w.txt: '%s'", content(at("w.txt")));
    }
    w = sm_writer_open(at("w2.txt"), &err);
    if (w) {
        sm_writer_write(w, "abc", 3);
        CHECK(sm_writer_close(w, 0) == 0, "close without keep");
        CHECK(access(at("w2.txt"), F_OK) != 0, "w2.txt kept");
    }
    w = sm_writer_open("/dev/full", &err);
    CHECK(w != NULL, "/dev/full");
    if (w) {
        sm_writer_write(w, "abc", 3);
        CHECK(sm_writer_close(w, 1) == ENOSPC, "the close of /dev/full");
    }
    CHECK(sm_writer_open(base, &err) == NULL && strstr(err.message, strerror(EISDIR)), "a folder: '%s'", err.message);
    w = sm_writer_open("-", &err);
    CHECK(w != NULL && sm_writer_file(w) == stdout, "standard output");
    CHECK(sm_writer_close(w, 1) == 0, "close standard output");
    CHECK(sm_writer_close(NULL, 1) == 0, "close NULL");

    /* records: a line end only between records; gzip members by the name */
    static const char *records[] = {"@a\nACGT\n+\nIIII\n", "@b\nGG\n+\nII", "@c\nT\n+\nI"};
    sm_record_file *f = sm_record_file_open(at("r.fq"), &err);
    CHECK(f != NULL, "record file: %s", err.message);
    for (int i = 0; f && i < 3; i++) CHECK(sm_record_file_put(f, records[i], strlen(records[i])) == 0, "put %d", i);
    int write_errno = -1;
    CHECK(sm_record_file_close(f, 1, &write_errno, &err) == SM_OK && write_errno == 0, "close");
    CHECK(strcmp(content(at("r.fq")), "@a\nACGT\n+\nIIII\n@b\nGG\n+\nII\n@c\nT\n+\nI") == 0, "r.fq: '%s'",
          content(at("r.fq")));
    f = sm_record_file_open(at("r.fq.gz"), &err);
    for (int i = 0; f && i < 3; i++) sm_record_file_put(f, records[i], strlen(records[i]));
    CHECK(sm_record_file_close(f, 1, NULL, &err) == SM_OK, "close gz");
    const char *gz = content(at("r.fq.gz"));
    CHECK((unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b, "not gzip");
    sm_reader *reader = NULL;
    unsigned n = 0;
    if (sm_reader_open(at("r.fq.gz"), SM_INPUT_AUTO, &reader, &err) == SM_OK) {
        const char *name;
        while (sm_reader_next_record(reader, &name, &err) == 1) n++;
        sm_reader_close(reader);
    }
    CHECK(n == 3, "%u records read back from r.fq.gz", n);
    f = sm_record_file_open(at("dropped.fq"), &err);
    sm_record_file_put(f, records[0], strlen(records[0]));
    CHECK(sm_record_file_close(f, 0, NULL, &err) == SM_OK && access(at("dropped.fq"), F_OK) != 0, "not kept");
    f = sm_record_file_open("/dev/full", &err);
    sm_record_file_put(f, records[0], strlen(records[0]));
    CHECK(sm_record_file_close(f, 1, &write_errno, &err) == SM_ERR_IO && write_errno == ENOSPC &&
              strcmp(err.message, "/dev/full: No space left on device") == 0,
          "/dev/full: %d '%s'", write_errno, err.message);
    CHECK(sm_record_file_open(base, &err) == NULL, "a folder as a record file");
}

/* Command-line values, the quoted command line, mate names, what files hold. */
static void check_args(void) {
    unsigned long long n = 7;
    CHECK(sm_parse_count("42", 100, &n) == 0 && n == 42, "count 42");
    CHECK(sm_parse_count("101", 100, &n) != 0 && n == 42, "count over max");
    CHECK(sm_parse_count("-1", 100, &n) != 0 && sm_parse_count("", 100, &n) != 0 &&
              sm_parse_count("4x", 100, &n) != 0 && sm_parse_count("+4", 100, &n) != 0,
          "counts refused");
    CHECK(sm_parse_count("99999999999999999999999", ~0ull, &n) != 0, "count overflow");
    uint64_t v = 0;
    CHECK(sm_parse_size("64K", &v) == 0 && v == 65536, "64K");
    CHECK(sm_parse_size("64KiB", &v) == 0 && v == 65536 && sm_parse_size("2mb", &v) == 0 && v == 2u << 20,
          "KiB, mb");
    CHECK(sm_parse_size("1g", &v) == 0 && v == 1u << 30 && sm_parse_size("100b", &v) == 0 && v == 100, "1g, 100b");
    CHECK(sm_parse_size("3T", &v) == 0 && v == 3ull << 40, "3T");
    CHECK(sm_parse_size("64Ki", &v) != 0 && sm_parse_size("64KX", &v) != 0 && sm_parse_size("K", &v) != 0 &&
              sm_parse_size("17179869184T", &v) != 0,
          "sizes refused");
    unsigned i = 9, of = 9;
    CHECK(sm_parse_share("2/3", &i, &of) == 0 && i == 2 && of == 3, "share 2/3");
    CHECK(sm_parse_share("3/3", &i, &of) != 0 && sm_parse_share("0/0", &i, &of) != 0 &&
              sm_parse_share("/3", &i, &of) != 0 && sm_parse_share("1", &i, &of) != 0 &&
              sm_parse_share("0/1048577", &i, &of) != 0,
          "shares refused");
    CHECK(sm_parse_share("1048575/1048576", &i, &of) == 0 && of == 1048576, "largest share");
    char *argv[] = {"/usr/bin/sm", "search", "-e", "A C", "it's", "", "x$y", "a\tb", NULL};
    char *line = sm_command_line(8, argv, "seqmatch");
    CHECK(line && strcmp(line, "seqmatch search -e 'A C' 'it'\\''s' '' 'x$y' 'a b'") == 0, "command line: %s",
          line ? line : "(null)");
    free(line);
    char *m = sm_mate_path("out_#.fq#", 2);
    CHECK(m && strcmp(m, "out_2.fq#") == 0, "mate path: %s", m ? m : "(null)");
    free(m);
    m = sm_mate_path("plain.fq", 1);
    CHECK(m && strcmp(m, "plain.fq") == 0, "mate path without #");
    free(m);
    put_file(at("a.fq.gz"), "x");
    put_file(at("reads.txt"), "@r\nACGT\n+\nIIII\n");
    put_file(at("genome.fa"), ">g\nACGT\n");
    CHECK(sm_file_typical_record(at("a.fq.gz")) == 150 && sm_file_typical_record(at("reads.txt")) == 150 &&
              sm_file_typical_record(at("genome.fa")) == 0 && sm_file_typical_record("-") == 0 &&
              sm_file_typical_record(at("none.fa")) == 0 && sm_file_typical_record(at("none.fastq")) == 150,
          "typical record");
    char p1[300], p2[300];
    snprintf(p1, sizeof p1, "%s", at("reads.txt"));
    snprintf(p2, sizeof p2, "%s", at("genome.fa"));
    char *files[] = {p1, p2, "-"};
    CHECK(sm_files_size(files, 2) == 23, "files size %llu", (unsigned long long)sm_files_size(files, 2));
    CHECK(sm_files_size(files, 3) == 0 && sm_files_size(files, 0) == 0, "size unknown");
    sm_pattern_list list = {0};
    CHECK(sm_pattern_list_add(&list, "a", "ACGTNRYacgu", 11) == SM_OK, "add");
    CHECK(!sm_pattern_list_has_non_dna(&list), "IUPAC is DNA");
    CHECK(sm_pattern_list_add(&list, "b", "MKLE", 4) == SM_OK && sm_pattern_list_has_non_dna(&list),
          "E and L are not");
    sm_pattern_list_free(&list);
    CHECK(sm_file_name_problem("bc01") == NULL && sm_file_name_problem("a.b c") == NULL, "plain names");
    CHECK(sm_file_name_problem("") && sm_file_name_problem(".") && sm_file_name_problem("..") &&
              sm_file_name_problem("a/b") && sm_file_name_problem("a\tb") && sm_file_name_problem("a\x7f"),
          "names refused");
    CHECK(strcmp(sm_file_name_problem("a/b"), "holds a '/'") == 0, "why: %s", sm_file_name_problem("a/b"));
    /* the closest group over a record's summaries: patterns 0, 1 are group 0, 2 is group 1 */
    const uint32_t group_of[] = {0, 0, 1};
    sm_pattern_errors pe1[] = {{1, 2}, {2, 1}}, pe2[] = {{0, 1}}, pe3[] = {{0, 0}, {2, 0}};
    sm_record_summary s1 = {0, 2, pe1, 2}, s2 = {0, 1, pe2, 1}, s3 = {0, 2, pe3, 2};
    sm_read_record rec;
    memset(&rec, 0, sizeof rec);
    sm_read_record_closest_group(&rec, &s1, group_of);
    CHECK(rec.user[0] == 2 && rec.user[1] == 2 && rec.user[2] == 0, "closest: pattern 2 with 1 error");
    sm_read_record_closest_group(&rec, &s2, group_of);
    CHECK(rec.user[0] == 2 && rec.user[1] == 2 && rec.user[2] == 1, "a tie with another group");
    memset(&rec, 0, sizeof rec);
    sm_pattern_errors pe4[] = {{0, 1}, {1, 1}};
    sm_record_summary s4 = {0, 2, pe4, 2};
    sm_read_record_closest_group(&rec, &s4, group_of);
    CHECK(rec.user[0] == 2 && rec.user[1] == 0 && rec.user[2] == 0, "the same group is no tie");
    sm_read_record_closest_group(&rec, &s3, group_of);
    CHECK(rec.user[0] == 1 && rec.user[1] == 0 && rec.user[2] == 1, "fewer errors, then a tie");
    /* one line, control bytes shown */
    FILE *tf = tmpfile();
    char got[128] = "";
    CHECK(tf != NULL, "tmpfile");
    if (tf) {
        sm_put_escaped("a\nb\rc\td\x1b[31me\x7f\xc3\xa9", tf);
        rewind(tf);
        size_t gn = fread(got, 1, sizeof got - 1, tf);
        got[gn] = 0;
        fclose(tf);
    }
    CHECK(strcmp(got, "a\\nb\\rc\\td\\x1B[31me\\x7F\xc3\xa9") == 0, "escaped: %s", got);
    /* an output file that is an input, a folder, a device; a new name */
    const char *ins[] = {at("reads.txt")};
    sm_error e2;
    CHECK(sm_output_check_file(at("reads.txt"), ins, 1, &e2) == SM_ERR_INVALID && strstr(e2.message, "also an input"),
          "check_file input: %s", e2.message);
    char want_dir[300];
    snprintf(want_dir, sizeof want_dir, "%s: Is a directory", base);
    CHECK(sm_output_check_file(base, ins, 1, &e2) == SM_ERR_INVALID && strcmp(e2.message, want_dir) == 0,
          "check_file folder: %s", e2.message);
    CHECK(sm_output_check_file("/dev/null", ins, 1, &e2) == SM_ERR_INVALID &&
              strcmp(e2.message, "/dev/null: not a regular file") == 0,
          "check_file device: %s", e2.message);
    CHECK(sm_output_check_file(at("genome.fa"), ins, 1, &e2) == SM_OK &&
              sm_output_check_file(at("new.fa"), ins, 1, &e2) == SM_OK && sm_output_check_file("-", ins, 1, &e2) == SM_OK,
          "check_file regular, new, standard output");
}

int main(void) {
    snprintf(base, sizeof base, "%s/sm_outfile_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 2;
    }
    check_inputs();
    check_outfile();
    check_outdir();
    check_writer();
    check_args();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
