#pragma once
// SPEC §4.2: the resolved GPU class is recorded as the annotation gpuadmit.io/class on the pod
// (template) metadata. Mutation name: "class". See docs/mutations.md.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_class_annotation_mutator();

}  // namespace gpuadmit
