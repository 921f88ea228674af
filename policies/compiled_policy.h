#pragma once
// The compiled, read-only form of a Policy: RE2 patterns compiled, names resolved, built once
// per load and shared by every request through std::shared_ptr<const CompiledPolicy>.
//
//   auto compiled = CompiledPolicy::compile(policy);          // policy already validated
//   const Tenant* t = compiled->tenant_for("ml-vision");       // first matching tenant or null

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "policies/model.h"

namespace gpuadmit {

// KEP-5004: `deviceclass.resource.kubernetes.io/<DeviceClass>`, an extended resource every
// DeviceClass serves whether or not it names an extendedResourceName (CompiledPolicy::
// implicit_device_class).
inline constexpr std::string_view kImplicitDeviceClassResource =
    "deviceclass.resource.kubernetes.io/";

class CompiledPolicy {
 public:
  // Compiles a policy that the loader has validated. Patterns that fail to compile (only
  // possible for a hand-built Policy) never match.
  static std::shared_ptr<const CompiledPolicy> compile(Policy policy);
  ~CompiledPolicy();
  CompiledPolicy(const CompiledPolicy&) = delete;
  CompiledPolicy& operator=(const CompiledPolicy&) = delete;

  const Policy& policy() const { return policy_; }

  // The first tenant whose namespace patterns full-match `ns`, or nullptr.
  const Tenant* tenant_for(std::string_view ns) const;
  // True when `ns` matches an `enforcement.exempt.namespaces` pattern.
  bool is_exempt(std::string_view ns) const;
  // True when `ns` matches an `enforcement.nodeAgents.namespaces` pattern: a DaemonSet there, or
  // a Pod whose controller is one, is a node agent (engine/controllers.h runs_on_every_node).
  bool is_node_agent_namespace(std::string_view ns) const;
  // True when the policy's `controllers` name `username` as the controller of objects whose
  // controller is of API group `group` and kind `kind` (kube-controller-manager's controllers
  // are engine/controllers.h's, not the policy's).
  bool names_controller(std::string_view username, std::string_view group,
                        std::string_view kind) const;

  const GpuClass* find_class(std::string_view name) const;
  // The class whose `deviceClasses` names a DRA DeviceClass, with that entry; {nullptr, nullptr}
  // for a DeviceClass the policy does not map (not a GPU: NICs, FPGAs are left alone).
  struct DeviceClassMatch {
    const GpuClass* gpu_class = nullptr;
    const DeviceClassMapping* mapping = nullptr;
  };
  DeviceClassMatch find_device_class(std::string_view device_class) const;
  const PriorityClassDecl* find_priority_class(std::string_view name) const;
  // The class marked globalDefault, if any.
  const PriorityClassDecl* global_default_priority_class() const;

  // A GPU resource name (SPEC §2): nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*,
  // the policy's `gpuResources`, and `deviceclass.resource.kubernetes.io/<DeviceClass>` for each
  // DeviceClass a class maps (implicit_device_class).
  bool is_gpu_resource(std::string_view resource) const;
  // KEP-5004's implicit extended resource `deviceclass.resource.kubernetes.io/<DeviceClass>`:
  // kube-scheduler serves it from any DeviceClass, through a ResourceClaim it creates itself
  // (docs/dra.md, "The scheduler's claims"), one device per unit. The DeviceClass's mapping when
  // `resource` names one the policy maps, else an empty match.
  DeviceClassMatch implicit_device_class(std::string_view resource) const;

  // A RuntimeClass that runs NVIDIA's container runtime: the GPU Operator's `nvidia`,
  // `nvidia-cdi` and `nvidia-legacy`, and the policy's `nvidiaRuntimeClasses` (GPU024).
  bool is_nvidia_runtime_class(std::string_view name) const;

  // The action for a rule id: `enforcement.rules[id]` if set, else the rule-specific field
  // (GPU001 ← requestsEqualLimits, GPU009 ← nonGpuOnGpuPool, GPU014 ← fragmentation), else
  // `default_action`.
  Action action_for(std::string_view rule_id, Action default_action) const;
  // The same for a pod spec of `tenant` (may be null): the tenant's `enforcement.rules[id]`
  // first (docs/rollout.md). Audit mode is the caller's: it changes severity, not the action.
  Action action_for(const Tenant* tenant, std::string_view rule_id, Action default_action) const;

  // Every class's taints and node-selector label keys: the "GPU pool" markers used by GPU009 and
  // the strip mutation.
  bool is_gpu_pool_taint_key(std::string_view key) const;
  bool is_gpu_pool_label_key(std::string_view key) const;

 private:
  explicit CompiledPolicy(Policy policy);
  struct Patterns;
  Policy policy_;
  std::unique_ptr<Patterns> patterns_;
};

using PolicyPtr = std::shared_ptr<const CompiledPolicy>;

}  // namespace gpuadmit
