#pragma once
// Joins strings with a separator, for messages and audit annotations. The one definition in the
// code base (tests/boundary/check_helpers_once.cmake fails when a second one appears).
//
//   join(std::vector<std::string>{"a100", "h100"}) == "a100, h100"
//   join(classes, ",")                              // "a100,h100"

#include <string>
#include <string_view>

namespace gpuadmit {

// `items`: any range of std::string, std::string_view or const char*.
template <typename Range>
std::string join(const Range& items, std::string_view separator = ", ") {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += separator;
    out += item;
    first = false;
  }
  return out;
}

}  // namespace gpuadmit
