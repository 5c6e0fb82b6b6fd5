# The GPUs the CUDA module is built for, when CMAKE_CUDA_ARCHITECTURES is
# not given: machine code for every architecture the installed nvcc knows
# from sm_75 (Turing: T4, RTX 20; the oldest that CUDA 13 builds) on (A100,
# A10, RTX 30, L4, L40S, RTX 40, H100, H200, B200, RTX 50, ...), and PTX of
# the newest, which the driver compiles for GPUs newer than nvcc. Pass
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
  set(result "")
  foreach(a ${archs})
    list(APPEND result "${a}-real")
  endforeach()
  list(APPEND result "${newest}-virtual")
  set(${out} "${result}" PARENT_SCOPE)
endfunction()
