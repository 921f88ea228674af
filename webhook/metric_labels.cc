#include "webhook/metric_labels.h"

#include <array>

#include "engine/workload_kinds.h"

namespace gpuadmit::webhook {
namespace {

constexpr std::string_view kOther = "other";

template <std::size_t N>
std::string_view closed(std::string_view value, const std::array<std::string_view, N>& known) {
  if (value.empty()) return value;
  for (const std::string_view k : known) {
    if (k == value) return k;
  }
  return kOther;
}

}  // namespace

std::string_view operation_label(std::string_view operation) {
  static constexpr std::array<std::string_view, 4> kOperations = {"CREATE", "UPDATE", "DELETE",
                                                                  "CONNECT"};
  return closed(operation, kOperations);
}

std::string_view kind_label(std::string_view kind) {
  // The kinds of the engine's table (engine/workload_kinds.h); a policy's own kinds are "other".
  if (kind.empty()) return kind;
  const std::string_view known = known_kind_name(kind);
  return known.empty() ? kOther : known;
}

}  // namespace gpuadmit::webhook
