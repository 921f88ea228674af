// gpuadmit audit: a cluster export judged by the engine as the webhook would judge it now,
// controller-owned objects reported at their owner (docs/audit.md).

#include <ctime>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "audit/audit.h"
#include "audit/report.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/input_paths.h"
#include "engine/pipeline.h"
#include "lint/manifest_claims.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kAuditUsage =
    "usage: gpuadmit audit [--policy P] [--output text|json|policyreport] PATH...\n"
    "PATH: an export (kubectl get <kinds> -A -o json or -o yaml), a folder of them (recursive\n"
    "      *.yaml, *.yml, *.json) or - for standard input\n"
    "exit: 0 no deny-level finding, 1 a deny- or error-level finding, 2 an input or usage error\n";

bool audit_arguments_valid(const Args& args) {
  if (args.positional().empty()) {
    std::cerr << "gpuadmit audit: no export given; name files, folders or - (stdin)\n"
              << kAuditUsage;
    return false;
  }
  const std::string output = args.value_or("output", "text");
  if (!audit::parse_output_format(output)) {
    std::cerr << "gpuadmit audit: --output must be text, json or policyreport, not \"" << output
              << "\"\n";
    return false;
  }
  if (stdin_repeated(args.positional())) {
    std::cerr << "gpuadmit audit: - (standard input) may be given only once\n";
    return false;
  }
  return true;
}

// The report on standard output, in `format`.
void print_audit_report(const audit::AuditResult& result, audit::OutputFormat format,
                        const std::string& policy_name) {
  switch (format) {
    case audit::OutputFormat::kText:
      std::cout << audit::text_report(result);
      break;
    case audit::OutputFormat::kJson:
      std::cout << audit::json_report(result).dump(2, ' ', false, Json::error_handler_t::replace)
                << "\n";
      break;
    case audit::OutputFormat::kPolicyReport: {
      audit::PolicyReportOptions options;
      if (!policy_name.empty()) options.policy = policy_name;
      options.timestamp_seconds = static_cast<int64_t>(std::time(nullptr));
      std::cout << audit::policy_reports(result, options)
                       .dump(2, ' ', false, Json::error_handler_t::replace)
                << "\n";
      break;
    }
  }
  std::cout.flush();
}

}  // namespace

int audit_command(const std::vector<std::string>& argv) {
  Args args;
  if (auto error = Args::parse(argv, {"policy", "output"}, {}, args)) {
    std::cerr << "gpuadmit audit: " << *error << "\n" << kAuditUsage;
    return 2;
  }
  if (args.help()) return print_usage(kAuditUsage);
  if (!audit_arguments_valid(args)) return 2;
  const auto format = *audit::parse_output_format(args.value_or("output", "text"));

  CompiledLoadResult loaded = load_compiled_policy(args.value_or("policy", ""));
  if (!loaded.policy) {
    for (const PolicyError& e : loaded.errors) std::cerr << e.to_string() << "\n";
    std::cerr << "gpuadmit audit: the policy is invalid; fix the errors above\n";
    return 2;
  }
  const Pipeline pipeline(default_mutators(), default_rules());
  const std::vector<InputEntry> inputs = expand_inputs(args.positional());
  // DRA (docs/dra.md): claims resolve for the pods read after them (docs/audit.md).
  lint::ManifestClaims claims("default");

  // Two threads when there are two: one reads, the other judges (docs/audit.md "Speed").
  audit::Auditor auditor(loaded.policy, pipeline, &claims,
                         /*pipelined=*/std::thread::hardware_concurrency() >= 2);
  for (const InputEntry& input : inputs) {
    if (input.is_stdin) {
      auditor.read_stream(stdin, "<stdin>");
    } else if (!input.error.empty()) {
      std::cerr << "gpuadmit audit: " << input.path << ": " << input.error << "\n";
      auditor.input_error(input.path,
                          input.missing ? "no such file or folder; check the path" : input.error);
    } else {
      auditor.read_file(input.path);
    }
  }
  const audit::AuditResult result = auditor.finish();
  print_audit_report(result, format, loaded.policy->policy().name);
  return result.exit_code();
}

}  // namespace gpuadmit::cli
