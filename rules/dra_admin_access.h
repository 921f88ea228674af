#pragma once
// GPU021: DRA adminAccess on GPUs only where the tenant explicitly allows it (security). See
// docs/rules.md#gpu021.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_dra_admin_access_rule();

}  // namespace gpuadmit
