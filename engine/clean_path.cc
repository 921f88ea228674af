#include "engine/clean_path.h"

#include <vector>

namespace gpuadmit {

std::string clean_path(std::string_view path) {
  if (path.empty()) return ".";
  const bool rooted = path.front() == '/';
  // The elements kept so far. A `..` is kept only at the front of a path that is not rooted
  // (rule 3 has no element to eliminate it with, rule 4 applies to rooted paths only), so
  // "the element before it is not `..`" is a test of the last kept element.
  std::vector<std::string_view> kept;
  size_t i = 0;
  while (i < path.size()) {
    size_t end = path.find('/', i);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view element = path.substr(i, end - i);
    i = end + 1;
    if (element.empty() || element == ".") continue;  // rules 1 and 2
    if (element != "..") {
      kept.push_back(element);
    } else if (!kept.empty() && kept.back() != "..") {
      kept.pop_back();  // rule 3
    } else if (!rooted) {
      kept.push_back(element);  // nothing to eliminate it with: it stays
    }                           // rooted: rule 4, "/.." is "/"
  }
  std::string out = rooted ? "/" : "";
  for (size_t k = 0; k < kept.size(); ++k) {
    if (k > 0) out += '/';
    out += kept[k];
  }
  return out.empty() ? "." : out;
}

}  // namespace gpuadmit
