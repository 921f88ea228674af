// json_diff (engine/json_diff.h) against nlohmann's Json::diff and Json::patch, and the pipeline's
// fast paths against its slow ones: the same evaluation with and without the JSON Patch and with
// and without copying an object no mutator may change, the shared GPU resources against reading
// each container, over every golden case, every lint case and the shared corpus, under every
// test policy.

#include <catch2/catch.hpp>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "engine/dra.h"
#include "engine/json_diff.h"
#include "engine/pipeline.h"
#include "engine/resources.h"
#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "rules/all_rules.h"
#include "rules/rule_support.h"
#include "tests/support/sanitizers.h"
#include "tests/support/yaml_to_json.h"

namespace gpuadmit {
namespace json_diff_test {
namespace {

namespace fs = std::filesystem;

// What Json::patch makes of Json::diff, the reference json_diff must agree with.
void check_against_nlohmann(const Json& source, const Json& target) {
  INFO("source: " << source.dump());
  INFO("target: " << target.dump());
  const JsonDiff d = json_diff(source, target, true);
  const Json expected = Json::diff(source, target);
  CHECK(d.patch.dump() == expected.dump());
  CHECK(d.equal == (source == target));
  bool reproduces = false;
  try {
    reproduces = source.patch(expected) == target;
  } catch (const std::exception&) {
    reproduces = false;
  }
  CHECK(d.reproduces == reproduces);
  const JsonDiff quick = json_diff(source, target, false);
  CHECK(quick.patch.empty());
  CHECK(quick.equal == d.equal);
  CHECK(quick.reproduces == d.reproduces);
  // The text form is the JSON form's text, byte for byte (what the webhook sends).
  const JsonDiff text = json_diff(source, target, PatchForm::kText);
  CHECK(text.patch.empty());
  CHECK(text.patch_text == expected.dump());
  CHECK(text.equal == d.equal);
  CHECK(text.reproduces == d.reproduces);
}

TEST_CASE("json_diff: hand-picked pairs agree with Json::diff and Json::patch") {
  const std::vector<std::pair<const char*, const char*>> pairs = {
      {R"({})", R"({})"},
      {R"({"a":1})", R"({"a":1.0})"},
      {R"({"a":1})", R"({"a":"1"})"},
      {R"({"a":1,"b":2})", R"({"b":2,"a":1})"},
      {R"({"a":1,"b":2})", R"({"a":1})"},
      {R"({"a":1})", R"({"a":1,"b":[1,2]})"},
      {R"({"a":1,"c":3})", R"({"b":2,"a":1,"c":3})"},
      {R"({"a":{"x/y":1,"t~":2}})", R"({"a":{"x/y":2,"new~/":3}})"},
      // Paths that need JSON escapes in the patch text: quotes, backslashes, controls, UTF-8.
      {R"({"q\"k":{"b\\s":1,"t\tab":[0]},"é/~":1})",
       R"({"q\"k":{"b\\s":2,"t\tab":[0,1]},"é/~":2,"\u0001":3})"},
      {R"({"l":[0,1,2,3,4,5,6,7,8,9,10,11]})", R"({"l":[0,1,2,3,4,5,6,7,8,9,10,12,13]})"},
      {R"([1,2,3,4])", R"([1,5])"},
      {R"([1])", R"([1,{"a":2},3])"},
      {R"([{"a":1,"b":2}])", R"([{"b":2,"a":1}])"},
      {R"({"a":null})", R"({"a":{}})"},
      {R"({"a":[]})", R"({"a":{}})"},
      {R"({"a":true,"":{"":1}})", R"({"a":false,"":{"":2}})"},
      {R"("x")", R"("y")"},
      {R"({"spec":{"containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":1}}}]}})",
       R"({"spec":{"containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":1},"requests":{"nvidia.com/gpu":1}}}],"tolerations":[]}})"},
  };
  for (const auto& [source, target] : pairs) {
    check_against_nlohmann(Json::parse(source), Json::parse(target));
    check_against_nlohmann(Json::parse(target), Json::parse(source));
  }
}

// Random edits of real manifests: change, add, remove and move keys, grow and shrink lists.
Json perturb(Json j, std::mt19937& rng, int depth = 0) {
  if (j.is_object()) {
    Json out = Json::object();
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    if (rng() % 8 == 0 && keys.size() > 1) std::swap(keys[0], keys[rng() % keys.size()]);
    for (const std::string& k : keys) {
      if (rng() % 10 == 0) continue;  // removed
      out[k] = rng() % 3 == 0 ? perturb(j[k], rng, depth + 1) : j[k];
    }
    if (rng() % 6 == 0) out["added-" + std::to_string(rng() % 3)] = static_cast<int>(rng() % 5);
    return out;
  }
  if (j.is_array()) {
    for (Json& item : j) {
      if (rng() % 3 == 0) item = perturb(item, rng, depth + 1);
    }
    if (rng() % 5 == 0 && !j.empty()) j.erase(j.begin() + static_cast<long>(rng() % j.size()));
    if (rng() % 5 == 0) j.push_back("appended");
    return j;
  }
  switch (rng() % 6) {
    case 0:
      return static_cast<int>(rng() % 3);
    case 1:
      return j.is_number() ? Json(j.get<double>()) : j;
    case 2:
      return nullptr;
    default:
      return j;
  }
}

std::vector<fs::path> files_under(const fs::path& dir, const std::vector<std::string>& extensions) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (std::find(extensions.begin(), extensions.end(), ext) != extensions.end()) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every object document of the golden cases, the lint cases and the shared corpus (List items
// and AdmissionReview objects included).
// A document, then its List items and its AdmissionReview's object, when it has them.
void add_objects(const Json& doc, std::vector<Json>& docs) {
  if (!doc.is_object()) return;
  docs.push_back(doc);
  if (const Json* items = find_member(doc, "items"); items != nullptr && items->is_array()) {
    for (const Json& item : *items) {
      if (item.is_object()) docs.push_back(item);
    }
  }
  if (const Json* request = find_member(doc, "request")) {
    if (const Json* object = find_member(*request, "object"); object && object->is_object()) {
      docs.push_back(*object);
    }
  }
}

std::vector<Json> all_documents() {
  std::vector<Json> docs;
  std::vector<fs::path> files =
      files_under(fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "cases", {".yaml"});
  for (const fs::path& f : files_under(fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "lint" / "cases",
                                       {".yaml", ".yml", ".json"})) {
    files.push_back(f);
  }
  for (const fs::path& f :
       files_under(fs::path(GPUADMIT_SHARED_DIR) / "corpus", {".yaml", ".yml", ".json"})) {
    files.push_back(f);
  }
  for (const fs::path& f : files) {
    if (f.filename().string().rfind("policy", 0) == 0) continue;
    try {
      for (const Json& doc : testing::yaml_file_documents(f.string())) add_objects(doc, docs);
    } catch (const std::exception&) {
      // A deliberately unreadable lint case: nothing to evaluate.
    }
  }
  return docs;
}

std::vector<PolicyPtr> all_policies() {
  std::vector<PolicyPtr> policies;
  for (const fs::path& f : files_under(fs::path(GPUADMIT_SOURCE_DIR) / "tests", {".yaml"})) {
    if (f.filename() != "policy.yaml") continue;
    PolicyLoadResult loaded = load_policy_file(f.string());
    if (loaded.ok()) policies.push_back(CompiledPolicy::compile(std::move(*loaded.policy)));
  }
  return policies;
}

// Under AddressSanitizer (tests/support/sanitizers.h) the sweeps of every document under every
// policy below were most of CI's sanitizer test time (build-asan/ is where CI runs this file):
// there a sweep takes each document under every sixth policy, rotating, so every document and
// every policy still take part. A plain build sweeps every pair.
constexpr size_t kSweepStride = testing::kUnderAddressSanitizer ? 6 : 1;

// The documents a sweep evaluates under `policy` (an element of `policies`).
std::vector<std::reference_wrapper<const Json>> swept(const std::vector<Json>& docs,
                                                      const std::vector<PolicyPtr>& policies,
                                                      const PolicyPtr& policy) {
  const size_t p = static_cast<size_t>(&policy - policies.data());
  std::vector<std::reference_wrapper<const Json>> out;
  for (size_t d = 0; d < docs.size(); ++d) {
    if ((p + d) % kSweepStride == 0) out.push_back(docs[d]);
  }
  return out;
}

Json evaluation_json(const Evaluation& e) {
  Json findings = Json::array();
  for (const Finding& f : e.findings) {
    findings.push_back({f.rule, std::string(severity_name(f.severity)), f.path, f.message});
  }
  return {{"allowed", e.allowed},     {"is_workload", e.is_workload}, {"exempt", e.exempt},
          {"changed", e.changed()},   {"mutated", e.mutated},         {"findings", findings},
          {"mutations", e.mutations}, {"classes", e.classes}};
}

TEST_CASE("json_diff: random edits of real manifests agree with Json::diff and Json::patch") {
  std::mt19937 rng(20261123);
  const std::vector<Json> docs = all_documents();
  REQUIRE(docs.size() > 100);
  for (const Json& doc : docs) {
    for (int round = 0; round < 4; ++round) check_against_nlohmann(doc, perturb(doc, rng));
  }
}

TEST_CASE("pipeline: an evaluation without the JSON Patch equals the one with it") {
  const Pipeline pipeline(default_mutators(), default_rules());
  const std::vector<Json> docs = all_documents();
  const std::vector<PolicyPtr> policies = all_policies();
  REQUIRE(docs.size() > 100);
  REQUIRE(policies.size() > 10);
  int changed = 0;
  for (const PolicyPtr& policy : policies) {
    for (const Json& doc : swept(docs, policies, policy)) {
      std::string ns = "default";
      if (const Json* metadata = find_member(doc, "metadata")) {
        if (const std::string_view n = string_member(*metadata, "namespace"); !n.empty()) ns = n;
      }
      const Evaluation with = pipeline.evaluate(doc, {.ns = ns, .mutate = true}, *policy);
      const Evaluation without =
          pipeline.evaluate(doc, {.ns = ns, .mutate = true, .patch = false}, *policy);
      const Evaluation as_text =
          pipeline.evaluate(doc, {.ns = ns, .mutate = true, .patch_as_text = true}, *policy);
      INFO(doc.dump());
      CHECK(evaluation_json(without).dump() == evaluation_json(with).dump());
      CHECK(evaluation_json(as_text).dump() == evaluation_json(with).dump());
      CHECK(as_text.patch.empty());
      CHECK(as_text.patch_text == (with.changed() ? with.patch.dump() : ""));
      CHECK(without.patch.empty());
      // The patch is nlohmann's diff of the two, and applying it gives the mutated object.
      if (with.changed()) {
        ++changed;
        CHECK(with.patch.dump() == Json::diff(doc, with.mutated).dump());
        CHECK(doc.patch(with.patch) == with.mutated);
      } else {
        CHECK(with.patch.empty());
      }
    }
  }
  CHECK(changed > 100);
}

std::string namespace_of(const Json& doc) {
  if (const Json* metadata = find_member(doc, "metadata")) {
    if (const std::string_view n = string_member(*metadata, "namespace"); !n.empty()) {
      return std::string(n);
    }
  }
  return "default";
}

TEST_CASE("pipeline: an object no mutator may change is evaluated without a copy, alike") {
  const Pipeline pipeline(default_mutators(), default_rules());
  const std::vector<Json> docs = all_documents();
  const std::vector<PolicyPtr> policies = all_policies();
  REQUIRE(docs.size() > 100);
  int uncopied = 0;
  for (const PolicyPtr& policy : policies) {
    for (const Json& doc : swept(docs, policies, policy)) {
      const std::string ns = namespace_of(doc);
      for (const bool mutate : {true, false}) {
        const Evaluation copy = pipeline.evaluate(doc, {.ns = ns, .mutate = mutate}, *policy);
        Evaluation lazy = pipeline.evaluate(
            doc, {.ns = ns, .mutate = mutate, .patch = false, .copy_unchanged = false}, *policy);
        INFO(doc.dump());
        // Null means unchanged: the object itself.
        if (lazy.mutated.is_null()) {
          ++uncopied;
          CHECK(!copy.changed());
          lazy.mutated = doc;
        }
        CHECK(evaluation_json(lazy).dump() == evaluation_json(copy).dump());
      }
    }
  }
  CHECK(uncopied > 100);
}

// Resolves DRA claim references to the ResourceClaims / ResourceClaimTemplates among `docs`
// (what lint does across its input), so that pods using claims are evaluated as GPU pods too.
class DocumentClaims final : public ClaimResolver {
 public:
  explicit DocumentClaims(const std::vector<Json>& docs) {
    for (const Json& doc : docs) {
      const std::string_view kind = string_member(doc, "kind");
      if (!is_claim_object(string_member(doc, "apiVersion"), kind)) continue;
      const Json* spec = claim_spec_of(doc, kind, nullptr);
      if (spec == nullptr) continue;
      const std::string ns = namespace_of(doc);
      by_key_.emplace(std::string(kind) + "/" + ns + "/" + object_name(doc), *spec);
    }
  }
  ResolvedClaim resolve(ClaimKind kind, std::string_view ns, std::string_view name) const override {
    const std::string key =
        std::string(kind == ClaimKind::kTemplate ? "ResourceClaimTemplate" : "ResourceClaim") +
        "/" + std::string(ns) + "/" + std::string(name);
    ResolvedClaim r;
    auto it = by_key_.find(key);
    r.status = it == by_key_.end() ? ClaimLookup::kNotFound : ClaimLookup::kFound;
    if (it != by_key_.end()) r.spec = it->second;
    return r;
  }
  size_t size() const { return by_key_.size(); }

 private:
  std::map<std::string, Json> by_key_;
};

// The webhook's path (evaluate_in_place: the patch is a diff against a skeleton of the members
// mutators may write, engine/pod_writer.h) against lint --fix's (evaluate: a diff of two whole
// documents), for one document under one policy, with and without mutation, patch as JSON and as
// text. Returns the number of those evaluations that changed the document.
int check_in_place_equals_copy(const Pipeline& pipeline, const Json& doc,
                               const ClaimResolver& claims, const CompiledPolicy& policy) {
  int changed = 0;
  const std::string ns = namespace_of(doc);
  for (const bool as_text : {false, true}) {
    for (const bool mutate : {true, false}) {
      const EvaluateOptions options{
          .ns = ns, .mutate = mutate, .patch_as_text = as_text, .claims = &claims};
      const Evaluation copy = pipeline.evaluate(doc, options, policy);
      Json object = doc;
      Evaluation in_place = pipeline.evaluate_in_place(object, options, policy);
      INFO(doc.dump());
      CHECK(in_place.mutated.is_null());
      // The object is the mutated one (a copy's evaluation keeps the mutated copy even when
      // the object is denied).
      CHECK(object == copy.mutated);
      in_place.mutated = std::move(object);
      CHECK(evaluation_json(in_place).dump() == evaluation_json(copy).dump());
      CHECK(in_place.patch.dump() == copy.patch.dump());
      CHECK(in_place.patch_text == copy.patch_text);
      if (copy.changed()) ++changed;
    }
  }
  return changed;
}

// evaluate_in_place diffs against a skeleton of what mutators may write (engine/pod_writer.h):
// any mutator writing elsewhere would lose that edit from the patch, and this test would see it.
TEST_CASE("pipeline: evaluating in place gives the evaluation and patch of evaluating a copy") {
  const Pipeline pipeline(default_mutators(), default_rules());
  const std::vector<Json> docs = all_documents();
  const std::vector<PolicyPtr> policies = all_policies();
  REQUIRE(docs.size() > 100);
  // The DRA documents (tests/cases/09x-dra-*, the corpus's DRA driver and Kueue samples) with
  // their claims resolved: class mutations of claim pods stay within the skeleton's members.
  const DocumentClaims claims(docs);
  REQUIRE(claims.size() >= 10);
  int changed = 0;
  for (const PolicyPtr& policy : policies) {
    for (const Json& doc : swept(docs, policies, policy))
      changed += check_in_place_equals_copy(pipeline, doc, claims, *policy);
  }
  CHECK(changed > 200);
}

// The same check, counted: every golden case (tests/cases/<case>/input.yaml under the case's own
// policy, its claims resolved from its own documents) and every pod-bearing document of the shared
// corpus (under the corpus's lint policy, as the lint parity test reads it) is evaluated both ways.
TEST_CASE("pipeline: in place equals a copy on every golden case and pod-bearing corpus document") {
  const Pipeline pipeline(default_mutators(), default_rules());
  const fs::path cases = fs::path(GPUADMIT_SOURCE_DIR) / "tests" / "cases";
  size_t golden_cases = 0, golden_pod_cases = 0;
  int changed = 0;
  for (const fs::path& input : files_under(cases, {".yaml"})) {
    if (input.filename() != "input.yaml") continue;
    const fs::path dir = input.parent_path();
    INFO("case " << dir.filename().string());
    const fs::path policy_file =
        fs::exists(dir / "policy.yaml") ? dir / "policy.yaml" : cases / "policy.yaml";
    PolicyLoadResult loaded = load_policy_file(policy_file.string());
    REQUIRE(loaded.ok());
    const PolicyPtr policy = CompiledPolicy::compile(std::move(*loaded.policy));
    std::vector<Json> docs = testing::yaml_file_documents(input.string());
    if (fs::exists(dir / "claims.yaml")) {
      for (Json& d : testing::yaml_file_documents((dir / "claims.yaml").string())) {
        docs.push_back(std::move(d));
      }
    }
    const DocumentClaims claims(docs);
    bool pods = false, podless_kinds = true;
    for (const Json& doc : docs) {
      pods |= !find_pod_specs(doc, *policy).empty();
      const std::string_view kind = string_member(doc, "kind");
      podless_kinds &= kind == "ConfigMap" || kind == "Service" || kind == "ResourceClaim" ||
                       kind == "ResourceClaimTemplate";
      changed += check_in_place_equals_copy(pipeline, doc, claims, *policy);
    }
    ++golden_cases;
    golden_pod_cases += pods;
    CHECK((pods || podless_kinds));  // a case without a pod spec is about objects that have none
  }
  // Every case directory has an input.yaml.
  size_t dirs = 0;
  for (const auto& e : fs::directory_iterator(cases)) dirs += e.is_directory();
  CHECK(golden_cases == dirs);

  PolicyLoadResult loaded = load_policy_file(
      (fs::path(GPUADMIT_SOURCE_DIR) / "tests/lint/cases/workloads_mix/policy.yaml").string());
  REQUIRE(loaded.ok());
  const PolicyPtr policy = CompiledPolicy::compile(std::move(*loaded.policy));
  std::vector<Json> corpus;
  size_t unreadable = 0;
  for (const fs::path& f :
       files_under(fs::path(GPUADMIT_SHARED_DIR) / "corpus", {".yaml", ".yml", ".json"})) {
    try {
      for (const Json& doc : testing::yaml_file_documents(f.string())) add_objects(doc, corpus);
    } catch (const std::exception&) {
      ++unreadable;  // a deliberately malformed manifest: lint reports PARSE, nothing to evaluate
    }
  }
  const DocumentClaims claims(corpus);
  size_t corpus_pod_docs = 0;
  for (const Json& doc : corpus) {
    if (find_pod_specs(doc, *policy).empty()) continue;
    ++corpus_pod_docs;
    changed += check_in_place_equals_copy(pipeline, doc, claims, *policy);
  }
  CHECK(golden_cases >= 115);
  CHECK(golden_pod_cases >= 106);
  CHECK(corpus_pod_docs >= 100);
  CHECK(unreadable <= 2);
  CHECK(changed > 100);
}

// The members the gpu-visibility and queue mutations write (containers' env, Kueue's labels) are
// in the mutation contract: in place and on a copy, the same exact patch — `env` added as a list
// to a container without one, appended to one that has it, the label map created on a CronJob's
// jobTemplate — and the patched object goes through again unchanged.
TEST_CASE("pipeline: env and Kueue label patches, in place and on a copy, idempotent") {
  const Pipeline pipeline(default_mutators(), default_rules());
  PolicyLoadResult loaded = load_policy(R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec:
  classes:
    gpu: {nodeSelector: {nvidia.com/gpu.present: ["true"]}}
  tenants:
    - {name: t, namespaces: [t], queue: {name: q}}
)YAML",
                                        "p.yaml");
  REQUIRE(loaded.ok());
  const PolicyPtr policy = CompiledPolicy::compile(std::move(*loaded.policy));
  struct Case {
    const char* object;
    const char* patch;
  };
  const Case cases[] = {
      {R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[
          {"name":"a"},{"name":"b","env":[{"name":"X","value":"1"}]}]}})",
       R"([{"op":"add","path":"/spec/containers/0/env","value":[{"name":"NVIDIA_VISIBLE_DEVICES",)"
       R"("value":"void"}]},{"op":"add","path":"/spec/containers/1/env/-","value":{"name":)"
       R"("NVIDIA_VISIBLE_DEVICES","value":"void"}}])"},
      {R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"jobTemplate":
          {"spec":{"template":{"spec":{"containers":[{"name":"g","resources":{"limits":
          {"nvidia.com/gpu":1},"requests":{"nvidia.com/gpu":1}}},{"name":"s","env":null}]}}}}}})",
       R"([{"op":"replace","path":"/spec/jobTemplate/spec/template/spec/containers/1/env",)"
       R"("value":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}]},{"op":"add","path":)"
       R"("/spec/jobTemplate/spec/template/spec/affinity","value":{"nodeAffinity":)"
       R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)"
       R"([{"matchExpressions":[{"key":"nvidia.com/gpu.present","operator":"In","values":)"
       R"(["true"]}]}]}}}},{"op":"add","path":"/spec/jobTemplate/spec/template/metadata",)"
       R"("value":{"annotations":{"gpuadmit.io/class":"gpu"}}},{"op":"add","path":)"
       R"("/spec/jobTemplate/metadata","value":{"labels":{"kueue.x-k8s.io/queue-name":"q"}}}])"},
  };
  for (const Case& c : cases) {
    const Json doc = Json::parse(c.object);
    INFO(doc.dump());
    const EvaluateOptions options{.ns = "t", .patch_as_text = true};
    const Evaluation copy = pipeline.evaluate(doc, options, *policy);
    Json object = doc;
    const Evaluation in_place = pipeline.evaluate_in_place(object, options, *policy);
    CHECK(copy.allowed);
    CHECK(copy.patch_text == c.patch);
    CHECK(in_place.patch_text == c.patch);
    CHECK(object == copy.mutated);
    CHECK(doc.patch(Json::parse(c.patch)) == copy.mutated);
    Json again = copy.mutated;
    CHECK(pipeline.evaluate_in_place(again, options, *policy).patch_text.empty());
  }
}

// Mutator::may_change is a promise: when it is false, mutate() changes nothing.
TEST_CASE("mutators: may_change false means mutate changes nothing, on real manifests") {
  const auto mutators = default_mutators();
  const std::vector<Json> docs = all_documents();
  const std::vector<PolicyPtr> policies = all_policies();
  int refused = 0;
  for (const PolicyPtr& policy : policies) {
    for (const Json& doc : swept(docs, policies, policy)) {
      const std::string ns = namespace_of(doc);
      RequestContext request;
      request.policy = policy.get();
      request.ns = ns;
      request.kind = std::string(string_member(doc, "kind"));
      for (const PodSpecLocation& location : find_pod_specs(doc, *policy)) {
        for (const auto& mutator : mutators) {
          Json object = doc;
          auto made = PodView::make(object, location);
          if (!made) continue;
          PodView& pod = *made;
          PodContext ctx;
          ctx.request = &request;
          ctx.policy = policy.get();
          ctx.tenant = policy->tenant_for(ns);
          ctx.gpu_pod = is_gpu_pod(pod, *policy);
          resolve_pod_context(pod, ctx);
          if (mutator->may_change(ctx)) continue;
          ++refused;
          INFO(std::string(mutator->name()) << " on " << doc.dump());
          PodWriter writer(pod, object);
          CHECK(mutator->mutate(writer, ctx).status == MutationStatus::kNotApplicable);
          CHECK(object == doc);
        }
      }
    }
  }
  CHECK(refused > 100);
}

// The rules read PodGpuResources once per pod spec; it must say what reading each container
// says (engine/resources.h, rules/rule_support.h).
TEST_CASE("resources: the shared GPU resources agree with reading each container") {
  const std::vector<Json> docs = all_documents();
  const std::vector<PolicyPtr> policies = all_policies();
  int pods = 0;
  for (const PolicyPtr& policy : policies) {
    for (const Json& doc : swept(docs, policies, policy)) {
      Json object = doc;
      for (const PodSpecLocation& location : find_pod_specs(object, *policy)) {
        auto made = PodView::make(object, location);
        if (!made) continue;
        const PodView& pod = *made;
        const PodGpuResources gpu(pod, *policy);
        INFO(doc.dump());
        ++pods;
        REQUIRE(gpu.size() == pod.containers().size());
        CHECK(gpu.any_positive() == is_gpu_pod(pod, *policy));
        for (size_t i = 0; i < pod.containers().size(); ++i) {
          const Json& container = pod.container(pod.containers()[i]);
          CHECK(gpu.units(i) == container_gpu_units(container, *policy));
          // Each non-null GPU entry of requests and limits, once, pointing at the written value.
          std::vector<std::string> names;
          const Json* resources = find_member(container, "resources");
          for (const char* section : {"requests", "limits"}) {
            const Json* map = resources != nullptr ? find_member(*resources, section) : nullptr;
            if (map == nullptr || !map->is_object()) continue;
            for (auto it = map->begin(); it != map->end(); ++it) {
              if (it->is_null() || !policy->is_gpu_resource(it.key())) continue;
              if (std::find(names.begin(), names.end(), it.key()) == names.end()) {
                names.push_back(it.key());
              }
            }
          }
          REQUIRE(gpu.of(i).size() == names.size());
          for (size_t k = 0; k < names.size(); ++k) {
            const ContainerGpuResource& r = gpu.of(i)[k];
            CHECK(r.resource == names[k]);
            auto written = [&](const char* section) -> const Json* {
              const Json* map = find_member(*resources, section);
              const Json* v =
                  map != nullptr && map->is_object() ? find_member(*map, names[k]) : nullptr;
              return v != nullptr && !v->is_null() ? v : nullptr;
            };
            CHECK(r.request == written("requests"));
            CHECK(r.limit == written("limits"));
            CHECK(r.request_quantity ==
                  (r.request ? parse_json_quantity(*r.request) : std::nullopt));
            CHECK(r.limit_quantity == (r.limit ? parse_json_quantity(*r.limit) : std::nullopt));
          }
        }
        const rule_support::PodGpuCount count = rule_support::pod_gpu_count(pod, gpu);
        CHECK(rule_support::pod_gpu_total(pod, gpu) == count.total);
      }
    }
  }
  CHECK(pods > 100);
}

}  // namespace
}  // namespace json_diff_test
}  // namespace gpuadmit
