#include "mutators/defaults.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "engine/resources.h"
#include "mutators/mutator_support.h"
#include "policies/policy_path.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

const Quantity* lookup(const ResourceList& list, std::string_view resource) {
  for (const auto& [name, quantity] : list) {
    if (name == resource) return &quantity;
  }
  return nullptr;
}

// The resources the tenant's defaults name, in a stable order: request, perGPU, then limit keys,
// without those the pod level budgets (pod_budgeted).
std::vector<std::string> default_resources(const TenantDefaults& d,
                                           const std::vector<std::string>& budgeted) {
  std::vector<std::string> names;
  for (const ResourceList* list : {&d.request, &d.per_gpu, &d.limit}) {
    for (const auto& [name, quantity] : *list) {
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      if (std::find(budgeted.begin(), budgeted.end(), name) != budgeted.end()) continue;
      names.push_back(name);
    }
  }
  return names;
}

// The resources pod-level `spec.resources` (KEP-2837) sets in its requests or limits. The API
// server's validation (pkg/apis/core/validation/validation.go, validatePodResources and
// validatePodResourceConsistency) then requires, for each of them: pod-level request ≤ pod-level
// limit; the containers' aggregate request (regular and sidecars summed, init containers by
// their peak, as resourcehelper.AggregateContainerRequests computes it) ≤ the pod-level request;
// and each container's limit ≤ the pod-level limit. A pod-level limit without a request gets the
// request defaulted (pkg/apis/core/v1/defaults.go defaultPodRequests: the containers' aggregate
// request, or the limit when no container has one). Such a resource is the user's budget for the
// whole pod, shared by containers that name none: defaults are not added for it
// (docs/mutations.md).
std::vector<std::string> pod_budgeted(const Json& spec) {
  std::vector<std::string> names;
  const Json* resources = present(spec, "resources");
  if (resources == nullptr || !resources->is_object()) return names;
  for (std::string_view section : {"requests", "limits"}) {
    const Json* list = present(*resources, section);
    if (list == nullptr || !list->is_object()) continue;
    for (auto it = list->begin(); it != list->end(); ++it) {
      if (it.value().is_null()) continue;
      if (std::find(names.begin(), names.end(), it.key()) == names.end()) names.push_back(it.key());
    }
  }
  return names;
}

// Mirrors the LimitRanger admission plugin (plugin/pkg/admission/limitranger/admission.go
// mergeContainerResources) for one container: a default limit (LimitRange `default`) is set only
// when the limit is absent, a default request only when the request is absent; values the user
// wrote are never touched. Where Kubernetes' behaviour spans several steps, the net result is
// reproduced:
//  - a LimitRange with `default` but no `defaultRequest` has its defaultRequest defaulted to the
//    default limit (pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem), and a Pod's missing
//    request is defaulted to its own limit (SetDefaults_Pod). Hence the request falls back to the
//    container's limit — the user's as written, or the default just set.
//  - a request above the limit is rejected by API validation ("must be less than or equal to
//    ... limit"), so a default request is capped at the container's limit (the limit's JSON value
//    is copied), and a default limit is not set below a request the user wrote.
// perGPU × N (N = the container's GPU units: whole, shared or MIG) replaces `request` for the
// resources it names when N > 0. Resources that are GPU resources are skipped: defaulting them
// would hand GPUs to every helper container. Unparsable user values are left alone (rules report
// them), and so is the resource they concern. A resource the pod-level `spec.resources` sets is
// left alone in every container (pod_budgeted).
class DefaultsMutator final : public Mutator {
 public:
  std::string_view name() const override { return "defaults"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.gpu_pod && ctx.tenant != nullptr;
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      const TenantDefaults& defaults = ctx.tenant->defaults;
      const std::vector<std::string> budgeted = pod_budgeted(pod.view().spec());
      const std::vector<std::string> resources = default_resources(defaults, budgeted);
      if (resources.empty()) return false;
      bool changed = false;
      const std::string defaults_path = policy_path::tenant(*ctx.tenant) + ".defaults";
      const std::vector<ContainerRef>& containers = pod.containers();
      for (size_t i = 0; i < containers.size(); ++i) {
        const ContainerRef& ref = containers[i];
        if (ref.kind == ContainerKind::kEphemeral) continue;  // may not declare resources
        // GPU units the container gets through DRA claims count for perGPU like extended ones.
        const int64_t claim_gpus = ctx.dra != nullptr && i < ctx.dra->container_units.size()
                                       ? ctx.dra->container_units[i]
                                       : 0;
        changed |= default_container(pod.view().container(ref),
                                     pod.container(ref, ContainerMember::kResources), defaults,
                                     resources, *ctx.policy, claim_gpus, defaults_path, ctx);
      }
      return changed;
    });
  }

 private:
  // `container` reads the container; `writable` is its resources, where the defaults go.
  static bool default_container(const Json& container, WritableMember writable,
                                const TenantDefaults& defaults,
                                const std::vector<std::string>& resources,
                                const CompiledPolicy& policy, int64_t claim_gpus,
                                const std::string& defaults_path, PodContext& ctx) {
    if (!container.is_object()) return false;
    const int64_t gpus = container_gpu_units(container, policy) + claim_gpus;
    // Limits first: a request falls back to, and is capped at, the limit as it ends up.
    bool changed =
        default_limits(container, writable, defaults, resources, policy, defaults_path, ctx);
    changed |= default_requests(container, writable, defaults, resources, policy, gpus,
                                defaults_path, ctx);
    return changed;
  }

  // The `limit` defaults the container lacks, unless below a request the user wrote.
  static bool default_limits(const Json& container, WritableMember& writable,
                             const TenantDefaults& defaults,
                             const std::vector<std::string>& resources,
                             const CompiledPolicy& policy, const std::string& defaults_path,
                             PodContext& ctx) {
    bool changed = false;
    for (const auto& [resource, quantity] : defaults.limit) {
      if (policy.is_gpu_resource(resource)) continue;
      if (std::find(resources.begin(), resources.end(), resource) == resources.end()) continue;
      if (section_value(container, "limits", resource) != nullptr) continue;
      if (const Json* request = section_value(container, "requests", resource)) {
        const std::optional<Quantity> q = parse_json_quantity(*request);
        if (!q || *q > quantity) continue;
      }
      if (Json* limits = section(writable, "limits")) {
        (*limits)[resource] = quantity.to_string();
        because(ctx, policy_path::key(defaults_path + ".limit", resource));
        changed = true;
      }
    }
    return changed;
  }

  // The requests the container lacks: perGPU × its GPU units, else `request`, else its limit;
  // capped at its limit.
  static bool default_requests(const Json& container, WritableMember& writable,
                               const TenantDefaults& defaults,
                               const std::vector<std::string>& resources,
                               const CompiledPolicy& policy, int64_t gpus,
                               const std::string& defaults_path, PodContext& ctx) {
    bool changed = false;
    for (const std::string& resource : resources) {
      if (policy.is_gpu_resource(resource)) continue;
      if (section_value(container, "requests", resource) != nullptr) continue;
      const Json* limit = section_value(container, "limits", resource);
      std::optional<Json> value;
      std::optional<Quantity> wanted;
      const char* source = ".limit";  // the defaults' list the value comes from (`--explain`)
      const Quantity* per_gpu = lookup(defaults.per_gpu, resource);
      if (per_gpu != nullptr && gpus > 0) {
        wanted = per_gpu->times(gpus);
        if (!wanted) continue;  // overflow: no sensible default
        source = ".perGPU";
      } else if (const Quantity* request = lookup(defaults.request, resource)) {
        wanted = *request;
        source = ".request";
      }
      if (wanted) {
        value = wanted->to_string();
        if (limit != nullptr) {
          const std::optional<Quantity> cap = parse_json_quantity(*limit);
          if (!cap) continue;
          if (*wanted > *cap) value = *limit;
        }
      } else if (limit != nullptr) {
        if (!parse_json_quantity(*limit)) continue;
        value = *limit;
      }
      if (!value) continue;
      if (Json* requests = section(writable, "requests")) {
        (*requests)[resource] = std::move(*value);
        because(ctx, policy_path::key(defaults_path + source, resource));
        changed = true;
      }
    }
    return changed;
  }

  // container.resources.<name>[resource] when present and not null.
  static const Json* section_value(const Json& container, std::string_view name,
                                   std::string_view resource) {
    const Json* resources = present(container, "resources");
    if (resources == nullptr || !resources->is_object()) return nullptr;
    const Json* map = present(*resources, name);
    if (map == nullptr || !map->is_object()) return nullptr;
    return present(*map, resource);
  }

  // container.resources.<name>, created when absent.
  static Json* section(WritableMember& resources_member, std::string_view name) {
    Json* resources = resources_member.object();
    return resources == nullptr ? nullptr : member_object(*resources, name);
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_defaults_mutator() {
  return std::make_unique<DefaultsMutator>();
}

}  // namespace gpuadmit
