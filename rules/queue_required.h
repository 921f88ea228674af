#pragma once
// GPU025: a GPU workload of a tenant with `queue.require` must name a Kueue LocalQueue. See
// docs/rules.md#gpu025.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_queue_required_rule();

}  // namespace gpuadmit
