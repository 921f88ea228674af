#pragma once
// What mutators and rules know about the pod spec they look at, beyond the spec itself.

#include <string>
#include <string_view>
#include <vector>

#include "engine/dra.h"
#include "engine/json.h"
#include "engine/node_source.h"
#include "engine/pod_view.h"
#include "engine/priority_classes.h"
#include "engine/resources.h"
#include "policies/compiled_policy.h"

namespace gpuadmit {

enum class Operation { kCreate, kUpdate, kDelete, kConnect };

// Facts about the whole admission request / manifest document.
struct RequestContext {
  const CompiledPolicy* policy = nullptr;
  std::string ns;           // the namespace the object lives in
  std::string api_version;  // of the object
  std::string kind;
  std::string name;
  Operation operation = Operation::kCreate;
  bool daemonset_owned = false;  // a Pod whose controller ownerReference is a DaemonSet
  // AdmissionRequest.userInfo.username: who sent the object; "" in lint and for a review without
  // userInfo. An ownerReference is believed only from its kind's controller (engine/controllers.h
  // sent_by_owner_controller).
  std::string username;
  // The object is judged, not patched (engine/controllers.h TemplateTreatment::kJudge): the
  // mutators run on a copy so that the rules see what the object's Pods will be given at their
  // CREATE; a mutation Pods do not get (Kueue's queue label on the object) does not run.
  bool judge_only = false;
  // The pods/ephemeralcontainers subresource (`kubectl debug`): only the ephemeral containers
  // this UPDATE adds are evaluated, by the mutators and rules that say so
  // (Mutator/Rule::evaluates_added_ephemeral_containers); the rest of the Pod was admitted at
  // its CREATE and cannot change.
  bool ephemeral_update = false;
  std::vector<std::string> added_ephemeral_containers;  // their names
  // The cluster's PriorityClasses (EvaluateOptions::priority_classes); null: not known.
  const PriorityClassSource* priority_classes = nullptr;
  // The cluster's Nodes (EvaluateOptions::nodes); null: not known.
  const NodeSource* nodes = nullptr;
  // UPDATE: the object before it (AdmissionRequest.oldObject); null otherwise and in lint.
  const Json* old_object = nullptr;
};

// False for a container an ephemeral-container UPDATE does not add (RequestContext::
// ephemeral_update): mutators and rules leave it alone.
bool in_scope(const RequestContext* request, const ContainerRef& container);

// Facts about one pod spec, resolved before mutators and rules run (class resolution, SPEC §4.2).
struct PodContext {
  const RequestContext* request = nullptr;
  const CompiledPolicy* policy = nullptr;
  const Tenant* tenant = nullptr;  // null: the namespace matches no tenant (docs/decisions.md)
  bool gpu_pod = false;            // from the original spec, before any mutation

  // Class resolution: `class_name` is what the pod names or resolves to (possibly unknown:
  // GPU004), `gpu_class` the policy class when known.
  std::string class_name;
  const GpuClass* gpu_class = nullptr;
  bool class_from_annotation = false;

  std::string mig_profile;    // gpuadmit.io/mig-profile, "" when unset
  std::string workload_type;  // gpuadmit.io/workload, "" when unset

  // The containers' GPU resources, read once after the mutators and shared by the rules; null
  // when the caller did not read them (a rule then reads the containers itself).
  const PodGpuResources* gpu_resources = nullptr;

  // The pod spec's DRA claims, resolved (engine/dra.h); null when the caller did not resolve
  // them (a rule checked on its own): no DRA units are counted then.
  const PodDra* dra = nullptr;

  // A pod spec of the object before this one is a GPU pod (set by the pipeline): a rule about
  // the whole workload reports at its first GPU pod spec only.
  bool earlier_gpu_pod_spec = false;

  // Names of mutations applied to this pod spec, in order (feeds gpuadmit.io/mutations): each
  // Mutator::name(), which lives as long as the pipeline.
  std::vector<std::string_view> mutations;
  // Policy fields the running mutator applied (`--explain`), appended by mutators through
  // mutator_support::because; the pipeline turns them into Evaluation::mutation_records.
  std::vector<std::string> policy_paths;
};

// A DRA claim object under admission (ResourceClaim, ResourceClaimTemplate; docs/dra.md).
struct ClaimContext {
  const CompiledPolicy* policy = nullptr;
  const Tenant* tenant = nullptr;  // null: the namespace matches no tenant
  std::string_view ns;
  std::string_view kind;                              // "ResourceClaim" | "ResourceClaimTemplate"
  const std::vector<DraRequest>* requests = nullptr;  // claim_requests of its spec
  std::string_view spec_path;  // the ResourceClaimSpec: "spec", or "spec.spec" for a template
  std::string_view name;       // metadata.name ("" when the API server has not generated it yet)
  const ClaimResolver* claims = nullptr;  // the cluster's Pods (pending_pods_naming); may be null
  std::string_view username;              // AdmissionRequest.userInfo.username ("" in lint)
};

// What a rule knows of a queued workload without pod specs (Rule::check_queued_object).
struct QueuedObjectContext {
  const CompiledPolicy* policy = nullptr;
  const Tenant* tenant = nullptr;  // null: the namespace matches no tenant
  Operation operation = Operation::kCreate;
  const Json* old_object = nullptr;  // UPDATE's oldObject, else null
};

// Fills the class, MIG profile and workload type of a pod spec (SPEC §4.2): the
// gpuadmit.io/class setting; else the class whose `deviceClasses` maps the DeviceClass of the
// pod's first GPU claim (docs/dra.md); else the class whose nodeSelector matches the pod's own
// nodeSelector; else the tenant's defaultClass; else the only class when the policy has one.
void resolve_pod_context(const PodView& pod, PodContext& ctx);

}  // namespace gpuadmit
