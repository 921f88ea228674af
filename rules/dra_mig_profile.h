#pragma once
// GPU022: a DRA request's literal MIG profile must be one its class offers. See
// docs/rules.md#gpu022.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_dra_mig_profile_rule();

}  // namespace gpuadmit
