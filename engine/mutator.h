#pragma once
// A mutator edits one pod spec in place (SPEC §4). It never builds patch operations: the
// pipeline computes the JSON Patch once, as a diff, at the end.

#include <string_view>

#include "engine/context.h"
#include "engine/pod_view.h"

namespace gpuadmit {

class Mutator {
 public:
  virtual ~Mutator() = default;
  // Short stable name, listed in the gpuadmit.io/mutations audit annotation: "tolerations".
  virtual std::string_view name() const = 0;
  // Edits the pod spec; returns true when it changed anything. Must be idempotent.
  virtual bool mutate(PodView& pod, PodContext& ctx) const = 0;
};

}  // namespace gpuadmit
