#pragma once
// The pod templates of a distributed GPU workload (PyTorchJob and the other Kubeflow jobs,
// MPIJob, JobSet, RayCluster, Volcano Job) whose class names a topology domain
// (`classes.<c>.topology.domainLabel`) are placed in one domain: Kueue's topology-aware
// scheduling annotation for a tenant that uses Kueue, else required pod affinity on the
// operator's job label. Mutation name: "topology". See docs/mutations.md §11.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_topology_placement_mutator();

}  // namespace gpuadmit
