// gpuadmit policy check P...: loads each policy and prints "P: ok" or every error with its
// file:line:column (exit 2 when any policy has errors, as for every input error).

#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "policies/loader.h"

namespace gpuadmit::cli {

namespace {

constexpr const char* kPolicyUsage =
    "usage: gpuadmit policy check POLICY.yaml...   (\"-\" reads standard input)\n";

}  // namespace

int policy_command(const std::vector<std::string>& argv) {
  if (argv.empty()) return usage_error("policy", kPolicyUsage, "missing subcommand");
  if (argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") return print_usage(kPolicyUsage);
  if (argv[0] != "check")
    return usage_error("policy", kPolicyUsage, "unknown subcommand \"" + argv[0] + "\"");
  Args args;
  if (auto error = Args::parse({argv.begin() + 1, argv.end()}, {}, {}, args)) {
    return usage_error("policy", kPolicyUsage, *error);
  }
  if (args.help()) return print_usage(kPolicyUsage);
  if (args.positional().empty())
    return usage_error("policy", kPolicyUsage, "missing the policy file to check");
  int exit_code = 0;
  for (const std::string& path : args.positional()) {
    PolicyLoadResult result;
    std::string name = path;
    if (path == "-") {
      name = "<stdin>";
      const std::string text((std::istreambuf_iterator<char>(std::cin)),
                             std::istreambuf_iterator<char>());
      result = load_policy(text, name);
    } else {
      result = load_policy_file(path);
    }
    if (result.ok()) {
      std::cout << name << ": ok\n";
      continue;
    }
    for (const PolicyError& e : result.errors) std::cerr << e.to_string() << "\n";
    exit_code = 2;
  }
  return exit_code;
}

}  // namespace gpuadmit::cli
