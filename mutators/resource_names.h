#pragma once
// SPEC §4.3: MIG (strategy mixed) and time-slicing (renameByDefault) resource names.
// Mutation name: "resource-names". See docs/mutations.md.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_resource_names_mutator();

}  // namespace gpuadmit
