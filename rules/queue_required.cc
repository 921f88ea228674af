#include "rules/queue_required.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/kueue.h"
#include "engine/workload.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

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
    const std::optional<QueueSite> site = kueue_queue_site(object, pod.location(), *ctx.policy);
    if (!site || !kueue_queue_name(object, site->metadata).empty()) return;
    // A workload-wide queue is reported once, at the first GPU pod spec (the pipeline tells).
    if (!site->per_pod_spec && ctx.earlier_gpu_pod_spec) return;
    const JsonPointer& at = site->metadata;
    out.push_back(Violation{
        "tenant " + ctx.tenant->name +
            " runs GPU workloads through Kueue, but this one names no LocalQueue; set the label " +
            std::string(kQueueNameLabel) + " to one of the tenant's LocalQueues",
        dotted_path(at) + ".labels[\"" + std::string(kQueueNameLabel) + "\"]"});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_queue_required_rule() {
  return std::make_unique<QueueRequiredRule>();
}

}  // namespace gpuadmit
