#include "rules/allowed_priority_class.h"

#include <algorithm>

#include "engine/kueue.h"
#include "engine/priority_classes.h"
#include "policies/policy_path.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

using namespace rule_support;

// The tenant's priority.allowed (when set) bounds which PriorityClass its GPU pods may use, so
// that a team cannot preempt others' GPU jobs by naming a higher class. Rules see the object
// after the priority mutation (SPEC §4.7), so a pod that named no class already carries the
// tenant's default. The globalDefault class counts as unset (SPEC §3), as it is what the
// Priority admission plugin gives a pod that names none — the cluster's when the webhook watches
// the cluster's classes, declared in the policy or not (engine/priority_classes.h). Only GPU
// pods are checked: the tenant's priority settings describe its GPU workloads
// (docs/rules.md#gpu010).
class AllowedPriorityClassRule final : public Rule {
 public:
  std::string_view id() const override { return "GPU010"; }
  std::string_view name() const override { return "AllowedPriorityClass"; }
  std::string_view summary() const override {
    return "priorityClassName must be in the tenant's priority.allowed (when the list is set)";
  }
  Action default_action() const override { return Action::kDeny; }

  void check(const PodView& pod, const PodContext& ctx,
             std::vector<Violation>& out) const override {
    // A namespace of no tenant has no priority list to check: GPU003 denies its GPU pods (a policy
    // that turns GPU003 off for it lets them run unlimited, its own choice).
    if (!ctx.gpu_pod || ctx.tenant == nullptr || !ctx.tenant->priority.allowed) return;
    check_workload_priority_class(pod, ctx, out);
    const std::string_view name = string_member(pod.spec(), "priorityClassName");
    if (name.empty()) return;
    const std::vector<std::string>& allowed = *ctx.tenant->priority.allowed;
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) return;
    const PriorityClassSource* cluster =
        ctx.request != nullptr ? ctx.request->priority_classes : nullptr;
    if (is_global_default_class(name, *ctx.policy, cluster)) return;
    std::string message = "priorityClassName " + std::string(name) + " is not allowed for tenant " +
                          ctx.tenant->name + "; ";
    message += allowed.empty() ? "remove priorityClassName" : "use one of: " + join(allowed);
    out.push_back(Violation{std::move(message), pod.location().path + ".priorityClassName",
                            policy_path::tenant(*ctx.tenant) + ".priority.allowed"});
  }

 private:
  // Kueue orders its queues and preempts by the WorkloadPriorityClass the workload's label names
  // (engine/kueue.h kWorkloadPriorityClassLabel), in preference to the pods' PriorityClass: the
  // same list bounds it, read where Kueue reads the queue (once per workload-wide site) and on
  // each pod template, whose Pods Kueue may run as single-pod workloads taking their priority
  // from their own labels (a Deployment's: deployment_webhook.go leaves a template's label when
  // the Deployment names none). Tenant-attack cases 142, 150.
  static void check_workload_priority_class(const PodView& pod, const PodContext& ctx,
                                            std::vector<Violation>& out) {
    const std::string_view sender =
        ctx.request != nullptr ? std::string_view(ctx.request->username) : std::string_view();
    const std::optional<QueueSite> site =
        kueue_queue_site(pod.object(), pod.location(), *ctx.policy, sender);
    if (site && (site->per_pod_spec || !ctx.earlier_gpu_pod_spec)) {
      check_label_at(pod, site->metadata, ctx, out);
    }
    if (!site || site->metadata != pod.location().metadata) {
      check_label_at(pod, pod.location().metadata, ctx, out);
    }
  }

  static void check_label_at(const PodView& pod, const JsonPointer& metadata, const PodContext& ctx,
                             std::vector<Violation>& out) {
    const std::string name = kueue_label(pod.object(), metadata, kWorkloadPriorityClassLabel);
    const std::vector<std::string>& allowed = *ctx.tenant->priority.allowed;
    if (name.empty() || std::find(allowed.begin(), allowed.end(), name) != allowed.end()) return;
    std::string message = "Kueue WorkloadPriorityClass " + name + " (label " +
                          std::string(kWorkloadPriorityClassLabel) +
                          ") is not allowed for tenant " + ctx.tenant->name + "; ";
    message += allowed.empty() ? "remove the label" : "use one of: " + join(allowed);
    out.push_back(Violation{
        std::move(message),
        dotted_path(metadata) + ".labels[\"" + std::string(kWorkloadPriorityClassLabel) + "\"]",
        policy_path::tenant(*ctx.tenant) + ".priority.allowed"});
  }
};

}  // namespace

std::unique_ptr<const Rule> make_allowed_priority_class_rule() {
  return std::make_unique<AllowedPriorityClassRule>();
}

}  // namespace gpuadmit
