# The dependency boundaries (docs/architecture.md). Every header in /usr/include, and every
# folder of the repository, is reachable from any target, so the link lines alone cannot enforce
# them; this scan does.
#   cmake -DROOT=<dir> -DFOLDERS="engine;rules;mutators" [-DFORBIDDEN=<regex>] [-DRULE=<text>]
#         -P check_includes.cmake
# Fails, naming each file:line, when a file of FOLDERS under ROOT includes a header whose path
# matches FORBIDDEN. The default: cpp-httplib, yaml-cpp, OpenSSL or RE2 (the engine, the rules
# and the mutators know nothing of HTTP, YAML, TLS or regexes).
if(NOT DEFINED FORBIDDEN)
  set(FORBIDDEN "httplib\\.h|yaml-cpp/|openssl/|re2/")
  set(RULE "engine/, rules/ and mutators/ must not include cpp-httplib, yaml-cpp, OpenSSL or RE2; "
    "move the code behind policies/, yaml/ or webhook/")
endif()
set(pattern "#[ \t]*include[ \t]*[<\"](${FORBIDDEN})")
set(offenders "")
foreach(folder IN LISTS FOLDERS)
  file(GLOB_RECURSE files "${ROOT}/${folder}/*.h" "${ROOT}/${folder}/*.cc" "${ROOT}/${folder}/*.cpp")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" lines)
    set(number 0)
    foreach(line IN LISTS lines)
      math(EXPR number "${number} + 1")
      if(line MATCHES "${pattern}")
        file(RELATIVE_PATH rel "${ROOT}" "${file}")
        string(APPEND offenders "  ${rel}:${number}: ${line}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(offenders)
  message(FATAL_ERROR "${RULE} (docs/architecture.md):\n${offenders}")
endif()
message(STATUS "dependency boundary: ${FOLDERS} include nothing matching ${FORBIDDEN}")
