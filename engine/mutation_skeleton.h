#pragma once
// What Pipeline::evaluate_in_place compares the edited object against: a copy of the object
// before the mutators run, reduced to the members mutators may write (the mutation contract,
// engine/pod_writer.h) — every other member is a placeholder that json_diff
// takes as equal to whatever the target holds there. Objects and lists on the way keep all
// their keys (in order) and elements, so the diff emits exactly the operations, in exactly the
// order, of a diff against a whole copy, without copying or walking what no mutator writes.
//
//   Json skeleton = mutation_skeleton(object, locations);   // before any mutator runs
//   ... mutators edit `object` in place ...
//   JsonDiff d = json_diff(skeleton, object, PatchForm::kText);

#include <vector>

#include "engine/json.h"
#include "engine/workload.h"

namespace gpuadmit {

// A stand-in for a member no mutator writes (nlohmann's `discarded` type, which no parser of
// ours produces).
inline bool is_placeholder(const Json& j) { return j.is_discarded(); }

Json mutation_skeleton(const Json& object, const std::vector<PodSpecLocation>& locations);

// Undoes the mutators' edits of `object` in place: every member the skeleton holds (what
// mutators may write) gets its value from before they ran, members they added go, and keys keep
// their original order; placeholders leave the object's member as it is. `skeleton` is consumed.
// For a mutator that failed (engine/pipeline.cc fail_mutation): no partial edit survives.
void restore_from_skeleton(Json& object, Json& skeleton);

}  // namespace gpuadmit
