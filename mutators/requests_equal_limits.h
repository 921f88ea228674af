#pragma once
// SPEC §4.1: with enforcement.requestsEqualLimits: fix, the missing half of a GPU request/limit
// pair is filled in. Mutation name: "requests-equal-limits". See docs/mutations.md.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_requests_equal_limits_mutator();

}  // namespace gpuadmit
