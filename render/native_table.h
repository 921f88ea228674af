#pragma once
// What the native policies cover, per rule id and per mutation (docs/native.md, "What is
// native"): the one source of the table that `gpuadmit render --native` prints as its comment
// header, that `render --native-table` prints as JSON for the harness (tests/native), and that
// docs/native.md holds (tests/render/native_test.cpp requires the doc's table to be this one).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::render::native {

enum class Coverage { kYes, kPartial, kNo };
std::string_view coverage_name(Coverage c);  // "yes" | "partial" | "no"

// Why a rule exists, which decides `render --native fallback`: the security and safety rules,
// as long as they do not need a mutation to have happened.
enum class Category { kSecurity, kSafety, kCorrectness, kAdvice };
std::string_view category_name(Category c);

struct RuleRow {
  std::string_view id;
  Coverage native;
  Category category;
  std::string_view why;
};

struct MutationRow {
  std::string_view name;  // as docs/mutations.md and the gpuadmit.io/mutations audit annotation
  Coverage native;
  std::string_view why;
  std::vector<std::string_view> writes;  // members it writes, relative to a pod spec's parent
};

// Every rule id of rules/ (GPU001–…) and every mutation of mutators/, in their order.
std::span<const RuleRow> rule_rows();
std::span<const MutationRow> mutation_rows();
const RuleRow* find_rule_row(std::string_view id);

// True when `render --native fallback` carries the rule for this policy: a security or safety
// rule that is native and needs no mutation (GPU009 with nonGpuOnGpuPool: strip does).
bool in_fallback(const CompiledPolicy& policy, std::string_view id);
// True when the full native policies apply rule `id` to an object they never mutate (a
// controller's copy, an UPDATE of an immutable template: variables.jo): the fallback set, and
// GPU025, which depends on no mutation of such an object — the webhook never labels a copy with
// a queue either (mutators/queue_label.cc). The native differential compares these there.
bool judges_unmutated(const CompiledPolicy& policy, std::string_view id);

// docs/native.md's table, as Markdown (header row included).
std::string table_markdown();

// The table as YAML comment lines ("# ..."), for the head of `render --native`.
std::string table_comment();

// The table as JSON (docs/native.md "For the harness"), with the policy's fallback set and the
// kinds the native policies read.
Json table_json(const CompiledPolicy& policy);

}  // namespace gpuadmit::render::native
