/* htslib for BAM output (src/output/bam.c), loaded at the first use:
 * libhts.so.3 (the SONAME of every htslib since 1.10), or the library that
 * SEQMATCH_HTSLIB names (a path, or a name the dynamic loader looks up).
 * In libseqmatch.so and the command; libseqmatch.a has htslib_none.c. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

int sm_htslib_load(const char *const *names, size_t n, void **syms, char *why, size_t why_size) {
    const char *files[] = {"libhts.so.3", "libhts.so"};
    size_t count = 2;
    const char *custom = getenv("SEQMATCH_HTSLIB");
    if (custom && *custom) files[0] = custom, count = 1;
    void *lib = NULL;
    char first[200] = "";
    for (size_t i = 0; i < count && !lib; i++) {
        lib = dlopen(files[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib && !first[0]) {
            const char *e = dlerror();
            snprintf(first, sizeof first, "%.190s", e ? e : files[i]);
        }
    }
    if (!lib) {
        snprintf(why, why_size, "it writes through htslib, which is not installed (Debian: libhts3): %s", first);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(syms[i] = dlsym(lib, names[i]))) {
            snprintf(why, why_size, "the htslib found has no %s", names[i]);
            dlclose(lib);
            return -1;
        }
    }
    /* its own messages off: the errors come back to the caller, said once */
    void *quiet = dlsym(lib, "hts_set_log_level");
    if (quiet) {
        void (*set_log_level)(int);
        memcpy(&set_log_level, &quiet, sizeof quiet);
        set_log_level(0);
    }
    return 0; /* the library stays loaded: the process may write BAM again */
}
