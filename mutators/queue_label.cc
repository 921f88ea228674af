#include "mutators/queue_label.h"

#include <optional>

#include "engine/kueue.h"
#include "mutators/mutator_support.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

// Kueue admits a workload only when it names a LocalQueue, by the kueue.x-k8s.io/queue-name
// label on the object Kueue manages (engine/kueue.h: the top-level object, a CronJob's
// jobTemplate, a plain Pod). A GPU workload of a tenant whose policy names a queue, and that
// names none itself (label, or Kueue's deprecated annotation), gets the tenant's queue. The
// workload is a GPU workload when one of its pod specs is a GPU pod: the mutation runs per pod
// spec and the label is written once. Only on CREATE: Kueue forbids changing the queue of a
// workload it has admitted, and a label added to a running Job would hand it to Kueue mid-run.
class QueueLabelMutator final : public Mutator {
 public:
  std::string_view name() const override { return "queue"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.gpu_pod && ctx.tenant != nullptr && ctx.tenant->queue &&
           !ctx.tenant->queue->name.empty() &&
           (ctx.request == nullptr || ctx.request->operation == Operation::kCreate);
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      const Json& object = pod.view().object();
      const std::optional<JsonPointer> at = kueue_queue_metadata(object);
      if (!at || !kueue_queue_name(object, *at).empty()) return false;
      Json* labels = pod.queue_labels();  // created when absent (a jobTemplate without metadata)
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
