#pragma once
// GPU014: a pod's GPU count should divide the class's GPUs per node (SPEC §5). See
// docs/rules.md#gpu014.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_fragmentation_rule();

}  // namespace gpuadmit
