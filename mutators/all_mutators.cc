#include "mutators/all_mutators.h"

namespace gpuadmit {

std::vector<std::unique_ptr<const Mutator>> default_mutators() {
  std::vector<std::unique_ptr<const Mutator>> mutators;
  return mutators;
}

}  // namespace gpuadmit
