#pragma once
// Shared by the mutator tests: one fleet policy (with knobs for the enforcement fields), running
// one mutator over every pod spec of an object, and table-driven cases asserting the exact
// resulting object (key order included) and idempotence.
//
//   auto policy = policy_from_yaml(fleet_policy());
//   run_mutation_cases(*make_tolerations_mutator(), policy, {{"name", "ml-a", input, expected}});

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/mutator.h"
#include "tests/support/fixtures.h"
#include "tests/support/fleet_policy.h"

namespace gpuadmit::testing {

struct MutationResult {
  bool changed = false;
  Json object;
  std::string failure;  // the reason of the first MutationOutcome::failed, "" when none failed
};

// Runs `mutator` over every pod spec of `object` (as the pipeline does, each with its context
// resolved first). `tweak` may adjust the request context (e.g. daemonset_owned).
inline MutationResult apply_mutator(const Mutator& mutator, const PolicyPtr& policy,
                                    const Json& object, const std::string& ns,
                                    const std::function<void(RequestContext&)>& tweak = {}) {
  MutationResult result{false, object, {}};
  const size_t specs = find_pod_specs(object, *policy).size();
  for (size_t i = 0; i < specs; ++i) {
    PodFixture pod(policy, result.object.dump(), ns, i);
    if (tweak) tweak(pod.request);
    PodWriter writer(pod.view(), pod.object);
    const MutationOutcome outcome = mutator.mutate(writer, pod.ctx);
    result.changed |= outcome.is_applied();
    if (outcome.is_failed() && result.failure.empty()) result.failure = outcome.reason;
    result.object = pod.object;
  }
  return result;
}

struct MutationCase {
  std::string name;
  std::string ns;
  std::string input;     // JSON object
  std::string expected;  // JSON object; "" = unchanged
  // The exact reason the mutator fails with; "" = it must not fail. A failing mutator's partial
  // edits are discarded by the pipeline, so `expected` is not checked then.
  std::string failure = {};
};

// Each case: the exact expected object (key order included), `changed` exactly when it differs
// from the input, and idempotence: the output through the mutator again changes nothing. A case
// with `failure`: the mutator fails with exactly that reason.
inline void run_mutation_cases(const Mutator& mutator, const PolicyPtr& policy,
                               const std::vector<MutationCase>& cases,
                               const std::function<void(RequestContext&)>& tweak = {}) {
  for (const MutationCase& c : cases) {
    INFO("case: " << c.name);
    const Json input = Json::parse(c.input);
    const Json expected = c.expected.empty() ? input : Json::parse(c.expected);
    const MutationResult once = apply_mutator(mutator, policy, input, c.ns, tweak);
    CHECK(once.failure == c.failure);
    if (!c.failure.empty()) continue;
    CHECK(once.object.dump(2) == expected.dump(2));
    CHECK(once.changed == (input.dump() != expected.dump()));
    const MutationResult twice = apply_mutator(mutator, policy, once.object, c.ns, tweak);
    CHECK_FALSE(twice.changed);
    CHECK(twice.failure.empty());
    CHECK(twice.object.dump(2) == once.object.dump(2));
  }
}

}  // namespace gpuadmit::testing
