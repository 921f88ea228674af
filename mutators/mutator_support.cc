#include "mutators/mutator_support.h"

#include <algorithm>
#include <string>

namespace gpuadmit::mutator_support {

Json* member_object(Json& parent, std::string_view key) {
  if (!parent.is_object()) return nullptr;
  Json* member = find_member(parent, key);
  if (member == nullptr) return &(parent[std::string(key)] = Json::object());
  if (member->is_null()) *member = Json::object();
  return member->is_object() ? member : nullptr;
}

Json* member_array(Json& parent, std::string_view key) {
  if (!parent.is_object()) return nullptr;
  Json* member = find_member(parent, key);
  if (member == nullptr) return &(parent[std::string(key)] = Json::array());
  if (member->is_null()) *member = Json::array();
  return member->is_array() ? member : nullptr;
}

const Json* present(const Json& object, std::string_view key) {
  const Json* member = find_member(object, key);
  return (member == nullptr || member->is_null()) ? nullptr : member;
}

bool mig_profile_valid(const PodContext& ctx) {
  if (ctx.mig_profile.empty()) return true;
  if (ctx.gpu_class == nullptr || !ctx.gpu_class->mig) return false;
  const std::vector<std::string>& profiles = ctx.gpu_class->mig->profiles;
  return std::find(profiles.begin(), profiles.end(), ctx.mig_profile) != profiles.end();
}

std::string mig_resource_name(std::string_view profile) {
  std::string name = "nvidia.com/mig-" + std::string(profile);
  std::replace(name.begin(), name.end(), '+', '.');
  return name;
}

void because(PodContext& ctx, std::string path) {
  if (std::find(ctx.policy_paths.begin(), ctx.policy_paths.end(), path) == ctx.policy_paths.end()) {
    ctx.policy_paths.push_back(std::move(path));
  }
}

}  // namespace gpuadmit::mutator_support
