#pragma once
// SPEC §4.8: with nonGpuOnGpuPool: strip, non-GPU pods lose what places them on GPU pools.
// Mutation name: "strip-gpu-pool". See docs/mutations.md.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_strip_gpu_pool_mutator();

}  // namespace gpuadmit
