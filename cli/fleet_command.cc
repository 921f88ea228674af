// gpuadmit fleet: pack the workloads' GPU pods onto each class's nodes and report (docs/fleet.md).

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/input_paths.h"
#include "engine/json_dump.h"
#include "engine/pipeline.h"
#include "fleet/collect.h"
#include "fleet/read.h"
#include "fleet/report.h"
#include "fleet/svg.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kUsage =
    "usage: gpuadmit fleet [--policy P] [--namespace NS] [--output text|json] [--svg FILE]\n"
    "                      PATH...\n"
    "PATH: a file, a folder (recursive *.yaml, *.yml, *.json) or - for standard input;\n"
    "      multi-document YAML and v1 Lists (kubectl get pods,deployments,jobs -A -o yaml)\n"
    "exit: 0 every pod placed, 1 some pod unplaceable, 2 usage, policy or input errors\n";

// More cells than this (nodes × gpusPerNode of one class) is not a fleet but a typo.
constexpr int64_t kMaxCells = 10'000'000;

int usage_error(const std::string& message) {
  std::cerr << "gpuadmit fleet: " << message << "\n" << kUsage;
  return 2;
}

bool check_sizes(const CompiledPolicy& policy) {
  for (const GpuClass& c : policy.policy().classes) {
    const int64_t nodes = c.nodes.value_or(0), gpus = c.gpus_per_node.value_or(0);
    if (nodes > 0 && gpus > 0 && nodes > kMaxCells / gpus) {
      std::cerr << "gpuadmit fleet: class " << c.name << ": nodes × gpusPerNode (" << nodes << " × "
                << gpus << ") is more than " << kMaxCells << " GPUs; check the policy\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int fleet_command(const std::vector<std::string>& argv) {
  Args args;
  if (auto error = Args::parse(argv, {"policy", "namespace", "output", "svg"}, {}, args)) {
    return usage_error(*error);
  }
  if (args.help()) return print_usage(kUsage);
  if (args.positional().empty()) {
    return usage_error("no manifests given; name files, folders or - (stdin)");
  }
  const std::string output = args.value_or("output", "text");
  if (output != "text" && output != "json") {
    return usage_error("--output must be text or json, not \"" + output + "\"");
  }
  if (stdin_repeated(args.positional())) {
    return usage_error("- (standard input) may be given only once");
  }
  CompiledLoadResult loaded = load_compiled_policy(args.value_or("policy", ""));
  if (!loaded.policy) {
    for (const PolicyError& e : loaded.errors) std::cerr << e.to_string() << "\n";
    std::cerr << "gpuadmit fleet: the policy is invalid; fix the errors above\n";
    return 2;
  }
  if (!check_sizes(*loaded.policy)) return 2;

  const Pipeline pipeline(default_mutators(), default_rules());
  fleet::Collector collector(*loaded.policy, pipeline, args.value_or("namespace", "default"));
  std::vector<fleet::InputError> errors;
  for (const InputEntry& input : expand_inputs(args.positional())) {
    if (input.is_stdin) {
      fleet::read_stream(stdin, "<stdin>", false, collector, errors);
    } else if (!input.error.empty()) {
      errors.push_back({input.path, 0, input.error + (input.missing ? "; check the path" : "")});
    } else {
      fleet::read_file(input.path, collector, errors);
    }
  }
  if (!errors.empty()) {
    for (const fleet::InputError& e : errors) std::cerr << e.to_string() << "\n";
    std::cerr << "gpuadmit fleet: " << errors.size()
              << (errors.size() == 1 ? " input error" : " input errors")
              << "; fix the manifests above (no report is made from part of the fleet)\n";
    return 2;
  }
  const fleet::FleetInput input = collector.finish();
  const fleet::FleetReport report = fleet::build_report(input, *loaded.policy);
  if (const auto svg_path = args.value("svg")) {
    std::ofstream svg(*svg_path, std::ios::binary);
    if (svg) svg << fleet::to_svg(report, input);
    if (!svg || !svg.flush()) {
      std::cerr << "gpuadmit fleet: cannot write " << *svg_path << "; check the path\n";
      return 2;
    }
  }
  if (output == "json") {
    std::cout << dump_json(fleet::to_json(report, input), Json::error_handler_t::replace) << "\n";
  } else {
    fleet::write_text(report, input, std::cout);
  }
  std::cout.flush();
  return report.unplaceable_pods > 0 ? 1 : 0;
}

}  // namespace gpuadmit::cli
