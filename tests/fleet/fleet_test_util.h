#pragma once
// Test-only: a policy of three classes and a way to run manifests through the fleet report.
//   a100: 4 nodes × 8 whole GPUs; h100mig: 1 node × 2 MIG GPUs (H100 80 GB: 7 compute and 8
//   memory slices each); l4: 2 nodes × 4 GPUs time-sliced 4 ways (16 replicas per node).

#include <memory>
#include <string>
#include <string_view>

#include "engine/pipeline.h"
#include "fleet/collect.h"
#include "fleet/read.h"
#include "fleet/report.h"
#include "mutators/all_mutators.h"
#include "policies/compiled_policy.h"
#include "policies/loader.h"
#include "rules/all_rules.h"

namespace gpuadmit::fleet::testing {

inline constexpr std::string_view kPolicy = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: fleet-test}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      gpusPerNode: 8
      nodes: 4
    h100mig:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-H100-80GB-HBM3]}
      gpusPerNode: 2
      nodes: 1
      mig: {strategy: mixed, profiles: [1g.10gb, 2g.20gb, 3g.40gb, 7g.80gb]}
    l4:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-L4]}
      gpusPerNode: 4
      nodes: 2
      timeSlicing: {replicas: 4}
  tenants:
    - name: ml
      namespaces: ["ml-.*"]
      defaultClass: a100
      quota: {gpus: 20}
    - name: guests
      namespaces: ["guest"]
      defaultClass: l4
      allowedClasses: [l4]
)YAML";

inline PolicyPtr test_policy(std::string_view yaml = kPolicy) {
  PolicyLoadResult loaded = load_policy(yaml, "policy.yaml");
  if (!loaded.ok()) return nullptr;
  return CompiledPolicy::compile(std::move(*loaded.policy));
}

struct Run {
  FleetInput input;
  FleetReport report;
  std::vector<InputError> errors;
  size_t evaluations = 0;
};

inline Run run_fleet(std::string_view manifests, bool memoize = true,
                     std::string_view policy_yaml = kPolicy) {
  static const Pipeline pipeline(default_mutators(), default_rules());
  const PolicyPtr policy = test_policy(policy_yaml);
  Collector collector(*policy, pipeline, "default", memoize);
  Run r;
  read_text(manifests, "in.yaml", false, collector, r.errors);
  r.evaluations = collector.evaluations();
  r.input = collector.finish();
  r.report = build_report(r.input, *policy);
  return r;
}

inline const ClassReport& class_report(const Run& r, std::string_view name) {
  for (const ClassReport& c : r.report.classes) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no class " + std::string(name));
}

// "ns/name:path" → pods, for comparing groups.
inline std::string group_label(const Run& r, const PodGroup& g) {
  const Workload& w = r.input.workloads[g.workload];
  return w.ns + "/" + w.name + ":" + g.path;
}

}  // namespace gpuadmit::fleet::testing
