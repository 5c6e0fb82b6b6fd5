# The GPUs the CUDA module is built for, when CMAKE_CUDA_ARCHITECTURES is
# not given: machine code for every GPU from sm_75 (Turing: T4, RTX 20; the
# oldest that CUDA 13 builds) to the newest the installed nvcc knows, and PTX
# of the newest, which the driver compiles for GPUs newer than nvcc. Machine
# code for compute capability X.y runs on X.z for z >= y, so one target per
# major version does it: with CUDA 13.0, sm_75, sm_80 (A100, and A10, RTX 30,
# L4, L40S, RTX 40: 8.6 to 8.9), sm_90 (H100, H200), sm_100 (B200, GB300),
# sm_110, sm_120 (RTX 50, and 12.1), PTX 12.1. Pass
# -DCMAKE_CUDA_ARCHITECTURES=native (the GPUs of this machine), or a list
# such as "80;90", for a shorter build.

set(SM_CUDA_OLDEST_ARCHITECTURE 75)

# sm_cuda_default_architectures(NVCC OUT): the list for CMAKE_CUDA_ARCHITECTURES.
function(sm_cuda_default_architectures nvcc out)
  execute_process(COMMAND "${nvcc}" --list-gpu-arch OUTPUT_VARIABLE listed RESULT_VARIABLE failed
                  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(archs "")
  if(NOT failed)
    string(REGEX MATCHALL "compute_[0-9]+" computes "${listed}")
    foreach(c ${computes})
      string(REPLACE "compute_" "" n "${c}")
      if(n GREATER_EQUAL SM_CUDA_OLDEST_ARCHITECTURE)
        list(APPEND archs ${n})
      endif()
    endforeach()
  endif()
  if(NOT archs)
    # an nvcc too old to list them (before CUDA 11.1): the oldest, with PTX
    set(${out} "${SM_CUDA_OLDEST_ARCHITECTURE}-real;${SM_CUDA_OLDEST_ARCHITECTURE}-virtual" PARENT_SCOPE)
    return()
  endif()
  list(REMOVE_DUPLICATES archs)
  list(SORT archs COMPARE NATURAL)
  list(GET archs -1 newest)
  # the oldest of each major version: its code runs on the others
  set(result "")
  set(major_seen "")
  foreach(a ${archs})
    math(EXPR major "${a} / 10")
    list(FIND major_seen ${major} seen)
    if(seen EQUAL -1)
      list(APPEND major_seen ${major})
      list(APPEND result "${a}-real")
    endif()
  endforeach()
  list(APPEND result "${newest}-virtual")
  set(${out} "${result}" PARENT_SCOPE)
endfunction()
