#include "mutators/mutator_support.h"

#include <algorithm>
#include <string>

namespace gpuadmit::mutator_support {

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

MutationOutcome failure_from_exception(const char* what) noexcept {
  try {
    return MutationOutcome::failed(std::string("internal error: ") +
                                   (what != nullptr ? what : "an exception of unknown type"));
  } catch (...) {
    return MutationOutcome{MutationStatus::kFailed, {}};
  }
}

void because(PodContext& ctx, std::string path) {
  if (std::find(ctx.policy_paths.begin(), ctx.policy_paths.end(), path) == ctx.policy_paths.end()) {
    ctx.policy_paths.push_back(std::move(path));
  }
}

}  // namespace gpuadmit::mutator_support
