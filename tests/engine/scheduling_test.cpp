#include "engine/scheduling.h"

#include <algorithm>
#include <map>
#include <random>

#include "tests/support/fixtures.h"
#include "tests/support/fleet_policy.h"

namespace gpuadmit::testing {
namespace scheduling_test {
namespace {

struct TolerationCase {
  std::string name;
  std::string toleration;  // JSON
  Taint taint;
  bool tolerated;
};

// The first block is Kubernetes' own table (staging/src/k8s.io/api/core/v1/toleration_test.go
// TestTolerationToleratesTaint), case for case; then the edges gpuadmit depends on.
TEST_CASE("scheduling: tolerates mirrors Toleration.ToleratesTaint", "[scheduling]") {
  const std::vector<TolerationCase> cases = {
      {"k8s: same key and effect, Exists, taint without value",
       R"({"key":"foo","operator":"Exists","effect":"NoSchedule"})",
       {"foo", "", "NoSchedule"},
       true},
      {"k8s: same key and effect, Exists, taint with a value",
       R"({"key":"foo","operator":"Exists","effect":"NoSchedule"})",
       {"foo", "bar", "NoSchedule"},
       true},
      {"k8s: empty key with Exists matches all taints of that effect",
       R"({"key":"","operator":"Exists","effect":"NoSchedule"})",
       {"foo", "bar", "NoSchedule"},
       true},
      {"k8s: same key, effect and value, Equal",
       R"({"key":"foo","operator":"Equal","value":"bar","effect":"NoSchedule"})",
       {"foo", "bar", "NoSchedule"},
       true},
      {"k8s: Equal with a different value",
       R"({"key":"foo","operator":"Equal","value":"value1","effect":"NoSchedule"})",
       {"foo", "value2", "NoSchedule"},
       false},
      {"k8s: Equal with a different effect",
       R"({"key":"foo","operator":"Equal","value":"bar","effect":"NoSchedule"})",
       {"foo", "bar", "NoExecute"},
       false},
      {"k8s: Gt, taint value below the toleration's",
       R"({"key":"node.kubernetes.io/sla","operator":"Gt","value":"950","effect":"NoSchedule"})",
       {"node.kubernetes.io/sla", "800", "NoSchedule"},
       false},
      {"k8s: Gt, taint value above the toleration's",
       R"({"key":"node.kubernetes.io/sla","operator":"Gt","value":"750","effect":"NoSchedule"})",
       {"node.kubernetes.io/sla", "950", "NoSchedule"},
       true},
      {"k8s: Lt, taint value above the toleration's",
       R"({"key":"node.kubernetes.io/sla","operator":"Lt","value":"800","effect":"NoSchedule"})",
       {"node.kubernetes.io/sla", "950", "NoSchedule"},
       false},
      {"k8s: Lt, taint value below the toleration's",
       R"({"key":"node.kubernetes.io/sla","operator":"Lt","value":"950","effect":"NoSchedule"})",
       {"node.kubernetes.io/sla", "800", "NoSchedule"},
       true},
      {"k8s: Gt with an equal value",
       R"({"key":"node.kubernetes.io/sla","operator":"Gt","value":"950","effect":"NoSchedule"})",
       {"node.kubernetes.io/sla", "950", "NoSchedule"},
       false},
      {"k8s: Gt with a non-numeric taint value",
       R"({"key":"node.kubernetes.io/sla","operator":"Gt","value":"950","effect":"NoSchedule"})",
       {"node.kubernetes.io/sla", "high", "NoSchedule"},
       false},
      {"k8s: Gt with negative values",
       R"({"key":"test-key","operator":"Gt","value":"-100","effect":"NoSchedule"})",
       {"test-key", "-200", "NoSchedule"},
       false},
      {"k8s: Gt with a large int64 threshold",
       R"({"key":"test-key","operator":"Gt","value":"9223372036854775806","effect":"NoSchedule"})",
       {"test-key", "100", "NoSchedule"},
       false},
      // gpuadmit's edges.
      {"the key-less wildcard {operator: Exists} tolerates every taint and effect",
       R"({"operator":"Exists"})",
       {"nvidia.com/gpu", "", "NoExecute"},
       true},
      {"an empty effect tolerates every effect",
       R"({"key":"nvidia.com/gpu","operator":"Exists"})",
       {"nvidia.com/gpu", "", "PreferNoSchedule"},
       true},
      {"an omitted operator means Equal",
       R"({"key":"pool","value":"true"})",
       {"pool", "true", "NoSchedule"},
       true},
      {"an omitted operator means Equal: the value must match",
       R"({"key":"pool"})",
       {"pool", "true", "NoSchedule"},
       false},
      {"Equal with an empty value tolerates a taint without value",
       R"({"key":"nvidia.com/gpu","operator":"Equal","effect":"NoSchedule"})",
       {"nvidia.com/gpu", "", "NoSchedule"},
       true},
      {"an empty key with Equal compares values only (as Kubernetes, though validation forbids it)",
       R"({"operator":"Equal","value":"present"})",
       {"nvidia.com/gpu", "present", "NoSchedule"},
       true},
      {"another key",
       R"({"key":"nvidia.com/gpu.shared","operator":"Exists"})",
       {"nvidia.com/gpu", "", "NoSchedule"},
       false},
      {"an unknown operator tolerates nothing",
       R"({"key":"nvidia.com/gpu","operator":"exists"})",
       {"nvidia.com/gpu", "", "NoSchedule"},
       false},
      {"null fields count as empty",
       R"({"key":null,"operator":"Exists","effect":null})",
       {"nvidia.com/gpu", "", "NoSchedule"},
       true},
      {"Gt accepts a leading + as strconv.ParseInt does",
       R"({"key":"k","operator":"Gt","value":"+5"})",
       {"k", "6", "NoSchedule"},
       true},
      {"Gt with an int64 overflow tolerates nothing",
       R"({"key":"k","operator":"Gt","value":"9223372036854775808"})",
       {"k", "1", "NoSchedule"},
       false},
      {"Lt accepts int64 minimum",
       R"({"key":"k","operator":"Lt","value":"0"})",
       {"k", "-9223372036854775808", "NoSchedule"},
       true},
      {"not an object", R"("nvidia.com/gpu")", {"nvidia.com/gpu", "", "NoSchedule"}, false},
  };
  for (const TolerationCase& c : cases) {
    INFO(c.name);
    CHECK(tolerates(Json::parse(c.toleration), c.taint) == c.tolerated);
  }
}

TEST_CASE("scheduling: any_tolerates over a list, null or absent", "[scheduling]") {
  const Taint taint{"nvidia.com/gpu", "", "NoSchedule"};
  const Json list = Json::parse(R"([{"key":"a","operator":"Exists"},{"key":"nvidia.com/gpu",
      "operator":"Exists"}])");
  CHECK(any_tolerates(&list, taint));
  const Json other = Json::parse(R"([{"key":"a","operator":"Exists"}])");
  CHECK_FALSE(any_tolerates(&other, taint));
  const Json null_list;
  CHECK_FALSE(any_tolerates(&null_list, taint));
  CHECK_FALSE(any_tolerates(nullptr, taint));
}

struct RequirementCase {
  std::string requirement;
  std::string value;
  bool allowed;
};

TEST_CASE("scheduling: requirement_allows mirrors nodeaffinity requirement matching",
          "[scheduling]") {
  const std::string key = "nvidia.com/gpu.product";
  const std::vector<RequirementCase> cases = {
      {R"({"key":"nvidia.com/gpu.product","operator":"In","values":["A","B"]})", "A", true},
      {R"({"key":"nvidia.com/gpu.product","operator":"In","values":["A","B"]})", "C", false},
      {R"({"key":"nvidia.com/gpu.product","operator":"In","values":[]})", "A", false},
      {R"({"key":"nvidia.com/gpu.product","operator":"NotIn","values":["A"]})", "A", false},
      {R"({"key":"nvidia.com/gpu.product","operator":"NotIn","values":["A"]})", "B", true},
      {R"({"key":"nvidia.com/gpu.product","operator":"Exists"})", "A", true},
      {R"({"key":"nvidia.com/gpu.product","operator":"Exists","values":["A"]})", "A", false},
      {R"({"key":"nvidia.com/gpu.product","operator":"DoesNotExist"})", "A", false},
      {R"({"key":"nvidia.com/gpu.product","operator":"Gt","values":["4"]})", "8", true},
      {R"({"key":"nvidia.com/gpu.product","operator":"Gt","values":["8"]})", "8", false},
      {R"({"key":"nvidia.com/gpu.product","operator":"Lt","values":["8"]})", "4", true},
      {R"({"key":"nvidia.com/gpu.product","operator":"Lt","values":["8"]})", "A100", false},
      {R"({"key":"nvidia.com/gpu.product","operator":"Gt","values":["1","2"]})", "8", false},
      {R"({"key":"nvidia.com/gpu.product","operator":"Bogus","values":["A"]})", "A", false},
      {R"({"key":"other","operator":"In","values":["x"]})", "A", true},
  };
  for (const RequirementCase& c : cases) {
    INFO(c.requirement << " with " << c.value);
    CHECK(requirement_allows(Json::parse(c.requirement), key, c.value) == c.allowed);
  }
}

TEST_CASE("scheduling: class_node_labels targets the MIG product for strategy single",
          "[scheduling]") {
  auto policy = policy_from_yaml(fleet_policy());
  const GpuClass& h100 = *policy->find_class("h100");
  const GpuClass& a100 = *policy->find_class("a100");
  using Labels = LabelSelectorValues;
  CHECK(class_node_labels(h100, "") ==
        Labels{{"nvidia.com/gpu.product", {"NVIDIA-H100-80GB-HBM3"}}});
  CHECK(class_node_labels(h100, "1g.10gb") ==
        Labels{{"nvidia.com/gpu.product", {"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"}}});
  // GFD names the profile as the device plugin does: "+" becomes ".".
  CHECK(class_node_labels(h100, "1g.10gb+me") ==
        Labels{{"nvidia.com/gpu.product", {"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb.me"}}});
  // Mixed: the node keeps its product label; the profile is in the resource name.
  CHECK(class_node_labels(a100, "1g.10gb") ==
        Labels{{"nvidia.com/gpu.product", {"NVIDIA-A100-SXM4-80GB"}}});
}

struct ConflictCase {
  std::string name;
  std::string spec;      // the pod spec, JSON
  std::string conflict;  // "" = compatible
};

TEST_CASE("scheduling: class_conflict finds placements that exclude the class", "[scheduling]") {
  auto policy = policy_from_yaml(fleet_policy());
  const LabelSelectorValues t4 = policy->find_class("t4")->node_selector;
  const std::vector<ConflictCase> cases = {
      {"no constraints", R"({"containers":[]})", ""},
      {"nodeSelector with a class value",
       R"({"nodeSelector":{"nvidia.com/gpu.product":"Tesla-T4"}})", ""},
      {"nodeSelector on unrelated labels", R"({"nodeSelector":{"kubernetes.io/os":"linux"}})", ""},
      {"nodeSelector with another value", R"({"nodeSelector":{"cloud.example.com/pool":"t4-c"}})",
       "nodeSelector cloud.example.com/pool=t4-c allows none of the class's "
       "cloud.example.com/pool values [t4-a, t4-b]"},
      {"one term allowing a class value",
       R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms":[{"matchExpressions":[
            {"key":"cloud.example.com/pool","operator":"In","values":["t4-b","t4-c"]}]}]}}}})",
       ""},
      {"the only term excludes every class value",
       R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms":[{"matchExpressions":[
            {"key":"nvidia.com/gpu.product","operator":"NotIn","values":["Tesla-T4"]}]}]}}}})",
       "required node affinity nodeSelectorTerms[0] (nvidia.com/gpu.product NotIn [Tesla-T4]) "
       "allows none of the class's nvidia.com/gpu.product values [Tesla-T4]"},
      {"terms are ORed: one compatible term is enough",
       R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms":[
            {"matchExpressions":[{"key":"cloud.example.com/pool","operator":"In","values":["x"]}]},
            {"matchExpressions":[{"key":"cloud.example.com/pool","operator":"Exists"}]}]}}}})",
       ""},
      {"every term excludes the class, each for its own label",
       R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms":[
            {"matchExpressions":[{"key":"cloud.example.com/pool","operator":"In","values":["x"]}]},
            {"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"DoesNotExist"}]}]}}}})",
       "required node affinity nodeSelectorTerms[0] (cloud.example.com/pool In [x]) allows none "
       "of the class's cloud.example.com/pool values [t4-a, t4-b]; nodeSelectorTerms[1] "
       "(nvidia.com/gpu.product DoesNotExist) allows none of the class's nvidia.com/gpu.product "
       "values [Tesla-T4]"},
      {"expressions of a term are ANDed on the same label",
       R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms":[{"matchExpressions":[
            {"key":"cloud.example.com/pool","operator":"In","values":["t4-a","x"]},
            {"key":"cloud.example.com/pool","operator":"NotIn","values":["t4-a"]}]}]}}}})",
       "required node affinity nodeSelectorTerms[0] (cloud.example.com/pool In [t4-a, x], "
       "cloud.example.com/pool NotIn [t4-a]) allows none of the class's cloud.example.com/pool "
       "values [t4-a, t4-b]"},
      {"empty terms match no node and say nothing about the class",
       R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms":[{}, {"matchExpressions":[]}]}}}})",
       ""},
      {"matchFields cannot be judged",
       R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms":[{"matchFields":[
            {"key":"metadata.name","operator":"In","values":["n1"]}]}]}}}})",
       ""},
      {"preferred affinity does not count",
       R"({"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
          {"weight":1,"preference":{"matchExpressions":[
            {"key":"nvidia.com/gpu.product","operator":"In","values":["X"]}]}}]}}})",
       ""},
  };
  for (const ConflictCase& c : cases) {
    INFO(c.name);
    const std::string pod =
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + c.spec + "}";
    PodFixture fixture(policy, pod, "web-a");
    const std::optional<std::string> conflict = class_conflict(fixture.view(), t4);
    CHECK(conflict.value_or("") == c.conflict);
  }
}

}  // namespace
}  // namespace scheduling_test
}  // namespace gpuadmit::testing

namespace gpuadmit::testing {
namespace scheduling_test {
namespace {

std::string affinity_terms(const std::string& terms) {
  return R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
         R"({"nodeSelectorTerms":)" +
         terms + "}}}";
}

// Pods that no class node can run although some node could run them alone: each a shape of the
// 18 pods GPU011 let through (issue 15).
TEST_CASE("scheduling: class_conflict decides each label key exactly", "[scheduling]") {
  auto policy = policy_from_yaml(fleet_policy());
  const LabelSelectorValues t4 = policy->find_class("t4")->node_selector;
  const std::vector<ConflictCase> cases = {
      {"a nodeSelector rules out the only term compatible with the class",
       "{" + std::string(R"("nodeSelector":{"zone":"b"},)") +
           affinity_terms(
               R"([{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},
                   {"matchExpressions":[{"key":"cloud.example.com/pool","operator":"In","values":["x"]}]}])") +
           "}",
       "required node affinity nodeSelectorTerms[0] (zone In [a]) admits no node with the pod's "
       "nodeSelector and the class's labels on zone; nodeSelectorTerms[1] (cloud.example.com/pool "
       "In [x]) allows none of the class's cloud.example.com/pool values [t4-a, t4-b]"},
      {"a term that contradicts itself beside one that contradicts the class",
       "{" +
           affinity_terms(
               R"([{"matchExpressions":[{"key":"tier","operator":"In","values":["x"]},
                                        {"key":"tier","operator":"NotIn","values":["x"]}]},
                   {"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"NotIn","values":["Tesla-T4"]}]}])") +
           "}",
       "required node affinity nodeSelectorTerms[0] (tier In [x], tier NotIn [x]) admits no node "
       "with the pod's nodeSelector and the class's labels on tier; nodeSelectorTerms[1] "
       "(nvidia.com/gpu.product NotIn [Tesla-T4]) allows none of the class's "
       "nvidia.com/gpu.product values [Tesla-T4]"},
      {"a pod no node can run at all is not the class's conflict",
       "{" + affinity_terms(R"([{"matchExpressions":[{"key":"tier","operator":"Exists"},
                                        {"key":"tier","operator":"DoesNotExist"}]}])") +
           "}",
       ""},
      {"NotIn every class value but one, with Exists: compatible",
       "{" +
           affinity_terms(
               R"([{"matchExpressions":[{"key":"cloud.example.com/pool","operator":"NotIn","values":["t4-a"]},
                                        {"key":"cloud.example.com/pool","operator":"Exists"}]}])") +
           "}",
       ""},
      {"Gt and Lt leave no integer",
       "{" + affinity_terms(R"([{"matchExpressions":[
            {"key":"gpus","operator":"Gt","values":["3"]},{"key":"gpus","operator":"Lt","values":["4"]}]},
            {"matchExpressions":[{"key":"cloud.example.com/pool","operator":"In","values":["x"]}]}])") +
           "}",
       "required node affinity nodeSelectorTerms[0] (gpus Gt [3], gpus Lt [4]) admits no node "
       "with the pod's nodeSelector and the class's labels on gpus; nodeSelectorTerms[1] "
       "(cloud.example.com/pool In [x]) allows none of the class's cloud.example.com/pool values "
       "[t4-a, t4-b]"},
  };
  for (const ConflictCase& c : cases) {
    INFO(c.name);
    const std::string pod =
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + c.spec + "}";
    PodFixture fixture(policy, pod, "web-a");
    CHECK(class_conflict(fixture.view(), t4).value_or("") == c.conflict);
  }
}

// Random pods against every node of a small label space, with Kubernetes' rules as the
// reference: a node runs a pod when its nodeSelector matches and one non-empty required term
// matches (labels.Requirement.Matches per expression). class_conflict must report a conflict
// exactly when some node runs the pod and no node of the class does.
TEST_CASE("scheduling: class_conflict agrees with a reference over every node",
          "[scheduling][property]") {
  auto policy = policy_from_yaml(fleet_policy());
  const std::vector<std::string> keys = {"cloud.example.com/pool", "tier"};
  const std::vector<std::string> used = {"t4-a", "t4-b", "x"};
  // "" is a node without the label; "other" stands for every value no requirement names.
  const std::vector<std::string> domain = {"", "t4-a", "t4-b", "x", "other"};
  const LabelSelectorValues cls = {{"cloud.example.com/pool", {"t4-a", "t4-b"}}};
  const std::vector<std::string> ops = {"In", "NotIn", "Exists", "DoesNotExist"};
  std::mt19937 random(15);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };

  auto requirement_matches = [](const Json& r, const std::map<std::string, std::string>& node) {
    const std::string op = r["operator"];
    const auto it = node.find(r["key"]);
    const bool has = it != node.end();
    std::vector<std::string> values;
    for (const Json& v : r.value("values", Json::array())) values.push_back(v);
    const bool in = has && std::find(values.begin(), values.end(), it->second) != values.end();
    if (op == "In") return !values.empty() && in;
    if (op == "NotIn") return !values.empty() && !in;
    if (op == "Exists") return values.empty() && has;
    return values.empty() && !has;  // DoesNotExist
  };
  int conflicts = 0;
  for (int round = 0; round < 3000; ++round) {
    Json spec = Json::object();
    for (const std::string& key : keys) {
      if (pick(4) == 0) spec["nodeSelector"][key] = used[pick(used.size())];
    }
    Json terms = Json::array();
    const std::size_t term_count = pick(4);
    for (std::size_t t = 0; t < term_count; ++t) {
      Json expressions = Json::array();
      for (std::size_t e = 0, n = 1 + pick(3); e < n; ++e) {
        const std::string op = ops[pick(ops.size())];
        Json r = {{"key", keys[pick(keys.size())]}, {"operator", op}};
        if (op == "In" || op == "NotIn") {
          r["values"] = Json::array();
          for (std::size_t v = 0, m = 1 + pick(2); v < m; ++v) r["values"].push_back(used[pick(3)]);
        }
        expressions.push_back(r);
      }
      terms.push_back({{"matchExpressions", expressions}});
    }
    if (!terms.empty()) {
      spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
          ["nodeSelectorTerms"] = terms;
    }
    bool pod_runs_somewhere = false, class_node_runs_it = false;
    for (const std::string& pool : domain) {
      for (const std::string& tier : domain) {
        std::map<std::string, std::string> node;
        if (!pool.empty()) node[keys[0]] = pool;
        if (!tier.empty()) node[keys[1]] = tier;
        bool runs = true;
        const Json selector = spec.value("nodeSelector", Json::object());
        for (auto it = selector.begin(); runs && it != selector.end(); ++it) {
          runs = node.count(it.key()) && node[it.key()] == it.value();
        }
        if (runs && !terms.empty()) {
          runs = std::any_of(terms.begin(), terms.end(), [&](const Json& term) {
            const Json& ex = term["matchExpressions"];
            return std::all_of(ex.begin(), ex.end(),
                               [&](const Json& r) { return requirement_matches(r, node); });
          });
        }
        pod_runs_somewhere |= runs;
        class_node_runs_it |= runs && (pool == "t4-a" || pool == "t4-b");
      }
    }
    const std::string pod =
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + spec.dump() + "}";
    PodFixture fixture(policy, pod, "web-a");
    const bool expected = pod_runs_somewhere && !class_node_runs_it;
    INFO(spec.dump());
    REQUIRE(class_conflict(fixture.view(), cls).has_value() == expected);
    conflicts += expected;
  }
  CHECK(conflicts > 100);  // the generator reaches the interesting cases
}

}  // namespace
}  // namespace scheduling_test
}  // namespace gpuadmit::testing
