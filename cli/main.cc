// gpuadmit: the one binary. Dispatches to the subcommands of SPEC §8.

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "webhook/build_info.h"

namespace {

constexpr const char* kUsage = R"(usage: gpuadmit <command> [flags]

commands:
  serve   --policy P --tls-cert C --tls-key K [--listen ADDR] [--metrics-listen ADDR]
          [--client-ca CA] [--threads N] [--max-body BYTES] [--log-level L]
  register --webhook-namespace NS [--policy P] [--webhook-owner CLUSTERROLE]
          [--register-webhooks --webhook-service NAME --webhook-ca-bundle FILE ...]
          [--register-native full|fallback] [--watch]   (in a pod: writes admission config)
  lint    [--policy P] [--namespace NS] [--output text|json|sarif|junit] [--fix [--write DIR]]
          [--explain] PATH...
  review  [--policy P] [--endpoint mutate|validate] [--explain] < review.json
  test    [-v] [--output text|junit] PATH...   (policy test suites, *.test.yaml)
  policy  check P
  certs   --service S --namespace NS --out DIR [--san NAME]...
  render  [--policy P] [--ca-bundle FILE] [--namespace NS] [--service NAME] [--failure-policy F]
  fleet   [--policy P] [--namespace NS] [--output text|json] [--svg FILE] PATH...
  fleet   --live [--policy P] [--output text|json|prometheus] [--svg FILE]
          [PATH... | --kubeconfig FILE] [--context NAME] [--timeout S]
  audit   [--policy P] [--output text|json|policyreport] PATH...   (a cluster export)

Without --policy, the embedded default policy (policies/default.yaml) is used.
Every command answers -h/--help; gpuadmit --version prints the version and the libraries.
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::printf("gpuadmit %s (%s)\n", GPUADMIT_VERSION,
                gpuadmit::webhook::library_versions().c_str());
    return 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    using namespace gpuadmit::cli;
    if (command == "policy") return policy_command(args);
    if (command == "review") return review_command(args);
    if (command == "serve") return serve_command(args);
    if (command == "register") return register_command(args);
    if (command == "certs") return certs_command(args);
    if (command == "lint") return lint_command(args);
    if (command == "render") return render_command(args);
    if (command == "test") return test_command(args);
    if (command == "fleet") return fleet_command(args);
    if (command == "audit") return audit_command(args);
  } catch (const std::exception& e) {
    std::cerr << "gpuadmit " << command << ": internal error: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "gpuadmit: unknown command \"" << command << "\"\n" << kUsage;
  return 2;
}
