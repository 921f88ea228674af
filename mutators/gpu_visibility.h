#pragma once
// No GPU without a request: containers that request no GPU get NVIDIA_VISIBLE_DEVICES=void
// (enforcement.gpuVisibility: fix). Mutation name: "gpu-visibility". See docs/mutations.md §9.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_gpu_visibility_mutator();

}  // namespace gpuadmit
