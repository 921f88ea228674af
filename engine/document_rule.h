#pragma once
// A document rule checks one whole object that is not a workload: SPEC §5's lint-only rules over
// LimitRange (GPU016) and ResourceQuota (GPU017). The webhook never sees these kinds (its
// configuration only sends workloads); lint runs them over manifests. Like Rule, it cannot
// mutate, and severity comes from the policy's enforcement.
//
//   for (const auto& rule : default_document_rules())
//     if (rule->handles(api_version, kind)) rule->check(object, ctx, violations);

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/finding.h"
#include "engine/json.h"
#include "policies/compiled_policy.h"
#include "policies/model.h"

namespace gpuadmit {

// The Kueue objects of a lint run that GPU034 judges a ClusterQueue against: every input's
// ResourceFlavors and LocalQueues, collected before the lint (lint/manifest_claims.h), so the
// order of the files does not matter.
struct KueueRunObjects {
  // ResourceFlavor name → its spec.nodeLabels (an empty object when it has none).
  std::map<std::string, Json, std::less<>> flavor_labels;
  struct LocalQueue {
    std::string ns, name, cluster_queue;  // metadata.namespace, metadata.name, spec.clusterQueue
  };
  std::map<std::string, LocalQueue, std::less<>> local_queues;  // by "namespace/name"
};

struct DocumentContext {
  const CompiledPolicy* policy = nullptr;
  std::string_view ns;  // the object's namespace (metadata.namespace, else lint's --namespace)
  const KueueRunObjects* kueue = nullptr;  // null: no other documents are known
  // Where a rule that denies some cases and only warns of others (GPU034) puts the warnings:
  // reported as warnings when the rule's action is deny or warn. Null: they go to `out`.
  std::vector<Violation>* warnings = nullptr;
};

class DocumentRule {
 public:
  virtual ~DocumentRule() = default;
  virtual std::string_view id() const = 0;  // "GPU016"
  // A readable identifier, UpperCamelCase, for SARIF's reportingDescriptor.name:
  // "NoLimitRangeGpuDefaultTrap".
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;  // one line: what the rule requires (SARIF help)
  virtual Action default_action() const = 0;     // kDeny or kWarn
  // True for the objects the rule reads (lint keeps such documents instead of skipping them).
  virtual bool handles(std::string_view api_version, std::string_view kind) const = 0;
  // Appends every violation of the object (not only the first). Never throws for any JSON.
  virtual void check(const Json& object, const DocumentContext& ctx,
                     std::vector<Violation>& out) const = 0;
};

}  // namespace gpuadmit
