#include "mutators/queue_label.h"

#include <optional>

#include "engine/kueue.h"
#include "mutators/mutator_support.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

// Kueue admits a workload only when it names a LocalQueue, by the kueue.x-k8s.io/queue-name
// label where Kueue reads it (engine/kueue.h kueue_queue_site: the object Kueue manages, a
// CronJob's jobTemplate, or — for the pods Kueue's pod integration manages — the Pod or each
// pod template). A GPU workload of a tenant whose policy names a queue, and that names none
// itself (the label: Kueue reads no annotation since v0.15.0, engine/kueue.h), gets the tenant's
// queue; for a workload-wide queue the mutation runs per pod spec and the label is written once,
// per pod template only on its GPU pod templates. Only on CREATE: Kueue forbids changing the queue
// of a workload it has admitted, and a label added to a running Job would hand it to Kueue mid-run.
// Not when the object is judged only: its Pods do not get the label (an object with a
// controller is queued through it).
class QueueLabelMutator final : public Mutator {
 public:
  std::string_view name() const override { return "queue"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.gpu_pod && ctx.tenant != nullptr && ctx.tenant->queue &&
           !ctx.tenant->queue->name.empty() &&
           (ctx.request == nullptr ||
            (ctx.request->operation == Operation::kCreate && !ctx.request->judge_only));
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      const Json& object = pod.view().object();
      const std::string_view sender =
          ctx.request != nullptr ? std::string_view(ctx.request->username) : std::string_view();
      const std::optional<QueueSite> site =
          kueue_queue_site(object, pod.view().location(), *ctx.policy, sender);
      if (!site || !kueue_queue_name(object, site->metadata).empty()) return false;
      // Created when absent (a jobTemplate or pod template without metadata).
      Json* labels = pod.queue_labels(*ctx.policy, sender);
      if (labels == nullptr) return false;
      (*labels)[std::string(kQueueNameLabel)] = ctx.tenant->queue->name;
      return true;
    });
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_queue_label_mutator() {
  return std::make_unique<QueueLabelMutator>();
}

}  // namespace gpuadmit
