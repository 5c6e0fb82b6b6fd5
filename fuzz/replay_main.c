/* Runs a fuzz target's entry point once per file, without libFuzzer: the
 * checked-in corpora and regression inputs replay in every ctest run (and
 * under the sanitizer build), with any compiler.
 *
 *   replay_TARGET FILE|DIR...     every regular file named, or found in a DIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_support.h"

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        if (n == 0) break;
        len += n;
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return -1;
    }
    /* An exact-size copy, so that the sanitizers see a read past the end. */
    uint8_t *exact = malloc(len ? len : 1);
    if (exact && len) memcpy(exact, buf, len);
    free(buf);
    if (!exact) return -1;
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int replay_path(const char *path, unsigned long *count) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s does not exist\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (replay_file(path) != 0) return -1;
        ++*count;
        return 0;
    }
    DIR *d = opendir(path);
    if (!d) return -1;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        size_t n = strlen(path) + strlen(e->d_name) + 2;
        char *child = malloc(n);
        if (!child) {
            rc = -1;
            break;
        }
        snprintf(child, n, "%s/%s", path, e->d_name);
        if (stat(child, &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(child) != 0) rc = -1;
            else ++*count;
        }
        free(child);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv) {
    unsigned long count = 0;
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i], &count) != 0) return 1;
    printf("replayed %lu inputs\n", count);
    /* An empty corpus means a wrong path, not a pass. */
    return count ? 0 : 1;
}
