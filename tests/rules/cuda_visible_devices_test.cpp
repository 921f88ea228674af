#include "rules/cuda_visible_devices.h"

#include "tests/rules/rule_test_util.h"

namespace gpuadmit::testing {
namespace cuda_visible_devices_test {
namespace {

std::string with_env(std::string_view name, std::string_view gpus, std::string_view env) {
  return container(name, "", R"({"nvidia.com/gpu":")" + std::string(gpus) + "\"}",
                   R"("env":[)" + std::string(env) + "]");
}
std::string cuda(std::string_view value) {
  return R"({"name":"CUDA_VISIBLE_DEVICES","value":")" + std::string(value) + "\"}";
}
std::string finding(std::string_view path, std::string_view who, std::string_view value,
                    std::string_view why) {
  return std::string(path) + " | " + std::string(who) +
         " sets CUDA_VISIBLE_DEVICES=" + std::string(value) + ": " + std::string(why) +
         "; the device plugin already gives the container exactly its GPUs, numbered from 0: "
         "remove CUDA_VISIBLE_DEVICES";
}

// CUDA numbers the devices a process sees from 0 and stops at the first entry that names none
// (CUDA C++ Programming Guide, "CUDA Environment Variables"); the device plugin makes exactly the
// allocated GPUs visible (k8s-device-plugin README: NVIDIA_VISIBLE_DEVICES per container).
TEST_CASE("rule GPU032: hard-coded CUDA_VISIBLE_DEVICES on a GPU container", "[rules][GPU032]") {
  auto policy = policy_from_yaml(kFleetPolicy);
  auto rule = make_cuda_visible_devices_rule();
  REQUIRE(rule->id() == "GPU032");
  REQUIRE(rule->default_action() == Action::kWarn);
  const std::string c0 = "spec.containers[0].env[0].value";
  run_cases(
      *rule, policy,
      {
          {"redundant",
           "ml-a",
           make_pod(with_env("trainer", "2", cuda("0,1"))),
           {finding(c0, "container trainer", "0,1", "it gets 2 GPUs, which CUDA already sees")}},
          {"indices past the allocation",
           "ml-a",
           make_pod(with_env("trainer", "2", cuda("2, 3"))),
           {finding(c0, "container trainer", "2, 3",
                    "it gets 2 GPUs, numbered 0 to 1, and 2, 3 names none of them")}},
          {"fewer than allocated",
           "ml-a",
           make_pod(with_env("trainer", "4", cuda("0"))),
           {finding(c0, "container trainer", "0",
                    "it gets 4 GPUs and names 1: the others stay idle")}},
          {"a UUID",
           "ml-a",
           make_pod(with_env("trainer", "1", cuda("GPU-8f6c1d2e-0000-1111-2222-333344445555"))),
           {finding(c0, "container trainer", "GPU-8f6c1d2e-0000-1111-2222-333344445555",
                    "a GPU UUID names one node's device, not the ones allocated to the pod")}},
          {"empty hides them all",
           "ml-a",
           make_pod(with_env("trainer", "1", cuda(""))),
           {finding(c0, "container trainer", "",
                    "it gets 1 GPU, numbered 0 to 0, and \"\" names none of them")}},
          {"second env entry of a sidecar",
           "ml-a",
           make_pod(container("app", "") + "," +
                    with_env("worker", "1", R"({"name":"A","value":"b"},)" + cuda("0"))),
           {finding("spec.containers[1].env[1].value", "container worker", "0",
                    "it gets 1 GPU, which CUDA already sees")}},
          {"from valueFrom: not hard-coded",
           "ml-a",
           make_pod(with_env("trainer", "1",
                             R"({"name":"CUDA_VISIBLE_DEVICES","valueFrom":{"fieldRef":)"
                             R"({"fieldPath":"metadata.name"}}})")),
           {}},
          {"a container without GPUs",
           "ml-a",
           make_pod(container("web", "", "", R"("env":[)" + cuda("0") + "]")),
           {}},
      });
}

}  // namespace
}  // namespace cuda_visible_devices_test
}  // namespace gpuadmit::testing
