#include "mutators/all_mutators.h"

#include "mutators/class_annotation.h"
#include "mutators/defaults.h"
#include "mutators/gpu_visibility.h"
#include "mutators/node_affinity.h"
#include "mutators/priority.h"
#include "mutators/queue_label.h"
#include "mutators/requests_equal_limits.h"
#include "mutators/resource_names.h"
#include "mutators/strip_gpu_pool.h"
#include "mutators/tolerations.h"
#include "mutators/topology_placement.h"

namespace gpuadmit {

// SPEC §4 order. Each step relies on the ones before it: the resource names are renamed after
// requests and limits are paired, defaults count the GPU units under their final names, and
// the strip only ever sees non-GPU pods, which no other mutation touches; the topology placement
// reads the tenant's queue setting, as the queue label does, and writes what no other reads.
std::vector<std::unique_ptr<const Mutator>> default_mutators() {
  std::vector<std::unique_ptr<const Mutator>> mutators;
  mutators.push_back(make_requests_equal_limits_mutator());  // 1. "requests-equal-limits"
  mutators.push_back(make_class_annotation_mutator());       // 2. "class"
  mutators.push_back(make_resource_names_mutator());         // 3. "resource-names"
  mutators.push_back(make_tolerations_mutator());            // 4. "tolerations"
  mutators.push_back(make_node_affinity_mutator());          // 5. "node-affinity"
  mutators.push_back(make_defaults_mutator());               // 6. "defaults"
  mutators.push_back(make_priority_mutator());               // 7. "priority"
  mutators.push_back(make_strip_gpu_pool_mutator());         // 8. "strip-gpu-pool"
  mutators.push_back(make_gpu_visibility_mutator());         // 9. "gpu-visibility"
  mutators.push_back(make_queue_label_mutator());            // 10. "queue"
  mutators.push_back(make_topology_placement_mutator());     // 11. "topology"
  return mutators;
}

}  // namespace gpuadmit
