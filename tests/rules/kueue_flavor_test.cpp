#include "rules/kueue_flavor.h"

#include "tests/rules/config_rule_util.h"

namespace gpuadmit::testing {
namespace kueue_flavor_test {
namespace {

// Kueue adds a flavor's spec.nodeLabels to the node selector of the pods it admits under it
// (kueue.sigs.k8s.io/docs/concepts/resource_flavor/, "ResourceFlavor labels").
constexpr std::string_view kPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec:
  classes:
    a100:
      nodeSelector:
        karpenter.sh/nodepool: [gpu-a100]
        karpenter.k8s.aws/instance-gpu-name: [a100]
    l4:
      nodeSelector:
        karpenter.sh/nodepool: [gpu-l4]
        karpenter.k8s.aws/instance-gpu-name: [l4]
)YAML";

Json flavor(const std::string& labels) {
  return yaml_object(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: "
      "f}\nspec:\n  nodeLabels: " +
      labels + "\n");
}

TEST_CASE("rule GPU031: a Kueue ResourceFlavor selects a class's nodes", "[rules][GPU031]") {
  const auto policy = policy_from_yaml(kPolicy);
  const auto rule = make_kueue_flavor_rule();
  REQUIRE(rule->id() == "GPU031");
  CHECK(rule->default_action() == Action::kDeny);
  CHECK(rule->handles("kueue.x-k8s.io/v1beta1", "ResourceFlavor"));
  CHECK(rule->handles("kueue.x-k8s.io/v1beta2", "ResourceFlavor"));
  CHECK_FALSE(rule->handles("kueue.x-k8s.io/v1beta2", "ClusterQueue"));

  const std::string never =
      ", which no class of the policy selects: the pods get both Kueue's node labels and their "
      "class's node affinity and never schedule; use a class's label values, or add a class for "
      "these nodes";
  struct Case {
    std::string name;
    Json object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"a class's labels", flavor("{karpenter.sh/nodepool: gpu-a100}"), {}},
      {"all of a class's labels",
       flavor("{karpenter.sh/nodepool: gpu-l4, karpenter.k8s.aws/instance-gpu-name: l4}"),
       {}},
      {"two classes' labels mixed",
       flavor("{karpenter.sh/nodepool: gpu-a100, karpenter.k8s.aws/instance-gpu-name: l4}"),
       {"spec.nodeLabels | ResourceFlavor f puts the workloads it admits on nodes labelled "
        "karpenter.sh/nodepool=gpu-a100, karpenter.k8s.aws/instance-gpu-name=l4" +
        never}},
      {"a GPU the policy has no class for",
       flavor("{karpenter.k8s.aws/instance-gpu-name: h100}"),
       {"spec.nodeLabels | ResourceFlavor f puts the workloads it admits on nodes labelled "
        "karpenter.k8s.aws/instance-gpu-name=h100" +
        never}},
      {"a CPU flavor on a label classes also use", flavor("{karpenter.sh/nodepool: default}"), {}},
      // The shared corpus' Kueue TAS sample (kueue__sample-gpu-queues.yaml) selects by a label of
      // its own.
      {"labels no class uses", flavor("{cloud.provider.com/node-group: tas-group}"), {}},
      {"malformed", flavor("[1]"), {}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(check_config(*rule, policy, c.object) == c.expected); }
  }
}

}  // namespace
}  // namespace kueue_flavor_test
}  // namespace gpuadmit::testing
