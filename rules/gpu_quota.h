#pragma once
// GPU013: a pod's GPUs must not exceed the tenant's GPU quota (SPEC §5). See docs/rules.md#gpu013.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_gpu_quota_rule();

}  // namespace gpuadmit
