// A class's topology (docs/decisions-policy.md, "Topology"): `topology: {nvlinkGroup,
// domainLabel}` read, and every error `policy check` reports for it, with its location.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "policies/loader.h"
#include "tests/support/policy_errors.h"

namespace gpuadmit {
namespace topology_policy_test {

using testing::policy_errors;
using testing::replaced;
using Errors = testing::PolicyErrors;
namespace {

constexpr const char* kPolicy = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: topology
spec:
  classes:
    gb200:
      gpusPerNode: 4
      topology: {nvlinkGroup: 4, domainLabel: nvidia.com/gpu.clique}
    pcie:
      topology: {nvlinkGroup: 2}
    l4: {}
)YAML";

}  // namespace

TEST_CASE("policy: class topology is read", "[policy][topology]") {
  PolicyLoadResult loaded = load_policy(kPolicy, "p.yaml");
  REQUIRE(loaded.ok());
  const Policy& p = *loaded.policy;
  REQUIRE(p.classes[0].topology.has_value());
  CHECK(p.classes[0].topology->nvlink_group == 4);
  CHECK(p.classes[0].topology->domain_label == "nvidia.com/gpu.clique");
  CHECK(p.classes[1].topology->nvlink_group == 2);
  CHECK(p.classes[1].topology->domain_label.empty());
  CHECK_FALSE(p.classes[2].topology.has_value());
}

TEST_CASE("policy: topology errors", "[policy][topology]") {
  CHECK(policy_errors(replaced(kPolicy, "nvlinkGroup: 4,", "nvlinkGroup: 8,")) ==
        Errors{"spec.classes.gb200.topology.nvlinkGroup: nvlinkGroup 8 is more than gpusPerNode "
               "4: an NVLink group is part of one node (p.yaml:9:31)"});
  CHECK(policy_errors(replaced(kPolicy, "nvlinkGroup: 2}", "nvlinkGroup: 0}")).size() == 1);
  for (const char* key : {"-bad", "nvidia.com/", "Upper.Case/x", "a/b/c", "x y"}) {
    INFO(key);
    CHECK(policy_errors(replaced(kPolicy, "nvidia.com/gpu.clique", key)) ==
          Errors{"spec.classes.gb200.topology.domainLabel: invalid label key \"" +
                 std::string(key) +
                 "\": must be a Kubernetes label key such as nvidia.com/gpu.clique (p.yaml:9:47)"});
  }
  CHECK(policy_errors(replaced(kPolicy, "{nvlinkGroup: 2}", "{nvlinkGroups: 2}")).size() == 1);
}

}  // namespace topology_policy_test
}  // namespace gpuadmit
