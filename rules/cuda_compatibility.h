#pragma once
// GPU027: a container's CUDA version runs on its class's driver (SPEC §5). See
// docs/rules.md#gpu027.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_cuda_compatibility_rule();

}  // namespace gpuadmit
