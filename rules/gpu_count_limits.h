#pragma once
// GPU005: at most maxGPUsPerContainer per container and maxGPUsPerPod per pod (SPEC §5). See
// docs/rules.md#gpu005.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_gpu_count_limits_rule();

}  // namespace gpuadmit
