#pragma once
// The fleet policy the mutator and scheduling tests share, with knobs for the enforcement fields.
//
//   auto policy = policy_from_yaml(fleet_policy());          // tests/support/fixtures.h
//   auto strict = policy_from_yaml(fleet_policy("deny", "strip"));

#include <string>
#include <string_view>

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
    nodeAgents: {namespaces: [node-agents]}
)YAML";
  yaml.replace(yaml.find("REL"), 3, requests_equal_limits);
  yaml.replace(yaml.find("NGP"), 3, non_gpu_on_gpu_pool);
  return yaml;
}

}  // namespace gpuadmit::testing
