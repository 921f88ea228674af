// `gpuadmit fleet --live` on a hand-computed fleet (tests/fleet/data/live-fleet.yaml under
// live-policy.yaml, plus the corpus's real MIG node): every figure below is worked out from the
// objects and the scheduler's rules in the comments, not taken from a run.
//
// The fleet (GPU pods: name → GPUs):
//   a100 (8 × nvidia.com/gpu, taint nvidia.com/gpu=present:NoSchedule, class taint the same)
//     a100-1  ready          train-0 4, train-1 4          used 8  free 0
//     a100-2  ready          train-2 4, eval-0 1           used 5  free 3
//     a100-3  ready          train-3 4, eval-1 1, eval-2 1 used 6  free 2
//             (eval-2: an init container of 1 GPU and an app container of 1: max(1, 1) = 1)
//     a100-4  cordoned       train-4 4                     used 4  free 4 → unavailable
//     a100-5  NotReady       -                             used 0  free 8 → unavailable
//     a100-6  tainted maintenance=true:NoSchedule, eval-3 1  used 1  free 7 → unavailable
//     a100-7  ready, allocatable 7 (gpu.count 8), train-5 4  used 4  free 3
//     old-0 (8 GPUs on a100-1) has Succeeded: not counted.
//   t4 (time-slicing 4 ways: 4 Tesla T4 → 16 nvidia.com/gpu per node, product Tesla-T4-SHARED)
//     t4-1  infer-0..5 1 each → used 6;  t4-2  infer-big-0 2 → used 2
//   a100mig (MIG mixed): the corpus node qa-mig-worker-gpu-a100, allocatable 3 × mig-1g.5gb,
//     1 × mig-2g.10gb (3g.20gb 0): 3×1 + 1×2 = 5 compute slices; nb-0, nb-1 1g.5gb each → used 2
//   a100single (MIG single): mig-single-1, 56 nvidia.com/gpu = 56 × 1g.5gb (1 compute slice
//     each) on 8 GPUs of 7; single-0..2 1 each → used 3
//   no class: l40s-1 (4 GPUs, render-0 1); cpu-1 (no GPU, web-0): not a GPU node.
//   ghost-0 (2 GPUs) is bound to gone-1, which the export does not hold.
// Pending: big-0 16, frag-0/frag-1 6, notol-0 2 (no toleration of nvidia.com/gpu), gated-0 1
// on t4 (schedulingGates), noclass-0 1 (class "v100"), migbig-0 1 × mig-3g.20gb.

#include <catch2/catch.hpp>

#include <string>

#include "engine/json_dump.h"
#include "fleet/live_output.h"
#include "tests/fleet/live_test_util.h"

namespace gpuadmit::fleet {
namespace live_test {
namespace {

using testing::live_class;
using testing::live_fleet_yaml;
using testing::live_node;
using testing::pending;
using testing::run_live;

TEST_CASE("fleet live: a100, whole GPUs: total, used, free, unavailable, stranded, repack") {
  const auto r = run_live(live_fleet_yaml());
  REQUIRE(r.errors.empty());
  const LiveClassReport& a100 = live_class(r, "a100");
  CHECK(a100.shape.unit == ClassUnit::kGpu);
  // 7 nodes: schedulable a100-1, -2, -3, -7; cordoned a100-4; NotReady a100-5; tainted a100-6.
  CHECK(a100.nodes == 7);
  CHECK(a100.schedulable == 4);
  CHECK(a100.cordoned == 1);
  CHECK(a100.not_ready == 1);
  CHECK(a100.tainted == 1);
  // Allocatable: 6 × 8 + 7 = 55. Used: 8 + 5 + 6 + 4 + 0 + 1 + 4 = 28.
  CHECK(a100.total == 55);
  CHECK(a100.used == 28);
  // Free on schedulable nodes: 0 + 3 + 2 + 3 = 8; on the others: 4 + 8 + 7 = 19 (55 = 28+8+19).
  CHECK(a100.free == 8);
  CHECK(a100.unavailable == 19);
  // The usual pod: 4 GPUs (6 pods: train-0..5) against 1 GPU (4: eval-0..3) and one each of
  // 16, 6 (two), 2. Schedulable partly used nodes with free GPUs: a100-2 (3), a100-3 (2),
  // a100-7 (3); 4 fits none; of the pending pods frag (6) and big (16) are too big, notol-0 (2)
  // and noclass-0 (1) do not tolerate nvidia.com/gpu=present:NoSchedule, gated-0 asks the T4
  // product by nodeSelector. So all of it is stranded: 3 + 2 + 3 = 8 on 3 nodes.
  CHECK(a100.usual_units == 4);
  REQUIRE(a100.usual.size() == 1);
  CHECK(a100.usual[0].resource == "nvidia.com/gpu");
  CHECK(a100.stranded == 8);
  CHECK(a100.stranded_nodes == 3);
  CHECK(live_node(r, "a100-2").stranded == 3);
  CHECK(live_node(r, "a100-3").stranded == 2);
  CHECK(live_node(r, "a100-7").stranded == 3);
  CHECK(live_node(r, "a100-1").stranded == 0);  // full
  CHECK(live_node(r, "a100-4").stranded == 0);  // cordoned: counted as unavailable instead
  CHECK(a100.empty_nodes == 0);
  CHECK(a100.running_pods == 10);
  CHECK(a100.pending_pods == 4);  // big-0, frag-0, frag-1, notol-0
  // Repack of the pods on the schedulable nodes (capacities 8, 8, 8, 7): five pods of 4 and
  // three of 1, first-fit decreasing: 4,4 | 4,4 | 4,1,1,1 | - → used 8, 8, 7, 0. The third
  // node's 1 free GPU fits no pending pod that it admits (notol-0 and noclass-0 lack the
  // toleration; frag, big are larger): 1 stranded on 1 node; a100-7 (the fourth) empty.
  CHECK(a100.repack.complete);
  CHECK(a100.repack.stranded == 1);
  CHECK(a100.repack.stranded_nodes == 1);
  CHECK(a100.repack.empty_nodes == 1);
}

TEST_CASE("fleet live: node states, counted apart, with the reason") {
  const auto r = run_live(live_fleet_yaml());
  CHECK(live_node(r, "a100-1").state == NodeState::kSchedulable);
  CHECK(live_node(r, "a100-4").state == NodeState::kCordoned);
  CHECK(live_node(r, "a100-5").state == NodeState::kNotReady);
  const LiveNodeReport& tainted = live_node(r, "a100-6");
  CHECK(tainted.state == NodeState::kTainted);
  CHECK(tainted.taint == "maintenance=true:NoSchedule");
  // a100-7: GFD counts 8 GPUs, the device plugin advertises 7.
  CHECK(live_node(r, "a100-7").notes ==
        std::vector<std::string>{"nvidia.com/gpu.count is 8, allocatable 7"});
  CHECK(live_node(r, "a100-7").capacity == 7);
  CHECK(live_node(r, "a100-7").gpus == 7);
  // cpu-1 has no GPU and no GPU pod: not in the report.
  for (const LiveNodeReport& n : r.report.nodes) CHECK(r.input.nodes[n.node].name != "cpu-1");
}

TEST_CASE("fleet live: time-slicing as NVIDIA documents it") {
  // 16 nvidia.com/gpu per node = 4 GPUs × 4 replicas (gpu.replicas 4): units are replicas.
  const auto r = run_live(live_fleet_yaml());
  const LiveClassReport& t4 = live_class(r, "t4");
  CHECK(t4.shape.unit == ClassUnit::kReplica);
  CHECK(t4.total == 32);
  CHECK(t4.used == 8);  // 6 × 1 + 2
  CHECK(t4.free == 24);
  CHECK(t4.stranded == 0);  // the usual pod asks 1 replica, which every free slot fits
  CHECK(t4.usual_units == 1);
  CHECK(t4.running_pods == 7);
  CHECK(t4.pending_pods == 1);  // gated-0
  CHECK(live_node(r, "t4-1").gpus == 4);
  CHECK(live_node(r, "t4-1").units_per_gpu == 4);
  // Repack: the 2 then six 1s all on the first node (8 of 16); the second one empty.
  CHECK(t4.repack.stranded == 0);
  CHECK(t4.repack.empty_nodes == 1);
}

TEST_CASE("fleet live: MIG mixed (the corpus's node) and single, in compute slices") {
  const auto r = run_live(live_fleet_yaml());
  const LiveClassReport& mixed = live_class(r, "a100mig");
  CHECK(mixed.shape.unit == ClassUnit::kMigSlice);
  // 3 × 1g.5gb + 1 × 2g.10gb = 5 slices (A100 40GB: 7 per GPU); nb-0, nb-1 take 1 each.
  CHECK(mixed.total == 5);
  CHECK(mixed.used == 2);
  CHECK(mixed.free == 3);
  CHECK(mixed.stranded == 0);  // a 1g.5gb is still free, the usual request
  const LiveNodeReport& node = live_node(r, "qa-mig-worker-gpu-a100");
  CHECK(node.gpus == 1);  // nvidia.com/gpu.count 1 (mixed: the physical GPUs)
  CHECK(node.units_per_gpu == 7);
  const LiveClassReport& single = live_class(r, "a100single");
  // GFD's single strategy: 56 nvidia.com/gpu, each a 1g.5gb (the product label's suffix).
  CHECK(single.total == 56);
  CHECK(single.used == 3);
  CHECK(single.free == 53);
  CHECK(live_node(r, "mig-single-1").gpus == 8);  // 56 slices / 7
}

TEST_CASE("fleet live: pending GPU pods, each with why") {
  const auto r = run_live(live_fleet_yaml());
  REQUIRE(r.report.pending.size() == 7);
  // 16 GPUs: the largest a100 node has 8 allocatable.
  CHECK(pending(r, "big-0").reason == PendingReason::kLargerThanAnyNode);
  CHECK(pending(r, "big-0").detail == "asks 16 nvidia.com/gpu; the largest node has 8");
  // 6 GPUs: large enough are all 7 nodes; a100-4 is cordoned, a100-5 has the unreachable
  // NoSchedule taint, a100-6 maintenance; admitting: a100-1 (0 free), -2 (3), -3 (2), -7 (3):
  // 8 free in total, at most 3 on one node.
  CHECK(pending(r, "frag-0").reason == PendingReason::kFragmentation);
  CHECK(pending(r, "frag-0").detail ==
        "8 nvidia.com/gpu free on 4 admitting nodes, at most 3 on one; asks 6");
  CHECK(pending(r, "frag-1").reason == PendingReason::kFragmentation);
  // No toleration of nvidia.com/gpu: a100-4 is refused as cordoned first (NodeUnschedulable),
  // the other six by the GPU taint (the first of their taints it does not tolerate).
  CHECK(pending(r, "notol-0").reason == PendingReason::kTaintsAffinity);
  CHECK(pending(r, "notol-0").detail ==
        "of 7 nodes large enough: 1 cordoned, 6 with taint nvidia.com/gpu=present:NoSchedule "
        "not tolerated");
  CHECK(pending(r, "gated-0").reason == PendingReason::kGated);
  CHECK(pending(r, "gated-0").detail == "schedulingGates: kueue.x-k8s.io/admission");
  CHECK(pending(r, "noclass-0").reason == PendingReason::kNoClass);
  CHECK(pending(r, "noclass-0").detail == "\"v100\" is not a class of the policy");
  CHECK(pending(r, "noclass-0").cls == -1);
  // No node of a100mig has a 3g.20gb allocatable (the corpus node's is 0).
  CHECK(pending(r, "migbig-0").reason == PendingReason::kLargerThanAnyNode);
  CHECK(pending(r, "migbig-0").detail == "asks 1 nvidia.com/mig-3g.20gb; the largest node has 0");
  CHECK(r.input.pods[pending(r, "frag-0").pod].scheduler_message.rfind("0/14 nodes are", 0) == 0);
}

TEST_CASE("fleet live: what is not counted, and nodes of no class") {
  const auto r = run_live(live_fleet_yaml());
  // 10 + 7 + 2 + 3 + 1 (render-0 on l40s-1): ghost-0's node is missing, old-0 Succeeded.
  CHECK(r.report.running_gpu_pods == 23);
  CHECK(r.report.pods_on_unknown_nodes == 1);
  CHECK(r.input.terminal_pods == 1);
  REQUIRE(r.report.unmatched.size() == 1);
  const LiveNodeReport& l40s = r.report.nodes[r.report.unmatched[0]];
  CHECK(r.input.nodes[l40s.node].name == "l40s-1");
  CHECK(l40s.capacity == 4);
  CHECK(l40s.used_units == 1);
}

TEST_CASE("fleet live: the same export as JSON gives the same report") {
  const std::string yaml = live_fleet_yaml();
  const auto from_yaml = run_live(yaml);
  const auto from_json = run_live(testing::as_json_list(yaml));
  REQUIRE(from_json.errors.empty());
  CHECK(dump_json(live_to_json(from_json.report, from_json.input)) ==
        dump_json(live_to_json(from_yaml.report, from_yaml.input)));
}

TEST_CASE("fleet live: a node exported twice is counted once, as last read") {
  // The corpus holds the same node before and after the MIG Manager re-partitioned it: 4
  // instances (5 slices), then one 7g.40gb (7 slices). The later one replaces the earlier.
  const std::string text =
      gpuadmit::testing::slurp(testing::kCorpus + "configs/fake-gpu-operator__4_instances.yaml") +
      "---\n" +
      gpuadmit::testing::slurp(testing::kCorpus + "configs/fake-gpu-operator__7g-40gb.yaml");
  const auto r = run_live(text);
  REQUIRE(r.errors.empty());
  CHECK(r.input.nodes.size() == 1);
  CHECK(r.input.replaced == 1);
  const LiveClassReport& mixed = live_class(r, "a100mig");
  CHECK(mixed.total == 7);
  CHECK(mixed.empty_nodes == 1);
}

TEST_CASE("fleet live: the text report") {
  const auto r = run_live(live_fleet_yaml());
  std::ostringstream out;
  write_live_text(r.report, r.input, out);
  const std::string text = out.str();
  // 13 nodes (cpu-1 included), 12 with GPUs; 23 running, 7 pending (figures above).
  CHECK(text.rfind("live fleet: 13 nodes, 12 with GPUs; 23 GPU pods running, 7 pending\n", 0) == 0);
  CHECK(
      text.find("  a100        gpu        7      1 cordoned, 1 not ready, 1 tainted  55     28    "
                "8     19           8         10            4\n") != std::string::npos);
  CHECK(text.find("  a100: 8 GPUs stranded on 3 nodes; repacked, 1 stranded and 1 node empty "
                  "(0 now)\n") != std::string::npos);
  CHECK(text.find("    a100-3: 2 of 8 free, fit neither a pending pod nor the usual pod (4 "
                  "nvidia.com/gpu)\n") != std::string::npos);
  CHECK(text.find("  a100-6 (a100): tainted (maintenance=true:NoSchedule); 1 of 8 GPUs used, 7 "
                  "unavailable\n") != std::string::npos);
  CHECK(text.find("nodes with GPUs that match no class (1):\n  l40s-1: 4 nvidia.com/gpu "
                  "(NVIDIA-L40S), 1 used by 1 pod\n") != std::string::npos);
  CHECK(text.find("  ml/frag-0 (ReplicaSet/frag): 6 nvidia.com/gpu on a100: fragmentation — 8 "
                  "nvidia.com/gpu free on 4 admitting nodes, at most 3 on one; asks 6\n      "
                  "scheduler: 0/14 nodes are available") != std::string::npos);
  CHECK(text.find("1 GPU pod bound to nodes the input does not hold") != std::string::npos);
}

TEST_CASE("fleet live: JSON report") {
  const auto r = run_live(live_fleet_yaml());
  const Json j = live_to_json(r.report, r.input);
  CHECK(j["mode"] == "live");
  CHECK(j["classes"][0] == Json::parse(R"({"name": "a100", "unit": "gpu",
      "nodes": {"total": 7, "schedulable": 4, "cordoned": 1, "notReady": 1, "tainted": 1,
                "empty": 0},
      "total": 55, "used": 28, "free": 8, "unavailable": 19, "stranded": 8, "strandedNodes": 3,
      "runningPods": 10, "pendingPods": 4, "usualRequest": {"nvidia.com/gpu": 4}, "usualUnits": 4,
      "repack": {"skipped": false, "complete": true, "unplacedPods": 0, "stranded": 1,
                 "strandedNodes": 1, "emptyNodes": 1}, "cost": null})"));
  Json a100_3;
  for (const Json& n : j["nodes"]) {
    if (n["name"] == "a100-3") a100_3 = n;
  }
  CHECK(a100_3 == Json::parse(R"({"name": "a100-3", "class": "a100", "state": "schedulable",
      "taint": null, "product": "NVIDIA-A100-SXM4-80GB", "gpus": 8, "unitsPerGPU": 1,
      "capacity": 8, "used": 6, "free": 2, "stranded": 2,
      "allocatable": {"nvidia.com/gpu": 8}, "requested": {"nvidia.com/gpu": 6},
      "draGPUs": 0, "draAllocated": 0, "pods": 3, "notes": []})"));
  CHECK(j["unmatchedNodes"] == Json::parse(R"(["l40s-1"])"));
  CHECK(j["pending"].size() == 7);
  CHECK(j["pending"][1]["name"] == "frag-0");
  CHECK(j["pending"][1]["reasonId"] == "fragmentation");
  CHECK(j["pending"][1]["owner"] == "ReplicaSet/frag");
  CHECK(j["pending"][1]["requests"] == Json::parse(R"({"nvidia.com/gpu": 6})"));
  // 33 Pod objects (web-0 and old-0 included), old-0 finished; nothing read twice.
  CHECK(j["summary"] == Json::parse(R"({"nodes": 13, "pods": 33, "terminalPods": 1,
      "runningGPUPods": 23, "pendingGPUPods": 7, "podsOnUnknownNodes": 1,
      "objectsReadTwice": 0})"));
}

}  // namespace
}  // namespace live_test
}  // namespace gpuadmit::fleet

namespace gpuadmit::fleet {
namespace live_test {
namespace {

TEST_CASE("fleet live: DRA GPUs from ResourceSlices, allocated ones from ResourceClaims") {
  // dra-1 is an a100 node whose GPUs NVIDIA's DRA driver publishes (type "gpu"; the MIG device
  // is not a whole GPU); dra-2's slice is resource.k8s.io/v1beta1 (attributes under `basic`).
  // One claim holds gpu-1 of dra-1 and a device of another driver: dra-1 has 2 GPUs, 1 used;
  // dra-2 1 GPU, none used. A pod asking only through a claim waits with reason "DRA claims".
  const std::string text = R"(apiVersion: v1
kind: Node
metadata:
  name: dra-1
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
status:
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata:
  name: dra-2
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
status:
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: dra-1-gpu.nvidia.com-x7k2p}
spec:
  driver: gpu.nvidia.com
  nodeName: dra-1
  pool: {name: dra-1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {type: {string: gpu}, productName: {string: NVIDIA A100-SXM4-80GB}}}
  - {name: gpu-1, attributes: {type: {string: gpu}}}
  - {name: gpu-0-mig-1g10gb-0, attributes: {type: {string: mig}}}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: dra-2-gpu.nvidia.com-q9v4d}
spec:
  driver: gpu.nvidia.com
  nodeName: dra-2
  pool: {name: dra-2, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, basic: {attributes: {type: {string: gpu}}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: train-gpu, namespace: ml}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.nvidia.com, pool: dra-1, device: gpu-1}
      - {request: nic, driver: nic.example.com, pool: dra-1, device: eth1}
---
apiVersion: v1
kind: Pod
metadata: {name: claim-0, namespace: ml, annotations: {gpuadmit.io/class: a100}}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: main, image: cuda, resources: {claims: [{name: gpu}]}}]
status: {phase: Pending}
)";
  const auto r = testing::run_live(text);
  REQUIRE(r.errors.empty());
  CHECK(r.input.nodes[0].dra_devices == 2);
  CHECK(r.input.nodes[0].dra_allocated == 1);
  CHECK(r.input.nodes[1].dra_devices == 1);
  CHECK(r.input.nodes[1].dra_allocated == 0);
  const LiveClassReport& a100 = live_class(r, "a100");
  CHECK(a100.total == 3);
  CHECK(a100.used == 1);
  CHECK(a100.free == 2);
  CHECK(a100.stranded == 0);  // no pod asks for nvidia.com/gpu: no usual size to miss
  REQUIRE(r.report.pending.size() == 1);
  CHECK(r.report.pending[0].reason == PendingReason::kDra);
  CHECK(r.report.pending[0].detail == "asks for GPUs through DRA claims only (not judged)");
}

}  // namespace
}  // namespace live_test
}  // namespace gpuadmit::fleet
