#pragma once
// GPU006: a container's (and pod's) GPUs must fit on one node of its class (SPEC §5). See
// docs/rules.md#gpu006.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_fits_on_node_rule();

}  // namespace gpuadmit
