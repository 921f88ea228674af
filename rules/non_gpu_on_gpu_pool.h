#pragma once
// GPU009: a non-GPU pod must not tolerate or select a GPU pool, nor be bound to a GPU pool's node
// by nodeName (SPEC §5). See docs/rules.md#gpu009.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_non_gpu_on_gpu_pool_rule();

}  // namespace gpuadmit
