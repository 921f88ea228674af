#pragma once
// SPEC §4.7: the tenant's priority class for GPU pods that name none (or the globalDefault one).
// Mutation name: "priority". See docs/mutations.md.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_priority_mutator();

}  // namespace gpuadmit
