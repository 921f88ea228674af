#include "rules/all_rules.h"

namespace gpuadmit {

std::vector<std::unique_ptr<const Rule>> default_rules() {
  std::vector<std::unique_ptr<const Rule>> rules;
  return rules;
}

}  // namespace gpuadmit
