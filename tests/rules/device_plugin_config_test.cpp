#include "rules/device_plugin_config.h"

#include "tests/rules/config_rule_util.h"

namespace gpuadmit::testing {
namespace device_plugin_config_test {
namespace {

// a100 whole GPUs; t4 time-sliced 2 ways under its own name.
constexpr std::string_view kPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      gpusPerNode: 8
    t4:
      nodeSelector: {nvidia.com/gpu.product: [Tesla-T4]}
      gpusPerNode: 4
      timeSlicing: {replicas: 2}
)YAML";

// The GPU Operator picks a node's config by the node label nvidia.com/device-plugin.config.
constexpr std::string_view kLabelledPolicy = R"YAML(
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: p}
spec:
  classes:
    shared:
      nodeSelector: {nvidia.com/device-plugin.config: [tesla-t4]}
      timeSlicing: {replicas: 4, renameByDefault: true, failRequestsGreaterThanOne: true}
    mig:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      mig: {strategy: mixed, profiles: [1g.10gb]}
)YAML";

const std::string kWhole = "version: v1\nflags:\n  migStrategy: none\n";
std::string sliced(int replicas, const std::string& extra = "") {
  return "version: v1\nsharing:\n  timeSlicing:\n" + extra +
         "    resources:\n    - name: nvidia.com/gpu\n      replicas: " + std::to_string(replicas) +
         "\n";
}

// Field names and meanings: k8s-device-plugin api/config/v1 (sharing.go, replicas.go) and its
// README, "Shared Access to GPUs with CUDA Time-Slicing": renameByDefault advertises
// <name>.shared; failRequestsGreaterThanOne rejects requests of more than one replica.
TEST_CASE("rule GPU028: the device plugin's config against the classes it serves",
          "[rules][GPU028]") {
  const auto policy = policy_from_yaml(kPolicy);
  const auto rule = make_device_plugin_config_rule();
  REQUIRE(rule->id() == "GPU028");
  CHECK(rule->default_action() == Action::kDeny);
  CHECK(rule->handles("v1", "ConfigMap"));
  CHECK(rule->handles("", ""));  // a config file of its own
  CHECK_FALSE(rule->handles("v1", "Secret"));

  const std::string dp = "device plugin config ";
  struct Case {
    std::string name;
    Json object;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"one key per class, each as the class says",
       config_map("dp", {{"a100", kWhole}, {"t4", sliced(2)}}),
       {}},
      {"replicas differ",
       config_map("dp", {{"a100", kWhole}, {"t4", sliced(4)}}),
       {"data[\"t4\"].sharing.timeSlicing.resources[0].replicas | " + dp +
        "\"t4\" of ConfigMap dp shares each GPU 4 ways (sharing.timeSlicing), class t4 says 2 "
        "(timeSlicing.replicas); make them equal"}},
      {"a whole-GPU class time-sliced by its config",
       config_map("dp", {{"a100", sliced(4)}, {"t4", sliced(2)}}),
       {"data[\"a100\"].sharing.timeSlicing.resources[0].replicas | " + dp +
        "\"a100\" of ConfigMap dp shares each GPU 4 ways (sharing.timeSlicing), but class a100 is "
        "not time-sliced in the policy, which counts a whole GPU per nvidia.com/gpu; add "
        "timeSlicing: {replicas: 4} to class a100, or remove the sharing"}},
      {"a time-sliced class whose config shares nothing",
       config_map("dp", {{"a100", kWhole}, {"t4", kWhole}}),
       {"data[\"t4\"].sharing | " + dp +
        "\"t4\" of ConfigMap dp shares no nvidia.com/gpu, but class t4 is time-sliced "
        "(timeSlicing.replicas 2): each GPU is advertised once where the policy counts 2 slots; "
        "add sharing.timeSlicing.resources [{name: nvidia.com/gpu, replicas: 2}]"}},
      {"renamed and failing where the class says neither",
       config_map("dp", {{"t4", sliced(2,
                                       "    renameByDefault: true\n"
                                       "    failRequestsGreaterThanOne: true\n")}}),
       {"data[\"t4\"].sharing.timeSlicing.renameByDefault | " + dp +
            "\"t4\" of ConfigMap dp advertises the shared GPUs as nvidia.com/gpu.shared, class t4 "
            "expects nvidia.com/gpu (timeSlicing.renameByDefault: false); make them agree",
        "data[\"t4\"].sharing.timeSlicing.failRequestsGreaterThanOne | " + dp +
            "\"t4\" of ConfigMap dp has failRequestsGreaterThanOne: true, class t4 says false "
            "(timeSlicing.failRequestsGreaterThanOne); make them agree"}},
      {"a resource's own rename wins over renameByDefault",
       config_map("dp", {{"t4",
                          "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - "
                          "name: nvidia.com/gpu\n      rename: example.com/t4-slice\n"
                          "      replicas: 2\n"}}),
       {"data[\"t4\"].sharing.timeSlicing.resources[0].rename | " + dp +
        "\"t4\" of ConfigMap dp advertises the shared GPUs as example.com/t4-slice, class t4 "
        "expects nvidia.com/gpu (timeSlicing.renameByDefault: false); make them agree"}},
      {"MPS shares like time-slicing",
       config_map("dp", {{"t4",
                          "version: v1\nsharing:\n  mps:\n    resources:\n    - name: "
                          "nvidia.com/gpu\n      replicas: 3\n"}}),
       {"data[\"t4\"].sharing.mps.resources[0].replicas | " + dp +
        "\"t4\" of ConfigMap dp shares each GPU 3 ways (sharing.mps), class t4 says 2 "
        "(timeSlicing.replicas); make them equal"}},
      {"a key that is no class, beside others: nothing to compare",
       config_map("dp", {{"default", sliced(8)}, {"t4", sliced(2)}}),
       {}},
      {"data that is not a device plugin config",
       config_map("x", {{"a", "[1, 2"}, {"b", "hi"}}),
       {}},
      {"malformed configs never throw",
       config_map("dp", {{"t4",
                          "version: v1\nsharing: {timeSlicing: {resources: [1, {name: "
                          "nvidia.com/gpu, replicas: two}]}}\nflags: 3\n"}}),
       {"data[\"t4\"].sharing | " + dp +
        "\"t4\" of ConfigMap dp shares no nvidia.com/gpu, but class t4 is time-sliced "
        "(timeSlicing.replicas 2): each GPU is advertised once where the policy counts 2 slots; "
        "add sharing.timeSlicing.resources [{name: nvidia.com/gpu, replicas: 2}]"}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(check_config(*rule, policy, c.object) == c.expected); }
  }
}

// The shared corpus' real configs: Kubeflow's CI runners share every GPU 2 ways with one
// ConfigMap key (`any`), which serves every class of a policy that binds none by label; the GPU
// Operator's test config (a file of its own) shares 10 ways.
TEST_CASE("rule GPU028: the corpus' device plugin configs", "[rules][GPU028]") {
  const auto policy = policy_from_yaml(kPolicy);
  const auto rule = make_device_plugin_config_rule();
  CHECK(check_config(*rule, policy,
                     corpus_object("configs/kubeflow-trainer__gpu-time-slicing.yml")) ==
        std::vector<std::string>{
            "data[\"any\"].sharing.timeSlicing.resources[0].replicas | device plugin config "
            "\"any\" of ConfigMap gpu-time-slicing-config shares each GPU 2 ways "
            "(sharing.timeSlicing), but class a100 is not time-sliced in the policy, which counts "
            "a whole GPU per nvidia.com/gpu; add timeSlicing: {replicas: 2} to class a100, or "
            "remove the sharing"});
  CHECK(check_config(*rule, policy, corpus_object("configs/gpu-operator__plugin-config.yaml")) ==
        std::vector<std::string>{
            "sharing.timeSlicing.resources[0].replicas | device plugin config shares each GPU 10 "
            "ways (sharing.timeSlicing), but class a100 is not time-sliced in the policy, which "
            "counts a whole GPU per nvidia.com/gpu; add timeSlicing: {replicas: 10} to class "
            "a100, or remove the sharing",
            "sharing.timeSlicing.resources[0].replicas | device plugin config shares each GPU 10 "
            "ways (sharing.timeSlicing), class t4 says 2 (timeSlicing.replicas); make them "
            "equal"});
}

TEST_CASE("rule GPU028: classes bound by the node label, and the MIG strategy", "[rules][GPU028]") {
  const auto policy = policy_from_yaml(kLabelledPolicy);
  const auto rule = make_device_plugin_config_rule();
  const std::string agreeing =
      sliced(4, "    renameByDefault: true\n    failRequestsGreaterThanOne: true\n");
  // Only the key the label names is the shared class's; "other" serves no class of the policy.
  CHECK(check_config(*rule, policy, config_map("dp", {{"tesla-t4", agreeing}, {"other", kWhole}}))
            .empty());
  CHECK(check_config(*rule, policy, config_map("dp", {{"tesla-t4", agreeing}, {"mig", kWhole}})) ==
        std::vector<std::string>{
            "data[\"mig\"].flags.migStrategy | device plugin config \"mig\" of ConfigMap dp has "
            "MIG strategy none, class mig hands out MIG slices with strategy mixed "
            "(mig.strategy); set flags.migStrategy: mixed"});
  CHECK(check_config(*rule, policy,
                     config_map("dp", {{"mig", "version: v1\nflags: {migStrategy: mixed}\n"}}))
            .empty());
}

}  // namespace
}  // namespace device_plugin_config_test
}  // namespace gpuadmit::testing
