#pragma once
// SPEC §4.6: the tenant's LimitRange-style defaults for the containers of GPU pods. Mutation
// name: "defaults". See docs/mutations.md.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_defaults_mutator();

}  // namespace gpuadmit
