// The tenant-attack suite (docs/security.md, "The attack suite"): every way a tenant was found to
// get around the policy, as the AdmissionRequest the API server would send for it, with the
// answer the policy demands. tests/tenant_attacks/cases/NNN-slug.yaml holds
//   policy:   the policy file, from the repository's root (default tests/cases/policy.yaml)
//   request:  an admission.k8s.io/v1 AdmissionRequest: operation, namespace, userInfo (default: a
//             tenant user, `alice`, system:authenticated), object, oldObject, subResource
//   claims:   ResourceClaims / ResourceClaimTemplates the pod's claims resolve to (optional)
//   pods:     the namespace's Pods, as the webhook's Pod list reads them at a claim's CREATE
//             (ClaimResolver::pending_pods_naming; optional: none, not asked, as in lint)
//   nodes:    the cluster's Node objects, as the webhook's Node watch holds them (`serve
//             --node-watch`): GPU009 then judges spec.nodeName (optional; none: not judged)
//   expect:   per endpoint the rule ids of the answer:
//               mutate / validate: {allowed, deny: [ids], warn: [ids], patched: bool (optional),
//                                   patch_includes: [JSON Patch operations] (optional: each one
//                                   must be in the response's patch, exactly)}
//               lint: {deny: [ids], warn: [ids]} (optional; `gpuadmit lint` of the object)
// Each request goes through the admission codec the webhook serves (engine/admission.h), on
// both endpoints; `lint` runs the real binary on the object. The ids are sorted and unique.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/admission.h"
#include "engine/dra.h"
#include "engine/json_dump.h"
#include "engine/node_source.h"
#include "lint/manifest_claims.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"
#include "tests/support/process.h"
#include "tests/support/yaml_to_json.h"

namespace gpuadmit {
namespace tenant_attacks_test {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = fs::path(GPUADMIT_SOURCE_DIR);
const fs::path kCases = kRoot / "tests" / "tenant_attacks" / "cases";
// Bypasses found and not closed yet (docs/security.md, "What a tenant can still do").
const fs::path kOpen = kRoot / "tests" / "tenant_attacks" / "open";

struct Verdict {
  bool allowed = true;
  std::vector<std::string> deny, warn;
  std::optional<bool> patched;  // only where the case says
  Json patch = Json::array();   // got: the response's operations; want: those that must be there
};

struct AttackCase {
  std::string name;
  std::string policy_file;
  Json request;
  Json claims = Json::array();
  Json nodes = Json::array();
  std::optional<Json> pods;
  Json expect;
};

PolicyPtr load_policy(const std::string& file) {
  static std::map<std::string, PolicyPtr> cache;
  if (auto it = cache.find(file); it != cache.end()) return it->second;
  PolicyLoadResult loaded = load_policy_file(file);
  std::string errors;
  for (const PolicyError& e : loaded.errors) errors += e.to_string() + "\n";
  INFO(file << "\n" << errors);
  REQUIRE(loaded.ok());
  PolicyPtr compiled = CompiledPolicy::compile(std::move(*loaded.policy));
  cache.emplace(file, compiled);
  return compiled;
}

std::vector<AttackCase> load_cases(const fs::path& dir = kCases) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<AttackCase> cases;
  for (const fs::path& file : files) {
    const std::vector<Json> docs = testing::yaml_file_documents(file.string());
    INFO(file.string());
    REQUIRE(docs.size() == 1);
    const Json& doc = docs[0];
    AttackCase c;
    c.name = file.stem().string();
    c.policy_file = (kRoot / doc.value("policy", std::string("tests/cases/policy.yaml"))).string();
    REQUIRE(doc.contains("request"));
    REQUIRE(doc.contains("expect"));
    c.request = doc.at("request");
    if (doc.contains("claims")) c.claims = doc.at("claims");
    if (doc.contains("nodes")) c.nodes = doc.at("nodes");
    if (doc.contains("pods")) c.pods = doc.at("pods");
    c.expect = doc.at("expect");
    cases.push_back(std::move(c));
  }
  return cases;
}

// What the webhook's lookups read of the cluster: the case's claims, and its Pods, of which those
// not scheduled yet that name a claim are listed as the webhook's Pod list does
// (engine/dra.h pod_waits_for_claim).
class CaseCluster final : public ClaimResolver {
 public:
  explicit CaseCluster(const AttackCase& c)
      : claims_(c.request.value("namespace", std::string("default"))), pods_(c.pods) {
    for (const Json& claim : c.claims) claims_.add(claim);
  }
  ResolvedClaim resolve(ClaimKind kind, std::string_view ns, std::string_view name) const override {
    return claims_.resolve(kind, ns, name);
  }
  PendingPods pending_pods_naming(ClaimKind kind, std::string_view,
                                  std::string_view name) const override {
    if (!pods_) return {};
    PendingPods listed{PendingPodsLookup::kListed, {}, {}};
    for (const Json& pod : *pods_) {
      if (pod_waits_for_claim(pod, kind, name)) listed.names.push_back(pod["metadata"]["name"]);
    }
    return listed;
  }

 private:
  lint::ManifestClaims claims_;
  std::optional<Json> pods_;
};

const Pipeline& pipeline() {
  static const Pipeline p(default_mutators(), default_rules());
  return p;
}

std::string object_kind(const Json& request) {
  return request.at("object").value("kind", std::string());
}

// The review the API server sends: the case's request with what every review carries filled in.
Json review_of(const AttackCase& c) {
  Json request = c.request;
  // A copy: the request is an ordered_map (a vector), which members added below move.
  const Json object = request.at("object");
  if (!request.contains("uid")) request["uid"] = "attack-" + c.name;
  if (!request.contains("userInfo")) {
    request["userInfo"] = {{"username", "alice"}, {"groups", {"system:authenticated"}}};
  }
  if (!request.contains("kind")) {
    const std::string api_version = object.value("apiVersion", std::string());
    const size_t slash = api_version.find('/');
    request["kind"] = {{"group", slash == std::string::npos ? "" : api_version.substr(0, slash)},
                       {"version", api_version.substr(slash + 1)},
                       {"kind", object_kind(request)}};
  }
  if (!request.contains("name") && object.contains("metadata")) {
    request["name"] = object["metadata"].value("name", std::string());
  }
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
}

std::vector<std::string> sorted_unique(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

Verdict expected_verdict(const Json& expect) {
  Verdict v;
  v.allowed = expect.value("allowed", true);
  for (const Json& id : expect.value("deny", Json::array())) v.deny.push_back(id);
  for (const Json& id : expect.value("warn", Json::array())) v.warn.push_back(id);
  if (expect.contains("patched")) v.patched = expect.at("patched").get<bool>();
  if (expect.contains("patch_includes")) v.patch = expect.at("patch_includes");
  v.deny = sorted_unique(v.deny);
  v.warn = sorted_unique(v.warn);
  return v;
}

Verdict admission_verdict(const AttackCase& c, Endpoint endpoint, const ClaimResolver* claims) {
  const std::string body = dump_json(review_of(c));
  const StaticNodeSource nodes(std::vector<Json>(c.nodes.begin(), c.nodes.end()));
  AdmissionResult result = handle_admission_review_text(
      body, endpoint, pipeline(), *load_policy(c.policy_file), claims, TemplateMode::kMutate,
      nullptr, c.nodes.empty() ? nullptr : &nodes);
  INFO(c.name << (result.error ? ": " + result.error->message : ""));
  REQUIRE(result.outcome);
  const Json& response = result.outcome->response.at("response");
  Verdict v;
  v.allowed = response.at("allowed").get<bool>();
  v.patched = response.contains("patch");
  if (!result.outcome->evaluation.patch_text.empty()) {
    v.patch = Json::parse(result.outcome->evaluation.patch_text);
  }
  for (const Finding& f : result.outcome->evaluation.findings) {
    (f.severity == Severity::kWarn ? v.warn : v.deny).push_back(f.rule);
  }
  v.deny = sorted_unique(v.deny);
  v.warn = sorted_unique(v.warn);
  return v;
}

// `gpuadmit lint --output json` of the object (and the case's claims) in its namespace.
Verdict lint_verdict(const AttackCase& c) {
  const fs::path dir = fs::temp_directory_path() / ("gpuadmit-attack-" + c.name);
  fs::create_directories(dir);
  const fs::path manifest = dir / "manifest.json";
  {
    std::ofstream out(manifest);
    Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", c.claims}};
    list["items"].push_back(c.request.at("object"));
    out << dump_json(list);
  }
  const std::string ns = c.request.value("namespace", std::string("default"));
  const testing::ProcessResult r = testing::run_command(
      std::string(GPUADMIT_BINARY) + " lint --output json --policy '" + c.policy_file +
      "' --namespace '" + ns + "' '" + manifest.string() + "'");
  fs::remove_all(dir);
  INFO(c.name << ": lint exit " << r.exit_code << "\n" << r.err);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  const Json report = Json::parse(r.out);
  Verdict v;
  for (const Json& f : report.at("findings")) {
    (f.at("severity") == "warn" ? v.warn : v.deny).push_back(f.at("rule"));
  }
  v.allowed = r.exit_code == 0;
  v.deny = sorted_unique(v.deny);
  v.warn = sorted_unique(v.warn);
  return v;
}

// Every operation the case names is in the response's patch.
bool patch_includes(const Verdict& got, const Verdict& want) {
  return std::all_of(want.patch.begin(), want.patch.end(), [&](const Json& op) {
    return std::find(got.patch.begin(), got.patch.end(), op) != got.patch.end();
  });
}

void check(const std::string& where, const Verdict& got, const Verdict& want) {
  INFO(where);
  CHECK(got.deny == want.deny);
  CHECK(got.warn == want.warn);
  CHECK(got.allowed == want.allowed);
  if (want.patched) CHECK(got.patched == want.patched);
  INFO("patch operations " << dump_json(want.patch) << " in " << dump_json(got.patch));
  CHECK(patch_includes(got, want));
}

TEST_CASE("tenant attacks: every case gets the answer the policy demands, on both endpoints") {
  const std::vector<AttackCase> cases = load_cases();
  REQUIRE(!cases.empty());
  for (const AttackCase& c : cases) {
    INFO(c.name);
    const CaseCluster claims(c);
    REQUIRE((c.expect.contains("mutate") && c.expect.contains("validate")));
    check(c.name + " /mutate", admission_verdict(c, Endpoint::kMutate, &claims),
          expected_verdict(c.expect.at("mutate")));
    check(c.name + " /validate", admission_verdict(c, Endpoint::kValidate, &claims),
          expected_verdict(c.expect.at("validate")));
  }
}

bool same(const Verdict& got, const Verdict& want) {
  if (got.deny != want.deny || got.warn != want.warn || got.allowed != want.allowed) return false;
  return (!want.patched || got.patched == want.patched) && patch_includes(got, want);
}

// An open bypass whose request gets the answer the policy demands on both endpoints is closed:
// its case belongs in cases/ (and its line in docs/security.md goes).
TEST_CASE("tenant attacks: every open bypass is still open") {
  const std::vector<AttackCase> open = load_cases(kOpen);
  REQUIRE(!open.empty());
  for (const AttackCase& c : open) {
    INFO(c.name << " gets the answer the policy demands: move it to tests/tenant_attacks/cases/ "
                   "and take it out of docs/security.md's open list");
    const CaseCluster claims(c);
    const bool closed = same(admission_verdict(c, Endpoint::kMutate, &claims),
                             expected_verdict(c.expect.at("mutate"))) &&
                        same(admission_verdict(c, Endpoint::kValidate, &claims),
                             expected_verdict(c.expect.at("validate")));
    CHECK_FALSE(closed);
  }
}

TEST_CASE("tenant attacks: lint gives a manifest the same verdict as its CREATE") {
  for (const AttackCase& c : load_cases()) {
    if (!c.expect.contains("lint")) continue;
    INFO(c.name);
    REQUIRE(c.request.value("operation", std::string()) == "CREATE");
    Verdict want = expected_verdict(c.expect.at("lint"));
    want.allowed = want.deny.empty();
    check(c.name + " lint", lint_verdict(c), want);
  }
}

TEST_CASE("tenant attacks: every case file is numbered and says what it sends") {
  for (const auto& entry : fs::directory_iterator(kCases)) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    CHECK(entry.path().extension() == ".yaml");
    CHECK((name.size() > 4 && std::isdigit(static_cast<unsigned char>(name[0])) &&
           std::isdigit(static_cast<unsigned char>(name[1])) &&
           std::isdigit(static_cast<unsigned char>(name[2])) && name[3] == '-'));
    const std::string text = testing::read_file(entry.path().string());
    CHECK(text.rfind("# ", 0) == 0);  // starts with the comment that explains the attack
  }
}

}  // namespace
}  // namespace tenant_attacks_test
}  // namespace gpuadmit
