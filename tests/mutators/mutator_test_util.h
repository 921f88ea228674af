#pragma once
// Shared by the mutator tests: one fleet policy (with knobs for the enforcement fields), running
// one mutator over every pod spec of an object, and table-driven cases asserting the exact
// resulting object (key order included) and idempotence.
//
//   auto policy = policy_from_yaml(fleet_policy());
//   run_mutation_cases(*make_tolerations_mutator(), policy, {{"name", "ml-a", input, expected}});

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/mutator.h"
#include "tests/support/fixtures.h"

namespace gpuadmit::testing {

// Classes of every shape the mutators care about:
//   a100  MIG mixed, two taints (one without a value), one label
//   h100  MIG single (with a +me profile)
//   l4    time-slicing with renameByDefault
//   v100  time-slicing without renaming, a PreferNoSchedule taint, no taint value
//   t4    a taint with a value, two labels
// Tenants: ml (defaults, priority by workload), web (priority default only), bare (neither).
inline std::string fleet_policy(std::string_view requests_equal_limits = "fix",
                                std::string_view non_gpu_on_gpu_pool = "deny") {
  std::string yaml = R"YAML(
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
      mig:
        strategy: mixed
        profiles: [1g.10gb, 3g.40gb, 1g.10gb+me]
    h100:
      nodeSelector:
        nvidia.com/gpu.product: [NVIDIA-H100-80GB-HBM3]
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
      gpusPerNode: 8
      mig:
        strategy: single
        profiles: [1g.10gb, 1g.10gb+me]
    l4:
      nodeSelector:
        nvidia.com/gpu.product: [NVIDIA-L4]
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
      gpusPerNode: 4
      timeSlicing: {replicas: 4, renameByDefault: true}
    v100:
      nodeSelector:
        nvidia.com/gpu.product: [Tesla-V100-SXM2-16GB-SHARED]
      taints:
        - {key: pool.example.com/v100, effect: PreferNoSchedule}
      gpusPerNode: 8
      timeSlicing: {replicas: 2}
    t4:
      nodeSelector:
        nvidia.com/gpu.product: [Tesla-T4]
        cloud.example.com/pool: [t4-a, t4-b]
      taints:
        - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
      gpusPerNode: 4
  priorityClasses:
    gpu-inference: {value: 100000}
    gpu-training: {value: 10000}
    gpu-batch: {value: 1000, preemptionPolicy: Never}
    cluster-default: {value: 0, globalDefault: true}
  tenants:
    - name: ml
      namespaces: ["ml-.*"]
      defaultClass: a100
      defaults:
        request: {cpu: "4", memory: 16Gi}
        limit: {memory: 64Gi}
        perGPU: {cpu: "8", memory: 48Gi}
      priority:
        default: gpu-batch
        byWorkload: {training: gpu-training, inference: gpu-inference}
    - name: web
      namespaces: ["web-.*"]
      defaultClass: t4
      priority:
        default: gpu-inference
    - name: bare
      namespaces: ["bare"]
      defaultClass: l4
  enforcement:
    requestsEqualLimits: REL
    nonGpuOnGpuPool: NGP
)YAML";
  yaml.replace(yaml.find("REL"), 3, requests_equal_limits);
  yaml.replace(yaml.find("NGP"), 3, non_gpu_on_gpu_pool);
  return yaml;
}

struct MutationResult {
  bool changed = false;
  Json object;
};

// Runs `mutator` over every pod spec of `object` (as the pipeline does, each with its context
// resolved first). `tweak` may adjust the request context (e.g. daemonset_owned).
inline MutationResult apply_mutator(const Mutator& mutator, const PolicyPtr& policy,
                                    const Json& object, const std::string& ns,
                                    const std::function<void(RequestContext&)>& tweak = {}) {
  MutationResult result{false, object};
  const size_t specs = find_pod_specs(object, *policy).size();
  for (size_t i = 0; i < specs; ++i) {
    PodFixture pod(policy, result.object.dump(), ns, i);
    if (tweak) tweak(pod.request);
    PodWriter writer(pod.view(), pod.object);
    result.changed |= mutator.mutate(writer, pod.ctx);
    result.object = pod.object;
  }
  return result;
}

struct MutationCase {
  std::string name;
  std::string ns;
  std::string input;     // JSON object
  std::string expected;  // JSON object; "" = unchanged
};

// Each case: the exact expected object (key order included), `changed` exactly when it differs
// from the input, and idempotence: the output through the mutator again changes nothing.
inline void run_mutation_cases(const Mutator& mutator, const PolicyPtr& policy,
                               const std::vector<MutationCase>& cases,
                               const std::function<void(RequestContext&)>& tweak = {}) {
  for (const MutationCase& c : cases) {
    INFO("case: " << c.name);
    const Json input = Json::parse(c.input);
    const Json expected = c.expected.empty() ? input : Json::parse(c.expected);
    const MutationResult once = apply_mutator(mutator, policy, input, c.ns, tweak);
    CHECK(once.object.dump(2) == expected.dump(2));
    CHECK(once.changed == (input.dump() != expected.dump()));
    const MutationResult twice = apply_mutator(mutator, policy, once.object, c.ns, tweak);
    CHECK_FALSE(twice.changed);
    CHECK(twice.object.dump(2) == once.object.dump(2));
  }
}

}  // namespace gpuadmit::testing
