#pragma once
// The GPUPolicy model (SPEC §3): plain data, as written by the platform team. Loading (YAML,
// with every error located) is policies/loader.h; the read-only compiled form that the engine
// evaluates against is policies/compiled_policy.h.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/quantity.h"

namespace gpuadmit {

// What a rule or mutation does when it applies (SPEC §3 `enforcement`).
enum class Action { kFix, kDeny, kWarn, kOff, kStrip };
std::string_view action_name(Action a);

struct Taint {
  std::string key;
  std::string value;   // empty: the taint has no value (tolerated with operator Exists)
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute
};

struct MigConfig {
  enum class Strategy { kMixed, kSingle };
  Strategy strategy = Strategy::kMixed;
  std::vector<std::string> profiles;  // "1g.10gb", "1g.10gb+me", ...
};

struct TimeSlicing {
  int64_t replicas = 0;
  bool rename_by_default = false;
  bool fail_requests_greater_than_one = false;
};

// An ordered label -> allowed values map (policy order is kept: it is the order of the
// matchExpressions gpuadmit writes).
using LabelSelectorValues = std::vector<std::pair<std::string, std::vector<std::string>>>;

// A DRA DeviceClass that hands out this class's devices (docs/dra.md): `devicesPerGPU` devices
// of it count as one GPU unit (7 for a class of 1g MIG slices, when a whole GPU is the unit);
// `migProfile`, when the DeviceClass hands out only that MIG profile (an admin-made class such
// as mig-1g-12gb.gpu.nvidia.com).
struct DeviceClassMapping {
  std::string name;
  int64_t devices_per_gpu = 1;
  std::string mig_profile;  // "" when the DeviceClass is not one profile's
};

// What a GPU of a class costs (docs/fleet.md, "Cost"): the price of one GPU for one hour in
// millionths of `currency`'s unit, exact (`perGPUHour: 3.67` is 3'670'000).
struct GpuPrice {
  int64_t micros_per_gpu_hour = 0;
  std::string currency;  // ISO 4217 code, "USD"
};

// What a class's driver runs (GPU027, docs/decisions-policy.md `classes.<c>.driver`): `driver:
// {version: "535.104.05"}` or `driver: {cuda: "12.2"}`, the highest CUDA version its nodes run
// (with NVIDIA's forward-compatibility package where installed). Both are kept as written,
// validated by the loader (engine/cuda.h).
struct ClassDriver {
  std::string version;  // "" when not given
  std::string cuda;     // "" when not given
};

// `spec.cudaImages[]`: the platform's own image naming (GPU027): an image matching `pattern` (a
// glob, `*` any characters) is built for CUDA `cuda`. The first match wins.
struct CudaImagePattern {
  std::string pattern;
  std::string cuda;
};

// How a class's GPUs are joined (docs/decisions-policy.md, "Topology"): `nvlink_group` GPUs of a
// node share one NVLink domain (8 on an HGX/DGX board, 2 with NVLink bridges, 1 without
// NVLink): a pod with more whole GPUs than that talks across groups over PCIe (GPU033).
// `domain_label`: the node label whose value names a node's NVLink or network domain
// (nvidia.com/gpu.clique on multi-node NVLink systems, a rack or block label).
struct ClassTopology {
  std::optional<int64_t> nvlink_group;
  std::string domain_label;  // "" when not given
};

struct GpuClass {
  std::string name;
  LabelSelectorValues node_selector;
  std::vector<Taint> taints;
  std::optional<int64_t> gpus_per_node;
  std::optional<int64_t> nodes;
  std::optional<MigConfig> mig;
  std::optional<TimeSlicing> time_slicing;
  std::vector<DeviceClassMapping> device_classes;  // DRA DeviceClasses of this pool
  std::optional<GpuPrice> price;
  std::optional<ClassDriver> driver;
  std::optional<ClassTopology> topology;
};

struct PriorityClassDecl {
  std::string name;
  int32_t value = 0;
  std::string preemption_policy = "PreemptLowerPriority";  // or "Never"
  bool global_default = false;
};

// An ordered resource name -> quantity list.
using ResourceList = std::vector<std::pair<std::string, Quantity>>;

struct TenantDefaults {
  ResourceList request;  // LimitRange defaultRequest
  ResourceList limit;    // LimitRange default
  ResourceList per_gpu;  // request per GPU unit, used instead of `request` when it names the key
};

struct TenantLimits {
  std::optional<int64_t> max_gpus_per_container;
  std::optional<int64_t> max_gpus_per_pod;
};

struct TenantPriority {
  std::optional<std::string> default_class;
  std::vector<std::pair<std::string, std::string>> by_workload;  // workload type -> class name
  std::optional<std::vector<std::string>> allowed;               // unset: any class allowed
};

// A tenant's Kueue LocalQueue: `name` is written as the kueue.x-k8s.io/queue-name label on GPU
// workloads that name none; `require` denies GPU workloads without a queue (GPU025).
struct TenantQueue {
  std::string name;  // "" when the tenant names no queue (only `require`)
  bool require = false;
};

// What a tenant may ask of DRA beyond plain device counts (docs/dra.md, GPU020/GPU021).
struct TenantDra {
  bool allocation_mode_all = false;  // allocationMode: All (every matching device of a node)
  bool admin_access = false;         // adminAccess: true (devices in use by other claims)
};

// A tenant's staged rollout (docs/rollout.md): per-rule actions that override the policy's, and
// audit mode, in which no finding of the tenant denies (each deny becomes a warning and an
// audit annotation; errors still deny).
struct TenantEnforcement {
  bool audit = false;  // mode: audit (default: enforce)
  bool mutate = true;  // false: the tenant's pod specs are not mutated
  std::vector<std::pair<std::string, Action>> rules;  // rule id -> deny | warn | off
};

struct Tenant {
  std::string name;
  std::vector<std::string> namespaces;  // RE2 full-match patterns
  std::optional<std::string> default_class;
  // Unset: every class of the policy is allowed. Set and empty: no GPUs for this tenant.
  std::optional<std::vector<std::string>> allowed_classes;
  TenantDefaults defaults;
  TenantLimits limits;
  std::optional<int64_t> quota_gpus;
  TenantPriority priority;
  std::optional<TenantQueue> queue;  // the tenant's Kueue LocalQueue (docs/mutations.md §10)
  TenantDra dra;
  TenantEnforcement enforcement;
};

// What the webhook answers when a mutator cannot complete (docs/mutations.md, "When a mutator
// fails"): Fail denies the object with the reason; Ignore admits it without any mutation (the
// names of Kubernetes' own webhook failurePolicy).
enum class FailurePolicy { kFail, kIgnore };

// Rule ids are GPU001 to GPU0<kLastRuleNumber> (`enforcement.rules` keys): the highest id of
// rules/all_rules.cc and rules/document_rules.cc (tests/rules/all_rules_test.cpp holds them
// together).
inline constexpr int kLastRuleNumber = 34;

struct Enforcement {
  Action requests_equal_limits = Action::kFix;  // fix | deny | warn
  Action non_gpu_on_gpu_pool = Action::kDeny;   // deny | strip | warn | off
  Action fragmentation = Action::kWarn;         // deny | warn | off (GPU014)
  // fix: NVIDIA_VISIBLE_DEVICES=void on containers that request no GPU, and GPU024 denies;
  // deny | warn: GPU024 only; off: neither.
  Action gpu_visibility = Action::kFix;
  std::vector<std::pair<std::string, Action>> rules;  // rule id -> deny | warn | off
  std::vector<std::string> exempt_namespaces;         // RE2 full-match patterns
  // nodeAgents.namespaces, RE2 full-match patterns: where a DaemonSet, or a Pod whose controller
  // is one, is a node agent (the device plugin, DCGM exporter, GPU Feature Discovery) that GPU009,
  // GPU024, GPU026 and the visibility mutation and strip leave alone. Elsewhere a DaemonSet is a
  // workload like any other (docs/decisions.md, "Node agents").
  std::vector<std::string> node_agent_namespaces;
  FailurePolicy mutation_failure_policy = FailurePolicy::kFail;  // mutationFailurePolicy
};

// A kind by API group ("" is the core group) and kind: `kubeflow.org/PyTorchJob`, `Pod`.
struct GroupKind {
  std::string group;
  std::string kind;
};

// `spec.controllers[]`: the user a controller sends its requests as, and the kinds whose objects
// it creates children of (docs/decisions.md, "Who an owner is believed from"). A request from
// `username` whose object names one of `kinds` as its controller is believed to come from that
// controller; kube-controller-manager's own controllers are built in (engine/controllers.h).
struct ControllerIdentity {
  std::string username;
  std::vector<GroupKind> kinds;
};

struct WorkloadDecl {
  std::string api_version;
  std::string kind;
  std::vector<std::string> pod_specs;  // "spec.workers[*].template.spec"
};

struct Policy {
  std::string name;
  // metadata.annotations["gpuadmit.io/generation"], 0 without: the policy author's ordering of
  // versions of this policy; `gpuadmit register` never overwrites objects written for a higher
  // one (kube/webhook_registration.h).
  std::uint64_t generation = 0;
  std::vector<std::string> gpu_resources;  // extra whole-GPU resource names
  std::vector<GpuClass> classes;           // in file order
  std::vector<PriorityClassDecl> priority_classes;
  std::vector<Tenant> tenants;  // first match wins
  Enforcement enforcement;
  std::vector<WorkloadDecl> workloads;
  std::vector<ControllerIdentity> controllers;  // operators' identities (spec.controllers)
  // RuntimeClass names that run NVIDIA's container runtime, besides the GPU Operator's `nvidia`,
  // `nvidia-cdi` and `nvidia-legacy` (GPU024).
  std::vector<std::string> nvidia_runtime_classes;
  std::vector<CudaImagePattern> cuda_images;  // spec.cudaImages, in order (GPU027)
};

}  // namespace gpuadmit
