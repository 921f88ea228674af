#pragma once
// The mutators of SPEC §4, in the order they run. The order is data, not static registration.

#include <memory>
#include <vector>

#include "engine/mutator.h"

namespace gpuadmit {

std::vector<std::unique_ptr<const Mutator>> default_mutators();

}  // namespace gpuadmit
