#pragma once
// GPU026: a privileged container sees every GPU of its node — report it. See
// docs/rules.md#gpu026.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_privileged_container_rule();

}  // namespace gpuadmit
