// gpuadmit render: the cluster objects a policy implies (SPEC §8), as a YAML stream for
// `kubectl apply -f -`; with --native, the policy compiled to ValidatingAdmissionPolicies and
// MutatingAdmissionPolicies instead of the webhook configurations (docs/native.md), or with
// --native-static written as manifest-based admission files. The objects are built by render/;
// this file reads flags and writes files.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "policies/loader.h"
#include "render/cluster_objects.h"
#include "render/native_policies.h"
#include "render/native_static.h"
#include "render/native_table.h"
#include "yaml/emitter.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kRenderUsage =
    "usage: gpuadmit render [--policy P] [--ca-bundle FILE] [--namespace NS] [--service NAME]\n"
    "                       [--failure-policy Fail|Ignore] [--templates mutate|validate]\n"
    "                       [--opt-out-label]\n"
    "       gpuadmit render --native full|fallback [--native-api v1|v1beta1] [--policy P]\n"
    "                       [--namespace NS] [--opt-out-label]\n"
    "                       [--native-static DIR [--native-static-root PATH]]\n"
    "       gpuadmit render --native-table [--policy P]\n";

// --native and --native-api into options; an error message for a bad value or combination.
std::optional<std::string> native_options(const Args& args, const std::string& ns,
                                          std::optional<render::native::NativeOptions>& out) {
  const std::optional<std::string> mode = args.value("native");
  const std::optional<std::string> api = args.value("native-api");
  if (args.has("native-table") && (mode || api)) {
    return "--native-table prints the table alone: leave out --native and --native-api";
  }
  if (!mode) {
    if (api) return "--native-api needs --native full or --native fallback";
    return std::nullopt;
  }
  const std::optional<render::native::NativeMode> named = render::native::native_mode_named(*mode);
  if (!named) return "--native must be full or fallback, not \"" + *mode + "\"";
  for (const char* flag : {"ca-bundle", "service", "failure-policy"}) {
    if (args.has(flag)) {
      return std::string("--") + flag + " configures the webhook; --native prints no webhook";
    }
  }
  render::native::NativeOptions options;
  options.mode = *named;
  options.mutating_api = api.value_or("v1");
  options.opt_out_label = args.has("opt-out-label");
  if (!render::native::is_mutating_api(options.mutating_api)) {
    return "--native-api must be v1 (Kubernetes 1.36) or v1beta1 (1.34-1.35), not \"" +
           options.mutating_api + "\"";
  }
  options.release_namespace = ns;
  out = std::move(options);
  return std::nullopt;
}

// --namespace, --service, --failure-policy, --templates and --opt-out-label into `target`; an
// error message for a bad value.
std::optional<std::string> webhook_target(const Args& args, render::WebhookTarget& target) {
  target.ns = args.value_or("namespace", target.ns);
  target.service = args.value_or("service", target.service);
  target.failure_policy = args.value_or("failure-policy", target.failure_policy);
  target.opt_out_label = args.has("opt-out-label");
  for (const auto& [flag, name] :
       {std::pair{"--namespace", &target.ns}, std::pair{"--service", &target.service}}) {
    if (!render::is_literal_namespace(*name)) {
      return std::string(flag) + " must be a DNS label (lower-case letters, digits " +
             "and '-', at most 63), not \"" + *name + "\"";
    }
  }
  if (target.failure_policy != "Fail" && target.failure_policy != "Ignore") {
    return "--failure-policy must be Fail or Ignore, not \"" + target.failure_policy + "\"";
  }
  if (const auto mode = parse_template_mode(args.value_or("templates", "mutate"))) {
    target.templates = *mode;
  } else {
    return "--templates must be mutate or validate, not \"" + args.value_or("templates", "") + "\"";
  }
  return std::nullopt;
}

// --ca-bundle's PEM file into `target`; false, told on standard error, when it cannot be read or
// holds no certificate.
bool read_ca_bundle(const std::string& path, render::WebhookTarget& target) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream pem;
  pem << in.rdbuf();
  if (!in) {
    std::cerr << "gpuadmit render: " << path << ": cannot read the CA bundle\n";
    return false;
  }
  auto bundle = render::ca_bundle_from_pem(pem.str());
  if (!bundle) {
    std::cerr << "gpuadmit render: " << path << ": " << bundle.error() << "\n";
    return false;
  }
  target.ca_bundle = *std::move(bundle);
  return true;
}

// `documents` appended to `out` as a YAML stream.
void append_documents(const std::vector<Json>& documents, std::string& out) {
  for (const Json& d : documents) {
    out += "---\n";
    yaml::emit_yaml(d, out);
  }
}

// `documents` as a YAML stream into `path`; false, told on standard error, when it cannot be
// written.
bool write_yaml(const std::filesystem::path& path, const std::vector<Json>& documents) {
  std::string text;
  append_documents(documents, text);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (ec || !out) {
    std::cerr << "gpuadmit render: " << path.string() << ": cannot write"
              << (ec ? ": " + ec.message() : std::string()) << "\n";
    return false;
  }
  return true;
}

// --native-static DIR: the admission policies as manifest-based admission (KEP-5793) under DIR,
// with the AdmissionConfiguration naming ROOT (--native-static-root; DIR made absolute by
// default: where the API server reads them). Returns the exit code.
int write_static(const CompiledPolicy& policy, const render::native::NativeOptions& native,
                 const std::string& dir, const std::string& root) {
  auto manifests =
      render::native::static_manifests(render::native::native_policies(policy, native), root);
  if (!manifests) {
    std::cerr << "gpuadmit render: " << manifests.error() << "\n";
    return 2;
  }
  const std::filesystem::path base(dir);
  // A fallback render after a full one: no mutating policies, and none left behind.
  if (manifests->mutating.empty()) {
    std::error_code ignored;
    std::filesystem::remove(base / render::native::kStaticMutatingDir / "gpuadmit.yaml", ignored);
  }
  const bool written =
      write_yaml(base / render::native::kStaticValidatingDir / "gpuadmit.yaml",
                 manifests->validating) &&
      (manifests->mutating.empty() ||
       write_yaml(base / render::native::kStaticMutatingDir / "gpuadmit.yaml",
                  manifests->mutating)) &&
      write_yaml(base / "admission-configuration.yaml", {manifests->admission_configuration});
  return written ? 0 : 2;
}

// What render prints: the native table (JSON), the native policies with the objects they need,
// or the webhook's cluster objects (YAML documents).
std::string rendered(const CompiledPolicy& policy, bool native_table,
                     const std::optional<render::native::NativeOptions>& native,
                     const render::WebhookTarget& target, bool policies_too) {
  std::string out;
  if (native_table) {
    out = render::native::table_json(policy).dump(2) + "\n";
  } else if (native) {
    // Without the webhook, the policies need the PriorityClasses and quotas too; the webhook
    // configurations are not printed (an install of both applies `render` as well).
    out = render::native::table_comment();
    std::vector<Json> objects = render::priority_classes(policy);
    for (Json& quota : render::resource_quotas(policy)) objects.push_back(std::move(quota));
    if (policies_too) {
      for (Json& p : render::native::native_policies(policy, *native)) {
        objects.push_back(std::move(p));
      }
    }
    append_documents(objects, out);
  } else {
    append_documents(render::cluster_objects(policy, target), out);
  }
  return out;
}

}  // namespace

int render_command(const std::vector<std::string>& argv) {
  Args args;
  if (auto error =
          Args::parse(argv,
                      {"policy", "ca-bundle", "namespace", "service", "failure-policy", "templates",
                       "native", "native-api", "native-static", "native-static-root"},
                      {"opt-out-label", "native-table"}, args)) {
    return usage_error("render", kRenderUsage, *error);
  }
  if (args.help()) return print_usage(kRenderUsage);
  if (!args.positional().empty()) {
    return usage_error("render", kRenderUsage,
                       "unexpected argument \"" + args.positional().front() + "\"");
  }
  render::WebhookTarget target;
  if (auto error = webhook_target(args, target)) return usage_error("render", kRenderUsage, *error);
  if (auto path = args.value("ca-bundle")) {
    if (!read_ca_bundle(*path, target)) return 2;
  }
  std::optional<render::native::NativeOptions> native;
  if (auto error = native_options(args, target.ns, native))
    return usage_error("render", kRenderUsage, *error);
  const std::optional<std::string> static_dir = args.value("native-static");
  if ((static_dir || args.has("native-static-root")) && !native) {
    return usage_error("render", kRenderUsage,
                       "--native-static writes the native policies: it needs --native full or "
                       "--native fallback");
  }
  if (!static_dir && args.has("native-static-root")) {
    return usage_error("render", kRenderUsage, "--native-static-root needs --native-static DIR");
  }
  CompiledLoadResult loaded = load_compiled_policy(args.value_or("policy", ""));
  if (!loaded.policy) {
    for (const PolicyError& e : loaded.errors) std::cerr << e.to_string() << "\n";
    return 2;
  }
  // What no ResourceQuota can hold (a tenant's namespace patterns): said on standard error, so
  // that `render | kubectl apply -f -` still applies exactly the objects.
  if (!args.has("native-table")) {
    for (const std::string& note : render::resource_quota_notes(*loaded.policy)) {
      std::cerr << "gpuadmit render: warning: " << note << "\n";
    }
  }
  if (static_dir) {
    const std::string root = args.value_or(
        "native-static-root", std::filesystem::absolute(*static_dir).lexically_normal().string());
    if (int code = write_static(*loaded.policy, *native, *static_dir, root)) return code;
  }
  // With --native-static, standard output keeps what is not an admission policy (the
  // PriorityClasses and quotas the policies need, for kubectl apply).
  std::cout << rendered(*loaded.policy, args.has("native-table"), native, target, !static_dir);
  return std::cout.good() ? 0 : 2;
}

}  // namespace gpuadmit::cli
