# The fuzz harnesses, shared by the libFuzzer build (fuzz/CMakeLists.txt)
# and the corpus replay of the test suite (tests/CMakeLists.txt), which
# link the same harness sources against different libraries.
set(SM_FUZZ_TARGETS patterns reader dfa regex database differential range shard dense demux trim barcodes amplicon)
set(SM_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})

# The reader and range harnesses run over a reader with tiny buffers, so that
# small inputs reach every refill and piece boundary.
set(SM_FUZZ_READER_CAPS READER_RAW_CAP=61 READER_PIECE_CAP=37 READER_NAME_MAX=40)

# sm_fuzz_harness(EXE TARGET DRIVER CORE IO IO_SMALL TESTCOMMON)
#   EXE      executable to create
#   TARGET   one of SM_FUZZ_TARGETS
#   DRIVER   extra source with main() (empty for libFuzzer's own)
#   CORE, IO, IO_SMALL, TESTCOMMON: the libraries to link (IO_SMALL: the
#   reader with SM_FUZZ_READER_CAPS)
# The shard target links SM_FUZZ_DIST (src/dist) and the demux target
# SM_FUZZ_CLI (the command's sources, main() renamed) besides, set by the
# caller.
function(sm_fuzz_harness exe target driver core io io_small testcommon)
  set(sources ${SM_FUZZ_DIR}/fuzz_${target}.c ${SM_FUZZ_DIR}/fuzz_support.c ${driver})
  set(libs ${core})
  if(target STREQUAL "dfa" OR target STREQUAL "regex")
    list(APPEND sources ${SM_FUZZ_DIR}/dfa_check.c)
  endif()
  if(target STREQUAL "patterns")
    set(libs ${testcommon} ${io} ${core})
  elseif(target STREQUAL "reader")
    set(libs ${io_small} ${core})
  elseif(target STREQUAL "range")
    # the shared range check (tests/common) over the small-buffer reader
    set(libs ${testcommon} ${io_small} ${core})
  elseif(target STREQUAL "differential")
    set(libs ${testcommon} ${core})
  elseif(target STREQUAL "shard")
    set(libs ${SM_FUZZ_DIST} ${io} ${core})
  elseif(target STREQUAL "trim" OR target STREQUAL "barcodes" OR target STREQUAL "amplicon")
    set(libs ${io} ${core})
  elseif(target STREQUAL "demux")
    set(libs ${SM_FUZZ_CLI} ${SM_FUZZ_DIST} ${io} ${core})
  endif()
  add_executable(${exe} ${sources})
  target_include_directories(${exe} PRIVATE ${SM_FUZZ_DIR} ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src
                                            ${PROJECT_SOURCE_DIR}/tests/common)
  if(target STREQUAL "reader")
    target_compile_definitions(${exe} PRIVATE ${SM_FUZZ_READER_CAPS})
  endif()
  target_link_libraries(${exe} PRIVATE ${libs} Threads::Threads ZLIB::ZLIB m)
endfunction()
