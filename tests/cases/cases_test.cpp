// The golden cases: tests/cases/<name>/ holds
//   input.yaml      the object as submitted (its metadata.namespace, else "default")
//   policy.yaml     the policy (optional: tests/cases/policy.yaml otherwise)
//   expected.yaml   the object after the mutating webhook (optional: unchanged)
//   findings.json   [{"rule","severity","path","message"}] (optional: none)
//   claims.yaml     ResourceClaims / ResourceClaimTemplates the pod's DRA claims resolve to
//                   (optional), as lint reads them beside the input (docs/dra.md)
//   request.yaml    the AdmissionRequest's fields around the object (optional): `userInfo`
// Each case runs through the pipeline as the mutating webhook does (a controller's copy judged,
// never patched: case 144); the JSON Patch must turn the
// input into expected.yaml with nlohmann's RFC 6902 implementation and with kubectl's (Go
// json-patch, the API server's), and running expected.yaml again must patch nothing.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "engine/controllers.h"
#include "engine/pipeline.h"
#include "lint/manifest_claims.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"
#include "tests/support/process.h"
#include "tests/support/yaml_to_json.h"

namespace gpuadmit {
namespace cases_test {
namespace {

namespace fs = std::filesystem;
const fs::path kCases = fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "cases";

struct GoldenCase {
  std::string name;
  Json input;
  Json expected;
  Json findings;
  PolicyPtr policy;
  std::string ns;
  std::shared_ptr<lint::ManifestClaims> claims;  // claims.yaml and the input's own claim objects
  std::string username;                          // request.yaml userInfo.username, "" without one
};

PolicyPtr load_case_policy(const fs::path& path) {
  static std::map<std::string, PolicyPtr> cache;
  auto it = cache.find(path.string());
  if (it != cache.end()) return it->second;
  PolicyLoadResult loaded = load_policy_file(path.string());
  std::string errors;
  for (const PolicyError& e : loaded.errors) errors += e.to_string() + "\n";
  INFO(errors);
  REQUIRE(loaded.ok());
  PolicyPtr compiled = CompiledPolicy::compile(std::move(*loaded.policy));
  cache.emplace(path.string(), compiled);
  return compiled;
}

std::vector<GoldenCase> load_cases() {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(kCases)) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  std::vector<GoldenCase> cases;
  for (const fs::path& dir : dirs) {
    GoldenCase c;
    c.name = dir.filename().string();
    auto docs = testing::yaml_file_documents((dir / "input.yaml").string());
    INFO(c.name);
    REQUIRE(docs.size() == 1);
    c.input = docs[0];
    c.expected = c.input;
    if (fs::exists(dir / "expected.yaml")) {
      auto expected = testing::yaml_file_documents((dir / "expected.yaml").string());
      REQUIRE(expected.size() == 1);
      c.expected = expected[0];
    }
    c.findings = Json::array();
    if (fs::exists(dir / "findings.json")) {
      c.findings = Json::parse(testing::read_file((dir / "findings.json").string()));
    }
    c.policy = load_case_policy(fs::exists(dir / "policy.yaml") ? dir / "policy.yaml"
                                                                : kCases / "policy.yaml");
    c.ns = "default";
    if (c.input.contains("metadata") && c.input["metadata"].contains("namespace")) {
      c.ns = c.input["metadata"]["namespace"].get<std::string>();
    }
    c.claims = std::make_shared<lint::ManifestClaims>("default");
    c.claims->add(c.input);
    if (fs::exists(dir / "claims.yaml"))
      REQUIRE(c.claims->add_file((dir / "claims.yaml").string()));
    if (fs::exists(dir / "request.yaml")) {
      auto request = testing::yaml_file_documents((dir / "request.yaml").string());
      REQUIRE(request.size() == 1);
      c.username = request[0].at("userInfo").at("username").get<std::string>();
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

const Pipeline& pipeline() {
  static const Pipeline p(default_mutators(), default_rules());
  return p;
}

// The options the webhook's codec gives a CREATE (engine/admission.cc): on /mutate an object
// with a controller is judged, never patched (engine/controllers.h); /validate judges every
// template as mutated, a Pod as it is.
EvaluateOptions options(const GoldenCase& c, bool mutate) {
  EvaluateOptions o;
  o.ns = c.ns;
  o.operation = Operation::kCreate;
  const bool pod = c.input.is_object() && c.input.value("kind", "") == "Pod";
  o.mutate = mutate || !pod;
  o.judge_only = mutate ? template_treatment(c.input, Operation::kCreate, TemplateMode::kMutate) ==
                              TemplateTreatment::kJudge
                        : !pod;
  o.claims = c.claims.get();
  o.username = c.username;
  return o;
}

Json findings_json(const Evaluation& e) {
  Json out = Json::array();
  for (const Finding& f : e.findings) {
    out.push_back({{"rule", f.rule},
                   {"severity", std::string(severity_name(f.severity))},
                   {"path", f.path},
                   {"message", f.message}});
  }
  return out;
}

// Key order is not part of an object's meaning: compare as sorted-key JSON.
nlohmann::json unordered(const Json& j) { return nlohmann::json::parse(j.dump()); }

TEST_CASE("cases: there are golden cases") { CHECK(load_cases().size() >= 1); }

TEST_CASE("cases: every golden case mutates, reports and patches exactly as expected") {
  for (const GoldenCase& c : load_cases()) {
    {
      INFO(c.name);
      const Evaluation e = pipeline().evaluate(c.input, options(c, true), *c.policy);
      const Json got_findings = findings_json(e);
      CHECK(got_findings.dump(2) == c.findings.dump(2));
      const Json result = e.allowed ? e.mutated : c.input;
      CHECK(unordered(result).dump(2) == unordered(c.expected).dump(2));
      // The patch reproduces the expected object (nlohmann's RFC 6902 implementation).
      CHECK(unordered(c.input.patch(e.patch)) == unordered(c.expected));
      // Idempotence: the mutated object goes through unchanged, with the same verdict.
      const Evaluation again = pipeline().evaluate(c.expected, options(c, true), *c.policy);
      CHECK(again.patch.empty());
      if (e.allowed) {
        CHECK(findings_json(again) == got_findings);
        // The validating webhook sees the mutated object and reaches the same findings.
        const Evaluation validated = pipeline().evaluate(c.expected, options(c, false), *c.policy);
        CHECK(findings_json(validated) == got_findings);
        CHECK(validated.patch.empty());
      }
    }
  }
}

TEST_CASE(
    "cases: kubectl (Go json-patch, as the API server) applies every patch to the expected "
    "object") {
  if (std::system("command -v kubectl >/dev/null 2>&1") != 0) {
    WARN("kubectl not found: skipping the Go json-patch cross-check");
    return;
  }
  // A directory of its own: a fixed name is shared with every other checkout running this test
  // at the same time, whose remove_all pulls the files away mid-run.
  std::string dir_template = (fs::temp_directory_path() / "gpuadmit-kubectl-cases-XXXXXX").string();
  REQUIRE(mkdtemp(dir_template.data()) != nullptr);
  const fs::path tmp = dir_template;
  int patched = 0;
  for (const GoldenCase& c : load_cases()) {
    const Evaluation e = pipeline().evaluate(c.input, options(c, true), *c.policy);
    if (e.patch.empty()) continue;
    INFO(c.name);
    const fs::path input = tmp / (c.name + ".json");
    const fs::path patch = tmp / (c.name + ".patch.json");
    std::ofstream(input) << c.input.dump();
    std::ofstream(patch) << e.patch.dump();
    auto r = testing::run_command("kubectl patch --local --type=json -o json -f " + input.string() +
                                  " --patch-file " + patch.string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out) == unordered(c.expected));
    ++patched;
  }
  CHECK(patched > 0);
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace cases_test
}  // namespace gpuadmit
