#pragma once
// A policy test suite (docs/testing-policies.md): one GPUPolicyTest YAML document naming the
// policy it tests and its cases, each an input (object or AdmissionReview) and what the webhook
// must answer. Loading checks every field (unknown fields are errors, as in the policy loader)
// and reports each error with its file and line.
//
//   SuiteLoadResult r = load_suite_file("policies/examples/gke.test.yaml");
//   if (!r.errors.empty()) for (auto& e : r.errors) std::cerr << e.to_string() << "\n";

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/admission.h"
#include "engine/json.h"

namespace gpuadmit::policytest {

// A field of the patched object: its dotted path ("spec.containers[0].resources.limits
// [\"nvidia.com/gpu\"]") and the value it must hold; a null value means the field is absent.
struct FieldExpectation {
  std::string path;
  Json value;
};

// What a case asserts; unset members are not checked. Lists are compared as sets.
struct Expectation {
  std::optional<bool> allowed;
  std::optional<std::vector<std::string>> rules;      // rule ids of every finding, exactly
  std::optional<std::vector<std::string>> warnings;   // rule ids of the warn findings, exactly
  std::optional<std::vector<std::string>> mutations;  // the audit annotation's mutations, exactly
  std::optional<bool> unchanged;                      // true: no patch; false: a patch
  std::vector<FieldExpectation> fields;
  std::vector<std::string> message_contains;  // each in the denial message or a warning
  std::vector<std::pair<std::string, std::string>> audit_annotations;  // key → value, each present
  bool empty() const;
};

struct TestCase {
  std::string name;
  int line = 0;  // of the case in the suite file
  Json review;   // the AdmissionReview sent (built from `object` or given)
  Endpoint endpoint = Endpoint::kMutate;
  Expectation expect;
};

struct Suite {
  std::string file;         // as given
  std::string name;         // metadata.name
  std::string policy_file;  // resolved against the suite's folder
  std::vector<TestCase> cases;
};

struct SuiteError {
  std::string file;
  int line = 0;      // 0 when unknown
  std::string path;  // "spec.cases[2].expect.allowd"; empty for file-level errors
  std::string message;
  // "<file>:<line>: <path>: <message>"
  std::string to_string() const;
};

struct SuiteLoadResult {
  std::optional<Suite> suite;  // set only when errors is empty
  std::vector<SuiteError> errors;
};

// Parses and validates a suite; `file_name` names it in errors and is the base of relative
// paths (the policy, objectFile, reviewFile). Never throws; terminates on any input.
SuiteLoadResult load_suite(std::string_view text, const std::string& file_name);
SuiteLoadResult load_suite_file(const std::string& path);

}  // namespace gpuadmit::policytest
