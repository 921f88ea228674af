// The fleet report on hand-computed fleets (docs/fleet.md): packing, stranded GPUs, reasons,
// replicas of each workload kind, MIG and time-sliced classes, tenants and suggestions.

#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "tests/fleet/fleet_test_util.h"

namespace gpuadmit::fleet {
namespace packing_test {
namespace {

using testing::class_report;
using testing::run_fleet;

// A Deployment of `replicas` pods, each one container asking for `amount` of `resource`.
std::string deployment(const std::string& name, const std::string& ns, int replicas,
                       const std::string& amount, const std::string& cls = "",
                       const std::string& resource = "nvidia.com/gpu") {
  std::string annotations =
      cls.empty() ? "" : "      annotations: {gpuadmit.io/class: " + cls + "}\n";
  return "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name +
         ", namespace: " + ns + "}\nspec:\n  replicas: " + std::to_string(replicas) +
         "\n  template:\n    metadata:\n" + annotations + "      labels: {app: " + name +
         "}\n    spec:\n      containers:\n      - name: main\n"
         "        image: trainer\n        resources:\n          limits: {" +
         resource + ": \"" + amount + "\"}\n";
}

TEST_CASE("fleet: 4 nodes × 8 GPUs, pods of 5, 4 and 3: placed, stranded, class full") {
  // First-fit decreasing by GPUs per pod: 5, 5, 5, 5, 4, 4, 3.
  //   the four 5s open nodes 0..3, leaving 3 free on each;
  //   neither 4 fits anywhere (3 free at most): 2 pods "class full";
  //   the 3 goes to node 0 (now full).
  // placed 4×5 + 3 = 23 of 32; the smallest pod left over is 4, so nodes 1..3, partly used
  // with 3 free each, strand 3 × 3 = 9 GPUs; utilisation 23/32 = 71.875%.
  // Suggestion for the 5s (blamed for the 9): 20 GPUs as 5 pods of 4 (4 is the largest divisor
  // of 8 below 5) packs 4,4 | 4,4 | 4,4(five's 5th + four's 1st) | 4(four's 2nd),3 → every pod
  // placed, node 3 has 1 free < 3 (smallest pod): 1 stranded, so 9 − 1 = 8 fewer.
  const auto r = run_fleet(deployment("five", "ml-a", 4, "5") + deployment("four", "ml-a", 2, "4") +
                           deployment("three", "ml-a", 1, "3"));
  REQUIRE(r.errors.empty());
  const ClassReport& a100 = class_report(r, "a100");
  CHECK(a100.total() == 32);
  CHECK(a100.packing.requested == 20 + 8 + 3);
  CHECK(a100.packing.placed == 23);
  CHECK(a100.packing.stranded == 9);
  CHECK(a100.packing.node_used == std::vector<int64_t>{8, 5, 5, 5});
  CHECK(a100.utilisation() == Approx(0.71875));
  REQUIRE(r.report.unplaceable.size() == 1);
  CHECK(r.report.unplaceable[0].pods == 2);
  CHECK(r.report.unplaceable[0].reason == Unplaceable::kClassFull);
  CHECK(r.input.groups[r.report.unplaceable[0].group].units == 4);
  CHECK(r.report.unplaceable_pods == 2);
  REQUIRE(r.report.fragmenters.size() == 1);
  const Fragmenter& f = r.report.fragmenters[0];
  CHECK(r.input.workloads[r.input.groups[f.group].workload].name == "five");
  CHECK(f.stranded == 9);
  CHECK(f.suggested_units == 4);
  CHECK(f.suggested_pods == 5);
  CHECK(f.freed == 8);
  // Tenant ml: 31 GPUs requested against quota.gpus 20.
  REQUIRE(r.report.tenants.size() == 2);
  CHECK(r.report.tenants[0].name == "ml");
  CHECK(r.report.tenants[0].requested_gpus == 31);
  CHECK(r.report.tenants[0].quota == 20);
  CHECK(r.report.tenants[1].requested_gpus == 0);
}

TEST_CASE("fleet: every pod placed, no stranding when the free GPUs fit the smallest pod") {
  // 5, 5, 3 on 4 × 8: 5 → node 0, 5 → node 1, 3 → node 0 (full). Node 1 has 3 free and the
  // smallest pod is 3: not stranded. placed 13, utilisation 13/32.
  const auto r =
      run_fleet(deployment("five", "ml-a", 2, "5") + deployment("three", "ml-a", 1, "3"));
  const ClassReport& a100 = class_report(r, "a100");
  CHECK(a100.packing.placed == 13);
  CHECK(a100.packing.stranded == 0);
  CHECK(a100.packing.node_used == std::vector<int64_t>{8, 5, 0, 0});
  CHECK(r.report.unplaceable.empty());
  CHECK(r.report.fragmenters.empty());
}

TEST_CASE("fleet: the reasons a pod cannot be placed") {
  // ml-a: 9 GPUs on 8-GPU nodes; guest (allowedClasses [l4]) naming a100; "other" matches no
  // tenant and names no class, with three classes in the policy (no default): no class; an
  // unknown class name: no class too; "stray", of no tenant either, naming a100: GPU003 denies
  // every GPU pod of a namespace of no tenant, so no class is allowed there.
  const auto r =
      run_fleet(deployment("huge", "ml-a", 2, "9") + deployment("sneaky", "guest", 1, "1", "a100") +
                deployment("lost", "other", 3, "1") + deployment("typo", "ml-a", 1, "1", "a10") +
                deployment("stray", "other", 2, "1", "a100"));
  REQUIRE(r.report.unplaceable.size() == 5);
  auto reason_of = [&](const std::string& name) {
    for (const UnplaceableEntry& u : r.report.unplaceable) {
      if (r.input.workloads[r.input.groups[u.group].workload].name == name) {
        return std::pair(u.reason, u.pods);
      }
    }
    return std::pair(Unplaceable::kNone, int64_t{0});
  };
  CHECK(reason_of("huge") == std::pair(Unplaceable::kLargerThanNode, int64_t{2}));
  CHECK(reason_of("sneaky") == std::pair(Unplaceable::kClassNotAllowed, int64_t{1}));
  CHECK(reason_of("lost") == std::pair(Unplaceable::kNoClass, int64_t{3}));
  CHECK(reason_of("typo") == std::pair(Unplaceable::kNoClass, int64_t{1}));
  CHECK(reason_of("stray") == std::pair(Unplaceable::kClassNotAllowed, int64_t{2}));
  CHECK(r.report.unplaceable_pods == 9);
  CHECK(class_report(r, "a100").packing.requested == 18);  // only "huge" reached the class
  CHECK(reason_text(Unplaceable::kClassNotAllowed) == "class not allowed for the namespace");
}

TEST_CASE("fleet: MIG slices counted against each GPU's compute and memory slices") {
  // H100 80 GB: 7 compute, 8 memory slices per GPU; 3g.40gb = 3 + 4, 1g.10gb = 1 + 1.
  // Decreasing: the three 3g pods first: GPU 0 gets two (6 compute, 8 memory), GPU 1 one
  // (3, 4). The 1g pods: GPU 0 has 1 compute but no memory left, so all three go to GPU 1
  // (6, 7). placed 3×3 + 3×1 = 12 of 14 compute slices; GPU 0's free slice fits no pod's
  // profile (no memory): 1 stranded, blamed on the 3g workload; GPU 1's fits a 1g: not.
  const auto r =
      run_fleet(deployment("big", "ml-a", 3, "1", "h100mig", "nvidia.com/mig-3g.40gb") +
                deployment("small", "ml-a", 3, "1", "h100mig", "nvidia.com/mig-1g.10gb"));
  const ClassReport& mig = class_report(r, "h100mig");
  CHECK(mig.packing.shape.unit == ClassUnit::kMigSlice);
  CHECK(mig.total() == 14);
  CHECK(mig.packing.requested == 12);
  CHECK(mig.packing.placed == 12);
  CHECK(mig.packing.stranded == 1);
  REQUIRE(mig.packing.cells.size() == 1);
  CHECK(mig.packing.cells[0][0].used == 6);
  CHECK(mig.packing.cells[0][0].stranded);
  CHECK(mig.packing.cells[0][1].used == 6);
  CHECK_FALSE(mig.packing.cells[0][1].stranded);
  REQUIRE(r.report.fragmenters.size() == 1);
  CHECK(r.report.fragmenters[0].stranded == 1);
  CHECK(r.report.fragmenters[0].suggested_units == 0);  // no suggestion for MIG
  CHECK(r.report.unplaceable.empty());
}

TEST_CASE("fleet: a MIG profile larger than the GPU is larger than a node") {
  // Two 7g.80gb instances in one pod: each takes a whole GPU; three do not fit 2 GPUs.
  const auto r = run_fleet(deployment("wide", "ml-a", 1, "3", "h100mig", "nvidia.com/mig-7g.80gb"));
  REQUIRE(r.report.unplaceable.size() == 1);
  CHECK(r.report.unplaceable[0].reason == Unplaceable::kLargerThanNode);
}

TEST_CASE("fleet: time-sliced classes count replicas, Jobs run min(parallelism, completions)") {
  // l4: 2 nodes × 4 GPUs × 4 replicas = 16 replicas per node, 32 in all.
  // Deployment: 3 pods of 6 replicas; Job: parallelism 5, completions 3 → 3 pods of 5.
  // Decreasing: 6 → node 0 (10 free), 6 → node 0 (4 free), 6 → node 1 (10 free),
  // 5 → node 1 (5 free), 5 → node 1 (0 free), 5 → nowhere: 1 pod "class full".
  // placed 18 + 10 = 28; the smallest left-over pod is 5 and node 0 has 4 free: 4 stranded.
  const std::string job = R"(---
apiVersion: batch/v1
kind: Job
metadata: {name: sweep, namespace: ml-a}
spec:
  parallelism: 5
  completions: 3
  template:
    metadata: {annotations: {gpuadmit.io/class: l4}}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: sweep
        resources: {limits: {nvidia.com/gpu: 5}}
)";
  const auto r = run_fleet(deployment("serve", "ml-a", 3, "6", "l4") + job);
  const ClassReport& l4 = class_report(r, "l4");
  CHECK(l4.packing.shape.unit == ClassUnit::kReplica);
  CHECK(l4.total() == 32);
  CHECK(l4.packing.requested == 18 + 15);
  CHECK(l4.packing.placed == 28);
  CHECK(l4.packing.stranded == 4);
  CHECK(l4.packing.node_used == std::vector<int64_t>{12, 16});
  // Node 0's GPUs hold replicas 0-3, 4-7, 8-11 (the two serve pods) and none: its last GPU is
  // the free one, and it is stranded.
  CHECK(l4.packing.cells[0][3].used == 0);
  CHECK(l4.packing.cells[0][3].stranded);
  REQUIRE(r.report.unplaceable.size() == 1);
  CHECK(r.report.unplaceable[0].pods == 1);
  CHECK(r.report.unplaceable[0].reason == Unplaceable::kClassFull);
}

TEST_CASE("fleet: PyTorchJob replicas and RayCluster worker groups with numOfHosts") {
  // PyTorchJob: Master 1 + Worker 3 pods of 8 GPUs = 32: the whole a100 class, 100%.
  // RayCluster (l4): the head asks for no GPU; one worker group of 2 replicas × numOfHosts 2
  // = 4 pods of 2 replicas = 8 of l4's 32.
  const std::string manifests = R"(---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: llm, namespace: ml-a}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - {name: pytorch, image: t, resources: {limits: {nvidia.com/gpu: 8}}}
    Worker:
      replicas: 3
      template:
        spec:
          containers:
          - {name: pytorch, image: t, resources: {limits: {nvidia.com/gpu: 8}}}
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: ray, namespace: ml-a, annotations: {gpuadmit.io/class: l4}}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: head, image: ray}]
  workerGroupSpecs:
  - groupName: tpu-like
    replicas: 2
    numOfHosts: 2
    template:
      spec:
        containers:
        - {name: worker, image: ray, resources: {limits: {nvidia.com/gpu: 2}}}
)";
  const auto r = run_fleet(manifests);
  REQUIRE(r.input.groups.size() == 3);
  CHECK(r.input.groups[0].pods == 1);
  CHECK(r.input.groups[1].pods == 3);
  CHECK(r.input.groups[2].pods == 4);
  CHECK(r.input.groups[2].path == "spec.workerGroupSpecs[0].template.spec");
  CHECK(class_report(r, "a100").packing.placed == 32);
  CHECK(class_report(r, "a100").utilisation() == 1.0);
  CHECK(class_report(r, "l4").packing.placed == 8);
  CHECK(r.report.unplaceable.empty());
}

TEST_CASE("fleet: a List export counts controller-owned objects once, skips finished pods") {
  // kubectl get deploy,rs,pods -o yaml: the Deployment (2 × 2 GPUs), its ReplicaSet and the
  // ReplicaSet's two Pods; a finished Pod; a bare Pod of 1 GPU. Requested: 4 + 1 = 5.
  const std::string list = R"(apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: ml-a, uid: d-1}
  spec:
    replicas: 2
    template:
      spec:
        containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 2}}}]
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: web-5d8
    namespace: ml-a
    uid: rs-1
    ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-1, controller: true}]
  spec:
    replicas: 2
    template:
      spec:
        containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 2}}}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-5d8-a
    namespace: ml-a
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5d8, uid: rs-1, controller: true}]
  spec:
    nodeName: gpu-1
    containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 2}}}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-5d8-b
    namespace: ml-a
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5d8, uid: rs-1, controller: true}]
  spec:
    nodeName: gpu-2
    containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 2}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: done, namespace: ml-a}
  spec:
    containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]
  status: {phase: Succeeded}
- apiVersion: v1
  kind: Pod
  metadata: {name: solo, namespace: ml-a}
  spec:
    containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
)";
  const auto r = run_fleet(list);
  REQUIRE(r.errors.empty());
  REQUIRE(r.input.workloads.size() == 2);
  CHECK(r.input.workloads[0].name == "web");
  CHECK(r.input.workloads[1].name == "solo");
  CHECK(class_report(r, "a100").packing.requested == 5);
  CHECK(r.report.tenants[0].requested_gpus == 5);
}

TEST_CASE("fleet: an owned Pod whose controller is not in the input is counted") {
  const auto r = run_fleet(R"(apiVersion: v1
kind: Pod
metadata:
  name: orphan-ish
  namespace: ml-a
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: gone, uid: x, controller: true}]
spec:
  containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 3}}}]
)");
  CHECK(class_report(r, "a100").packing.placed == 3);
}

TEST_CASE("fleet: init containers count as Kubernetes counts them (max of sum and init)") {
  // k8s.io/component-helpers resource.PodRequests: max(2 + 1 app, 4 init) = 4 GPUs.
  const auto r = run_fleet(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-a}
spec:
  initContainers: [{name: warm, image: i, resources: {limits: {nvidia.com/gpu: 4}}}]
  containers:
  - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 2}}}
  - {name: b, image: i, resources: {limits: {nvidia.com/gpu: 1}}}
)");
  REQUIRE(r.input.groups.size() == 1);
  CHECK(r.input.groups[0].units == 4);
}

TEST_CASE("fleet: absurd replica counts saturate instead of overflowing") {
  // 9223372036854775807 pods of 2 GPUs: 16 fit a100 (4 × 8 / 2), the rest are "class full";
  // requested and the tenant's sum stop at INT64_MAX.
  const std::string huge = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: huge, namespace: ml-a}
spec:
  replicas: 9223372036854775807
  template:
    spec:
      containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 2}}}]
)";
  const auto r = run_fleet(huge);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const ClassReport& a100 = class_report(r, "a100");
  CHECK(a100.packing.requested == kMax);
  CHECK(a100.packing.placed == 32);
  CHECK(a100.packing.placed_pods == 16);
  REQUIRE(r.report.unplaceable.size() == 1);
  CHECK(r.report.unplaceable[0].pods == kMax - 16);
  CHECK(r.report.tenants[0].requested_gpus == kMax);
}

}  // namespace
}  // namespace packing_test
}  // namespace gpuadmit::fleet
