#pragma once
// GPU016 (lint): a LimitRange whose Container item sets `max` (or `min`) for a GPU resource and
// no `default` for it. Kubernetes' LimitRange defaulting (SetDefaults_LimitRangeItem) copies
// `max` into `default` and `default` into `defaultRequest` (else `min` into `defaultRequest`),
// so every container of the namespace that names no GPU would be given that many GPUs.

#include <memory>

#include "engine/document_rule.h"

namespace gpuadmit {

std::unique_ptr<const DocumentRule> make_limit_range_trap_rule();

}  // namespace gpuadmit
