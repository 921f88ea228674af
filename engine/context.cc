#include "engine/context.h"

#include <algorithm>

#include "engine/resources.h"

namespace gpuadmit {
namespace {

constexpr std::string_view kClassKey = "gpuadmit.io/class";
constexpr std::string_view kMigProfileKey = "gpuadmit.io/mig-profile";
constexpr std::string_view kWorkloadKey = "gpuadmit.io/workload";

// A class "matches" the pod's own nodeSelector when the selector names at least one of the
// class's label keys and every class key it names has one of the class's values.
bool node_selector_matches(const Json& node_selector, const GpuClass& gpu_class) {
  bool named_any = false;
  for (const auto& [key, values] : gpu_class.node_selector) {
    const Json* v = find_member(node_selector, key);
    if (v == nullptr || !v->is_string()) continue;
    named_any = true;
    if (std::find(values.begin(), values.end(), v->get_ref<const std::string&>()) == values.end()) {
      return false;
    }
  }
  return named_any;
}

}  // namespace

void resolve_pod_context(const PodView& pod, PodContext& ctx) {
  const CompiledPolicy& policy = *ctx.policy;
  ctx.mig_profile = pod.setting(kMigProfileKey).value_or("");
  ctx.workload_type = pod.setting(kWorkloadKey).value_or("");
  if (auto named = pod.setting(kClassKey)) {
    ctx.class_name = *named;
    ctx.class_from_annotation = true;
    ctx.gpu_class = policy.find_class(*named);
    return;
  }
  if (!ctx.gpu_pod) return;  // only GPU pods are placed on a class
  if (const Json* node_selector = find_member(pod.spec(), "nodeSelector");
      node_selector != nullptr && node_selector->is_object()) {
    for (const GpuClass& c : policy.policy().classes) {
      if (node_selector_matches(*node_selector, c)) {
        ctx.class_name = c.name;
        ctx.gpu_class = &c;
        return;
      }
    }
  }
  if (ctx.tenant != nullptr && ctx.tenant->default_class) {
    ctx.class_name = *ctx.tenant->default_class;
    ctx.gpu_class = policy.find_class(ctx.class_name);
    return;
  }
  if (policy.policy().classes.size() == 1) {
    ctx.gpu_class = &policy.policy().classes.front();
    ctx.class_name = ctx.gpu_class->name;
  }
}

}  // namespace gpuadmit
