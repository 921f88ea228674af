# Helpers once (docs/architecture.md, "Helpers"): saturating arithmetic lives in
# engine/saturating.h and string joining in engine/join.h, nowhere else. Each used to be written
# four times, and the copies had drifted (one saturated negative overflow to INT64_MAX).
#   cmake -DROOT=<dir> -DFOLDERS="engine;rules;..." [-DEXCLUDE=tests/boundary] -P check_helpers_once.cmake
# Fails, naming each file:line, when a file under FOLDERS other than the two homes defines or
# declares a function (or a lambda) named saturating_*, sat_add, sat_mul, join or join_strings.
cmake_minimum_required(VERSION 3.16)
set(homes "engine/saturating.h;engine/join.h")
set(names "(saturating_[a-z_]+|sat_add|sat_mul|join|join_strings)")
# A return type (or `auto x =` for a lambda) right before the name: a definition or declaration,
# not a call. Calls start with `return`, an operator or an opening parenthesis.
set(function "^[ \t]*((static|inline|constexpr|constinit)[ \t]+)*[A-Za-z_][A-Za-z0-9_:<>,]*[ \t&*]+${names}[ \t]*\\(")
set(lambda "(auto|std::function<[^>]*>)[ \t&]+${names}[ \t]*=")
set(offenders "")
foreach(folder IN LISTS FOLDERS)
  file(GLOB_RECURSE files "${ROOT}/${folder}/*.h" "${ROOT}/${folder}/*.cc" "${ROOT}/${folder}/*.cpp")
  foreach(file IN LISTS files)
    file(RELATIVE_PATH rel "${ROOT}" "${file}")
    if(rel IN_LIST homes)
      continue()
    endif()
    set(skip FALSE)
    foreach(excluded IN LISTS EXCLUDE)
      string(FIND "${rel}" "${excluded}/" at)
      if(at EQUAL 0)
        set(skip TRUE)
      endif()
    endforeach()
    if(skip)
      continue()
    endif()
    file(STRINGS "${file}" lines)
    set(number 0)
    foreach(line IN LISTS lines)
      math(EXPR number "${number} + 1")
      if(line MATCHES "^[ \t]*(return|else|case|co_return|throw)[ \t(]")
        continue()
      endif()
      if(line MATCHES "${function}" OR line MATCHES "${lambda}")
        string(APPEND offenders "  ${rel}:${number}: ${line}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(offenders)
  message(FATAL_ERROR "a second definition of a shared helper; use engine/saturating.h "
    "(saturating_add, saturating_mul) or engine/join.h (join) instead:\n${offenders}")
endif()
message(STATUS "helpers once: ${FOLDERS} define no saturating_* or join outside ${homes}")
