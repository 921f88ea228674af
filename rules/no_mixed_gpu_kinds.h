#pragma once
// GPU008: a container must not mix whole GPUs, shared GPUs and MIG slices (SPEC §5). See
// docs/rules.md#gpu008.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_no_mixed_gpu_kinds_rule();

}  // namespace gpuadmit
