# Every exemption in the code traced to the trust model (docs/security.md, "Exemptions"). Each
# place where gpuadmit skips a rule, a mutation or a whole object carries a comment
#   // Exemption <id> (docs/security.md): why
# and the table's rows start with `<id>`. The two sets must be equal: an exemption added to the
# code without a line of the model, or a line of the model no code implements, fails.
#   cmake -DROOT=<dir> -DFOLDERS="engine;rules;mutators;render" -DDOC=<file> -P check_exemptions.cmake
set(in_code "")
foreach(folder IN LISTS FOLDERS)
  file(GLOB_RECURSE files "${ROOT}/${folder}/*.h" "${ROOT}/${folder}/*.cc")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" lines REGEX "Exemption [a-z0-9-]+ \\(docs/security.md\\)")
    foreach(line IN LISTS lines)
      string(REGEX MATCH "Exemption ([a-z0-9-]+) \\(docs/security.md\\)" _ "${line}")
      list(APPEND in_code "${CMAKE_MATCH_1}")
    endforeach()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES in_code)
list(SORT in_code)
file(STRINGS "${DOC}" rows REGEX "^\\| `[a-z0-9-]+` \\|")
set(in_doc "")
foreach(row IN LISTS rows)
  string(REGEX MATCH "^\\| `([a-z0-9-]+)` \\|" _ "${row}")
  list(APPEND in_doc "${CMAKE_MATCH_1}")
endforeach()
list(REMOVE_DUPLICATES in_doc)
list(SORT in_doc)
if(NOT in_code)
  message(FATAL_ERROR "no `Exemption <id> (docs/security.md)` comment under ${FOLDERS}")
endif()
if(NOT in_code STREQUAL in_doc)
  message(FATAL_ERROR "the exemptions in the code (${in_code}) are not the ones docs/security.md "
    "lists (${in_doc}): add the exemption's line to docs/security.md's table, or its comment to "
    "the code")
endif()
message(STATUS "exemptions traced to docs/security.md: ${in_code}")
