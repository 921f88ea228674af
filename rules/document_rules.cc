#include "rules/document_rules.h"

#include "rules/limit_range_trap.h"
#include "rules/resource_quota_key.h"

namespace gpuadmit {

std::vector<std::unique_ptr<const DocumentRule>> default_document_rules() {
  std::vector<std::unique_ptr<const DocumentRule>> rules;
  rules.push_back(make_limit_range_trap_rule());    // GPU016
  rules.push_back(make_resource_quota_key_rule());  // GPU017
  return rules;
}

}  // namespace gpuadmit
