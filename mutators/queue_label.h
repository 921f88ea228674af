#pragma once
// GPU workloads of a tenant with `queue.name` get the kueue.x-k8s.io/queue-name label where
// Kueue reads it. Mutation name: "queue". See docs/mutations.md §10.

#include <memory>

#include "engine/mutator.h"

namespace gpuadmit {

std::unique_ptr<const Mutator> make_queue_label_mutator();

}  // namespace gpuadmit
