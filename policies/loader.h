#pragma once
// Loads a GPUPolicy from YAML text: the model, or every error found, each with its field path
// and file:line:column (1-based), like Kubernetes' field.ErrorList.
//
//   auto result = load_policy(text, "policy.yaml");
//   if (!result.ok()) for (auto& e : result.errors) std::cerr << e.to_string() << "\n";
//   // spec.tenants[0].allowedClasses[1]: unknown class "h200" (policy.yaml:31:9)

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policies/compiled_policy.h"
#include "policies/model.h"

namespace gpuadmit {

struct PolicyError {
  std::string path;     // "spec.tenants[0].allowedClasses[1]"; empty for document-level errors
  std::string message;  // "unknown class \"h200\""
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
  // "<path>: <message> (<file>:<line>:<column>)"
  std::string to_string() const;
};

struct PolicyLoadResult {
  std::optional<Policy> policy;  // set only when errors is empty
  std::vector<PolicyError> errors;
  bool ok() const { return errors.empty(); }
};

// Parses and validates; never throws.
PolicyLoadResult load_policy(std::string_view yaml_text, std::string_view file_name);

// Reads a file and loads it; a read failure is one error naming the file.
PolicyLoadResult load_policy_file(const std::string& path);

// policies/default.yaml, embedded in the binary at build time.
std::string_view default_policy_text();

// Loads and compiles: the compiled policy, or the errors. `path` empty → the embedded default.
struct CompiledLoadResult {
  PolicyPtr policy;
  std::vector<PolicyError> errors;
};
CompiledLoadResult load_compiled_policy(const std::string& path);

}  // namespace gpuadmit
