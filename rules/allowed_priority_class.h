#pragma once
// GPU010: priorityClassName must be allowed for the tenant (SPEC §5). See docs/rules.md#gpu010.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_allowed_priority_class_rule();

}  // namespace gpuadmit
