#pragma once
// A mutator edits one pod spec in place (SPEC §4), through a PodWriter: only the members of the
// mutation contract (engine/pod_writer.h) are writable. It never builds patch operations: the
// pipeline computes the JSON Patch once, as a diff, at the end.

#include <string_view>

#include "engine/context.h"
#include "engine/pod_writer.h"

namespace gpuadmit {

class Mutator {
 public:
  virtual ~Mutator() = default;
  // Short stable name, listed in the gpuadmit.io/mutations audit annotation: "tolerations".
  virtual std::string_view name() const = 0;
  // Edits the pod spec; returns true when it changed anything. Must be idempotent.
  virtual bool mutate(PodWriter& pod, PodContext& ctx) const = 0;
  // False only when mutate() changes nothing whatever the pod spec holds (its guard on the
  // context, which mutate() checks first): when no mutator may change a pod spec, the pipeline
  // does not copy the object.
  virtual bool may_change(const PodContext& /*ctx*/) const { return true; }
  // True for a mutation that applies to the ephemeral containers an UPDATE of the
  // pods/ephemeralcontainers subresource adds (it then sees only those: engine/context.h
  // in_scope); every other mutator is skipped for that UPDATE.
  virtual bool evaluates_added_ephemeral_containers() const { return false; }
};

}  // namespace gpuadmit
