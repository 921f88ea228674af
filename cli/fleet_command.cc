// gpuadmit fleet: pack the workloads' GPU pods onto each class's nodes and report (docs/fleet.md);
// with --live, the cluster as it runs: its nodes and pods, from an export or the API.

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/input_paths.h"
#include "engine/json_dump.h"
#include "engine/pipeline.h"
#include "fleet/collect.h"
#include "fleet/live_collect.h"
#include "fleet/live_output.h"
#include "fleet/live_read.h"
#include "fleet/live_report.h"
#include "fleet/read.h"
#include "fleet/report.h"
#include "fleet/svg.h"
#include "kube/kubeconfig.h"
#include "kube/list.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kFleetUsage =
    "usage: gpuadmit fleet [--policy P] [--namespace NS] [--output text|json] [--svg FILE]\n"
    "                      PATH...\n"
    "       gpuadmit fleet --live [--policy P] [--output text|json|prometheus] [--svg FILE]\n"
    "                      [PATH... | --kubeconfig FILE] [--context NAME] [--timeout SECONDS]\n"
    "PATH: a file, a folder (recursive *.yaml, *.yml, *.json) or - for standard input;\n"
    "      multi-document YAML and v1 Lists (kubectl get pods,deployments,jobs -A -o yaml)\n"
    "--live: the cluster as it runs: its Nodes and Pods (and DRA ResourceSlices and\n"
    "      ResourceClaims) from PATH (kubectl get nodes,pods -A -o json | gpuadmit fleet --live "
    "-)\n"
    "      or, without PATH, listed from the API: --kubeconfig, $KUBECONFIG, ~/.kube/config,\n"
    "      else the in-cluster service account; --timeout per connect/read (default 10)\n"
    "exit: 0 every pod placed (--live: the report is made), 1 some pod unplaceable,\n"
    "      2 usage, policy, input or API errors\n";

// More cells than this (nodes × gpusPerNode of one class) is not a fleet but a typo.
constexpr int64_t kMaxCells = 10'000'000;

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

int report_input_errors(const std::vector<fleet::InputError>& errors, const char* what) {
  for (const fleet::InputError& e : errors) std::cerr << e.to_string() << "\n";
  std::cerr << "gpuadmit fleet: " << errors.size()
            << (errors.size() == 1 ? " input error" : " input errors") << "; fix the " << what
            << " above (no report is made from part of the fleet)\n";
  return 2;
}

bool write_svg(const std::string& path, const std::string& svg) {
  std::ofstream out(path, std::ios::binary);
  if (out) out << svg;
  if (!out || !out.flush()) {
    std::cerr << "gpuadmit fleet: cannot write " << path << "; check the path\n";
    return false;
  }
  return true;
}

// What to do when the API refuses: the RBAC the read needs.
std::string api_hint(int status) {
  if (status == 401) return "; the credentials were refused: check the kubeconfig's user or token";
  if (status == 403) {
    return "; gpuadmit fleet --live needs list on nodes and pods at the cluster scope (a "
           "ClusterRole; docs/fleet.md, \"From the API\")";
  }
  return "";
}

// DRA ResourceSlices and ResourceClaims, optional: the first resource.k8s.io version served
// (v1, then the betas); not served or not readable leaves DRA devices out with a warning.
void list_dra(const kube::ApiClient& api, const kube::ClusterAccess& access,
              const std::function<bool(const std::string&)>& page) {
  for (const char* version : {"v1", "v1beta2", "v1beta1"}) {
    const std::string base = access.path_prefix + "/apis/resource.k8s.io/" + version + "/";
    kube::ListResult slices = kube::list_all(api, access.token, base + "resourceslices", {}, page);
    if (slices.status == 404) continue;
    kube::ListResult claims =
        slices.ok() ? kube::list_all(api, access.token, base + "resourceclaims", {}, page) : slices;
    if (!claims.ok()) {
      std::cerr << "gpuadmit fleet: warning: DRA devices left out: " << claims.error << "\n";
    }
    return;
  }
}

int read_from_api(const Args& args, fleet::LiveCollector& collector,
                  std::vector<fleet::InputError>& errors) {
  kube::AccessOptions options;
  options.kubeconfig = args.value_or("kubeconfig", "");
  options.context = args.value_or("context", "");
  const std::string timeout = args.value_or("timeout", "10");
  char* end = nullptr;
  const double seconds = std::strtod(timeout.c_str(), &end);
  if (*end != '\0' || !(seconds > 0) || seconds > 3600) {
    return usage_error("fleet", kFleetUsage,
                       "--timeout must be a number of seconds above 0, not \"" + timeout + "\"");
  }
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  auto resolved = kube::resolve_cluster_access(options);
  if (auto* error = std::get_if<std::string>(&resolved)) {
    std::cerr << "gpuadmit fleet: " << *error << "\n";
    return 2;
  }
  const kube::ClusterAccess& access = std::get<kube::ClusterAccess>(resolved);
  const kube::ApiClient api(access.endpoint, access.identity);
  const std::string display = "the API server " + access.server;
  auto page = [&](const std::string& body) {
    fleet::read_live_text(body, display, collector, errors);
    return errors.empty();
  };
  // Pods as the scheduler's informer lists them: not terminal (pkg/scheduler/scheduler.go).
  const std::pair<const char*, kube::ListOptions> lists[] = {
      {"/api/v1/nodes", {}},
      {"/api/v1/pods", {.field_selector = "status.phase!=Succeeded,status.phase!=Failed"}}};
  for (const auto& [path, list_options] : lists) {
    const kube::ListResult r =
        kube::list_all(api, access.token, access.path_prefix + path, list_options, page);
    if (!r.ok()) {
      std::cerr << "gpuadmit fleet: cannot list " << path << " (" << access.source
                << "): " << r.error << api_hint(r.status) << "\n";
      return 2;
    }
    if (!errors.empty()) return 0;
  }
  list_dra(api, access, page);
  return 0;
}

int read_exports(const Args& args, fleet::LiveCollector& collector,
                 std::vector<fleet::InputError>& errors) {
  for (const InputEntry& input : expand_inputs(args.positional())) {
    if (input.is_stdin) {
      fleet::read_live_stream(stdin, "<stdin>", collector, errors);
    } else if (!input.error.empty()) {
      errors.push_back({input.path, 0, input.error + (input.missing ? "; check the path" : "")});
    } else {
      fleet::read_live_file(input.path, collector, errors);
    }
  }
  return 0;
}

int live_fleet(const Args& args, const CompiledPolicy& policy, const std::string& output) {
  fleet::LiveCollector collector(policy);
  std::vector<fleet::InputError> errors;
  const int read = args.positional().empty() ? read_from_api(args, collector, errors)
                                             : read_exports(args, collector, errors);
  if (read != 0) return read;
  errors.insert(errors.end(), collector.errors().begin(), collector.errors().end());
  if (!errors.empty()) return report_input_errors(errors, "input");
  const fleet::LiveInput input = collector.finish();
  if (input.nodes.empty()) {
    std::cerr << "gpuadmit fleet: the input holds no Node; export nodes and pods together "
                 "(kubectl get nodes,pods -A -o json)\n";
    return 2;
  }
  const fleet::LiveReport report = fleet::build_live_report(input, policy);
  if (const auto svg_path = args.value("svg")) {
    if (!write_svg(*svg_path, fleet::live_to_svg(report, input))) return 2;
  }
  if (output == "json") {
    std::cout << dump_json(fleet::live_to_json(report, input), Json::error_handler_t::replace)
              << "\n";
  } else if (output == "prometheus") {
    fleet::write_live_prometheus(report, std::cout);
  } else {
    fleet::write_live_text(report, input, std::cout);
  }
  std::cout.flush();
  return 0;
}

int offline_fleet(const Args& args, const CompiledPolicy& policy, const std::string& output) {
  if (!check_sizes(policy)) return 2;
  const Pipeline pipeline(default_mutators(), default_rules());
  fleet::Collector collector(policy, pipeline, args.value_or("namespace", "default"));
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
  if (!errors.empty()) return report_input_errors(errors, "manifests");
  const fleet::FleetInput input = collector.finish();
  const fleet::FleetReport report = fleet::build_report(input, policy);
  if (const auto svg_path = args.value("svg")) {
    if (!write_svg(*svg_path, fleet::to_svg(report, input))) return 2;
  }
  if (output == "json") {
    std::cout << dump_json(fleet::to_json(report, input), Json::error_handler_t::replace) << "\n";
  } else {
    fleet::write_text(report, input, std::cout);
  }
  std::cout.flush();
  return report.unplaceable_pods > 0 ? 1 : 0;
}

}  // namespace

int fleet_command(const std::vector<std::string>& argv) {
  Args args;
  if (auto error = Args::parse(
          argv, {"policy", "namespace", "output", "svg", "kubeconfig", "context", "timeout"},
          {"live"}, args)) {
    return usage_error("fleet", kFleetUsage, *error);
  }
  if (args.help()) return print_usage(kFleetUsage);
  const bool live = args.has("live");
  const std::string output = args.value_or("output", "text");
  if (output != "text" && output != "json" && !(live && output == "prometheus")) {
    return usage_error("fleet", kFleetUsage,
                       "--output must be text or json" + std::string(live ? " or prometheus" : "") +
                           ", not \"" + output + "\"" +
                           (output == "prometheus" ? " (prometheus needs --live)" : ""));
  }
  for (const char* flag : {"kubeconfig", "context", "timeout"}) {
    if (!live && args.has(flag))
      return usage_error("fleet", kFleetUsage, std::string("--") + flag + " needs --live");
    if (live && args.has(flag) && !args.positional().empty()) {
      return usage_error("fleet", kFleetUsage,
                         std::string("--") + flag + " reads from the API; it takes no PATH");
    }
  }
  if (live && args.has("namespace"))
    return usage_error("fleet", kFleetUsage, "--namespace does not apply to --live");
  if (!live && args.positional().empty()) {
    return usage_error("fleet", kFleetUsage,
                       "no manifests given; name files, folders or - (stdin)");
  }
  if (stdin_repeated(args.positional())) {
    return usage_error("fleet", kFleetUsage, "- (standard input) may be given only once");
  }
  CompiledLoadResult loaded = load_compiled_policy(args.value_or("policy", ""));
  if (!loaded.policy) {
    for (const PolicyError& e : loaded.errors) std::cerr << e.to_string() << "\n";
    std::cerr << "gpuadmit fleet: the policy is invalid; fix the errors above\n";
    return 2;
  }
  return live ? live_fleet(args, *loaded.policy, output)
              : offline_fleet(args, *loaded.policy, output);
}

}  // namespace gpuadmit::cli
