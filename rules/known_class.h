#pragma once
// GPU004: gpuadmit.io/class must name a class of the policy (SPEC §5). See docs/rules.md#gpu004.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_known_class_rule();

}  // namespace gpuadmit
