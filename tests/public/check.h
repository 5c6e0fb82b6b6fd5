/* The check of the tests that use the installed headers only: a failed
   condition is counted and said with its place; main returns non-zero when
   any failed. */
#ifndef SM_PUBLIC_CHECK_H
#define SM_PUBLIC_CHECK_H

#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                              \
    do {                                                              \
        if (!(cond)) {                                                \
            failures++;                                               \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                             \
            fputc('\n', stderr);                                      \
        }                                                             \
    } while (0)

#endif
