# Writes OUTPUT: a C++ file defining gpuadmit::default_policy_text() with INPUT's bytes.
file(READ ${INPUT} content HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${content}")
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#include <string_view>\n"
  "namespace gpuadmit {\nnamespace {\nconstexpr char kText[] = {${bytes} 0};\n}\n"
  "std::string_view default_policy_text() { return {kText, sizeof(kText) - 1}; }\n}\n")
