#include "mutators/resource_names.h"

#include <string>
#include <utility>

#include "engine/resources.h"
#include "mutators/mutator_support.h"
#include "policies/policy_path.h"

namespace gpuadmit {
namespace {

using namespace mutator_support;

// Renames `from` to `to` in one requests/limits map. The renamed key moves to the end of the
// map: that is where the JSON Patch's "add" puts it in the object the API server (or lint --fix)
// patches, and the pipeline checks that the patch reproduces the mutated object exactly.
void rename_key(Json& map, std::string_view from, const std::string& to) {
  Json value = std::move(map.at(std::string(from)));
  map.erase(std::string(from));
  map[to] = std::move(value);
}

// The NVIDIA device plugin advertises what a node offers under exact names, and a pod asking for
// any other name never schedules there:
//  - MIG strategy mixed: each profile is its own resource, nvidia.com/mig-<profile>, with "+"
//    written "." (k8s-device-plugin internal/lm/mig-strategy.go newMigStrategyMixedLabeler,
//    internal/resource/nvml-mig-device.go GetName): 1g.10gb+me → nvidia.com/mig-1g.10gb.me.
//  - MIG strategy single: every GPU of the node has the same profile and is still offered as
//    nvidia.com/gpu; only the product label changes (node-affinity mutation), nothing to rename.
//  - time-slicing with renameByDefault: the replicas are offered as <resource>.shared
//    (api/config/v1 ResourceName.DefaultSharedRename), so nvidia.com/gpu → nvidia.com/gpu.shared.
// Requests and limits are renamed together, values untouched. Nothing is renamed when the
// profile is not one the class offers (GPU007), when a container's nvidia.com/gpu value does not
// parse (GPU002), or when the container already names the target resource (GPU008 / GPU001
// report it; merging two entries would invent a value).
class ResourceNamesMutator final : public Mutator {
 public:
  std::string_view name() const override { return "resource-names"; }

  bool may_change(const PodContext& ctx) const override {
    return ctx.gpu_pod && ctx.gpu_class != nullptr && mig_profile_valid(ctx);
  }

  MutationOutcome mutate(PodWriter& pod, PodContext& ctx) const override {
    return guarded([&] {
      if (!may_change(ctx)) return false;
      const GpuClass& gpu_class = *ctx.gpu_class;
      std::string target;
      if (!ctx.mig_profile.empty()) {
        if (gpu_class.mig->strategy != MigConfig::Strategy::kMixed) return false;
        target = mig_resource_name(ctx.mig_profile);
        because(ctx, policy_path::cls(gpu_class.name) + ".mig.strategy");
      } else if (gpu_class.time_slicing && gpu_class.time_slicing->rename_by_default) {
        target = std::string(kSharedGpuResource);
        because(ctx, policy_path::cls(gpu_class.name) + ".timeSlicing.renameByDefault");
      } else {
        return false;
      }
      bool changed = false;
      for (const ContainerRef& ref : pod.containers()) {
        if (ref.kind == ContainerKind::kEphemeral) continue;
        changed |= rename_in_container(pod.container(ref, ContainerMember::kResources), target);
      }
      return changed;
    });
  }

 private:
  static bool rename_in_container(WritableMember resources_member, const std::string& target) {
    Json* resources = resources_member.find();
    if (resources == nullptr || !resources->is_object()) return false;
    bool any = false;
    for (std::string_view section : {"requests", "limits"}) {
      const Json* map = present(*resources, section);
      if (map == nullptr || !map->is_object()) continue;
      const Json* value = find_member(*map, kWholeGpuResource);
      if (value == nullptr) continue;
      if (!parse_json_quantity(*value) || find_member(*map, target) != nullptr) return false;
      any = true;
    }
    if (!any) return false;
    for (std::string_view section : {"requests", "limits"}) {
      Json* map = find_member(*resources, section);
      if (map == nullptr || !map->is_object() || find_member(*map, kWholeGpuResource) == nullptr) {
        continue;
      }
      rename_key(*map, kWholeGpuResource, target);
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<const Mutator> make_resource_names_mutator() {
  return std::make_unique<ResourceNamesMutator>();
}

}  // namespace gpuadmit
