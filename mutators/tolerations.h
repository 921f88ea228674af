#pragma once
// SPEC §4.4: a GPU pod tolerates every taint of its class. Mutation name: "tolerations".
// See docs/mutations.md.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_tolerations_mutator();

}  // namespace gpuadmit
