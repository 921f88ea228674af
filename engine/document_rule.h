#pragma once
// A document rule checks one whole object that is not a workload: SPEC §5's lint-only rules over
// LimitRange (GPU016) and ResourceQuota (GPU017). The webhook never sees these kinds (its
// configuration only sends workloads); lint runs them over manifests. Like Rule, it cannot
// mutate, and severity comes from the policy's enforcement.
//
//   for (const auto& rule : default_document_rules())
//     if (rule->handles(api_version, kind)) rule->check(object, ctx, violations);

#include <string_view>
#include <vector>

#include "engine/finding.h"
#include "engine/json.h"
#include "policies/compiled_policy.h"
#include "policies/model.h"

namespace gpuadmit {

struct DocumentContext {
  const CompiledPolicy* policy = nullptr;
  std::string_view ns;  // the object's namespace (metadata.namespace, else lint's --namespace)
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
