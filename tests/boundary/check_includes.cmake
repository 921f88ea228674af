# The dependency boundary (docs/architecture.md): the engine, the rules and the mutators know
# nothing of HTTP, YAML, TLS or regexes. Every header in /usr/include is reachable from any
# target, so the link lines alone cannot enforce this; this scan does.
#   cmake -DROOT=<dir> -DFOLDERS="engine;rules;mutators" -P check_includes.cmake
# Fails, naming each file:line, when one of FOLDERS under ROOT includes cpp-httplib, yaml-cpp,
# OpenSSL or RE2.
set(forbidden "#[ \t]*include[ \t]*[<\"](httplib\\.h|yaml-cpp/|openssl/|re2/)")
set(offenders "")
foreach(folder IN LISTS FOLDERS)
  file(GLOB_RECURSE files "${ROOT}/${folder}/*.h" "${ROOT}/${folder}/*.cc" "${ROOT}/${folder}/*.cpp")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" lines)
    set(number 0)
    foreach(line IN LISTS lines)
      math(EXPR number "${number} + 1")
      if(line MATCHES "${forbidden}")
        file(RELATIVE_PATH rel "${ROOT}" "${file}")
        string(APPEND offenders "  ${rel}:${number}: ${line}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(offenders)
  message(FATAL_ERROR "engine/, rules/ and mutators/ must not include cpp-httplib, yaml-cpp, "
    "OpenSSL or RE2 (docs/architecture.md); move the code behind policies/, lint/ or webhook/:\n"
    "${offenders}")
endif()
message(STATUS "dependency boundary: ${FOLDERS} include none of cpp-httplib, yaml-cpp, OpenSSL, RE2")
