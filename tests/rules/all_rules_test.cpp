#include "rules/all_rules.h"
#include "rules/document_rules.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "engine/pipeline.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace all_rules_test {
namespace {

TEST_CASE("rules: default_rules lists every pod and claim rule once, in id order", "[rules]") {
  const auto rules = default_rules();
  std::vector<std::string> ids;
  for (int i = 1; i <= 15; ++i) ids.push_back((i < 10 ? "GPU00" : "GPU0") + std::to_string(i));
  // GPU016/GPU017 are document rules; the DRA rules GPU018–GPU023 check claim objects.
  for (int i = 18; i <= 27; ++i) ids.push_back("GPU0" + std::to_string(i));
  ids.push_back("GPU032");  // GPU028–GPU031 are document rules
  ids.push_back("GPU033");
  REQUIRE(rules.size() == ids.size());
  // The policy loader accepts `enforcement.rules` keys up to the last rule of either list, and
  // no further.
  const auto document_rules = default_document_rules();
  const std::string last =
      std::max(std::string(rules.back()->id()), std::string(document_rules.back()->id()));
  CHECK(last == "GPU0" + std::to_string(kLastRuleNumber));
  std::set<std::string_view> names;
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string& want = ids[i];
    CHECK(rules[i]->id() == want);
    CHECK_FALSE(rules[i]->summary().empty());
    // SARIF's reportingDescriptor.name: readable, UpperCamelCase, unique, never the id.
    const std::string_view name = rules[i]->name();
    CHECK((!name.empty() && std::isupper(static_cast<unsigned char>(name[0]))));
    CHECK(name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") ==
          std::string_view::npos);
    CHECK(names.insert(name).second);
    const bool warns = want == "GPU014" || want == "GPU032" || want == "GPU033";
    CHECK(rules[i]->default_action() == (warns ? Action::kWarn : Action::kDeny));
  }
}

// No input may make a rule throw (SPEC §9): odd quantities, huge numbers, unknown names and
// partial affinity all go through every rule.
TEST_CASE("rules: no exception escapes a rule", "[rules]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  const auto rules = default_rules();
  const std::vector<std::string> objects = {
      make_pod(container("a", R"({"nvidia.com/gpu":"1e30","nvidia.com/gpu.shared":"-3"})",
                         R"({"nvidia.com/gpu":"99999999999999999999999","amd.com/gpu":"x"})")),
      make_pod(container("a", R"({"nvidia.com/gpu":9223372036854775807})",
                         R"({"nvidia.com/gpu":1.0e300})") +
                   "," + container("b", R"({"nvidia.com/gpu":"9223372036854775807"})"),
               "", R"({"gpuadmit.io/class":"a100"})"),
      make_pod(container("", R"({"nvidia.com/mig-":"1","nvidia.com/mig-xg.yy":"2"})"), "",
               R"({"gpuadmit.io/class":"mig","gpuadmit.io/mig-profile":"nonsense"})"),
      make_pod(container("a", R"({"nvidia.com/mig-99g.1gb":"1","nvidia.com/gpu":null})"), "",
               R"({"gpuadmit.io/class":"mig-single","gpuadmit.io/mig-profile":"0g.0gb"})"),
      make_pod(container("a", R"({"nvidia.com/gpu":"0.000000001"})"),
               R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
               R"({"nodeSelectorTerms":[{},{"matchExpressions":[{}]},{"matchExpressions":[)"
               R"({"key":"nvidia.com/gpu.product","operator":"In"}]}]}}},)"
               R"("tolerations":[{}],"nodeSelector":{},"priorityClassName":"",)"
               R"("resources":{"limits":{"nvidia.com/gpu":"bad"}})",
               R"({"gpuadmit.io/class":"l4"})"),
      make_pod(container("a", ""),
               R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
               R"({"nodeSelectorTerms":[{"matchExpressions":[)"
               R"({"key":"nvidia.com/gpu.product","operator":"Exists"}]}]}}},)"
               R"("tolerations":[{"operator":"Exists"}])"),
  };
  for (const char* ns : {"ml-a", "web", "research", "open", "default"}) {
    for (const std::string& object : objects) {
      INFO(ns << ": " << object);
      PodFixture pod(policy, object, ns);
      for (const auto& rule : rules) {
        INFO(rule->id());
        std::vector<Violation> out;
        REQUIRE_NOTHROW(rule->check(pod.view(), pod.ctx, out));
        for (const Violation& v : out) {
          CHECK_FALSE(v.message.empty());
          CHECK_FALSE(v.path.empty());
        }
      }
    }
  }
}

}  // namespace
}  // namespace all_rules_test
}  // namespace gpuadmit::testing

namespace gpuadmit::testing {
namespace all_rules_test {
namespace {

constexpr std::string_view kSmallPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: small}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      gpusPerNode: 8
  tenants:  # every namespace may use GPUs (a namespace of no tenant may not: GPU003)
    - {name: everyone, namespaces: [".*"]}
  enforcement:
    requestsEqualLimits: deny
    exempt: {namespaces: [kube-system]}
)YAML";

// Through the pipeline (rules only, as the validating webhook runs them): deny findings reject
// the object with every violation listed, warn findings become warnings, exempt namespaces and
// non-workloads pass untouched.
TEST_CASE("rules: findings through the pipeline", "[rules]") {
  auto policy = policy_from_yaml(kSmallPolicy);
  Pipeline pipeline({}, default_rules());
  const Json pod = Json::parse(make_pod(
      container("trainer", R"({"nvidia.com/gpu":"5"})", R"({"nvidia.com/gpu":"6"})") + "," +
      container("helper", R"({"nvidia.com/gpu":"0.5"})", R"({"nvidia.com/gpu":"0.5"})")));
  const std::string kFraction =
      " is not a whole number; a GPU cannot be split by quantity: write a whole number such as "
      "1, or use a MIG profile (gpuadmit.io/mig-profile) or a time-sliced class";

  SECTION("deny and warn findings are reported together") {
    const Evaluation e = pipeline.evaluate(pod, {.ns = "team", .mutate = false}, *policy);
    CHECK_FALSE(e.allowed);
    CHECK(e.deny_message() ==
          "GPU001: container trainer: nvidia.com/gpu request 5 \u2260 limit 6; set both to the "
          "same whole number; GPU002: container helper: nvidia.com/gpu request 0.5" +
              kFraction + "; GPU002: container helper: nvidia.com/gpu limit 0.5" + kFraction);
    CHECK(e.warnings() ==
          std::vector<std::string>{"GPU014: pod requests 6 GPUs (container trainer: 5, container "
                                   "helper: 1): 6 on an 8-GPU node of class a100 strands 2; "
                                   "request 1, 2, 4 or 8 GPUs per pod"});
  }
  SECTION("an exempt namespace passes untouched") {
    const Evaluation e = pipeline.evaluate(pod, {.ns = "kube-system", .mutate = false}, *policy);
    CHECK(e.allowed);
    CHECK(e.exempt);
    CHECK(e.findings.empty());
  }
  SECTION("a non-workload object passes untouched") {
    const Json config_map = Json::parse(
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"b"}})");
    const Evaluation e = pipeline.evaluate(config_map, {.ns = "team", .mutate = false}, *policy);
    CHECK(e.allowed);
    CHECK(e.findings.empty());
  }
}

// A denial lists the first kDenyMessageListed violations and counts the rest: a pod of
// thousands of bad containers gets a message of a few KB (issue 38).
TEST_CASE("rules: the denial message lists the first violations, then a count", "[rules]") {
  auto policy = policy_from_yaml(kSmallPolicy);
  Pipeline pipeline({}, default_rules());
  std::string containers;
  for (int i = 0; i < 23; ++i) {
    if (i > 0) containers += ",";
    containers += container("c" + std::to_string(i), R"({"nvidia.com/gpu":"1"})",
                            R"({"nvidia.com/gpu":"2"})");
  }
  const Evaluation e = pipeline.evaluate(Json::parse(make_pod(containers)),
                                         {.ns = "team", .mutate = false}, *policy);
  CHECK_FALSE(e.allowed);
  std::string listed;
  std::size_t denied = 0;
  for (const Finding& f : e.findings) {
    if (f.severity == Severity::kWarn) continue;
    if (++denied > Evaluation::kDenyMessageListed) continue;
    listed += (listed.empty() ? "" : "; ") + f.rule + ": " + f.message;
  }
  REQUIRE(denied >= 23);
  CHECK(listed.starts_with(
      "GPU001: container c0: nvidia.com/gpu request 1 \u2260 limit 2; set both to the same whole "
      "number; GPU001: container c1:"));
  CHECK(e.deny_message() == listed + "; and " + std::to_string(denied - 20) + " more violations");
}

// Warnings are bounded the same way: the API server keeps 4,096 characters of them
// (k8s.io/apiserver pkg/endpoints/filters/warning.go truncateAtTotalRunes).
TEST_CASE("rules: the warnings list the first ones, then a count", "[rules]") {
  auto policy = policy_from_yaml(kSmallPolicy);
  Pipeline pipeline({}, default_rules());
  std::string containers;
  for (int i = 0; i < 25; ++i) {
    if (i > 0) containers += ",";
    containers +=
        container("c" + std::to_string(i), R"({"nvidia.com/gpu":"1"})", R"({"nvidia.com/gpu":"1"})",
                  R"("env":[{"name":"CUDA_VISIBLE_DEVICES","value":"0"}])");
  }
  const Evaluation e = pipeline.evaluate(Json::parse(make_pod(containers)),
                                         {.ns = "team", .mutate = false}, *policy);
  std::vector<std::string> expected;
  std::size_t warned = 0;
  for (const Finding& f : e.findings) {
    if (f.severity != Severity::kWarn) continue;
    if (++warned <= Evaluation::kDenyMessageListed) expected.push_back(f.rule + ": " + f.message);
  }
  REQUIRE(warned >= 25);
  CHECK(std::find(expected.begin(), expected.end(),
                  "GPU032: container c0 sets CUDA_VISIBLE_DEVICES=0: it gets 1 GPU, which CUDA "
                  "already sees; the device plugin already gives the container exactly its GPUs, "
                  "numbered from 0: remove CUDA_VISIBLE_DEVICES") != expected.end());
  expected.push_back("gpuadmit: " + std::to_string(warned - 20) + " more warnings");
  CHECK(e.warnings() == expected);
}

}  // namespace
}  // namespace all_rules_test
}  // namespace gpuadmit::testing
