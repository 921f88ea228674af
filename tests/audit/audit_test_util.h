#pragma once
// What the audit tests share: the tests' policy (tests/audit/data/policy.yaml), loaded once, and
// the engine's pipeline with every mutator and rule.

#include <catch2/catch.hpp>

#include <string>

#include "engine/pipeline.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"

namespace gpuadmit::audit::test_util {

inline const std::string kData = std::string(GPUADMIT_SOURCE_DIR) + "/tests/audit/data/";

inline PolicyPtr test_policy() {
  static const PolicyPtr policy = [] {
    CompiledLoadResult loaded = load_compiled_policy(kData + "policy.yaml");
    REQUIRE(loaded.policy);
    return loaded.policy;
  }();
  return policy;
}

inline const Pipeline& pipeline() {
  static const Pipeline p(default_mutators(), default_rules());
  return p;
}

}  // namespace gpuadmit::audit::test_util
