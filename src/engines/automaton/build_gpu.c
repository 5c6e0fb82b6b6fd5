/* The host's side of the GPU builder (build_gpu.h): the plan's sorted keys
 * laid out for the device (their bytes one after another, common prefixes,
 * the key that made each key's first shared node), and the section made
 * ready for the tables the GPU side writes into it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/team.h"
#include "engines/automaton/ac_private.h"
#include "engines/automaton/build_gpu.h"
#include "engines/section_kinds.h"

/* The transition table's pages are touched while the GPU builds (one
   thread hands the pieces to the process's team), so that its copy back
   lands in memory already mapped rather than faulting every page in. */
#define TOUCH_PIECE ((size_t)8 << 20)

typedef struct {
    uint8_t *table;
    size_t len;
    pthread_t thread;
    int running;
} touching;

static void touch_piece(void *arg, size_t i, unsigned tid) {
    (void)tid;
    touching *t = arg;
    size_t from = i * TOUCH_PIECE, len = t->len - from < TOUCH_PIECE ? t->len - from : TOUCH_PIECE;
    memset(t->table + from, 0, len);
}

static void *touch_all(void *arg) {
    touching *t = arg;
    sm_team_for(sm_team_shared(16), (t->len + TOUCH_PIECE - 1) / TOUCH_PIECE, touch_piece, t, 0);
    return NULL;
}

typedef struct {
    const sm_ac_plan *plan;
    uint64_t max_bytes;
    sm_buf *section;
    size_t base;
    sm_error *err;
    int rc; /* the section's own failure, reported as it is */
    touching touch;
} room_ctx;

static void touched(room_ctx *r) {
    if (r->touch.running) pthread_join(r->touch.thread, NULL);
    r->touch.running = 0;
}

static uint8_t *make_room(void *p, uint64_t total, char *msg) {
    room_ctx *r = p;
    touched(r);
    r->rc = sm_ac_finish_section(r->plan, total, r->max_bytes, r->section, r->base, r->err);
    if (r->rc != SM_OK) {
        snprintf(msg, 256, "no room for the output lists");
        return NULL;
    }
    return r->section->data + r->base;
}

int sm_ac_build_on_gpu(const sm_ac_plan *plan, int device, uint64_t max_bytes, sm_buf *section, double ms[3],
                       sm_error *err) {
    const size_t n = plan->nkeys;
    const sm_ac_key *keys = plan->sorted;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += keys[i].len;
    uint8_t *symbols = malloc(total ? total : 1);
    uint64_t *start = malloc((n ? n : 1) * sizeof *start);
    uint32_t *arrays = malloc((n ? n : 1) * 3 * sizeof *arrays);
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    int rc = SM_OK;
    if (!symbols || !start || !arrays || !stack) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "automaton: out of memory for the GPU build's keys");
        goto done;
    }
    const uint32_t *lcp = plan->lcp; /* the plan's, found as it counted the states */
    uint32_t *len = arrays, *up = arrays + n, *output = arrays + 2 * n;
    /* up[i]: the last earlier key whose common prefix is shorter than
       key i's: the first key of the run that shares key i's lcp(i)-prefix,
       which made that node (a stack of increasing prefixes). */
    size_t top = 0;
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const sm_ac_key *k = &keys[i];
        len[i] = k->len;
        output[i] = k->output;
        start[i] = at;
        memcpy(symbols + at, k->seq, k->len);
        at += k->len;
        uint32_t c = lcp[i];
        while (top && lcp[stack[top - 1]] >= c) top--;
        up[i] = top ? stack[top - 1] : 0;
        stack[top++] = (uint32_t)i;
    }
    sm_ac_gpu_keys dk;
    memset(&dk, 0, sizeof dk);
    dk.symbols = symbols;
    dk.start = start;
    dk.len = len;
    dk.lcp = n ? lcp : arrays; /* no keys: any array, never read */
    dk.up = up;
    dk.output = output;
    dk.nkeys = (uint32_t)n;
    dk.columns = plan->columns;
    dk.states = (uint32_t)plan->states;
    dk.max_depth = plan->max_depth;
    memcpy(dk.key_class, plan->key_class, sizeof dk.key_class);
    room_ctx ctx = {.plan = plan, .max_bytes = max_bytes, .section = section, .err = err, .rc = SM_OK};
    rc = sm_ac_begin_section(plan, section, &ctx.base, err);
    if (rc != SM_OK) goto done;
    sm_ac_layout l = sm_ac_layout_for(plan->states, plan->columns, 0);
    ctx.touch.table = section->data + ctx.base + l.delta_off;
    ctx.touch.len = (size_t)plan->states * plan->columns * 4;
    ctx.touch.running = pthread_create(&ctx.touch.thread, NULL, touch_all, &ctx.touch) == 0;
    if (!ctx.touch.running) touch_all(&ctx.touch);
    sm_ac_gpu_build build = {dk, {&ctx, make_room, l.delta_off, l.out_index_off, l.out_list_off}};
    double t[3] = {0, 0, 0};
    char msg[256] = "";
    int built = sm_cuda_section_build(SM_SECTION_AUTOMATON, device, &build, t, msg);
    touched(&ctx);
    if (built != 0) {
        rc = ctx.rc != SM_OK ? ctx.rc : sm_set_error(err, SM_ERR_DEVICE, "automaton on the GPU: %s", msg);
        goto done;
    }
    if (ms) memcpy(ms, t, sizeof t);
done:
    free(symbols);
    free(start);
    free(arrays);
    free(stack);
    return rc;
}
