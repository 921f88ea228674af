#pragma once
// The JSON Patch between two documents, in one pass (the engine's hot path).
//
// nlohmann's Json::diff compares the two subtrees for equality at every level before it descends
// (O(nodes × depth)), and checking its result means copying the source and applying the patch.
// json_diff emits exactly the same operations, in the same order, in one walk, and tells at the
// same time whether Json::patch(source, ops) reproduces `target` exactly — key order included,
// which is the only way an ordered_json patch can fail to reproduce the target: an object's
// applied keys come out as the source's kept keys in source order, then the added keys in
// target order.
//
//   JsonDiff d = json_diff(original, mutated, /*with_patch=*/true);
//   d.equal;        // original == mutated (operator==, key order included)
//   d.reproduces;   // original.patch(d.patch) == mutated
//   d.patch;        // == Json::diff(original, mutated)
//
// A `discarded` value in the source (a placeholder of engine/mutation_skeleton.h) is taken as
// equal to whatever the target holds at its place.

#include <string>

#include "engine/json.h"

namespace gpuadmit {

struct JsonDiff {
  bool equal = true;           // source == target
  bool reproduces = true;      // source.patch(patch) == target
  Json patch = empty_array();  // PatchForm::kJson: Json::diff(source, target)
  std::string patch_text;      // PatchForm::kText: dump_json(Json::diff(source, target))
};

// kNone: only `equal` and `reproduces`, nothing allocated. kText writes the operations as JSON
// text directly (the webhook sends nothing else): no operation objects, no copies of the added
// values.
enum class PatchForm { kNone, kJson, kText };
JsonDiff json_diff(const Json& source, const Json& target, PatchForm form);
inline JsonDiff json_diff(const Json& source, const Json& target, bool with_patch) {
  return json_diff(source, target, with_patch ? PatchForm::kJson : PatchForm::kNone);
}

}  // namespace gpuadmit
