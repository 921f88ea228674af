#include "rules/resource_quota_key.h"

#include <string>

#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

constexpr std::string_view kLimitsPrefix = "limits.";
constexpr std::string_view kRequestsPrefix = "requests.";

class ResourceQuotaKeyRule final : public DocumentRule {
 public:
  std::string_view id() const override { return "GPU017"; }
  std::string_view name() const override { return "RequestsPrefixedGpuQuota"; }
  std::string_view summary() const override {
    return "a ResourceQuota must limit GPUs as requests.<resource> (requests.nvidia.com/gpu): "
           "Kubernetes ignores nvidia.com/gpu and limits.nvidia.com/gpu in a quota";
  }
  Action default_action() const override { return Action::kDeny; }
  bool handles(std::string_view api_version, std::string_view kind) const override {
    return api_version == "v1" && kind == "ResourceQuota";
  }

  void check(const Json& object, const DocumentContext& ctx,
             std::vector<Violation>& out) const override {
    const Json* spec = find_member(object, "spec");
    const Json* hard = spec != nullptr ? find_member(*spec, "hard") : nullptr;
    if (hard == nullptr || !hard->is_object()) return;
    const Json* metadata = find_member(object, "metadata");
    const std::string name =
        metadata != nullptr ? std::string(string_member(*metadata, "name")) : std::string();
    for (auto it = hard->begin(); it != hard->end(); ++it) {
      std::string_view key = it.key();
      std::string_view resource = key;
      if (key.substr(0, kLimitsPrefix.size()) == kLimitsPrefix) {
        resource = key.substr(kLimitsPrefix.size());
      }
      if (!ctx.policy->is_gpu_resource(resource)) continue;
      const std::string requests_key = std::string(kRequestsPrefix) + std::string(resource);
      // The quota is enforced when the requests. form is there too; the other key is then only
      // redundant.
      if (hard->contains(requests_key)) continue;
      out.push_back({"ResourceQuota " + name + " in namespace " + std::string(ctx.ns) +
                         " sets hard[\"" + std::string(key) +
                         "\"]: " + rule_support::written(it.value()) +
                         ", which Kubernetes does not enforce: extended resources are counted "
                         "only as " +
                         requests_key + "; rename the key to " + requests_key,
                     "spec.hard[\"" + std::string(key) + "\"]"});
    }
  }
};

}  // namespace

std::unique_ptr<const DocumentRule> make_resource_quota_key_rule() {
  return std::make_unique<ResourceQuotaKeyRule>();
}

}  // namespace gpuadmit
