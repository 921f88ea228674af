#pragma once
// GPU023: a Pod naming a DRA claim gpuadmit cannot read (not found, or the lookup off or
// failing) is denied, never counted as 0 GPUs. See docs/rules.md#gpu023.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_dra_unresolved_claim_rule();

}  // namespace gpuadmit
