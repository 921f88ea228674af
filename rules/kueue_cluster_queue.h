#pragma once
// GPU034 (lint): a Kueue ClusterQueue whose GPU resources or GPU quota disagree with the policy,
// judged against the ResourceFlavors and LocalQueues of the same lint run
// (DocumentContext::kueue). Kueue's API: kubernetes-sigs/kueue apis/kueue/v1beta2/
// clusterqueue_types.go (v1beta1 the same but `spec.cohort` for v1beta2's `spec.cohortName`).
//  - deny: a class some flavor of the queue holds (its ResourceFlavor's nodeLabels select the
//    class's nodes, GPU031's match) whose pods request a GPU resource (after gpuadmit's renaming:
//    nvidia.com/gpu, nvidia.com/mig-<profile> for MIG mixed, nvidia.com/gpu.shared for
//    time-slicing with renameByDefault) that no flavor the pods fit covers. Kueue assigns a
//    resource only from the resource group whose coveredResources lists it, and only a flavor
//    whose nodeLabels match the pod's node selector and required affinity
//    (pkg/scheduler/flavorassigner/flavorassigner.go findFlavorForPodSets: "resource %s
//    unavailable in ClusterQueue"; checkFlavorForPodSets; site/content/en/docs/concepts/
//    resource_flavor.md): the class's workloads in this queue are never admitted.
//  - warn: a flavor of a class given quota of an NVIDIA GPU resource the class's pods never
//    request (gpuadmit renamed it away, or GPU007 denies it): the quota is never used; nothing
//    fails.
//  - warn: a LocalQueue of the run sends a namespace of a tenant with quota.gpus to this queue,
//    and the queue may admit more GPUs (nominalQuota summed over flavors and GPU resource names,
//    plus what it may borrow from its cohort: borrowingLimit, none = no limit) than quota.gpus:
//    Kueue admits jobs whose pods the namespace's ResourceQuota (gpuadmit render) then refuses.

#include <memory>

#include "engine/document_rule.h"

namespace gpuadmit {

std::unique_ptr<const DocumentRule> make_kueue_cluster_queue_rule();

}  // namespace gpuadmit
