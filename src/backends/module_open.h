/* Opening a module of seqmatch's own (the GPU side, libseqmatch-cuda.so;
 * the MPI side, libseqmatch-mpi.so) at run time, so that neither the
 * library nor the command links CUDA or MPI: a copied binary runs where
 * neither is installed, and asks for them only when a GPU or mpirun is
 * used. */
#ifndef SM_MODULE_OPEN_H
#define SM_MODULE_OPEN_H

#include <stddef.h>

/* The install's library folders (CMake defines them for the files that look
   there): relative to the program's prefix, and absolute. */
#ifndef SM_INSTALL_LIBDIR
#define SM_INSTALL_LIBDIR "lib"
#endif
#ifndef SM_INSTALL_FULL_LIBDIR
#define SM_INSTALL_FULL_LIBDIR "/usr/local/lib"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Opens the module named file, looking, in order: at $env_var (a path;
   nothing else then); in the folder of the library or program this code is
   part of (a program's real file, /proc/self/exe, not argv[0], a bare name
   when it was found through PATH), and in that folder's ../libdir; when
   also_installed, in installed_libdir and by file name alone (the dynamic
   loader's search). flags are dlopen's. Returns the handle, or NULL with
   the first failure's reason in error. */
void *sm_module_open(const char *file, const char *env_var, const char *libdir, const char *installed_libdir,
                     int also_installed, int flags, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* SM_MODULE_OPEN_H */
