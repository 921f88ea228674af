#pragma once
// GPU011: the pod's own nodeSelector and affinity must not contradict its class (SPEC §5). See
// docs/rules.md#gpu011.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_class_placement_rule();

}  // namespace gpuadmit
