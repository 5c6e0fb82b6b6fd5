/* A database's patterns grouped by name (include/seqmatch_compile.h,
 * sm_db_name_groups): seqmatch demux's barcodes, where the patterns of one
 * name (a barcode's variants) are one sample. Public calls only. */
#include <stdlib.h>
#include <string.h>

#include "seqmatch_common.h"
#include "seqmatch_compile.h"

typedef struct {
    const char *name;
    uint32_t pattern;
} named;

static int by_name(const void *a, const void *b) {
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->pattern < y->pattern ? -1 : x->pattern > y->pattern);
}

int sm_db_name_groups(const sm_db *db, uint32_t *group_of, uint32_t *groups) {
    sm_db_info info;
    sm_db_get_info(db, &info);
    uint32_t n = info.pattern_count;
    *groups = 0;
    named *sorted = malloc((n ? n : 1) * sizeof *sorted);
    uint32_t *first = malloc((n ? n : 1) * sizeof *first);
    if (!sorted || !first) {
        free(sorted);
        free(first);
        return SM_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *name = sm_db_pattern_name(db, i);
        sorted[i].name = name ? name : "";
        sorted[i].pattern = i;
    }
    /* sorted by name, ties by position: each name's first pattern leads it */
    qsort(sorted, n, sizeof *sorted, by_name);
    for (uint32_t i = 0; i < n; i++)
        first[sorted[i].pattern] = i > 0 && strcmp(sorted[i].name, sorted[i - 1].name) == 0
                                       ? first[sorted[i - 1].pattern]
                                       : sorted[i].pattern;
    free(sorted);
    /* groups numbered in the order their names first come */
    for (uint32_t p = 0; p < n; p++) group_of[p] = first[p] == p ? (*groups)++ : group_of[first[p]];
    free(first);
    return SM_OK;
}
