#pragma once
// Runs a suite's cases through the webhook's own path: the AdmissionReview codec
// (engine/admission.h) and the pipeline, as `gpuadmit review` does, then checks each
// expectation against the response and the object patched as the API server would patch it.
//
//   CaseResult r = run_case(test_case, pipeline, *policy);
//   if (!r.passed()) for (auto& why : r.failures) ...  // "allowed: got true, want false"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/pipeline.h"
#include "policies/compiled_policy.h"
#include "policies/loader.h"
#include "policytest/suite.h"

namespace gpuadmit::policytest {

struct CaseResult {
  std::string name;
  int line = 0;
  std::vector<std::string> failures;  // one line per expectation not met, in expectation order
  bool passed() const { return failures.empty(); }
};

CaseResult run_case(const TestCase& test, const Pipeline& pipeline, const CompiledPolicy& policy);

// One suite file's outcome: its load errors (a bad suite: no case ran) or its cases' results.
struct SuiteOutcome {
  std::string file;
  std::string name;  // metadata.name; the file when the suite did not load
  std::vector<SuiteError> errors;
  std::vector<CaseResult> cases;
  bool bad() const { return !errors.empty(); }
  size_t failed() const;
};

// Loads a suite file and its policy (each policy file loaded once per `policies` cache) and
// runs its cases. A suite or policy that does not load is a bad suite: its errors, no cases.
class SuiteRunner {
 public:
  SuiteRunner();
  SuiteOutcome run_file(const std::string& file);

 private:
  Pipeline pipeline_;
  std::map<std::string, CompiledLoadResult> policies_;
};

// The suite files named by `paths`: a file is itself; a folder gives every *.test.yaml under
// it, recursively, sorted. A path that does not exist, or a folder without suites, is an error.
std::vector<std::string> find_suite_files(const std::vector<std::string>& paths,
                                          std::vector<std::string>& errors);

// The member at a dotted path ("spec.containers[0].resources.limits[\"nvidia.com/gpu\"]"), or
// nullptr when any step is absent.
const Json* find_path(const Json& root, std::string_view dotted_path);

// RFC 4648 base64 with padding; nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace gpuadmit::policytest
