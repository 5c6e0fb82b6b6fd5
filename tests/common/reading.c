/* Helpers of the reader tests (reading.h). */
#include "reading.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tu_reading_put(tu_reading *r, const void *p, size_t n) {
    if (r->len + n + 1 > r->cap) {
        r->cap = (r->len + n + 1) * 2;
        r->text = realloc(r->text, r->cap);
        if (!r->text) exit(2);
    }
    memcpy(r->text + r->len, p, n);
    r->len += n;
    r->text[r->len] = '\0';
}

void tu_run_forwards(void *ctx, size_t n, void (*job)(void *arg, size_t i), void *arg) {
    (*(unsigned *)ctx)++;
    for (size_t i = 0; i < n; i++) job(arg, i);
}

void tu_run_backwards(void *ctx, size_t n, void (*job)(void *arg, size_t i), void *arg) {
    (*(unsigned *)ctx)++;
    for (size_t i = n; i-- > 0;) job(arg, i);
}

void tu_write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}
