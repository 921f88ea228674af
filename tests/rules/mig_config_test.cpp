#include "rules/mig_config.h"

#include "tests/rules/config_rule_util.h"

namespace gpuadmit::testing {
namespace mig_config_test {
namespace {

// a100: A100-80GB slices, on nodes of any MIG config; balanced: nodes the MIG manager partitions
// with `all-balanced` (node label nvidia.com/mig.config, GPU Operator docs "GPU Operator with
// MIG").
constexpr std::string_view kPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      mig: {strategy: mixed, profiles: [1g.10gb, 2g.20gb, 3g.40gb]}
    balanced:
      nodeSelector: {nvidia.com/mig.config: [all-balanced]}
      mig: {strategy: mixed, profiles: [1g.5gb, 2g.10gb]}
    whole:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-H100-80GB-HBM3]}
)YAML";

// mig-parted's format (mig-parted pkg/types/v1, README "Configuration"): mig-configs.<name> is
// a list of {devices, mig-enabled, mig-devices: {profile: count}}.
TEST_CASE("rule GPU029: MIG configs create the classes' profiles", "[rules][GPU029]") {
  const auto policy = policy_from_yaml(kPolicy);
  const auto rule = make_mig_config_rule();
  REQUIRE(rule->id() == "GPU029");
  CHECK(rule->default_action() == Action::kDeny);
  CHECK(rule->handles("", ""));
  CHECK(rule->handles("v1", "ConfigMap"));
  CHECK(rule->handles("nvidia.com/v1", "ClusterPolicy"));

  // The mig-parted example: no config creates A100-80GB's 2g.20gb or 3g.40gb, and all-balanced
  // creates 3g.20gb slices that class balanced does not allow.
  CHECK(check_config(*rule, policy, corpus_object("configs/mig-parted__config.yaml")) ==
        std::vector<std::string>{
            "mig-configs | class a100 allows MIG profile 2g.20gb, which no configuration of the "
            "mig-parted config creates: pods asking for nvidia.com/mig-2g.20gb stay Pending; add "
            "it to a mig-devices list or remove it from the class's mig.profiles",
            "mig-configs | class a100 allows MIG profile 3g.40gb, which no configuration of the "
            "mig-parted config creates: pods asking for nvidia.com/mig-3g.40gb stay Pending; add "
            "it to a mig-devices list or remove it from the class's mig.profiles",
            "mig-configs | the MIG configurations of class balanced (all-balanced) create 3g.20gb "
            "slices, which the class does not allow (mig.profiles): they are never requested; add "
            "them to the class or change the configurations"});

  // The GPU Operator's default ConfigMap (config.yaml) creates every A100-80GB profile, and its
  // all-balanced entries each carry a device-filter (one GPU model each): nothing is judged idle.
  CHECK(check_config(*rule, policy, corpus_object("configs/gpu-operator__0400_configmap.yaml"))
            .empty());

  const Json missing = yaml_object(
      "version: v1\nmig-configs:\n  all-1g.10gb:\n  - devices: all\n    mig-enabled: true\n"
      "    mig-devices: {1g.10gb: 7, 2g.20gb: 0}\n  disabled:\n  - devices: all\n    mig-enabled: "
      "false\n"
      "    mig-devices: {3g.40gb: 2}\n");
  CHECK(check_config(*rule, policy, missing) ==
        std::vector<std::string>{
            "mig-configs | class a100 allows MIG profile 2g.20gb, which no configuration of the "
            "mig-parted config creates: pods asking for nvidia.com/mig-2g.20gb stay Pending; add "
            "it to a mig-devices list or remove it from the class's mig.profiles",
            "mig-configs | class a100 allows MIG profile 3g.40gb, which no configuration of the "
            "mig-parted config creates: pods asking for nvidia.com/mig-3g.40gb stay Pending; add "
            "it to a mig-devices list or remove it from the class's mig.profiles",
            "mig-configs | class balanced selects nodes labelled "
            "nvidia.com/mig.config=all-balanced, which the mig-parted config does not define: the "
            "MIG manager cannot apply it; add mig-configs.all-balanced or select a config it "
            "defines",
            "mig-configs | class balanced allows MIG profile 1g.5gb, which none of its MIG "
            "configurations (all-balanced) creates: pods asking for nvidia.com/mig-1g.5gb stay "
            "Pending; add it to a mig-devices list or remove it from the class's mig.profiles",
            "mig-configs | class balanced allows MIG profile 2g.10gb, which none of its MIG "
            "configurations (all-balanced) creates: pods asking for nvidia.com/mig-2g.10gb stay "
            "Pending; add it to a mig-devices list or remove it from the class's mig.profiles"});

  CHECK(check_config(*rule, policy,
                     yaml_object("version: v1\nmig-configs: {a: [1, {mig-enabled: true, "
                                 "mig-devices: [x]}], b: 3}\n"))
            .size() == 6);  // nothing created: a100's 3 profiles; balanced's config and 2 profiles
}

// The GPU Operator's ClusterPolicy sets one MIG strategy for the device plugin and GFD of every
// node (gpu-operator api/nvidia/v1 MIGSpec); the corpus' sample says single.
TEST_CASE("rule GPU029: the ClusterPolicy's MIG strategy", "[rules][GPU029]") {
  const auto policy = policy_from_yaml(kPolicy);
  const auto rule = make_mig_config_rule();
  CHECK(check_config(*rule, policy, corpus_object("configs/gpu-operator__v1_clusterpolicy.yaml")) ==
        std::vector<std::string>{
            "spec.mig.strategy | ClusterPolicy gpu-cluster-policy sets MIG strategy single for "
            "every node, class a100 says mixed (mig.strategy); set spec.mig.strategy: mixed or "
            "change the class",
            "spec.mig.strategy | ClusterPolicy gpu-cluster-policy sets MIG strategy single for "
            "every node, class balanced says mixed (mig.strategy); set spec.mig.strategy: mixed or "
            "change the class"});
  const Json unsaid = yaml_object(
      "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: "
      "{name: c}\nspec: {mig: {}}\n");
  CHECK(check_config(*rule, policy, unsaid).empty());
}

}  // namespace
}  // namespace mig_config_test
}  // namespace gpuadmit::testing
