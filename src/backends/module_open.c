/* Opening seqmatch's run-time modules (module_open.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "backends/module_open.h"

/* Tries one path; keeps the first dlerror for the message. */
static void *try_open(const char *path, int flags, char *first_error, size_t size) {
    void *handle = dlopen(path, flags);
    if (!handle && !first_error[0]) {
        const char *e = dlerror();
        snprintf(first_error, size, "%.200s", e ? e : path);
    }
    return handle;
}

/* The folder of the file this code is in, without a final '/': a shared
   library's as the dynamic loader opened it, the program's real one. Returns
   0, or -1 when it cannot be told. */
static int own_folder(char *dir, size_t size) {
    Dl_info self;
    struct link_map *map = NULL;
    char path[PATH_MAX];
    path[0] = '\0';
    if (dladdr1((void *)own_folder, &self, (void **)&map, RTLD_DL_LINKMAP) && map && map->l_name &&
        map->l_name[0]) {
        snprintf(path, sizeof path, "%s", map->l_name); /* a shared library */
    } else {
        /* the program: its real file (dladdr would give argv[0]) */
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n > 0) {
            path[n] = '\0';
        } else {
            /* no /proc: the name execve was given (PATH already searched), resolved */
            const char *exec_name = (const char *)getauxval(AT_EXECFN);
            if (!exec_name || !realpath(exec_name, path)) return -1;
        }
    }
    const char *slash = strrchr(path, '/');
    if (!slash) return snprintf(dir, size, ".") < (int)size ? 0 : -1;
    int n = snprintf(dir, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

void *sm_module_open(const char *file, const char *env_var, const char *libdir, const char *installed_libdir,
                     int also_installed, int flags, char *error, size_t error_size) {
    error[0] = '\0';
    const char *env = getenv(env_var);
    if (env && *env) return try_open(env, flags, error, error_size);
    void *handle = NULL;
    char dir[PATH_MAX], path[PATH_MAX + 128];
    if (own_folder(dir, sizeof dir) == 0) {
        snprintf(path, sizeof path, "%s/%s", dir, file);
        handle = try_open(path, flags, error, error_size);
        if (!handle) {
            snprintf(path, sizeof path, "%s/../%s/%s", dir, libdir, file);
            handle = try_open(path, flags, error, error_size);
        }
    }
    if (also_installed && !handle) {
        snprintf(path, sizeof path, "%s/%s", installed_libdir, file);
        handle = try_open(path, flags, error, error_size);
    }
    if (also_installed && !handle) handle = try_open(file, flags, error, error_size);
    return handle;
}
