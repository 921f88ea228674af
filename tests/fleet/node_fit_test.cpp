// fleet/node_fit.h against the scheduler's filter plugins, case by case: NodeAffinity
// (nodeSelector, required terms, matchExpressions on present and absent labels, matchFields),
// TaintToleration (effects filtered, first untolerated taint), NodeUnschedulable, and
// NodeResourcesFit on GPU resources; and which class a node is in.

#include <catch2/catch.hpp>

#include "fleet/node_fit.h"
#include "tests/fleet/live_test_util.h"

namespace gpuadmit::fleet {
namespace node_fit_test {
namespace {

LiveNode node_with(NodeLabels labels, std::vector<Taint> taints = {}, bool unschedulable = false) {
  LiveNode n;
  n.name = "gpu-7";
  n.labels = std::move(labels);
  n.taints = std::move(taints);
  n.unschedulable = unschedulable;
  return n;
}

Json term(const std::string& expressions, const std::string& fields = "") {
  std::string t = "{";
  if (!expressions.empty()) t += "\"matchExpressions\": [" + expressions + "]";
  if (!fields.empty())
    t += std::string(expressions.empty() ? "" : ", ") + "\"matchFields\": [" + fields + "]";
  return Json::parse(t + "}");
}

Json placement_with(std::vector<Json> terms, const std::string& selector = "") {
  Json p = Json::object();
  if (!selector.empty()) p["nodeSelector"] = Json::parse(selector);
  if (!terms.empty()) {
    p["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
     ["nodeSelectorTerms"] = terms;
  }
  return p;
}

TEST_CASE("node fit: node affinity, as labels.Requirement.Matches and nodeaffinity decide") {
  const LiveNode node = node_with(
      {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}, {"zone", "a"}, {"gpu-gen", "8"}});
  struct Case {
    const char* expression;
    bool matches;
  };
  // A present label: In/NotIn by value, Exists true, DoesNotExist false, Gt/Lt numeric.
  // An absent label ("pool"): only NotIn and DoesNotExist match. Invalid requirements (In
  // without values, Exists with values, Gt with two values, an unknown operator) match nothing.
  const Case cases[] = {
      {R"({"key": "zone", "operator": "In", "values": ["a", "b"]})", true},
      {R"({"key": "zone", "operator": "In", "values": ["b"]})", false},
      {R"({"key": "zone", "operator": "NotIn", "values": ["b"]})", true},
      {R"({"key": "zone", "operator": "NotIn", "values": ["a"]})", false},
      {R"({"key": "zone", "operator": "Exists"})", true},
      {R"({"key": "zone", "operator": "DoesNotExist"})", false},
      {R"({"key": "gpu-gen", "operator": "Gt", "values": ["7"]})", true},
      {R"({"key": "gpu-gen", "operator": "Lt", "values": ["8"]})", false},
      {R"({"key": "pool", "operator": "In", "values": ["x"]})", false},
      {R"({"key": "pool", "operator": "NotIn", "values": ["x"]})", true},
      {R"({"key": "pool", "operator": "Exists"})", false},
      {R"({"key": "pool", "operator": "DoesNotExist"})", true},
      {R"({"key": "pool", "operator": "Gt", "values": ["1"]})", false},
      {R"({"key": "zone", "operator": "In", "values": []})", false},
      {R"({"key": "zone", "operator": "Exists", "values": ["a"]})", false},
      {R"({"key": "gpu-gen", "operator": "Gt", "values": ["1", "2"]})", false},
      {R"({"key": "zone", "operator": "Like", "values": ["a"]})", false},
  };
  for (const Case& c : cases) {
    INFO(c.expression);
    CHECK(node_affinity_matches(placement_with({term(c.expression)}), node) == c.matches);
  }
}

TEST_CASE("node fit: terms are ORed, expressions ANDed, an empty term matches nothing") {
  const LiveNode node = node_with({{"zone", "a"}, {"pool", "train"}});
  const Json zone_b = term(R"({"key": "zone", "operator": "In", "values": ["b"]})");
  const Json train = term(R"({"key": "pool", "operator": "In", "values": ["train"]})");
  CHECK(node_affinity_matches(placement_with({zone_b, train}), node));
  CHECK_FALSE(node_affinity_matches(placement_with({zone_b}), node));
  CHECK_FALSE(node_affinity_matches(
      placement_with({term(R"({"key": "zone", "operator": "In", "values": ["a"]},
                              {"key": "pool", "operator": "In", "values": ["infer"]})")}),
      node));
  CHECK_FALSE(node_affinity_matches(placement_with({Json::object()}), node));
  CHECK(node_affinity_matches(placement_with({Json::object(), train}), node));
  CHECK(node_affinity_matches(Json::object(), node));  // no affinity, no selector
}

TEST_CASE("node fit: matchFields metadata.name, In and NotIn of exactly one value") {
  const LiveNode node = node_with({});
  auto fields = [](const std::string& f) { return placement_with({term("", f)}); };
  CHECK(node_affinity_matches(
      fields(R"({"key": "metadata.name", "operator": "In", "values": ["gpu-7"]})"), node));
  CHECK_FALSE(node_affinity_matches(
      fields(R"({"key": "metadata.name", "operator": "In", "values": ["gpu-8"]})"), node));
  CHECK(node_affinity_matches(
      fields(R"({"key": "metadata.name", "operator": "NotIn", "values": ["gpu-8"]})"), node));
  CHECK_FALSE(node_affinity_matches(
      fields(R"({"key": "metadata.name", "operator": "In", "values": ["gpu-7", "gpu-8"]})"), node));
  CHECK_FALSE(
      node_affinity_matches(fields(R"({"key": "metadata.name", "operator": "Exists"})"), node));
}

TEST_CASE("node fit: nodeSelector needs every label, equal, and is ANDed with affinity") {
  const LiveNode node = node_with({{"zone", "a"}, {"pool", "train"}});
  CHECK(node_affinity_matches(placement_with({}, R"({"zone": "a", "pool": "train"})"), node));
  CHECK_FALSE(node_affinity_matches(placement_with({}, R"({"zone": "a", "disk": "ssd"})"), node));
  CHECK_FALSE(node_affinity_matches(placement_with({}, R"({"zone": "b"})"), node));
  CHECK_FALSE(node_affinity_matches(
      placement_with({term(R"({"key": "pool", "operator": "In", "values": ["train"]})")},
                     R"({"zone": "b"})"),
      node));
}

TEST_CASE("node fit: taints, NoSchedule and NoExecute only, the first one untolerated") {
  const LiveNode node = node_with({}, {{"soft", "", "PreferNoSchedule"},
                                       {"nvidia.com/gpu", "present", "NoSchedule"},
                                       {"evict", "", "NoExecute"}});
  const Json none = Json::array();
  const Taint* first = untolerated_taint(&none, node);
  REQUIRE(first != nullptr);
  CHECK(first->key == "nvidia.com/gpu");  // PreferNoSchedule is no filter
  const Json gpu = Json::parse(R"([{"key": "nvidia.com/gpu", "operator": "Exists"}])");
  REQUIRE(untolerated_taint(&gpu, node) != nullptr);
  CHECK(untolerated_taint(&gpu, node)->key == "evict");
  const Json both = Json::parse(
      R"([{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
          {"key": "evict", "operator": "Exists", "effect": "NoExecute"}])");
  CHECK(untolerated_taint(&both, node) == nullptr);
  const Json wrong_value = Json::parse(
      R"([{"key": "nvidia.com/gpu", "operator": "Equal", "value": "true"}, {"operator": "Exists", "key": "evict"}])");
  CHECK(untolerated_taint(&wrong_value, node)->key == "nvidia.com/gpu");
  const Json everything = Json::parse(R"([{"operator": "Exists"}])");
  CHECK(untolerated_taint(&everything, node) == nullptr);
}

TEST_CASE("node fit: a cordoned node refuses pods that do not tolerate unschedulable") {
  const LiveNode cordoned = node_with({}, {}, true);
  const Json none = Json::array();
  CHECK(refused_as_unschedulable(&none, cordoned));
  const Json tolerates = Json::parse(
      R"([{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}])");
  CHECK_FALSE(refused_as_unschedulable(&tolerates, cordoned));
  CHECK_FALSE(refused_as_unschedulable(&none, node_with({})));
}

TEST_CASE("node fit: GPU requests against free amounts, per resource") {
  const ResourceAmounts free{{"nvidia.com/gpu", 3}, {"nvidia.com/mig-1g.10gb", 2}};
  CHECK(gpu_requests_fit({{"nvidia.com/gpu", 3}}, free));
  CHECK_FALSE(gpu_requests_fit({{"nvidia.com/gpu", 4}}, free));
  CHECK(gpu_requests_fit({{"nvidia.com/gpu", 1}, {"nvidia.com/mig-1g.10gb", 2}}, free));
  CHECK_FALSE(gpu_requests_fit({{"nvidia.com/mig-2g.20gb", 1}}, free));  // absent: 0
}

TEST_CASE("node fit: a node's class, the most specific, and MIG single's product suffix") {
  const auto policy = testing::live_policy(R"(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: classes}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
    a100mig:
      nodeSelector:
        nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]
        nvidia.com/mig.config: [all-1g.10gb]
      mig: {strategy: mixed, profiles: [1g.10gb]}
    h100single:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-H100-80GB-HBM3]}
      mig: {strategy: single, profiles: [1g.10gb, 3g.40gb]}
)");
  auto cls = [&](NodeLabels labels) {
    const GpuClass* c = class_of_node(node_with(std::move(labels)), *policy);
    return c != nullptr ? c->name : std::string("-");
  };
  CHECK(cls({{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}}) == "a100");
  CHECK(cls({{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
             {"nvidia.com/mig.config", "all-1g.10gb"}}) == "a100mig");
  CHECK(cls({{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb"}}) == "h100single");
  CHECK(cls({{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3-MIG-2g.20gb"}}) == "-");
  CHECK(cls({{"nvidia.com/gpu.product", "NVIDIA-L40S"}}) == "-");
}

}  // namespace
}  // namespace node_fit_test
}  // namespace gpuadmit::fleet
