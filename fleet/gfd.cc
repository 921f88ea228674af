#include "fleet/gfd.h"

#include <charconv>

#include "policies/mig_profiles.h"

namespace gpuadmit::fleet {
namespace {

// Label values are strings; GFD writes integers with fmt's %v.
std::optional<int64_t> integer(const std::string* value) {
  if (value == nullptr || value->empty()) return std::nullopt;
  int64_t n = 0;
  const char* end = value->data() + value->size();
  auto [ptr, ec] = std::from_chars(value->data(), end, n);
  if (ec != std::errc() || ptr != end || n < 0) return std::nullopt;
  return n;
}

std::string value_or_empty(const std::string* value) { return value != nullptr ? *value : ""; }

}  // namespace

const std::string* find_label(const NodeLabels& labels, std::string_view key) {
  for (const auto& [k, v] : labels) {
    if (k == key) return &v;
  }
  return nullptr;
}

GfdLabels read_gfd_labels(const NodeLabels& labels) {
  GfdLabels gfd;
  gfd.product = value_or_empty(find_label(labels, kProductLabel));
  gfd.count = integer(find_label(labels, kCountLabel));
  gfd.replicas = integer(find_label(labels, kReplicasLabel));
  gfd.sharing_strategy = value_or_empty(find_label(labels, kSharingStrategyLabel));
  gfd.mig_strategy = value_or_empty(find_label(labels, kMigStrategyLabel));
  gfd.mig_config = value_or_empty(find_label(labels, kMigConfigLabel));
  gfd.mig_config_state = value_or_empty(find_label(labels, kMigConfigStateLabel));
  return gfd;
}

std::string mig_profile_of_resource(std::string_view resource) {
  constexpr std::string_view kPrefix = "nvidia.com/mig-";
  if (resource.substr(0, kPrefix.size()) != kPrefix) return "";
  std::string profile(resource.substr(kPrefix.size()));
  const size_t gb = profile.find("gb");
  if (gb != std::string::npos && gb + 2 < profile.size() && profile[gb + 2] == '.') {
    profile[gb + 2] = '+';
  }
  return profile;
}

std::string GfdLabels::mig_single_profile() const {
  if (mig_strategy != "single") return "";
  const size_t at = product.rfind("-MIG-");
  if (at == std::string::npos) return "";
  std::string profile = product.substr(at + 5);
  constexpr std::string_view kShared = "-SHARED";
  if (profile.size() > kShared.size() &&
      profile.compare(profile.size() - kShared.size(), kShared.size(), kShared) == 0) {
    profile.resize(profile.size() - kShared.size());
  }
  // The device plugin names "+me" profiles with a "." (internal/resource/nvml-mig-device.go).
  if (profile.size() > 3 && profile.compare(profile.size() - 3, 3, ".me") == 0) {
    profile[profile.size() - 3] = '+';
  }
  return is_mig_profile_syntax(profile) ? profile : "";
}

}  // namespace gpuadmit::fleet
