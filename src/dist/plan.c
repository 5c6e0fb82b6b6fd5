/* The plan: which units each share scans (dist.h). The targets after the
 * last standard input lie end to end as one byte space of T bytes; share i
 * of N takes [floor(i T / N), floor((i + 1) T / N)). A plain or BGZF file
 * gives each share the part of it inside that stretch; any other file is one
 * unit for the share its first byte falls in (its size still counts, so
 * that a large gzip file weighs what it is). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dist/dist.h"
#include "io/source.h"

static int describe(const char *path, sm_dist_target *t, sm_error *err) {
    memset(t, 0, sizeof *t);
    if (strcmp(path, "-") == 0) return SM_OK;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        t->large = 1; /* a pipe or device: size unknown */
        return SM_OK;
    }
    if (st.st_size == 0) return SM_OK;
    t->size = (uint64_t)st.st_size;
    sm_source *src = NULL;
    int rc = sm_io_source_open(path, 1, &src, err);
    if (rc != SM_OK) return rc;
    t->rangeable = sm_io_source_rangeable(src);
    t->large = !t->rangeable;
    sm_io_source_close(src);
    return SM_OK;
}

static uint64_t share_start(uint64_t total, unsigned shares, unsigned i) {
    return (uint64_t)(((unsigned __int128)total * i) / shares);
}

static int add_unit(sm_dist_plan *p, size_t *cap, size_t target, int whole, uint64_t begin, uint64_t end) {
    if (p->count == *cap) {
        size_t grown = *cap ? *cap * 2 : 8;
        sm_dist_unit *u = realloc(p->units, grown * sizeof *u);
        if (!u) return SM_ERR_NOMEM;
        p->units = u;
        *cap = grown;
    }
    p->units[p->count++] = (sm_dist_unit){target, whole, begin, end};
    return SM_OK;
}

int sm_dist_targets_describe(char *const *targets, size_t count, sm_dist_target *info, sm_error *err) {
    int rc = SM_OK;
    for (size_t i = 0; i < count && rc == SM_OK; i++) rc = describe(targets[i], &info[i], err);
    return rc;
}

int sm_dist_plan_make(char *const *targets, size_t count, unsigned shares, unsigned share, sm_dist_plan *plan,
                      sm_error *err) {
    if (shares == 0 || share >= shares) return sm_dist_plan_cut(targets, count, NULL, shares, share, plan, err);
    memset(plan, 0, sizeof *plan);
    sm_dist_target *info = calloc(count ? count : 1, sizeof *info);
    if (!info) {
        if (err) snprintf(err->message, sizeof err->message, "out of memory"), err->code = SM_ERR_NOMEM;
        return SM_ERR_NOMEM;
    }
    int rc = sm_dist_targets_describe(targets, count, info, err);
    if (rc == SM_OK) rc = sm_dist_plan_cut(targets, count, info, shares, share, plan, err);
    free(info);
    return rc;
}

/* A unit's weight in the byte space: its bytes, or a whole file's size. */
static uint64_t weight(const sm_dist_unit *u, const sm_dist_target *info) {
    return u->whole ? info[u->target].size : u->end - u->begin;
}

/* Part `part` of `parts` of the units laid end to end into plan: part i
   takes [floor(i T / P), floor((i + 1) T / P)), of a ranged unit the bytes
   inside that stretch, a whole unit when its first byte falls in it (the
   last part for one that starts at the very end). */
static int cut_units(const sm_dist_unit *units, size_t n, const sm_dist_target *info, unsigned parts, unsigned part,
                     sm_dist_plan *plan, size_t *cap) {
    uint64_t total = 0;
    for (size_t k = 0; k < n; k++) total += weight(&units[k], info);
    uint64_t lo = share_start(total, parts, part), hi = share_start(total, parts, part + 1);
    uint64_t at = 0;
    int rc = SM_OK;
    for (size_t k = 0; k < n && rc == SM_OK; k++) {
        const sm_dist_unit *u = &units[k];
        uint64_t f0 = at, f1 = at + weight(u, info);
        at = f1;
        if (!u->whole) {
            uint64_t b = f0 > lo ? f0 : lo, e = f1 < hi ? f1 : hi;
            if (b < e) rc = add_unit(plan, cap, u->target, 0, u->begin + (b - f0), u->begin + (e - f0));
        } else if (f0 < total ? (lo <= f0 && f0 < hi) : part == parts - 1) {
            rc = add_unit(plan, cap, u->target, 1, 0, 0);
        }
    }
    return rc;
}

int sm_dist_plan_cut(char *const *targets, size_t count, const sm_dist_target *info, unsigned shares,
                     unsigned share, sm_dist_plan *plan, sm_error *err) {
    memset(plan, 0, sizeof *plan);
    if (shares == 0 || share >= shares) {
        if (err) snprintf(err->message, sizeof err->message, "share %u of %u", share, shares), err->code = SM_ERR_INVALID;
        return SM_ERR_INVALID;
    }
    plan->unsplit = calloc(count ? count : 1, sizeof *plan->unsplit);
    sm_dist_unit *laid = calloc(count ? count : 1, sizeof *laid);
    int rc = plan->unsplit && laid ? SM_OK : SM_ERR_NOMEM;
    /* standard input reaches rank 0 only: it and everything before it are share 0's */
    size_t first = 0;
    for (size_t i = 0; i < count; i++)
        if (strcmp(targets[i], "-") == 0) first = i + 1;
    size_t cap = 0;
    for (size_t i = 0; i < first && rc == SM_OK; i++) {
        if (share == 0) {
            if (info[i].rangeable) rc = add_unit(plan, &cap, i, 0, 0, info[i].size);
            else rc = add_unit(plan, &cap, i, 1, 0, 0);
        }
        if (shares > 1 && (info[i].large || strcmp(targets[i], "-") == 0 || info[i].rangeable))
            plan->unsplit[plan->unsplit_count++] = i;
    }
    /* the rest end to end: a plain or BGZF file by bytes, any other file
       whole (its size still counts, so that a large gzip file weighs what it is) */
    for (size_t i = first; i < count && rc == SM_OK; i++) {
        laid[i - first] = (sm_dist_unit){i, !info[i].rangeable, 0, info[i].rangeable ? info[i].size : 0};
        if (!info[i].rangeable && info[i].large && shares > 1) plan->unsplit[plan->unsplit_count++] = i;
    }
    if (rc == SM_OK) rc = cut_units(laid, count - first, info, shares, share, plan, &cap);
    free(laid);
    if (rc != SM_OK) {
        if (rc == SM_ERR_NOMEM && err) snprintf(err->message, sizeof err->message, "out of memory"), err->code = rc;
        sm_dist_plan_free(plan);
    }
    return rc;
}

int sm_dist_plan_within(const sm_dist_plan *outer, const sm_dist_target *info, unsigned parts, unsigned part,
                        sm_dist_plan *plan, sm_error *err) {
    memset(plan, 0, sizeof *plan);
    if (parts == 0 || part >= parts) {
        if (err) snprintf(err->message, sizeof err->message, "part %u of %u", part, parts), err->code = SM_ERR_INVALID;
        return SM_ERR_INVALID;
    }
    size_t cap = 0;
    int rc = cut_units(outer->units, outer->count, info, parts, part, plan, &cap);
    if (rc != SM_OK) {
        if (err) snprintf(err->message, sizeof err->message, "out of memory"), err->code = rc;
        sm_dist_plan_free(plan);
    }
    return rc;
}

uint64_t sm_dist_plan_bytes(const sm_dist_plan *plan, const sm_dist_target *info, int *bgzf) {
    uint64_t split = 0;
    for (size_t k = 0; k < plan->count; k++) {
        const sm_dist_unit *u = &plan->units[k];
        if (u->whole) continue;
        split += u->end - u->begin;
        if (bgzf && info[u->target].rangeable == 2) *bgzf = 1;
    }
    return split;
}

void sm_dist_plan_free(sm_dist_plan *plan) {
    free(plan->units);
    free(plan->unsplit);
    memset(plan, 0, sizeof *plan);
}
