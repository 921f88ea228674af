#pragma once
// What the cluster's PriorityClasses (scheduling.k8s.io/v1) say, as the Priority admission
// plugin reads them — the engine only asks; the webhook's watch of the API answers
// (kube/priority_class_watch.h, `serve --cluster-priority-classes`). Without one (lint, review,
// serve without the flag), the policy's own declarations stand in for the cluster
// (docs/mutations.md, "Priority").
//
//   const PriorityClassSource* cluster = options.priority_classes;   // may be null
//   if (cluster && cluster->synced())
//     if (auto c = cluster->find("gpu-training")) c->value ...

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policies/compiled_policy.h"

namespace gpuadmit {

struct ClusterPriorityClass {
  std::string name;
  std::int32_t value = 0;
  // The API defaults it (SetDefaults_PriorityClass): PreemptLowerPriority unless Never.
  std::string preemption_policy = "PreemptLowerPriority";
  bool global_default = false;
};

class PriorityClassSource {
 public:
  virtual ~PriorityClassSource() = default;
  // Thread-safe, never throw.
  // The class of that name; nullopt when the cluster has none (the Priority plugin then refuses
  // a pod naming it: "no PriorityClass with name X was found").
  virtual std::optional<ClusterPriorityClass> find(std::string_view name) const = 0;
  // The class the Priority plugin gives a pod that names none: of the globalDefault classes, the
  // one with the lowest value (admission.go getDefaultPriorityClass); nullopt when there is none.
  virtual std::optional<ClusterPriorityClass> global_default() const = 0;
  // False until the classes have been read once: until then the answers above mean nothing.
  virtual bool synced() const { return true; }
  // Changes whenever the answers above may have changed.
  virtual std::uint64_t version() const { return 0; }
};

// The class the Priority plugin gives a pod that names none, among `classes`: the globalDefault
// one with the lowest value ("in case more than one global default priority class is added as a
// result of a race condition"); nullopt when none is globalDefault.
std::optional<ClusterPriorityClass> lowest_global_default(
    const std::vector<ClusterPriorityClass>& classes);

// True when a pod's priorityClassName `name` counts as unset (SPEC §3): it is the class the
// Priority plugin puts on a pod that names none. With the cluster's classes known (`cluster`
// synced) that is the cluster's globalDefault class, whether the policy declares it or not;
// without them, the class the policy declares globalDefault.
bool is_global_default_class(std::string_view name, const CompiledPolicy& policy,
                             const PriorityClassSource* cluster);

// Where the policy's priorityClasses and the cluster's differ, one line each, in policy order:
// a class the cluster does not have, another value or preemptionPolicy, and a globalDefault
// the two do not agree on. Empty when they agree.
std::vector<std::string> priority_class_disagreements(const CompiledPolicy& policy,
                                                      const PriorityClassSource& cluster);

}  // namespace gpuadmit
