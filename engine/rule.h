#pragma once
// A rule checks one pod spec and reports violations (SPEC §5). It cannot mutate: it sees a
// const view. Severity comes from the policy's enforcement, applied by the pipeline.

#include <string_view>
#include <vector>

#include "engine/context.h"
#include "engine/finding.h"
#include "engine/pod_view.h"
#include "policies/model.h"

namespace gpuadmit {

class Rule {
 public:
  virtual ~Rule() = default;
  virtual std::string_view id() const = 0;  // "GPU001"
  // A readable identifier, UpperCamelCase, for SARIF's reportingDescriptor.name:
  // "GpuRequestsEqualLimits".
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;  // one line: what the rule requires (SARIF help)
  virtual Action default_action() const = 0;     // kDeny or kWarn
  // Appends every violation of the pod spec (not only the first).
  virtual void check(const PodView& pod, const PodContext& ctx,
                     std::vector<Violation>& out) const = 0;
  // A DRA claim object (ResourceClaim, ResourceClaimTemplate): the pipeline calls this instead
  // of `check` for such objects (docs/dra.md). Most rules read pod specs only: nothing.
  virtual void check_claim(const Json& /*object*/, const ClaimContext& /*ctx*/,
                           std::vector<Violation>& /*out*/) const {}
  // A workload Kueue queues that has no pod spec gpuadmit reads (engine/workload_kinds.h
  // queued_without_pod_specs: a TrainJob, an AppWrapper, a SparkApplication): the pipeline calls
  // this instead of `check`. Only the queue requirement reads one.
  virtual void check_queued_object(const Json& /*object*/, const QueuedObjectContext& /*ctx*/,
                                   std::vector<Violation>& /*out*/) const {}
  // True for a rule that judges the ephemeral containers an UPDATE of the
  // pods/ephemeralcontainers subresource adds (it then sees only those: engine/context.h
  // in_scope); every other rule is skipped for that UPDATE.
  virtual bool evaluates_added_ephemeral_containers() const { return false; }
};

}  // namespace gpuadmit
