# Precompiled headers (docs/performance.md, "Test suite"): nlohmann/json and the common std
# headers (cmake/pch.h) parsed once instead of in every translation unit, ~1 s of a small
# library file's ~3 s at -O2 -g1. Test executables have their own (tests/support/pch.h, which
# adds Catch2).
option(GPUADMIT_PCH "Precompile nlohmann/json and the common std headers" ON)

# gpuadmit_precompile(TARGET...): the libraries share one precompiled header, built by the
# target gpuadmit_pch. REUSE_FROM needs the same compile flags and definitions in every user; a
# mismatch is a -Winvalid-pch error under -Werror (not a silent re-parse), so a target with flags
# of its own takes gpuadmit_precompile_own.
function(gpuadmit_precompile)
  if(NOT GPUADMIT_PCH)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    # In the fuzz build, libFuzzer's coverage is a compile flag of some libraries only
    # (GPUADMIT_FUZZED): those share one header, the others another.
    set(pch gpuadmit_pch)
    if(GPUADMIT_FUZZ AND NOT target IN_LIST GPUADMIT_FUZZED)
      set(pch gpuadmit_pch_uncovered)
    endif()
    if(NOT TARGET ${pch})
      add_library(${pch} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch.cc)
      target_link_libraries(${pch} PRIVATE nlohmann_json::nlohmann_json)
      target_precompile_headers(${pch} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/pch.h)
      if(pch STREQUAL gpuadmit_pch)
        gpuadmit_fuzz_coverage(${pch})
      endif()
    endif()
    target_precompile_headers(${target} REUSE_FROM ${pch})
  endforeach()
endfunction()

# gpuadmit_fuzz_coverage(TARGET): in the fuzz build, TARGET's code instrumented for libFuzzer's
# coverage (the libraries of GPUADMIT_FUZZED, their shared precompiled header, the fuzz targets).
function(gpuadmit_fuzz_coverage target)
  if(GPUADMIT_FUZZ)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

# gpuadmit_precompile_own(TARGET...): the same header, compiled with the target's own flags
# (cpp-httplib's -D and -pthread in webhook/ and kube/, the binary's version definition).
function(gpuadmit_precompile_own)
  if(NOT GPUADMIT_PCH)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/pch.h)
  endforeach()
endfunction()
