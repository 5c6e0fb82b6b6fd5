/* Section kinds, as stored in the database's section directory
   (docs/format.md): the numbers are part of the file format. Apart from
   engine.h so that the engines' kernels (CUDA C++) can name their kind. */
#ifndef SM_SECTION_KINDS_H
#define SM_SECTION_KINDS_H

enum {
    SM_SECTION_AUTOMATON = 1,
    SM_SECTION_SHIFTAND = 2,
    SM_SECTION_MISMATCH = 3,
    SM_SECTION_MYERS = 4,
    SM_SECTION_WAVEFRONT = 5,
    SM_SECTION_KMER = 6,
    SM_SECTION_PIGEONHOLE = 7,
    SM_SECTION_WUMANBER = 8,
    SM_SECTION_GUIDE = 9
};

#endif /* SM_SECTION_KINDS_H */
