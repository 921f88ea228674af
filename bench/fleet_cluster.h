#pragma once
// A generated cluster export for `gpuadmit fleet --live` benchmarks: what
// `kubectl get nodes,pods -A -o json` prints for a large mixed fleet — one v1 List, keys in
// kubectl's (sorted) order, 4-space indentation, Nodes with GPU Feature Discovery's labels and the
// device plugin's allocatable, Pods with projected token volumes, tolerations and container
// statuses as the API server returns them, without managedFields (kubectl ≥ 1.21 leaves them out
// unless --show-managed-fields: kubernetes/kubernetes#96878); ~6 KB a pod at kubectl's
// indentation, so 200,000 pods are ~1.2 GB.
//
//   cluster_gen::ClusterShape shape{.nodes = 5000, .pods = 200000};
//   cluster_gen::write_cluster(shape, file);   // the export
//   cluster_gen::kClusterPolicy            // the policy whose classes its nodes belong to
//
// The fleet, per 100 nodes: 40 CPU nodes; 20 A100 nodes of 8 GPUs; 16 H100 of 8; 16 L4 of 4 GPUs
// time-sliced 8 ways (32 nvidia.com/gpu.shared each); 8 A100 MIG (mixed, all-1g.10gb: 56
// nvidia.com/mig-1g.10gb each). One GPU node in 100 is cordoned and one NotReady. Pods: GPU pods
// fill the GPU nodes in order until every third node has 3 GPUs (5 MIG slices) left, sizes
// 8/4/4/4/2/1 on whole GPUs, 1 replica or 1g.10gb elsewhere, 1 % of them pending; four DaemonSet
// pods per node; the rest CPU pods of Deployments on the CPU nodes.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/json.h"
#include "engine/json_dump.h"

namespace gpuadmit::cluster_gen {

struct ClusterShape {
  int nodes = 5000;
  int pods = 200000;
  uint64_t seed = 42;
};

inline constexpr const char* kClusterPolicy = R"(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: generated-cluster}
spec:
  classes:
    a100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      gpusPerNode: 8
    h100:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-H100-80GB-HBM3]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      gpusPerNode: 8
    l4:
      nodeSelector: {nvidia.com/gpu.product: [NVIDIA-L4]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      gpusPerNode: 4
      timeSlicing: {replicas: 8, renameByDefault: true}
    a100mig:
      nodeSelector:
        nvidia.com/gpu.product: [NVIDIA-A100-SXM4-80GB]
        nvidia.com/mig.config: [all-1g.10gb]
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      gpusPerNode: 8
      mig: {strategy: mixed, profiles: [1g.10gb, 2g.20gb, 3g.40gb, 7g.80gb]}
  tenants:
    - name: ml
      namespaces: ["ml-.*"]
      defaultClass: a100
)";

namespace cluster_detail {

// A small deterministic generator (SplitMix64), so that every run writes the same export.
struct Random {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
};

enum class Kind { kCpu, kA100, kH100, kL4, kMig };

inline Kind kind_of(int node) {
  const int k = node % 100;
  if (k < 40) return Kind::kCpu;
  if (k < 60) return Kind::kA100;
  if (k < 76) return Kind::kH100;
  if (k < 92) return Kind::kL4;
  return Kind::kMig;
}

inline std::string hex_id(Random& r) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(r.next() & 0xffffffffULL),
                static_cast<unsigned long long>(r.next() & 0xffffULL),
                static_cast<unsigned long long>(r.next() & 0xffffULL),
                static_cast<unsigned long long>(r.next() & 0xffffULL),
                static_cast<unsigned long long>(r.next() & 0xffffffffffffULL));
  return buffer;
}

inline std::string node_name(int n) {
  return (kind_of(n) == Kind::kCpu ? "cpu-" : "gpu-") + std::to_string(n);
}

inline Json condition(const char* type, const char* status, const char* reason,
                      const char* message) {
  return Json{{"lastHeartbeatTime", "2026-11-30T09:12:41Z"},
              {"lastTransitionTime", "2026-11-02T14:03:11Z"},
              {"message", message},
              {"reason", reason},
              {"status", status},
              {"type", type}};
}

// A Node as the API server returns it: GFD's labels (k8s-device-plugin
// docs/gpu-feature-discovery/README.md "Generated Labels"), the device plugin's allocatable.
inline Json node(int n, Random& r) {
  const Kind kind = kind_of(n);
  const bool cordoned = kind != Kind::kCpu && n % 100 == 41;
  const bool not_ready = kind != Kind::kCpu && n % 100 == 61;
  Json labels = {
      {"beta.kubernetes.io/arch", "amd64"},
      {"beta.kubernetes.io/instance-type", kind == Kind::kCpu ? "m6i.8xlarge" : "p4de.24xlarge"},
      {"beta.kubernetes.io/os", "linux"},
      {"kubernetes.io/arch", "amd64"},
      {"kubernetes.io/hostname", node_name(n)},
      {"kubernetes.io/os", "linux"},
      {"node.kubernetes.io/instance-type", "p4de.24xlarge"},
      {"topology.kubernetes.io/region", "us-east-1"},
      {"topology.kubernetes.io/zone", n % 2 == 0 ? "us-east-1a" : "us-east-1b"}};
  Json allocatable = {{"cpu", "95690m"},          {"ephemeral-storage", "1846210138413"},
                      {"hugepages-1Gi", "0"},     {"hugepages-2Mi", "0"},
                      {"memory", "1176334172Ki"}, {"pods", "250"}};
  Json taints = Json::array();
  if (kind != Kind::kCpu) {
    const char* product = kind == Kind::kH100 ? "NVIDIA-H100-80GB-HBM3"
                          : kind == Kind::kL4 ? "NVIDIA-L4"
                                              : "NVIDIA-A100-SXM4-80GB";
    const int gpus = kind == Kind::kL4 ? 4 : 8;
    labels["feature.node.kubernetes.io/pci-10de.present"] = "true";
    labels["nvidia.com/cuda.driver-version.full"] = "570.124.06";
    labels["nvidia.com/cuda.driver-version.major"] = "570";
    labels["nvidia.com/cuda.runtime-version.full"] = "12.8";
    labels["nvidia.com/gfd.timestamp"] = "1764493961";
    labels["nvidia.com/gpu.compute.major"] = kind == Kind::kH100 ? "9" : "8";
    labels["nvidia.com/gpu.compute.minor"] = kind == Kind::kL4 ? "9" : "0";
    labels["nvidia.com/gpu.count"] = std::to_string(gpus);
    labels["nvidia.com/gpu.deploy.device-plugin"] = "true";
    labels["nvidia.com/gpu.deploy.gpu-feature-discovery"] = "true";
    labels["nvidia.com/gpu.family"] = kind == Kind::kH100 ? "hopper"
                                      : kind == Kind::kL4 ? "ada-lovelace"
                                                          : "ampere";
    labels["nvidia.com/gpu.machine"] = "p4de.24xlarge";
    labels["nvidia.com/gpu.memory"] = kind == Kind::kL4 ? "23034" : "81920";
    labels["nvidia.com/gpu.present"] = "true";
    labels["nvidia.com/gpu.product"] = product;
    labels["nvidia.com/gpu.replicas"] = kind == Kind::kL4 ? "8" : kind == Kind::kMig ? "0" : "1";
    labels["nvidia.com/gpu.sharing-strategy"] = kind == Kind::kL4 ? "time-slicing" : "none";
    labels["nvidia.com/mig.capable"] = kind == Kind::kL4 ? "false" : "true";
    if (kind == Kind::kMig) {
      labels["nvidia.com/mig.strategy"] = "mixed";
      labels["nvidia.com/mig.config"] = "all-1g.10gb";
      labels["nvidia.com/mig.config.state"] = "success";
      labels["nvidia.com/mig-1g.10gb.count"] = "56";
      labels["nvidia.com/mig-1g.10gb.product"] = "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb";
      labels["nvidia.com/mig-1g.10gb.replicas"] = "1";
      allocatable["nvidia.com/gpu"] = "0";
      allocatable["nvidia.com/mig-1g.10gb"] = "56";
    } else if (kind == Kind::kL4) {
      allocatable["nvidia.com/gpu.shared"] = "32";
    } else {
      allocatable["nvidia.com/gpu"] = "8";
    }
    taints.push_back({{"effect", "NoSchedule"}, {"key", "nvidia.com/gpu"}, {"value", "present"}});
  }
  if (cordoned) {
    taints.push_back({{"effect", "NoSchedule"},
                      {"key", "node.kubernetes.io/unschedulable"},
                      {"timeAdded", "2026-11-29T08:00:00Z"}});
  }
  if (not_ready) {
    taints.push_back({{"effect", "NoSchedule"},
                      {"key", "node.kubernetes.io/unreachable"},
                      {"timeAdded", "2026-11-30T07:40:02Z"}});
    taints.push_back({{"effect", "NoExecute"},
                      {"key", "node.kubernetes.io/unreachable"},
                      {"timeAdded", "2026-11-30T07:40:07Z"}});
  }
  Json spec = {{"providerID", "aws:///us-east-1a/i-0" + std::to_string(100000 + n)}};
  if (!taints.empty()) spec["taints"] = taints;
  if (cordoned) spec["unschedulable"] = true;
  Json images = Json::array();
  for (int i = 0; i < 12; ++i) {
    images.push_back({{"names",
                       {"nvcr.io/nvidia/pytorch@sha256:" + hex_id(r) + hex_id(r),
                        "nvcr.io/nvidia/pytorch:24." + std::to_string(i + 1) + "-py3"}},
                      {"sizeBytes", 9000000000 + i}});
  }
  Json conditions = Json::array(
      {condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                 "kubelet has sufficient memory available"),
       condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                 "kubelet has no disk pressure"),
       condition("PIDPressure", "False", "KubeletHasSufficientPID",
                 "kubelet has sufficient PID available"),
       not_ready ? condition("Ready", "Unknown", "NodeStatusUnknown",
                             "Kubelet stopped posting node status.")
                 : condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")});
  return Json{{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata",
               {{"annotations",
                 {{"alpha.kubernetes.io/provided-node-ip",
                   "10.0." + std::to_string(n / 250) + "." + std::to_string(n % 250)},
                  {"node.alpha.kubernetes.io/ttl", "0"},
                  {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}}},
                {"creationTimestamp", "2026-11-02T14:02:31Z"},
                {"labels", labels},
                {"name", node_name(n)},
                {"resourceVersion", std::to_string(81000000 + n)},
                {"uid", hex_id(r)}}},
              {"spec", spec},
              {"status",
               {{"addresses",
                 {{{"address", "10.0.0.1"}, {"type", "InternalIP"}},
                  {{"address", node_name(n)}, {"type", "Hostname"}}}},
                {"allocatable", allocatable},
                {"capacity", allocatable},
                {"conditions", conditions},
                {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
                {"images", images},
                {"nodeInfo",
                 {{"architecture", "amd64"},
                  {"containerRuntimeVersion", "containerd://1.7.27"},
                  {"kernelVersion", "6.1.132-147.221.amzn2023.x86_64"},
                  {"kubeProxyVersion", "v1.33.5"},
                  {"kubeletVersion", "v1.33.5"},
                  {"operatingSystem", "linux"},
                  {"osImage", "Amazon Linux 2023.7.20250512"}}}}}};
}

// What a pod asks for and where it runs.
struct PodPlan {
  int node = -1;  // -1: pending
  Kind kind = Kind::kCpu;
  int gpus = 0;  // units of the node's GPU resource
  std::string owner;
  bool daemonset = false;
  std::string resource;  // "" : the node kind's GPU resource
  bool zone_c = false;   // nodeSelector topology.kubernetes.io/zone: us-east-1c (no such node)
};

inline Json pod(const PodPlan& plan, int index, Random& r) {
  const std::string suffix = hex_id(r).substr(0, 5);
  const std::string name = plan.owner + "-" + suffix;
  const std::string ns = plan.daemonset            ? "kube-system"
                         : plan.kind == Kind::kCpu ? "web-" + std::to_string(index % 7)
                                                   : "ml-" + std::to_string(index % 11);
  const std::string resource = !plan.resource.empty()    ? plan.resource
                               : plan.kind == Kind::kL4  ? "nvidia.com/gpu.shared"
                               : plan.kind == Kind::kMig ? "nvidia.com/mig-1g.10gb"
                                                         : "nvidia.com/gpu";
  Json limits = {{"cpu", plan.kind == Kind::kCpu ? "500m" : "8"},
                 {"memory", plan.kind == Kind::kCpu ? "512Mi" : "64Gi"}};
  if (plan.gpus > 0) limits[resource] = std::to_string(plan.gpus);
  Json container = {{"command", {"/usr/local/bin/entrypoint"}},
                    {"env",
                     {{{"name", "NCCL_DEBUG"}, {"value", "INFO"}},
                      {{"name", "OMP_NUM_THREADS"}, {"value", "8"}}}},
                    {"image", plan.kind == Kind::kCpu ? "registry.example.com/web/api:1.42.0"
                                                      : "nvcr.io/nvidia/pytorch:24.10-py3"},
                    {"imagePullPolicy", "IfNotPresent"},
                    {"name", plan.daemonset ? "agent" : "main"},
                    {"resources", {{"limits", limits}, {"requests", limits}}},
                    {"terminationMessagePath", "/dev/termination-log"},
                    {"terminationMessagePolicy", "File"},
                    {"volumeMounts",
                     {{{"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                       {"name", "kube-api-access-" + suffix},
                       {"readOnly", true}}}}};
  Json tolerations = {{{"effect", "NoExecute"},
                       {"key", "node.kubernetes.io/not-ready"},
                       {"operator", "Exists"},
                       {"tolerationSeconds", 300}},
                      {{"effect", "NoExecute"},
                       {"key", "node.kubernetes.io/unreachable"},
                       {"operator", "Exists"},
                       {"tolerationSeconds", 300}}};
  Json spec = {
      {"containers", {container}}, {"dnsPolicy", "ClusterFirst"}, {"enableServiceLinks", true}};
  if (plan.kind != Kind::kCpu) {
    const char* product = plan.kind == Kind::kH100 ? "NVIDIA-H100-80GB-HBM3"
                          : plan.kind == Kind::kL4 ? "NVIDIA-L4"
                                                   : "NVIDIA-A100-SXM4-80GB";
    Json expressions = {
        {{"key", "nvidia.com/gpu.product"}, {"operator", "In"}, {"values", {product}}}};
    if (plan.kind == Kind::kMig) {
      expressions.push_back(
          {{"key", "nvidia.com/mig.config"}, {"operator", "In"}, {"values", {"all-1g.10gb"}}});
    }
    spec["affinity"] = {{"nodeAffinity",
                         {{"requiredDuringSchedulingIgnoredDuringExecution",
                           {{"nodeSelectorTerms", {{{"matchExpressions", expressions}}}}}}}}};
    tolerations.push_back(
        {{"effect", "NoSchedule"}, {"key", "nvidia.com/gpu"}, {"operator", "Exists"}});
  }
  if (plan.daemonset) {
    tolerations.push_back({{"operator", "Exists"}});
    spec["affinity"] = {{"nodeAffinity",
                         {{"requiredDuringSchedulingIgnoredDuringExecution",
                           {{"nodeSelectorTerms",
                             {{{"matchFields",
                                {{{"key", "metadata.name"},
                                  {"operator", "In"},
                                  {"values", {node_name(plan.node)}}}}}}}}}}}}};
  }
  if (plan.node >= 0) spec["nodeName"] = node_name(plan.node);
  if (plan.zone_c) spec["nodeSelector"] = {{"topology.kubernetes.io/zone", "us-east-1c"}};
  spec["preemptionPolicy"] = "PreemptLowerPriority";
  spec["priority"] = 0;
  spec["restartPolicy"] = "Always";
  spec["schedulerName"] = "default-scheduler";
  spec["securityContext"] = Json::object();
  spec["serviceAccount"] = "default";
  spec["serviceAccountName"] = "default";
  spec["terminationGracePeriodSeconds"] = 30;
  spec["tolerations"] = tolerations;
  Json sources = Json::array();
  sources.push_back({{"serviceAccountToken", {{"expirationSeconds", 3607}, {"path", "token"}}}});
  sources.push_back({{"configMap",
                      {{"items", Json::array({{{"key", "ca.crt"}, {"path", "ca.crt"}}})},
                       {"name", "kube-root-ca.crt"}}}});
  Json volume = {{"name", "kube-api-access-" + suffix},
                 {"projected", {{"defaultMode", 420}, {"sources", sources}}}};
  spec["volumes"] = Json::array({volume});
  Json status;
  if (plan.node >= 0) {
    status = {
        {"conditions",
         {condition("PodReadyToStartContainers", "True", "", ""),
          condition("Initialized", "True", "", ""), condition("Ready", "True", "", ""),
          condition("ContainersReady", "True", "", ""), condition("PodScheduled", "True", "", "")}},
        {"containerStatuses",
         {{{"containerID", "containerd://" + hex_id(r) + hex_id(r)},
           {"image", container["image"]},
           {"imageID", "sha256:" + hex_id(r) + hex_id(r)},
           {"lastState", Json::object()},
           {"name", container["name"]},
           {"ready", true},
           {"restartCount", 0},
           {"started", true},
           {"state", {{"running", {{"startedAt", "2026-11-28T22:41:09Z"}}}}}}}},
        {"hostIP", "10.0.3.17"},
        {"phase", "Running"},
        {"podIP", "100.64.12.9"},
        {"qosClass", "Guaranteed"},
        {"startTime", "2026-11-28T22:41:02Z"}};
  } else {
    Json scheduled = condition("PodScheduled", "False", "Unschedulable",
                               "0/5000 nodes are available: 2000 node(s) didn't match Pod's node "
                               "affinity/selector, 3000 Insufficient nvidia.com/gpu. preemption: "
                               "0/5000 nodes are available: 5000 No preemption victims found for "
                               "incoming pod.");
    scheduled["lastProbeTime"] = nullptr;
    status = {{"conditions", {scheduled}}, {"phase", "Pending"}, {"qosClass", "Guaranteed"}};
  }
  const std::string owner_uid = "owner-" + plan.owner;
  Json annotations = {{"kubectl.kubernetes.io/restartedAt", "2026-11-28T22:40:00Z"}};
  if (plan.kind != Kind::kCpu) {  // what the webhook writes on GPU pods
    annotations["gpuadmit.io/class"] = plan.kind == Kind::kH100  ? "h100"
                                       : plan.kind == Kind::kL4  ? "l4"
                                       : plan.kind == Kind::kMig ? "a100mig"
                                                                 : "a100";
  }
  Json metadata = {{"annotations", annotations},
                   {"creationTimestamp", "2026-11-28T22:41:01Z"},
                   {"generateName", plan.owner + "-"},
                   {"labels", {{"app", plan.owner}, {"pod-template-hash", "7c9d8f6b5"}}},
                   {"name", name},
                   {"namespace", ns},
                   {"ownerReferences",
                    {{{"apiVersion", plan.daemonset ? "apps/v1" : "apps/v1"},
                      {"blockOwnerDeletion", true},
                      {"controller", true},
                      {"kind", plan.daemonset ? "DaemonSet" : "ReplicaSet"},
                      {"name", plan.owner},
                      {"uid", owner_uid}}}},
                   {"resourceVersion", std::to_string(90000000 + index)},
                   {"uid", hex_id(r)}};
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", metadata},
              {"spec", spec},
              {"status", status}};
}

// Writes `value` as kubectl does (json.MarshalIndent, 4 spaces) at list-item depth.
inline void write_item(std::FILE* out, const Json& value, bool first) {
  const std::string text = value.dump(4);
  std::string indented = first ? "        " : ",\n        ";
  indented.reserve(text.size() * 5 / 4);
  for (char c : text) {
    indented += c;
    if (c == '\n') indented += "        ";
  }
  std::fwrite(indented.data(), 1, indented.size(), out);
}

// The pods: GPU nodes filled in order with pods of their kind's sizes, every 100th GPU pod
// pending; then DaemonSet pods, then CPU pods on CPU nodes until `pods` in total.
inline std::vector<PodPlan> plan_pods(const ClusterShape& shape, Random& r) {
  std::vector<PodPlan> plans;
  plans.reserve(static_cast<size_t>(shape.pods));
  int gpu_pods = 0;
  for (int n = 0; n < shape.nodes && static_cast<int>(plans.size()) < shape.pods / 3; ++n) {
    const Kind kind = kind_of(n);
    if (kind == Kind::kCpu || n % 100 == 61) continue;  // the NotReady node runs nothing
    int free = kind == Kind::kL4 ? 32 : kind == Kind::kMig ? 56 : 8;
    // Leave the node's last slots free on every 3rd node, so some capacity is stranded.
    const int keep = n % 3 == 0 ? (kind == Kind::kL4 ? 3 : kind == Kind::kMig ? 5 : 3) : 0;
    while (free > keep) {
      int size = 1;
      if (kind == Kind::kA100 || kind == Kind::kH100) {
        const int sizes[] = {8, 4, 4, 4, 2, 1};  // 4 GPUs is the usual training pod
        size = sizes[r.below(6)];
        while (size > free - keep) size /= 2;
        if (size == 0) break;
      }
      const std::string owner = (kind == Kind::kL4    ? "infer-"
                                 : kind == Kind::kMig ? "notebook-"
                                                      : "train-") +
                                std::to_string(gpu_pods % 997);
      const bool pending = ++gpu_pods % 100 == 0;
      // Pending pods that wait for a reason: 8 GPUs (fragmentation on whole-GPU classes), or
      // a zone no L4 node is in, or a MIG profile no node is partitioned into.
      plans.push_back({pending ? -1 : n, kind,
                       pending && kind != Kind::kL4 && kind != Kind::kMig ? 8 : size, owner, false,
                       pending && kind == Kind::kMig ? "nvidia.com/mig-3g.40gb" : "",
                       pending && kind == Kind::kL4});
      if (!pending) free -= size;
    }
  }
  for (int n = 0; n < shape.nodes && static_cast<int>(plans.size()) < shape.pods; ++n) {
    for (const char* ds : {"kube-proxy", "node-exporter", "fluent-bit", "aws-node"}) {
      if (static_cast<int>(plans.size()) >= shape.pods) break;
      plans.push_back({n, Kind::kCpu, 0, ds, true, "", false});
    }
  }
  std::vector<int> cpu_nodes;
  for (int n = 0; n < shape.nodes; ++n) {
    if (kind_of(n) == Kind::kCpu) cpu_nodes.push_back(n);
  }
  for (int i = 0; static_cast<int>(plans.size()) < shape.pods; ++i) {
    const int node = cpu_nodes.empty() ? 0 : cpu_nodes[static_cast<size_t>(i) % cpu_nodes.size()];
    plans.push_back({node, Kind::kCpu, 0, "web-" + std::to_string(i % 1499), false, "", false});
  }
  return plans;
}

}  // namespace cluster_detail

// Writes the export; returns the GPU pods it holds (bound and pending).
inline int64_t write_cluster(const ClusterShape& shape, std::FILE* out) {
  using namespace cluster_detail;
  Random r{shape.seed};
  std::fputs("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n", out);
  bool first = true;
  for (int n = 0; n < shape.nodes; ++n) {
    write_item(out, node(n, r), first);
    first = false;
  }
  int64_t gpu_pods = 0;
  const std::vector<PodPlan> plans = plan_pods(shape, r);
  for (size_t i = 0; i < plans.size(); ++i) {
    gpu_pods += plans[i].gpus > 0;
    write_item(out, pod(plans[i], static_cast<int>(i), r), first);
    first = false;
  }
  std::fputs(
      "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": "
      "\"\"\n    }\n}\n",
      out);
  return gpu_pods;
}

}  // namespace gpuadmit::cluster_gen
