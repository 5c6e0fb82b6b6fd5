/* Helpers shared by the fuzz targets: inputs as files (the readers take a
 * path, as the CLI does), gzip compression of an input, and a check that
 * aborts so that libFuzzer keeps the input that broke it. */
#ifndef SM_FUZZ_SUPPORT_H
#define SM_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point, also called by the replay driver. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A file holding data[0, size), for APIs that open a path. */
typedef struct {
    int fd;
    char path[64];
} fuzz_file;

/* Returns 0, or -1 when no file could be made (the input is then skipped). */
int fuzz_file_make(fuzz_file *file, const void *data, size_t size);
void fuzz_file_remove(fuzz_file *file);

/* data as gzip: one member, or two members cut at split (BGZF files are a
   series of members). Returns a malloc'd buffer and its size in *out_size,
   or NULL. */
uint8_t *fuzz_gzip(const void *data, size_t size, int two_members, size_t split, size_t *out_size);

/* 64-bit FNV-1a, for digests of what a parser handed out. */
uint64_t fuzz_hash(uint64_t h, const void *data, size_t size);
#define FUZZ_HASH_INIT 0xcbf29ce484222325ull

/* A property of the code under test failed: print and abort. */
void fuzz_fail(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4), noreturn))
#endif
    ;
#define FUZZ_CHECK(cond, ...)                                        \
    do {                                                             \
        if (!(cond)) fuzz_fail(__FILE__, __LINE__, __VA_ARGS__);     \
    } while (0)

#endif /* SM_FUZZ_SUPPORT_H */
