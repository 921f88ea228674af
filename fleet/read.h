#pragma once
// Reads manifests into a Collector with the YAML reader (yaml/reader.h): multi-document YAML
// and JSON, each document with its line; a document that cannot be read is an InputError.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/collect.h"

namespace gpuadmit::fleet {

struct InputError {
  std::string file;
  int line = 0;  // 0: the whole file
  std::string message;
  std::string to_string() const;  // "file:line: message"
};

// `display` names the input in reports and errors; `json_file`: the name ends in .json.
void read_stream(std::FILE* file, const std::string& display, bool json_file, Collector& collector,
                 std::vector<InputError>& errors);
void read_text(std::string_view text, const std::string& display, bool json_file,
               Collector& collector, std::vector<InputError>& errors);
// Opens `path` (an error when it cannot be opened) and reads it.
void read_file(const std::string& path, Collector& collector, std::vector<InputError>& errors);

}  // namespace gpuadmit::fleet
