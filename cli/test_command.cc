// gpuadmit test: runs policy test suites (docs/testing-policies.md) through the webhook's own
// AdmissionReview path. Exit 0: every case passed; 1: a case failed; 2: a bad suite or usage.

#include <iostream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "policytest/report.h"
#include "policytest/runner.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kTestUsage =
    "usage: gpuadmit test [-v] [--output text|junit] PATH...  (files or folders of *.test.yaml)\n";

}  // namespace

int test_command(const std::vector<std::string>& argv) {
  // -v as go test spells it, as well as --verbose.
  std::vector<std::string> rest;
  bool verbose = false;
  for (const std::string& arg : argv) {
    if (arg == "-v") {
      verbose = true;
    } else {
      rest.push_back(arg);
    }
  }
  Args args;
  if (auto error = Args::parse(rest, {"output"}, {"verbose"}, args)) {
    std::cerr << "gpuadmit test: " << *error << "\n" << kTestUsage;
    return 2;
  }
  if (args.help()) return print_usage(kTestUsage);
  verbose = verbose || args.has("verbose");
  const std::string output = args.value_or("output", "text");
  if (output != "text" && output != "junit") {
    std::cerr << "gpuadmit test: --output must be text or junit, not \"" << output << "\"\n";
    return 2;
  }
  if (args.positional().empty()) {
    std::cerr << "gpuadmit test: no suite given\n" << kTestUsage;
    return 2;
  }
  std::vector<std::string> errors;
  const std::vector<std::string> files = policytest::find_suite_files(args.positional(), errors);
  for (const std::string& e : errors) std::cerr << "gpuadmit test: " << e << "\n";

  policytest::SuiteRunner runner;
  std::vector<policytest::SuiteOutcome> outcomes;
  bool bad = !errors.empty(), failed = false;
  for (const std::string& file : files) {
    outcomes.push_back(runner.run_file(file));
    const policytest::SuiteOutcome& o = outcomes.back();
    for (const policytest::SuiteError& e : o.errors) std::cerr << e.to_string() << "\n";
    bad = bad || o.bad();
    failed = failed || o.failed() > 0;
    if (output == "text") std::cout << policytest::suite_text(o, verbose) << std::flush;
  }
  if (output == "junit") {
    std::cout << policytest::junit_xml(outcomes);
  } else if (!outcomes.empty()) {
    std::cout << policytest::summary_text(outcomes);
  }
  return bad ? 2 : failed ? 1 : 0;
}

}  // namespace gpuadmit::cli
