// enforcement.mutationFailurePolicy (docs/mutations.md, "When a mutator fails"): Fail by
// default, Ignore when asked, anything else an error at its line and column — the error
// `gpuadmit policy check` prints.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "policies/loader.h"

namespace gpuadmit {
namespace mutation_failure_policy_test {
namespace {

std::string policy_with(const std::string& enforcement) {
  return "apiVersion: gpuadmit.io/v1alpha1\n"
         "kind: GPUPolicy\n"
         "metadata: {name: p}\n"
         "spec:\n"
         "  enforcement:\n" +
         enforcement;
}

TEST_CASE("policy: mutationFailurePolicy is Fail unless set to Ignore", "[policy][loader]") {
  struct Case {
    std::string name;
    std::string enforcement;
    FailurePolicy expected;
  };
  const std::vector<Case> cases = {
      {"absent", "    fragmentation: warn\n", FailurePolicy::kFail},
      {"Fail", "    mutationFailurePolicy: Fail\n", FailurePolicy::kFail},
      {"Ignore", "    mutationFailurePolicy: Ignore\n", FailurePolicy::kIgnore},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    PolicyLoadResult r = load_policy(policy_with(c.enforcement), "policy.yaml");
    REQUIRE(r.ok());
    CHECK(r.policy->enforcement.mutation_failure_policy == c.expected);
  }
}

TEST_CASE("policy: a mutationFailurePolicy that is not Fail or Ignore is located",
          "[policy][loader]") {
  struct Case {
    std::string value;
    std::string error;
  };
  const std::vector<Case> cases = {
      // Kubernetes' failurePolicy spelling, exactly: the lower-case form is refused too.
      {"ignore",
       "spec.enforcement.mutationFailurePolicy: invalid value \"ignore\": must be one of Fail, "
       "Ignore (policy.yaml:6:28)"},
      {"Open",
       "spec.enforcement.mutationFailurePolicy: invalid value \"Open\": must be one of Fail, "
       "Ignore (policy.yaml:6:28)"},
      {"[Fail]",
       "spec.enforcement.mutationFailurePolicy: must be a string, got a list "
       "(policy.yaml:6:28)"},
  };
  for (const Case& c : cases) {
    INFO(c.value);
    PolicyLoadResult r =
        load_policy(policy_with("    mutationFailurePolicy: " + c.value + "\n"), "policy.yaml");
    std::vector<std::string> errors;
    for (const PolicyError& e : r.errors) errors.push_back(e.to_string());
    CHECK(errors == std::vector<std::string>{c.error});
  }
}

}  // namespace
}  // namespace mutation_failure_policy_test
}  // namespace gpuadmit
