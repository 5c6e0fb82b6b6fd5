# cmake -P: the default GPU architectures from what a (stand-in) nvcc lists:
# from sm_75, machine code for the oldest of each major version (it runs on
# the others), PTX of the newest; an nvcc that cannot list them gives sm_75
# with PTX. Run as:
#   cmake -DSOURCE=<source dir> -DWORK=<scratch dir> -P cuda_architectures.cmake
include(${SOURCE}/cmake/SeqmatchCudaArchitectures.cmake)
set(failures 0)
function(expect name nvcc_output want)
  set(fake ${WORK}/nvcc-${name})
  file(WRITE ${fake} "#!/bin/sh\n${nvcc_output}\n")
  file(CHMOD ${fake} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  sm_cuda_default_architectures(${fake} got)
  if(got STREQUAL want)
    message(STATUS "pass: ${name}")
  else()
    message(SEND_ERROR "FAIL: ${name}: got '${got}', want '${want}'")
  endif()
endfunction()
file(MAKE_DIRECTORY ${WORK})
# CUDA 13.0's list (in its own order: 110 before 103)
expect(cuda13 "printf 'compute_75\\\\ncompute_80\\\\ncompute_86\\\\ncompute_87\\\\ncompute_88\\\\ncompute_89\\\\ncompute_90\\\\ncompute_100\\\\ncompute_110\\\\ncompute_103\\\\ncompute_120\\\\ncompute_121\\\\n'"
       "75-real;80-real;90-real;100-real;110-real;120-real;121-virtual")
# CUDA 12: older ones left out
expect(cuda12 "printf 'compute_50\\\\ncompute_52\\\\ncompute_60\\\\ncompute_70\\\\ncompute_75\\\\ncompute_80\\\\ncompute_86\\\\ncompute_89\\\\ncompute_90\\\\n'"
       "75-real;80-real;90-real;90-virtual")
# an nvcc that does not know --list-gpu-arch
expect(old "echo 'nvcc fatal: Unknown option' >&2; exit 1" "75-real;75-virtual")
