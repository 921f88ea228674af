#pragma once
// GPU002: GPU quantities must be whole non-negative integers (1, not 0.5 or 500m) (SPEC §5). See
// docs/rules.md#gpu002.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_whole_gpu_quantities_rule();

}  // namespace gpuadmit
