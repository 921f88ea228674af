#pragma once
// GPU003: the tenant must allow the pod's GPU class (SPEC §5). See docs/rules.md#gpu003.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_allowed_classes_rule();

}  // namespace gpuadmit
