/* The stand-in's way of reporting (engines/gpu_part.h): the CPU runs a
 * kernel's code one work item at a time, so no atomics are needed. In the
 * library so that every engine's stand-in (its *_gpu.c) links anywhere;
 * only tests/emulated calls them. */
#include "engines/gpu_part.h"

void sm_gpu_emit(const sm_gpu_scan_args *a, uint32_t end, uint32_t code, uint32_t errors, uint32_t kind) {
    if (a->count_only) {
        a->counts[code >> 1]++;
        return;
    }
    unsigned long long i = (*a->nhits)++;
    if (i < a->hit_cap) {
        sm_gpu_hit *h = &a->hits[i];
        h->end = end;
        h->code = code;
        h->errors = (uint16_t)errors;
        h->kind = (uint8_t)kind;
        h->section = (uint8_t)a->section_index;
    }
}
