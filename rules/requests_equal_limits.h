#pragma once
// GPU001: GPU requests must equal limits, for every container and GPU resource (SPEC §5). See
// docs/rules.md#gpu001.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_requests_equal_limits_rule();

}  // namespace gpuadmit
