#pragma once
// For the policy loader's tests: every error `policy check` reports for a policy text, as
// "<path>: <message> (p.yaml:<line>:<column>)", and a policy text with one piece replaced.
//
//   CHECK(policy_errors(replaced(kPolicy, "3.67", "-1")) == PolicyErrors{"spec.classes..."});

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "policies/loader.h"

namespace gpuadmit::testing {

using PolicyErrors = std::vector<std::string>;

inline PolicyErrors policy_errors(const std::string& yaml) {
  PolicyErrors out;
  for (const PolicyError& e : load_policy(yaml, "p.yaml").errors) out.push_back(e.to_string());
  return out;
}

// `text` with its first `from` replaced by `to` (the test fails when `from` is not there).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace gpuadmit::testing
