# Unity builds (CMakeLists.txt, GPUADMIT_UNITY) compile a test folder's files as one translation
# unit, where two files' anonymous namespaces are one namespace: a helper both define is a
# redefinition, and one with another signature would silently become an overload the other file
# may call. Each file's code therefore sits in a namespace named after the file.
#   cmake -DROOT=<tests dir> [-DEXCLUDE="memory"] -P unity_namespaces.cmake
# Fails, naming each file, when ROOT/<folder>/x_test.cpp has no line "namespace x_test {".
cmake_minimum_required(VERSION 3.25)
file(GLOB files "${ROOT}/*/*_test.cpp")
set(offenders "")
foreach(file IN LISTS files)
  file(RELATIVE_PATH rel "${ROOT}" "${file}")
  string(REGEX REPLACE "/.*" "" folder "${rel}")
  if(folder IN_LIST EXCLUDE)
    continue()
  endif()
  get_filename_component(stem "${file}" NAME_WE)
  file(STRINGS "${file}" wrapper REGEX "^namespace ${stem} {$")
  if(NOT wrapper)
    string(APPEND offenders "  ${rel}: no \"namespace ${stem} {\"\n")
  endif()
endforeach()
if(offenders)
  message(FATAL_ERROR "test files whose code is not in a namespace named after the file "
    "(tests/CMakeLists.txt, unity builds):\n${offenders}")
endif()
message(STATUS "unity namespaces: every test file of ${ROOT} has its own")
