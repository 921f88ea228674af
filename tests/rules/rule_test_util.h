#pragma once
// Shared by the rule tests: one fleet policy, pod builders, and running one rule on a pod.
//
//   auto policy = policy_from_yaml(kFleetPolicy);
//   PodFixture pod(policy, make_pod(container("trainer", R"({"nvidia.com/gpu": "1"})")), "ml-a");
//   CHECK(check_rule(*make_requests_equal_limits_rule(), pod) == std::vector<std::string>{...});

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "engine/document_rule.h"
#include "engine/rule.h"
#include "tests/support/fixtures.h"

namespace gpuadmit::testing {

// Classes of every shape the rules care about, tenants with and without restrictions, and the
// namespace node-agents where DaemonSets are node agents.
inline constexpr std::string_view kFleetPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: fleet
spec:
  gpuResources: [amd.com/gpu]
  classes:
    a100:
      nodeSelector:
        nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
        - {key: pool.example.com/a100, value: "true", effect: NoSchedule}
      gpusPerNode: 8
      nodes: 4
    mig:
      nodeSelector:
        pool.example.com/mig: [a100]
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
      gpusPerNode: 8
      mig:
        strategy: mixed
        profiles: [1g.10gb, 2g.20gb, 3g.40gb, 1g.10gb+me]
    mig-single:
      nodeSelector:
        nvidia.com/gpu.product: [NVIDIA-H100-80GB-HBM3]
      gpusPerNode: 8
      mig:
        strategy: single
        profiles: [1g.10gb, 3g.40gb]
    l4:
      nodeSelector:
        nvidia.com/gpu.product: [NVIDIA-L4]
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
      gpusPerNode: 4
      timeSlicing: {replicas: 4, renameByDefault: true, failRequestsGreaterThanOne: true}
    t4:
      nodeSelector:
        nvidia.com/gpu.product: [Tesla-T4]
      gpusPerNode: 4
      timeSlicing: {replicas: 2, renameByDefault: false, failRequestsGreaterThanOne: true}
    v100:
      nodeSelector:
        nvidia.com/gpu.product: [Tesla-V100-SXM2-16GB]
      timeSlicing: {replicas: 2}
  priorityClasses:
    gpu-inference: {value: 100000}
    gpu-training: {value: 10000}
    gpu-batch: {value: 1000, preemptionPolicy: Never}
    cluster-default: {value: 0, globalDefault: true}
  tenants:
    - name: ml-team
      namespaces: ["ml-.*"]
      defaultClass: a100
      allowedClasses: [a100, mig, l4, t4]
      limits: {maxGPUsPerContainer: 4, maxGPUsPerPod: 6}
      quota: {gpus: 10}
      priority:
        default: gpu-batch
        allowed: [gpu-batch, gpu-training]
    - name: web
      namespaces: [web]
      allowedClasses: []
    - name: research
      namespaces: [research]
      allowedClasses: [l4, a100]
      quota: {gpus: 3}
    - name: open
      namespaces: [open]
  enforcement:
    nodeAgents: {namespaces: [node-agents]}
)YAML";

// {"name": <name>, "resources": {"requests": <requests>, "limits": <limits>}}; "" omits a section.
inline std::string container(std::string_view name, std::string_view requests,
                             std::string_view limits = "", std::string_view extra = "") {
  std::string resources;
  if (!requests.empty()) resources += "\"requests\":" + std::string(requests);
  if (!limits.empty()) {
    if (!resources.empty()) resources += ",";
    resources += "\"limits\":" + std::string(limits);
  }
  std::string out = "{\"name\":\"" + std::string(name) + "\",\"image\":\"busybox\"";
  if (!resources.empty()) out += ",\"resources\":{" + resources + "}";
  if (!extra.empty()) out += "," + std::string(extra);
  return out + "}";
}

// A Pod with the given (comma-separated) containers; `spec_extra` is appended to the spec
// ("\"initContainers\":[...]"), `annotations` is the metadata.annotations object.
inline std::string make_pod(std::string_view containers, std::string_view spec_extra = "",
                            std::string_view annotations = "{}") {
  std::string out = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":)" +
                    std::string(annotations) + R"(},"spec":{"containers":[)" +
                    std::string(containers) + "]";
  if (!spec_extra.empty()) out += "," + std::string(spec_extra);
  return out + "}}";
}

// A Deployment whose template has the given containers and template annotations.
inline std::string make_deployment(std::string_view containers, std::string_view spec_extra = "",
                                   std::string_view annotations = "{}") {
  std::string out =
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":3,)"
      R"("template":{"metadata":{"annotations":)" +
      std::string(annotations) + R"(},"spec":{"containers":[)" + std::string(containers) + "]";
  if (!spec_extra.empty()) out += "," + std::string(spec_extra);
  return out + "}}}}";
}

// Every violation as "<path> | <message>", in the order the rule reported them.
inline std::vector<std::string> check_rule(const Rule& rule, PodFixture& pod) {
  std::vector<Violation> violations;
  rule.check(pod.view(), pod.ctx, violations);
  std::vector<std::string> out;
  for (const Violation& v : violations) out.push_back(v.path + " | " + v.message);
  return out;
}

// One row of a rule's table.
struct RuleCase {
  std::string name;
  std::string ns;
  std::string object;
  std::vector<std::string> expected;  // "<path> | <message>"
};

inline void run_cases(const Rule& rule, const PolicyPtr& policy,
                      const std::vector<RuleCase>& cases) {
  for (const RuleCase& c : cases) {
    DYNAMIC_SECTION(c.name) {
      INFO(c.object);
      PodFixture pod(policy, c.object, c.ns);
      CHECK(check_rule(rule, pod) == c.expected);
    }
  }
}

// Every violation of a document rule (GPU016, GPU017) as "<path> | <message>", in report order.
inline std::vector<std::string> check_document(const DocumentRule& rule, const PolicyPtr& policy,
                                               std::string_view object, std::string_view ns) {
  std::vector<Violation> violations;
  rule.check(Json::parse(object), DocumentContext{policy.get(), ns}, violations);
  std::vector<std::string> out;
  for (const Violation& v : violations) out.push_back(v.path + " | " + v.message);
  return out;
}

}  // namespace gpuadmit::testing
