#pragma once
// GPU024: no GPU without a request — a container that requests no GPU must not ask NVIDIA's
// container runtime for GPUs another way. See docs/rules.md#gpu024.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_gpu_visibility_rule();

}  // namespace gpuadmit
