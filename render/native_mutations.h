#pragma once
// The mutations (SPEC §4, docs/mutations.md) as the `mutations` of one MutatingAdmissionPolicy
// (docs/native.md): each a JSONPatch expression over the model of render/native_model.h, in the
// webhook's order, so that each sees what the ones before it wrote (the API server applies a
// policy's mutations in order; there is no order across policies).
//
// Every patch replaces a whole member (a container list, the tolerations, the affinity, a
// metadata map) with its new value, rebuilt in CEL: one operation per pod spec and member, so
// no list of lists has to be flattened (CEL has no flatten before 1.34), and no operation
// depends on another's index. Values are plain CEL maps and lists, never `Object{}` literals
// (kubernetes/kubernetes#142181: a list value holding one panics the 1.36 API server).

#include <string>
#include <vector>

#include "engine/json.h"
#include "policies/compiled_policy.h"

namespace gpuadmit::render::native {

struct NativeMutation {
  std::string name;  // the mutators' names (docs/mutations.md), in order: "class,tolerations"
  Json mutation;     // {patchType: JSONPatch, jsonPatch: {expression}}
};

// The mutations (SPEC §4 order; resource-names before class: neither reads what the other
// writes), for every namespace: the tenant's values read from its record
// (render/native_tenants.h); those the policy turns off, or that no tenant can use (no tenant
// sets defaults, no class has taints), left out. Two entries: the container resources
// (requests-equal-limits, resource-names, defaults: chained per container), class, tolerations
// and node-affinity; then priority, strip-gpu-pool, gpu-visibility and queue. Within an entry
// no mutator writes what another writes or reads (native_mutations.cc, mutations()).
std::vector<NativeMutation> mutations(const CompiledPolicy& policy);

// The variable `pg` the defaults mutation reads: a CEL map from each distinct perGPU quantity of
// the tenants' defaults to its products (the CEL quantity library cannot multiply); "{}" for
// none.
std::string per_gpu_tables(const CompiledPolicy& policy);

}  // namespace gpuadmit::render::native
