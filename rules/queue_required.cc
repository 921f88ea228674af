#include "rules/queue_required.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/controllers.h"
#include "engine/kueue.h"
#include "engine/resources.h"
#include "engine/workload.h"
#include "policies/policy_path.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// A GPU object that names a controller Kueue integrates, sent by someone else: Kueue leaves it
// to that controller's workload (engine/kueue.h kueue_unbelieved_owner), so whatever queue it
// names, it would run outside the tenant's queue.
Violation skipped_by_kueue(const OwnerReference& owner, std::string_view sender,
                           const PodContext& ctx) {
  return Violation{
      "this object names " + std::string(owner.kind) + " " + std::string(owner.name) + " (" +
          std::string(owner.api_version) +
          ") as its controller, but that controller did not send it (the request came from " +
          std::string(sender) +
          "): Kueue leaves an object whose controller is a kind it manages to that "
          "controller's workload, so this one would run outside the queues of tenant " +
          ctx.tenant->name +
          "; remove the ownerReference, or, if that user is the controller, name it in the "
          "policy's spec.controllers",
      "metadata.ownerReferences", policy_path::tenant(*ctx.tenant) + ".queue.require"};
}

// An UPDATE of what already was a GPU workload naming no queue where Kueue reads it: one
// admitted before the requirement, which keeps running and may be updated — but not grow. The
// template judged must have been a GPU pod spec at the same place of the old object (for a queue
// read per pod template, naming no queue there), asking for no more GPUs per pod
// (engine/resources.h effective_pod_gpus): a RayCluster admitted before the requirement may
// change its worker image, not add a worker group of 10 × 4 GPUs (tenant-attack case 153) nor
// ask 4 GPUs where it had 1. Replica counts are not compared: they change through the scale
// subresources no webhook sees as well (docs/rules.md GPU025). Any other UPDATE the pipeline
// evaluates — a template that changed, a queue label that changed — is judged as a CREATE: a CPU
// Deployment given a GPU template, or a GPU CronJob whose jobTemplate loses its queue label,
// would otherwise run outside Kueue (tenant-attack cases 132-134). The native policies decide
// the same (render/native_model.cc queue_grandfathered).
bool admitted_without_queue(const PodView& pod, const PodContext& ctx, std::string_view sender) {
  const Json* old = ctx.request != nullptr ? ctx.request->old_object : nullptr;
  if (old == nullptr) return false;
  const CompiledPolicy& policy = *ctx.policy;
  const std::optional<QueueSite> site =
      kueue_queue_site(pod.object(), pod.location(), policy, sender);
  if (site && !kueue_queue_name(*old, site->metadata).empty()) return false;
  if (find_pointer(*old, pod.location().spec) == nullptr) return false;
  const Expected<PodView> before = PodView::make(*old, pod.location());
  if (!before) return false;
  // Its DRA claims unchanged too: effective_pod_gpus counts extended resources, and a claim added
  // to the template would bring GPUs it does not see (tenant-attack case 157).
  // (A member that is not a list reads as none, as in the native policies' list_field.)
  auto claims_of = [](const Json& spec) {
    const Json* claims = find_member(spec, "resourceClaims");
    return claims != nullptr && claims->is_array() && !claims->empty() ? claims : nullptr;
  };
  const Json* claims = claims_of(pod.spec());
  const Json* old_claims = claims_of(before->spec());
  const bool same_claims =
      claims == nullptr || old_claims == nullptr ? claims == old_claims : *claims == *old_claims;
  return is_gpu_pod(*before, policy) && same_claims &&
         effective_pod_gpus(pod, policy) <= effective_pod_gpus(*before, policy);
}

// A spec of a controller's child changed by someone else (engine/kueue.h ChildUpdate).
Violation changed_behind_controller(const OwnerReference& owner, std::string_view sender,
                                    const PodContext& ctx) {
  return Violation{
      "only the controller of this object, " + std::string(owner.kind) + " " +
          std::string(owner.name) + " (" + std::string(owner.api_version) +
          "), may change its spec (the request came from " + std::string(sender) +
          "): Kueue counts its GPUs in that controller's workload, so what this UPDATE adds "
          "would run outside the queues of tenant " +
          ctx.tenant->name + "; change the " + std::string(owner.kind) + " instead",
      "spec", policy_path::tenant(*ctx.tenant) + ".queue.require"};
}

// A queued Pod's admission gate removed by anyone but Kueue: the gate holds the Pod until Kueue
// admits its workload, so ungated by a tenant (with or without Kueue's kueue.x-k8s.io/managed
// label, whose removal makes Kueue's reconciler skip the Pod: pod_controller.go Skip) it runs at
// once, outside the queue (tenant-attack case 156). Kueue's own ungating is its to make (case
// 305). The native policies decide the same (render/native_rules.cc queue_required).
bool ungated_by_other(const PodView& pod, const PodContext& ctx, std::string_view sender) {
  const Json* old = ctx.request->old_object;
  return ctx.request->operation == Operation::kUpdate && old != nullptr && !pod.is_template() &&
         string_member(pod.object(), "kind") == "Pod" && kueue_gate_removed(pod.object(), *old) &&
         !sent_by_kueue(sender, *ctx.policy);
}

Violation ungated(std::string_view sender, const PodContext& ctx) {
  return Violation{
      "only Kueue may remove its scheduling gate " + std::string(kKueueAdmissionGate) +
          " from this Pod (the request came from " + std::string(sender) +
          "): the gate holds the Pod until Kueue admits its workload from the queues of tenant " +
          ctx.tenant->name +
          ", so without it the Pod's GPUs would run outside them; leave the "
          "gate to Kueue",
      "spec.schedulingGates", policy_path::tenant(*ctx.tenant) + ".queue.require"};
}

// Whether an UPDATE is judged as the sender's CREATE; an UPDATE of a controller's child
// (engine/kueue.h child_update) is decided here. Detached, the child is judged as a new
// standalone workload; its spec changed by someone else, it is denied (once per workload);
// anything else others change of it is allowed, Kueue having decided at its CREATE. Any other
// UPDATE is judged unless it is of a workload admitted before the queue requirement.
bool judged_as_create(const PodView& pod, const PodContext& ctx, std::string_view sender,
                      std::vector<Violation>& out) {
  const Json* old = ctx.request->old_object;
  if (ctx.request->operation != Operation::kUpdate || old == nullptr) return false;
  // A controller gained (a queued Job put under a parent the tenant's own, already admitted):
  // judged as the sender's CREATE, whose owner is believed only from its controller (case 149).
  if (!sender.empty() && controller_gained(pod.object(), *old)) return true;
  const std::optional<ChildUpdate> child = child_update(pod.object(), *old, *ctx.policy, sender);
  if (child && child->detached) return true;
  if (child && child->by_other) {
    if (child->spec_changed && !ctx.earlier_gpu_pod_spec) {
      out.push_back(changed_behind_controller(child->owner, sender, ctx));
    }
    return false;
  }
  return !admitted_without_queue(pod, ctx, sender);
}

// A workload Kueue queues by its own labels that has no pod spec gpuadmit reads (a TrainJob,
// an AppWrapper, a SparkApplication): its pods' GPUs come from a training runtime, the objects it
// wraps or its own terms, none of which gpuadmit reads, so under queue.require each one names a
// queue — on CREATE, and on an UPDATE that removes the label (one created before the
// requirement may still be updated). Its children, sent by its
// controller, are believed queued through it (kueue_queue_site): without this, a TrainJob naming
// no queue would run outside Kueue (tenant-attack cases 144-146).
void check_queued_without_pod_specs(const Json& object, const QueuedObjectContext& ctx,
                                    std::vector<Violation>& out) {
  if (ctx.tenant == nullptr || !ctx.tenant->queue || !ctx.tenant->queue->require) return;
  const JsonPointer metadata("/metadata");
  const std::string queue = kueue_queue_name(object, metadata);
  if (!queue.empty()) return;
  if (ctx.operation == Operation::kUpdate) {
    if (ctx.old_object == nullptr || kueue_queue_name(*ctx.old_object, metadata).empty()) return;
  } else if (ctx.operation != Operation::kCreate) {
    return;
  }
  const std::string kind(string_member(object, "kind"));
  out.push_back(Violation{
      "tenant " + ctx.tenant->name + " runs GPU workloads through Kueue, but this " + kind +
          " names no LocalQueue; set the label " + std::string(kQueueNameLabel) +
          " to one of the tenant's LocalQueues (its pods' GPUs are not read here, so every " +
          kind + " of the tenant names one)",
      "metadata.labels[\"" + std::string(kQueueNameLabel) + "\"]"});
}

class QueueRequiredRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU025"; }
  void check_queued_object(const Json& object, const QueuedObjectContext& ctx,
                           std::vector<Violation>& out) const override {
    check_queued_without_pod_specs(object, ctx, out);
  }
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
    const Json& object = pod.object();
    const std::string_view sender =
        ctx.request != nullptr ? std::string_view(ctx.request->username) : std::string_view();
    if (ctx.request != nullptr && ungated_by_other(pod, ctx, sender)) {
      out.push_back(ungated(sender, ctx));
      return;
    }
    if (ctx.request != nullptr && ctx.request->operation != Operation::kCreate &&
        !judged_as_create(pod, ctx, sender, out)) {
      return;
    }
    // One finding per workload: at its first GPU pod spec (the pipeline tells).
    if (const std::optional<OwnerReference> owner =
            kueue_unbelieved_owner(object, *ctx.policy, sender)) {
      if (!ctx.earlier_gpu_pod_spec) out.push_back(skipped_by_kueue(*owner, sender, ctx));
      return;
    }
    const std::optional<QueueSite> site =
        kueue_queue_site(object, pod.location(), *ctx.policy, sender);
    if (!site || !kueue_queue_name(object, site->metadata).empty()) return;
    // A workload-wide queue is reported once, at the first GPU pod spec.
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
