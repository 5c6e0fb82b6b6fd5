/* The packed form of an automaton's table (automaton_gpu.h), built from the
 * complete table and checked against it entry by entry: a kernel that reads
 * it reads exactly the table's transitions, or the form is not used. The
 * engine's GPU part sizes it in the view and gives its image as the bytes
 * the runtime copies to the device beside the section (automaton_gpu.c). */
#ifndef SM_AC_PACKED_H
#define SM_AC_PACKED_H

#include <stdint.h>

typedef struct {
    uint32_t rows;   /* the rows kept whole */
    uint32_t bytes;  /* of the image: rows, then the records' heads and entries (sm_ac_gpu_packed_layout) */
    uint8_t *image;  /* malloc'ed; NULL when only sized */
} sm_ac_packed;

/* delta: the complete 32-bit table (automaton_gpu.h). 0 and *out filled when
   the form fits `budget` bytes and gives every entry of the table; -1
   otherwise. keep_image: 0 frees it.

   A state's row is its children's entries over its failure state's row; a
   state whose row differs from that of a state of its failure chain (up to
   the root) in at most SM_AC_GPU_PACKED_EXCEPTIONS entries needs no row of
   its own. The states are taken breadth first (the failure states come
   first), the first such row of its failure chain that is kept whole being
   the one it refers to. */
int sm_ac_packed_build(const uint32_t *delta, uint32_t states, uint32_t columns, uint32_t budget, int keep_image,
                       sm_ac_packed *out);

#endif /* SM_AC_PACKED_H */
