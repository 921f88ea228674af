#pragma once
// GPU019: a DRA claim's GPU count must be within the tenant's per-pod and per-container limits. See
// docs/rules.md#gpu019.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_dra_count_limits_rule();

}  // namespace gpuadmit
