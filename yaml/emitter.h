#pragma once
// JSON → block YAML for `lint --fix` and `render`: block style, the object's key order, strings
// quoted only where a plain scalar would read back as something else ("1", "true", "on", "",
// "0.5"), so that quantities stay strings; multi-line strings as literal blocks. Sequences sit at
// their key's indentation, as kubectl prints them.
//
//   std::string yaml;
//   emit_yaml(Json::parse(R"({"a": {"b": "1"}})"), yaml);   // "a:\n  b: \"1\"\n"

#include <string>

#include "engine/json.h"

namespace gpuadmit::yaml {

// Appends `value` as one YAML document (no `---`), ending with a newline.
void emit_yaml(const Json& value, std::string& out);

}  // namespace gpuadmit::yaml
