#include "mutators/gpu_visibility.h"

#include "tests/mutators/mutator_test_util.h"

namespace gpuadmit::testing {
namespace gpu_visibility_test {
namespace {

constexpr std::string_view kVoid = R"({"name":"NVIDIA_VISIBLE_DEVICES","value":"void"})";

std::string pod(const std::string& containers, const std::string& extra = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":)" +
         containers + extra + "}}";
}

std::string void_env() { return "[" + std::string(kVoid) + "]"; }

TEST_CASE("mutator gpu-visibility: containers that request no GPU get NVIDIA_VISIBLE_DEVICES=void",
          "[mutators][gpu-visibility]") {
  auto policy = policy_from_yaml(fleet_policy());
  auto mutator = make_gpu_visibility_mutator();
  CHECK(mutator->name() == "gpu-visibility");
  const std::string gpu = R"({"name":"t","resources":{"limits":{"nvidia.com/gpu":1}}})";
  run_mutation_cases(
      *mutator, policy,
      {
          {"a CPU-only pod: env created as a list", "default", pod(R"([{"name":"c"}])"),
           pod(R"([{"name":"c","env":)" + void_env() + "}]")},
          {"appended after the container's own variables", "default",
           pod(R"([{"name":"c","env":[{"name":"A","value":"1"}]}])"),
           pod(R"([{"name":"c","env":[{"name":"A","value":"1"},)" + std::string(kVoid) + "]}]")},
          {"env: null counts as absent", "default", pod(R"([{"name":"c","env":null}])"),
           pod(R"([{"name":"c","env":)" + void_env() + "}]")},
          {"a GPU container is untouched; its sidecar and init container get void", "ml-a",
           pod("[" + gpu + R"(,{"name":"s"}])", R"(,"initContainers":[{"name":"i"}])"),
           pod("[" + gpu + R"(,{"name":"s","env":)" + void_env() + "}]",
               R"(,"initContainers":[{"name":"i","env":)" + void_env() + "}]")},
          {"ephemeral containers too", "default",
           pod(R"([{"name":"c","env":[]}])", R"(,"ephemeralContainers":[{"name":"debug"}])"),
           pod(R"([{"name":"c","env":)" + void_env() + "}]",
               R"(,"ephemeralContainers":[{"name":"debug","env":)" + void_env() + "}]")},
          {"a GPU init container counts as requesting GPUs", "ml-a",
           pod(R"([{"name":"c","env":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"void"}]}])",
               R"(,"initContainers":[{"name":"i","resources":{"limits":{"nvidia.com/mig-1g.10gb":"1"}}}])"),
           ""},
          {"nvidia.com/gpu: 0 is no request", "default",
           pod(R"([{"name":"c","resources":{"limits":{"nvidia.com/gpu":"0"}}}])"),
           pod(R"([{"name":"c","resources":{"limits":{"nvidia.com/gpu":"0"}},"env":)" + void_env() +
               "}]")},
          {"a policy gpuResources name counts as a GPU", "default",
           pod(R"([{"name":"c","resources":{"limits":{"amd.com/gpu":1}}}])"), ""},
          {"the variable set by the user, whatever its value, is left to GPU024", "default",
           pod(R"([{"name":"a","env":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"all"}]},
                  {"name":"b","env":[{"name":"NVIDIA_VISIBLE_DEVICES","valueFrom":{"configMapKeyRef":{"name":"x","key":"y"}}}]}])"),
           ""},
          {"an env that is not a list is left to the API server", "default",
           pod(R"([{"name":"c","env":{"A":"1"}}])"), ""},
          {"a Deployment template", "default",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
               "spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}})",
           R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
               "spec":{"template":{"spec":{"containers":[{"name":"c","env":)" +
               void_env() + "}]}}}}"},
          {"a DaemonSet in a nodeAgents namespace (node agents need every GPU) is untouched",
           "node-agents",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"dcgm"},
               "spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}})",
           ""},
          {"a DaemonSet elsewhere is a workload like any other", "default",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"dcgm"},
               "spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}})",
           R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"dcgm"},
               "spec":{"template":{"spec":{"containers":[{"name":"c","env":)" +
               void_env() + "}]}}}}"},
      });
}

TEST_CASE(
    "mutator gpu-visibility: DaemonSet pods, UPDATE, ephemeral containers and the policy "
    "switch",
    "[mutators][gpu-visibility]") {
  auto mutator = make_gpu_visibility_mutator();
  CHECK(mutator->evaluates_added_ephemeral_containers());
  const std::string input = pod(R"([{"name":"c"}])");
  auto fix = policy_from_yaml(fleet_policy());
  run_mutation_cases(*mutator, fix,
                     {{"DaemonSet-owned pod in a nodeAgents namespace", "node-agents", input, ""},
                      {"DaemonSet-owned pod elsewhere", "ml-a", input,
                       pod(R"([{"name":"c","env":)" + void_env() + "}]")}},
                     [](RequestContext& r) { r.daemonset_owned = true; });
  // A template that an UPDATE changed gets what a CREATE gives it (docs/decisions.md,
  // "Controllers converge"); unchanged templates never reach the mutators.
  const std::string deployment =
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
          "spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}})";
  run_mutation_cases(*mutator, fix,
                     {{"UPDATE of a template", "default", deployment,
                       R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
                           "spec":{"template":{"spec":{"containers":[{"name":"c","env":)" +
                           void_env() + "}]}}}}"}},
                     [](RequestContext& r) { r.operation = Operation::kUpdate; });
  // pods/ephemeralcontainers: only the ephemeral container the UPDATE adds.
  const std::string debugged =
      pod(R"([{"name":"c"}])", R"(,"ephemeralContainers":[{"name":"old"},{"name":"dbg"}])");
  run_mutation_cases(*mutator, fix,
                     {{"the added ephemeral container only", "default", debugged,
                       pod(R"([{"name":"c"}])", R"(,"ephemeralContainers":[{"name":"old"},)"
                                                R"({"name":"dbg","env":)" +
                                                    void_env() + "}]")}},
                     [](RequestContext& r) {
                       r.operation = Operation::kUpdate;
                       r.ephemeral_update = true;
                       r.added_ephemeral_containers = {"dbg"};
                     });
  for (const char* mode : {"deny", "warn", "off"}) {
    std::string yaml = fleet_policy();
    yaml += "    gpuVisibility: ";
    yaml += mode;
    yaml += "\n";
    auto policy = policy_from_yaml(yaml);
    INFO(mode);
    run_mutation_cases(*mutator, policy, {{"not fix: no mutation", "default", input, ""}});
  }
}

}  // namespace
}  // namespace gpu_visibility_test
}  // namespace gpuadmit::testing
