#pragma once
// A mutator edits one pod spec in place (SPEC §4), through a PodWriter: only the members of the
// mutation contract (engine/pod_writer.h) are writable. It never builds patch operations: the
// pipeline computes the JSON Patch once, as a diff, at the end.
//
// Its outcome is explicit: applied, not applicable, or failed with a reason. A failure is never
// silent: the pipeline keeps none of the object's mutations (no partial edit is ever sent), the
// review gets a MUTATION error finding with the reason, and the policy's
// `enforcement.mutationFailurePolicy` decides the answer (docs/mutations.md, "When a mutator
// fails").
//
//   return MutationOutcome::failed("priority class gpu-training is not declared");

#include <string>
#include <string_view>
#include <utility>

#include "engine/context.h"
#include "engine/pod_writer.h"

namespace gpuadmit {

enum class MutationStatus {
  kApplied,        // it changed the pod spec
  kNotApplicable,  // nothing to do: not its kind of pod, or the pod already has what it writes
  kFailed,         // it had something to write and could not: `reason` says why
};

struct MutationOutcome {
  MutationStatus status = MutationStatus::kNotApplicable;
  std::string reason;  // kFailed: one line, what could not be done and why

  static MutationOutcome applied() { return {MutationStatus::kApplied, {}}; }
  static MutationOutcome not_applicable() { return {MutationStatus::kNotApplicable, {}}; }
  static MutationOutcome failed(std::string reason) {
    return {MutationStatus::kFailed, std::move(reason)};
  }
  // Applied when `changed`, else not applicable: for bodies that track whether they wrote.
  static MutationOutcome changed_if(bool changed) { return changed ? applied() : not_applicable(); }
  bool is_applied() const { return status == MutationStatus::kApplied; }
  bool is_failed() const { return status == MutationStatus::kFailed; }
};

class Mutator {
 public:
  virtual ~Mutator() = default;
  // Short stable name, listed in the gpuadmit.io/mutations audit annotation: "tolerations".
  virtual std::string_view name() const = 0;
  // Edits the pod spec. Must be idempotent. A mutator that fails may leave partial edits: the
  // pipeline discards every edit of the object then.
  virtual MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const = 0;
  // False only when mutate() changes nothing whatever the pod spec holds (its guard on the
  // context, which mutate() checks first): when no mutator may change a pod spec, the pipeline
  // does not copy the object.
  virtual bool may_change(const PodContext& /*ctx*/) const { return true; }
};

}  // namespace gpuadmit
