#include "rules/limit_range_trap.h"

#include <string>

#include "engine/resources.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

bool positive(const Json& value) {
  auto q = parse_json_quantity(value);
  return q && !q->is_zero() && !q->is_negative();
}

bool has_key(const Json* map, const std::string& key) {
  return map != nullptr && map->is_object() && map->contains(key);
}

class LimitRangeTrapRule final : public DocumentRule {
 public:
  std::string_view id() const override { return "GPU016"; }
  std::string_view name() const override { return "NoLimitRangeGpuDefaultTrap"; }
  std::string_view summary() const override {
    return "a LimitRange must not set max or min for a GPU resource without a default: Kubernetes "
           "copies max into default/defaultRequest, giving GPUs to every container of the "
           "namespace";
  }
  Action default_action() const override { return Action::kDeny; }
  bool handles(std::string_view api_version, std::string_view kind) const override {
    return api_version == "v1" && kind == "LimitRange";
  }

  void check(const Json& object, const DocumentContext& ctx,
             std::vector<Violation>& out) const override {
    const Json* spec = find_member(object, "spec");
    const Json* limits = spec != nullptr ? find_member(*spec, "limits") : nullptr;
    if (limits == nullptr || !limits->is_array()) return;
    const std::string name = object_name(object);
    for (size_t i = 0; i < limits->size(); ++i) {
      const Json& item = (*limits)[i];
      // Only Container items are defaulted; Pod and PersistentVolumeClaim items are not.
      if (string_member(item, "type") != "Container") continue;
      const Json* max = find_member(item, "max");
      const Json* min = find_member(item, "min");
      const Json* defaults = find_member(item, "default");
      const Json* default_request = find_member(item, "defaultRequest");
      const std::string at = "spec.limits[" + std::to_string(i) + "]";
      if (max != nullptr && max->is_object()) {
        for (auto it = max->begin(); it != max->end(); ++it) {
          if (!ctx.policy->is_gpu_resource(it.key()) || !positive(it.value())) continue;
          if (has_key(defaults, it.key())) continue;
          out.push_back(
              {"LimitRange " + name + " " + at + " (type Container) sets max[\"" + it.key() +
                   "\"]: " + rule_support::written(it.value()) + " without default[\"" + it.key() +
                   "\"]; Kubernetes copies max into default and defaultRequest, so every "
                   "container in namespace " +
                   std::string(ctx.ns) + " that does not set " + it.key() + " would be given " +
                   rule_support::written(it.value()) + " of it. Remove " + it.key() +
                   " from max and cap GPUs with the policy's limits.maxGPUsPerContainer, or set "
                   "default and defaultRequest for it explicitly",
               at + ".max[\"" + it.key() + "\"]"});
        }
      }
      if (min != nullptr && min->is_object()) {
        for (auto it = min->begin(); it != min->end(); ++it) {
          if (!ctx.policy->is_gpu_resource(it.key()) || !positive(it.value())) continue;
          // With max or default set, defaultRequest comes from them (reported above, or set).
          if (has_key(defaults, it.key()) || has_key(default_request, it.key()) ||
              has_key(max, it.key())) {
            continue;
          }
          out.push_back({"LimitRange " + name + " " + at + " (type Container) sets min[\"" +
                             it.key() + "\"]: " + rule_support::written(it.value()) +
                             " without default or defaultRequest; Kubernetes copies min into "
                             "defaultRequest, so every container in namespace " +
                             std::string(ctx.ns) + " that does not set " + it.key() +
                             " would request " + rule_support::written(it.value()) +
                             " of it. Remove " + it.key() +
                             " from min, or set default and defaultRequest for it explicitly",
                         at + ".min[\"" + it.key() + "\"]"});
        }
      }
    }
  }

 private:
  static std::string object_name(const Json& object) {
    const Json* metadata = find_member(object, "metadata");
    return metadata != nullptr ? std::string(string_member(*metadata, "name")) : std::string();
  }
};

}  // namespace

std::unique_ptr<const DocumentRule> make_limit_range_trap_rule() {
  return std::make_unique<LimitRangeTrapRule>();
}

}  // namespace gpuadmit
