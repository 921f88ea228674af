# The mutation contract (engine/pod_writer.h) holds at compile time: a mutator that writes only
# the contract's members compiles, and one that writes any other member of the object does not.
#   cmake -DCXX=<compiler> -DROOT=<source dir> -P check_contract.cmake
set(probe "${ROOT}/tests/contract/mutator_writes.cc")
foreach(write 0 1 2 3 4)
  execute_process(
    COMMAND "${CXX}" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I "${ROOT}"
      -DWRITE=${write} "${probe}"
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(write EQUAL 0 AND NOT result EQUAL 0)
    message(FATAL_ERROR "the probe that writes only contract members must compile:\n${err}")
  elseif(NOT write EQUAL 0 AND result EQUAL 0)
    message(FATAL_ERROR "WRITE=${write} of ${probe} writes outside the mutation contract "
      "and compiled: a mutator can write what Pipeline::evaluate_in_place does not diff")
  elseif(NOT write EQUAL 0 AND NOT err MATCHES "mutator_writes\\.cc:[0-9]+:[0-9]+: error")
    # The failure must be the write itself, not something else in the probe's headers.
    message(FATAL_ERROR "WRITE=${write} failed, but not on the write:\n${err}")
  endif()
endforeach()
message(STATUS "mutation contract: the allowed writes compile, the 4 writes elsewhere do not")
