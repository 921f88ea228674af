#pragma once
// GPU018: a DRA claim's GPU DeviceClass must map to a class the tenant may use. See
// docs/rules.md#gpu018.

#include <memory>

#include "engine/rule.h"

namespace gpuadmit {

std::unique_ptr<const Rule> make_dra_device_class_rule();

}  // namespace gpuadmit
