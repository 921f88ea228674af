#pragma once
// GPU020: DRA allocationMode: All on GPUs only where the tenant allows it. See
// docs/rules.md#gpu020.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_dra_allocation_mode_all_rule();

}  // namespace gpuadmit
