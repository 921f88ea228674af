# The allocator of the binary and the benchmarks. glibc's malloc is about a third of the
# webhook's CPU per review (nlohmann trees are many small nodes, built and freed per request on 8+
# threads); mimalloc (Debian libmimalloc-dev) measured -29% CPU per review under wrk
# (docs/performance.md, "Webhook"). auto: mimalloc when installed, glibc otherwise; never with the
# sanitizers (they bring their own). Test executables keep glibc's.
set(GPUADMIT_ALLOCATOR auto CACHE STRING "malloc of the gpuadmit binary: auto, mimalloc or glibc")
set_property(CACHE GPUADMIT_ALLOCATOR PROPERTY STRINGS auto mimalloc glibc)
set(GPUADMIT_MIMALLOC "")
if(NOT GPUADMIT_SANITIZE AND NOT GPUADMIT_TSAN AND NOT GPUADMIT_ALLOCATOR STREQUAL "glibc")
  find_library(GPUADMIT_MIMALLOC_LIBRARY NAMES mimalloc)
  if(GPUADMIT_MIMALLOC_LIBRARY)
    set(GPUADMIT_MIMALLOC ${GPUADMIT_MIMALLOC_LIBRARY})
    message(STATUS "gpuadmit allocator: mimalloc (${GPUADMIT_MIMALLOC_LIBRARY})")
  elseif(GPUADMIT_ALLOCATOR STREQUAL "mimalloc")
    message(FATAL_ERROR "GPUADMIT_ALLOCATOR=mimalloc but libmimalloc is not installed "
                        "(scripts/setup.sh installs libmimalloc-dev)")
  else()
    message(STATUS "gpuadmit allocator: glibc (install libmimalloc-dev for mimalloc)")
  endif()
endif()

# Linked shared: its malloc/free interpose glibc's for the whole process (libstdc++, OpenSSL,
# cpp-httplib included).
function(gpuadmit_use_allocator target)
  if(GPUADMIT_MIMALLOC)
    target_link_libraries(${target} PRIVATE ${GPUADMIT_MIMALLOC})
  endif()
endfunction()
