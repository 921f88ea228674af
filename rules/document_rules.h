#pragma once
// lint's document rules (SPEC §5: GPU016, GPU017), in id order. Kept apart from
// rules/all_rules.h: those check pod specs for the webhook, these whole LimitRange and
// ResourceQuota objects, for lint only.

#include <memory>
#include <vector>

#include "engine/document_rule.h"

namespace gpuadmit {

std::vector<std::unique_ptr<const DocumentRule>> default_document_rules();

}  // namespace gpuadmit
