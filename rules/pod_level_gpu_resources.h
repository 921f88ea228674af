#pragma once
// GPU015: GPUs must be requested in containers, not in pod-level spec.resources (SPEC §5). See
// docs/rules.md#gpu015.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_pod_level_gpu_resources_rule();

}  // namespace gpuadmit
