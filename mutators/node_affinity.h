#pragma once
// SPEC §4.5: a GPU pod's required node affinity selects its class's nodes. Mutation name:
// "node-affinity". See docs/mutations.md.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_node_affinity_mutator();

}  // namespace gpuadmit
