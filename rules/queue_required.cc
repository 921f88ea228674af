#include "rules/queue_required.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/kueue.h"
#include "engine/resources.h"
#include "engine/workload.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// True when a pod spec of the object before this one is a GPU pod: the workload's missing
// queue is reported once, at its first GPU pod spec.
bool earlier_gpu_pod_spec(const PodView& pod, const CompiledPolicy& policy) {
  const Json& object = pod.object();
  for (const PodSpecLocation& location : find_pod_specs(object, policy)) {
    if (location.spec == pod.location().spec) return false;
    auto made = PodView::make(object, location);
    if (made && is_gpu_pod(*made, policy)) {
      return true;
    }
  }
  return false;
}

class QueueRequiredRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU025"; }
  std::string_view name() const override { return "GpuWorkloadNamesQueue"; }
  std::string_view summary() const override {
    return "a GPU workload of a tenant whose policy requires a queue must name a Kueue "
           "LocalQueue (kueue.x-k8s.io/queue-name)";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    if (!ctx.gpu_pod || ctx.tenant == nullptr || !ctx.tenant->queue ||
        !ctx.tenant->queue->require) {
      return;
    }
    // Only new workloads: one admitted before the requirement keeps running and may be updated.
    if (ctx.request != nullptr && ctx.request->operation != Operation::kCreate) return;
    const Json& object = pod.object();
    const std::optional<JsonPointer> at = kueue_queue_metadata(object);
    if (!at || !kueue_queue_name(object, *at).empty()) return;
    if (earlier_gpu_pod_spec(pod, *ctx.policy)) return;
    out.push_back(Violation{
        "tenant " + ctx.tenant->name +
            " runs GPU workloads through Kueue, but this one names no LocalQueue; set the label " +
            std::string(kQueueNameLabel) + " to one of the tenant's LocalQueues",
        dotted_path(*at) + ".labels[\"" + std::string(kQueueNameLabel) + "\"]"});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_queue_required_rule() {
  return std::make_unique<QueueRequiredRule>();
}

}  // namespace gpuadmit
