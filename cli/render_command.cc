// gpuadmit render: the cluster objects a policy implies (SPEC §8), as a YAML stream for
// `kubectl apply -f -`. The objects are built by render/; this file reads flags and files.

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "policies/loader.h"
#include "render/cluster_objects.h"
#include "yaml/emitter.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kUsage =
    "usage: gpuadmit render [--policy P] [--ca-bundle FILE] [--namespace NS] [--service NAME]\n"
    "                       [--failure-policy Fail|Ignore] [--templates mutate|validate]\n"
    "                       [--opt-out-label]\n";

int usage_error(const std::string& message) {
  std::cerr << "gpuadmit render: " << message << "\n" << kUsage;
  return 2;
}

}  // namespace

int render_command(const std::vector<std::string>& argv) {
  Args args;
  if (auto error = Args::parse(
          argv, {"policy", "ca-bundle", "namespace", "service", "failure-policy", "templates"},
          {"opt-out-label"}, args)) {
    return usage_error(*error);
  }
  if (args.help()) return print_usage(kUsage);
  if (!args.positional().empty()) {
    return usage_error("unexpected argument \"" + args.positional().front() + "\"");
  }
  render::WebhookTarget target;
  target.ns = args.value_or("namespace", target.ns);
  target.service = args.value_or("service", target.service);
  target.failure_policy = args.value_or("failure-policy", target.failure_policy);
  target.opt_out_label = args.has("opt-out-label");
  for (const auto& [flag, name] :
       {std::pair{"--namespace", &target.ns}, std::pair{"--service", &target.service}}) {
    if (!render::is_literal_namespace(*name)) {
      return usage_error(std::string(flag) + " must be a DNS label (lower-case letters, digits " +
                         "and '-', at most 63), not \"" + *name + "\"");
    }
  }
  if (target.failure_policy != "Fail" && target.failure_policy != "Ignore") {
    return usage_error("--failure-policy must be Fail or Ignore, not \"" + target.failure_policy +
                       "\"");
  }
  if (const auto mode = parse_template_mode(args.value_or("templates", "mutate"))) {
    target.templates = *mode;
  } else {
    return usage_error("--templates must be mutate or validate, not \"" +
                       args.value_or("templates", "") + "\"");
  }
  if (auto path = args.value("ca-bundle")) {
    std::ifstream in(*path, std::ios::binary);
    std::stringstream pem;
    pem << in.rdbuf();
    if (!in) {
      std::cerr << "gpuadmit render: " << *path << ": cannot read the CA bundle\n";
      return 2;
    }
    auto bundle = render::ca_bundle_from_pem(pem.str());
    if (!bundle) {
      std::cerr << "gpuadmit render: " << *path << ": " << bundle.error() << "\n";
      return 2;
    }
    target.ca_bundle = *std::move(bundle);
  }
  CompiledLoadResult loaded = load_compiled_policy(args.value_or("policy", ""));
  if (!loaded.policy) {
    for (const PolicyError& e : loaded.errors) std::cerr << e.to_string() << "\n";
    return 2;
  }
  std::string out;
  for (const Json& object : render::cluster_objects(*loaded.policy, target)) {
    out += "---\n";
    yaml::emit_yaml(object, out);
  }
  std::cout << out;
  return std::cout.good() ? 0 : 2;
}

}  // namespace gpuadmit::cli
