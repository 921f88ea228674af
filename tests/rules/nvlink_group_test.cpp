#include "rules/nvlink_group.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace nvlink_group_test {
namespace {

// pcie: 8 PCIe GPUs a node, NVLink-bridged in pairs; hgx: 8 GPUs on one NVSwitch board; mig:
// slices, which have no NVLink between them.
constexpr std::string_view kPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec:
  classes:
    pcie:
      nodeSelector: {gpu.example.com/pool: [pcie]}
      gpusPerNode: 8
      topology: {nvlinkGroup: 2, domainLabel: topology.kubernetes.io/zone}
    hgx:
      nodeSelector: {gpu.example.com/pool: [hgx]}
      gpusPerNode: 8
      topology: {nvlinkGroup: 8}
    mig:
      nodeSelector: {gpu.example.com/pool: [mig]}
      gpusPerNode: 8
      mig: {strategy: mixed, profiles: [1g.10gb]}
      topology: {nvlinkGroup: 1}
  tenants:
    - name: t
      namespaces: [t]
)YAML";

std::string gpus(std::string_view name, int n) {
  return container(name, "", R"({"nvidia.com/gpu":")" + std::to_string(n) + "\"}");
}
std::string in_class(std::string_view containers, std::string_view cls) {
  return make_pod(containers, "", R"({"gpuadmit.io/class":")" + std::string(cls) + "\"}");
}

TEST_CASE("rule GPU033: a pod's GPUs within one NVLink group of its class", "[rules][GPU033]") {
  auto policy = policy_from_yaml(kPolicy);
  auto rule = make_nvlink_group_rule();
  REQUIRE(rule->id() == "GPU033");
  REQUIRE(rule->default_action() == Action::kWarn);
  const std::string crosses =
      " of class pcie, whose nodes join their GPUs by NVLink in groups of 2: traffic between its "
      "GPUs crosses PCIe; request at most 2 GPUs per pod and add pods, or use a class whose NVLink "
      "groups hold ";
  run_cases(
      *rule, policy,
      {
          {"one group", "t", in_class(gpus("trainer", 2), "pcie"), {}},
          {"two groups",
           "t",
           in_class(gpus("trainer", 4), "pcie"),
           {"spec | pod requests 4 GPUs (container trainer: 4)" + crosses + "4"}},
          {"the pod's effective request, over containers",
           "t",
           in_class(gpus("a", 2) + "," + gpus("b", 1), "pcie"),
           {"spec | pod requests 3 GPUs (container a: 2, container b: 1)" + crosses + "3"}},
          {"a whole board is one group", "t", in_class(gpus("trainer", 8), "hgx"), {}},
          {"more than a node holds is GPU006's", "t", in_class(gpus("trainer", 16), "pcie"), {}},
          {"MIG slices are not NVLink-joined",
           "t",
           in_class(container("a", "", R"({"nvidia.com/mig-1g.10gb":"2"})"), "mig"),
           {}},
          {"a CPU pod", "t", make_pod(container("web", "")), {}},
      });
}

}  // namespace
}  // namespace nvlink_group_test
}  // namespace gpuadmit::testing
