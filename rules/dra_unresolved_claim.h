#pragma once
// GPU023: a pod's DRA claim reference that names nothing is reported, not guessed. See
// docs/rules.md#gpu023.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_dra_unresolved_claim_rule();

}  // namespace gpuadmit
