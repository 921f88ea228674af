#pragma once
// The pod-spec rules of SPEC §5, in id order. The order is data, not static registration.

#include <memory>
#include <vector>

#include "engine/rule.h"

namespace gpuadmit {

std::vector<std::unique_ptr<const Rule>> default_rules();

}  // namespace gpuadmit
