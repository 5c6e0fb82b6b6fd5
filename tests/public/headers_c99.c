/* Every public header, the experimental ones too, in C99 with -pedantic:
 * a program in an older C sees no warning (each type declared once, the
 * headers included in either order). Compiled, never run (tests/CMakeLists.txt). */
#define SEQMATCH_EXPERIMENTAL
#include <seqmatch_output.h>
#include <seqmatch_reader.h>
#include <seqmatch.h>
#include <seqmatch_dfa.h>
#include <seqmatch_dist.h>
#include <seqmatch_gzip.h>
#include <seqmatch_reader.h>
#include <seqmatch_output.h>

int main(void) { return 0; }
