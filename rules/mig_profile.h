#pragma once
// GPU007: MIG profiles must be offered by the pod's class (SPEC §5). See docs/rules.md#gpu007.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_mig_profile_rule();

}  // namespace gpuadmit
