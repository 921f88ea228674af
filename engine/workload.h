#pragma once
// Which objects are workloads and where their pod specs are (SPEC §6): the kinds of the table
// (engine/workload_kinds.h) plus the policy's `workloads`, with the replica count each pod spec
// stands for.
//
//   for (const PodSpecLocation& loc : find_pod_specs(deployment, policy))
//     // loc.spec == "/spec/template/spec", loc.replicas == spec.replicas

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit {

struct PodSpecLocation {
  JsonPointer spec;      // the PodSpec: "/spec" for a Pod, "/spec/template/spec" for a Deployment
  JsonPointer metadata;  // its metadata (may be absent in the object): "/metadata",
                         // "/spec/template/metadata"
  bool is_template = false;  // false only for a Pod's own spec
  int64_t replicas = 1;  // pods this spec stands for (product of replicas/parallelism on the way)
  std::string path;      // dotted form of `spec` for messages: "spec.template.spec"
};

// True when (apiVersion, kind) names a workload: a kind of the table with pod templates, or a
// policy workload (which wins over the table for the apiVersion it names).
bool is_workload_kind(std::string_view api_version, std::string_view kind,
                      const CompiledPolicy& policy);

// The pod-spec template paths (SPEC §6 syntax) for a kind, or empty when it is no workload.
std::vector<std::string> pod_spec_patterns(std::string_view api_version, std::string_view kind,
                                           const CompiledPolicy& policy);

// Every pod spec of the object that exists and is a JSON object, in document order.
std::vector<PodSpecLocation> find_pod_specs(const Json& object, const CompiledPolicy& policy);

// Expands one SPEC §6 path ("spec.workers[*].template.spec", "spec.x.*.template.spec") against
// the object; each match's pointer in document order.
std::vector<JsonPointer> expand_path_pattern(const Json& object, std::string_view pattern);

// "/spec/containers/0/resources" → "spec.containers[0].resources".
std::string dotted_path(const JsonPointer& pointer);

}  // namespace gpuadmit
