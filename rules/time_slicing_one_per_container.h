#pragma once
// GPU012: at most 1 shared GPU per container on a time-sliced class with failRequestsGreaterThanOne
// (SPEC §5). See docs/rules.md#gpu012.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_time_slicing_one_per_container_rule();

}  // namespace gpuadmit
