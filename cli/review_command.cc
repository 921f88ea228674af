// gpuadmit review: one AdmissionReview on stdin, the response review on stdout, no network.

#include <cstdio>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "engine/admission.h"
#include "lint/explain.h"
#include "lint/manifest_claims.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"
#include "yaml/reader.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kReviewUsage =
    "usage: gpuadmit review [--policy P] [--endpoint mutate|validate] [--claims FILE]... "
    "[--nodes FILE]... [--templates mutate|validate] [--explain] < review.json\n";

// The Node objects of a manifest file (`kubectl get nodes -o yaml`: a List, or documents), added
// to `out`; false when the file cannot be opened or a document cannot be parsed.
bool read_nodes(const std::string& path, std::vector<Json>& out) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  const bool json_file = path.size() >= 5 && path.substr(path.size() - 5) == ".json";
  yaml::DocumentStream stream(file);
  yaml::SourceDocument source;
  bool ok = true;
  while (ok && stream.next(source)) {
    yaml::ParsedDocument doc = yaml::parse_document(source, json_file);
    if (doc.error) ok = false;
    if (doc.empty || doc.error) continue;
    const Json* items = find_member(doc.value, "items");
    if (items != nullptr && items->is_array()) {
      for (const Json& item : *items) {
        if (string_member(item, "kind") == "Node") out.push_back(item);
      }
    } else if (string_member(doc.value, "kind") == "Node") {
      out.push_back(std::move(doc.value));
    }
  }
  std::fclose(file);
  return ok;
}

// --explain (docs/explain.md): on standard error, so the AdmissionReview on standard output is
// unchanged; one line per mutation applied and per finding, with the policy field behind it.
void explain(const AdmissionOutcome& outcome, const std::string& policy_file) {
  const Json document = lint::policy_document(policy_file).value_or(Json::object());
  const Evaluation& e = outcome.evaluation;
  if (e.allowed && e.changed()) {
    for (const MutationRecord& m : e.mutation_records) {
      std::cerr << "mutation " << m.mutation << ": " << lint::explain_text(document, m.policy_path)
                << "\n";
    }
  }
  for (const Finding& f : e.findings) {
    std::cerr << f.rule << " " << (f.audit ? "audit" : severity_name(f.severity)) << ": "
              << lint::explain_text(document, f.policy_path) << "\n";
  }
}

}  // namespace

int review_command(const std::vector<std::string>& argv) {
  Args args;
  if (auto error = Args::parse(argv, {"policy", "endpoint", "claims", "nodes", "templates"},
                               {"explain"}, args)) {
    std::cerr << "gpuadmit review: " << *error << "\n" << kReviewUsage;
    return 2;
  }
  if (args.help()) return print_usage(kReviewUsage);
  if (!args.positional().empty()) {
    std::cerr << "gpuadmit review: unexpected argument \"" << args.positional().front()
              << "\"; the review is read from standard input\n";
    return 2;
  }
  const std::string endpoint_name = args.value_or("endpoint", "mutate");
  if (endpoint_name != "mutate" && endpoint_name != "validate") {
    std::cerr << "gpuadmit review: --endpoint must be mutate or validate, not \"" << endpoint_name
              << "\"\n";
    return 2;
  }
  const std::optional<TemplateMode> templates =
      parse_template_mode(args.value_or("templates", "mutate"));
  if (!templates) {
    std::cerr << "gpuadmit review: --templates must be mutate or validate, not \""
              << args.value_or("templates", "") << "\"\n";
    return 2;
  }
  CompiledLoadResult loaded = load_compiled_policy(args.value_or("policy", ""));
  if (!loaded.policy) {
    for (const PolicyError& e : loaded.errors) std::cerr << e.to_string() << "\n";
    return 2;
  }
  // --claims: manifests whose ResourceClaims / ResourceClaimTemplates resolve the pod's DRA
  // claim references, as lint resolves them (docs/dra.md); without it none resolve.
  std::optional<lint::ManifestClaims> claims;
  for (const std::string& file : args.values("claims")) {
    if (!claims) claims.emplace("default");
    if (!claims->add_file(file)) {
      std::cerr << "gpuadmit review: --claims " << file << ": cannot open the file\n";
      return 2;
    }
  }
  // --nodes: the cluster's Nodes, as the webhook's node watch holds them (`serve --node-watch`):
  // GPU009 then judges a pod's spec.nodeName (docs/rules.md); without it nodeName is not judged.
  std::optional<StaticNodeSource> nodes;
  if (args.has("nodes")) {
    std::vector<Json> objects;
    for (const std::string& file : args.values("nodes")) {
      if (!read_nodes(file, objects)) {
        std::cerr << "gpuadmit review: --nodes " << file
                  << ": cannot read the file as YAML or JSON manifests\n";
        return 2;
      }
    }
    nodes.emplace(objects);
  }
  const std::string body((std::istreambuf_iterator<char>(std::cin)),
                         std::istreambuf_iterator<char>());
  const Pipeline pipeline(default_mutators(), default_rules());
  AdmissionResult result = handle_admission_review_text(
      body, endpoint_name == "mutate" ? Endpoint::kMutate : Endpoint::kValidate, pipeline,
      *loaded.policy, claims ? &*claims : nullptr, *templates, nullptr, nodes ? &*nodes : nullptr);
  if (result.error) {
    std::cerr << "gpuadmit review: <stdin>: " << result.error->message << "\n";
    return 2;
  }
  std::cout << result.outcome->response.dump(2) << "\n";
  if (args.has("explain")) explain(*result.outcome, args.value_or("policy", ""));
  return 0;
}

}  // namespace gpuadmit::cli
