#include "engine/context.h"

#include <algorithm>

#include "engine/resources.h"

namespace gpuadmit {
namespace {

constexpr std::string_view kClassKey = "gpuadmit.io/class";
constexpr std::string_view kMigProfileKey = "gpuadmit.io/mig-profile";
constexpr std::string_view kWorkloadKey = "gpuadmit.io/workload";

// How many of the class's label keys the pod's own nodeSelector names, each with one of the
// class's values; 0 when it names none of them or contradicts one ("matches" in SPEC §4.2).
size_t node_selector_match_keys(const Json& node_selector, const GpuClass& gpu_class) {
  size_t named = 0;
  for (const auto& [key, values] : gpu_class.node_selector) {
    const Json* v = find_member(node_selector, key);
    if (v == nullptr || !v->is_string()) continue;
    if (std::find(values.begin(), values.end(), v->get_ref<const std::string&>()) == values.end()) {
      return 0;
    }
    ++named;
  }
  return named;
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
  if (const PodClaim* claim = ctx.dra != nullptr ? ctx.dra->first_gpu_claim() : nullptr) {
    ctx.class_name = claim->gpu_class->name;
    ctx.gpu_class = claim->gpu_class;
    return;
  }
  if (const Json* node_selector = find_member(pod.spec(), "nodeSelector");
      node_selector != nullptr && node_selector->is_object()) {
    // Pools often share labels (GKE's nvidia-l4 pool and its time-sharing variant, which adds
    // cloud.google.com/gke-gpu-sharing-strategy): the class whose labels the selector names
    // most is the pool the pod asked for; ties go to the first class of the policy.
    const GpuClass* best = nullptr;
    size_t best_keys = 0;
    for (const GpuClass& c : policy.policy().classes) {
      const size_t keys = node_selector_match_keys(*node_selector, c);
      if (keys > best_keys) {
        best = &c;
        best_keys = keys;
      }
    }
    if (best != nullptr) {
      ctx.class_name = best->name;
      ctx.gpu_class = best;
      return;
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

namespace gpuadmit {

bool in_scope(const RequestContext* request, const ContainerRef& container) {
  if (request == nullptr || !request->ephemeral_update) return true;
  if (container.kind != ContainerKind::kEphemeral) return false;
  const auto& added = request->added_ephemeral_containers;
  return std::find(added.begin(), added.end(), container.name) != added.end();
}

}  // namespace gpuadmit
