#include "rules/kueue_cluster_queue.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "engine/resources.h"
#include "engine/saturating.h"
#include "rules/kueue_flavor.h"
#include "rules/rule_support.h"

namespace gpuadmit {
namespace {

// One flavor of a resource group: spec.resourceGroups[group].flavors[index].
struct QueueFlavor {
  size_t group = 0, index = 0;
  std::string name;
  const Json* resources = nullptr;  // its `resources` list, or null
  bool known = false;               // its ResourceFlavor is among the run's
  bool class_free = false;          // known, and its nodeLabels name no class label: any pod fits
  std::vector<const GpuClass*> classes;  // the classes whose nodes its nodeLabels select
};

struct QueueGroup {
  std::vector<std::string> covered;  // coveredResources
  std::vector<QueueFlavor> flavors;
};

std::string flavor_path(const QueueFlavor& f) {
  return "spec.resourceGroups[" + std::to_string(f.group) + "].flavors[" + std::to_string(f.index) +
         "]";
}

// The GPU resource names a class's pods request after gpuadmit's renaming
// (mutators/resource_names.cc): each MIG profile's for strategy mixed, nvidia.com/gpu.shared for
// time-slicing with renameByDefault, else nvidia.com/gpu (MIG single keeps it).
std::vector<std::string> class_resource_names(const GpuClass& c) {
  if (c.mig && c.mig->strategy == MigConfig::Strategy::kMixed) {
    std::vector<std::string> names;
    for (const std::string& profile : c.mig->profiles)
      names.push_back(rule_support::mig_resource_name(profile));
    return names;
  }
  if (c.time_slicing && c.time_slicing->rename_by_default)
    return {std::string(rule_support::kSharedGpuResource)};
  return {"nvidia.com/gpu"};
}

// An NVIDIA GPU resource whose use by a class gpuadmit decides.
bool nvidia_gpu_name(std::string_view name) {
  return name == "nvidia.com/gpu" || name == rule_support::kSharedGpuResource ||
         name.starts_with("nvidia.com/mig-");
}

// Whether a class's pods may request `name`: its renamed names, and whole GPUs on a MIG mixed
// class (the device plugin's mixed strategy still offers GPUs without MIG as nvidia.com/gpu).
bool class_may_request(const GpuClass& c, std::string_view name) {
  if (name == "nvidia.com/gpu" && c.mig && c.mig->strategy == MigConfig::Strategy::kMixed)
    return true;
  const std::vector<std::string> names = class_resource_names(c);
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool names_class_label(const std::vector<GpuClass>& classes, const Json& labels) {
  for (const GpuClass& c : classes)
    for (const auto& entry : c.node_selector)
      if (find_member(labels, entry.first) != nullptr) return true;
  return false;
}

QueueFlavor read_flavor(const Json& flavor, size_t group, size_t index,
                        const std::vector<GpuClass>& classes, const KueueRunObjects* kueue) {
  QueueFlavor f;
  f.group = group;
  f.index = index;
  f.name = std::string(string_member(flavor, "name"));
  f.resources = find_member(flavor, "resources");
  if (kueue == nullptr) return f;
  const auto it = kueue->flavor_labels.find(f.name);
  if (it == kueue->flavor_labels.end()) return f;
  f.known = true;
  f.class_free = !names_class_label(classes, it->second);
  for (const GpuClass& c : classes)
    if (flavor_selects_class(c, it->second)) f.classes.push_back(&c);
  return f;
}

std::vector<QueueGroup> read_groups(const Json& spec, const std::vector<GpuClass>& classes,
                                    const KueueRunObjects* kueue) {
  std::vector<QueueGroup> groups;
  const Json* list = find_member(spec, "resourceGroups");
  if (list == nullptr || !list->is_array()) return groups;
  for (size_t g = 0; g < list->size(); ++g) {
    QueueGroup& group = groups.emplace_back();
    const Json& item = (*list)[g];
    if (!item.is_object()) continue;
    if (const Json* covered = find_member(item, "coveredResources"); covered && covered->is_array())
      for (const Json& name : *covered)
        if (name.is_string()) group.covered.push_back(name.get<std::string>());
    const Json* flavors = find_member(item, "flavors");
    if (flavors == nullptr || !flavors->is_array()) continue;
    for (size_t i = 0; i < flavors->size(); ++i)
      if ((*flavors)[i].is_object())
        group.flavors.push_back(read_flavor((*flavors)[i], g, i, classes, kueue));
  }
  return groups;
}

bool flavor_holds(const QueueFlavor& f, const GpuClass& c) {
  return std::find(f.classes.begin(), f.classes.end(), &c) != f.classes.end();
}

// Some group covers `name` with a flavor class c's pods may fit: one of c's, one whose labels the
// run does not show, or one that names no class label.
bool covered_for(const std::vector<QueueGroup>& groups, const GpuClass& c,
                 const std::string& name) {
  for (const QueueGroup& g : groups) {
    if (std::find(g.covered.begin(), g.covered.end(), name) == g.covered.end()) continue;
    for (const QueueFlavor& f : g.flavors)
      if (flavor_holds(f, c) || !f.known || f.class_free) return true;
  }
  return false;
}

// deny: a class a flavor holds, whose pods request a name no flavor they fit covers.
void check_coverage(const std::string& queue, const std::vector<QueueGroup>& groups,
                    const std::vector<GpuClass>& classes, std::vector<Violation>& out) {
  for (const GpuClass& c : classes) {
    const QueueFlavor* first = nullptr;
    for (const QueueGroup& g : groups)
      for (const QueueFlavor& f : g.flavors)
        if (first == nullptr && flavor_holds(f, c)) first = &f;
    if (first == nullptr) continue;
    std::vector<std::string> missing;
    for (const std::string& name : class_resource_names(c))
      if (!covered_for(groups, c, name)) missing.push_back(name);
    if (missing.empty()) continue;
    out.push_back({"ClusterQueue " + queue + ": flavor " + first->name + " holds class " + c.name +
                       "'s workloads (its ResourceFlavor selects the class's nodes), but " +
                       "no flavor of the queue that the class's pods fit covers " + join(missing) +
                       ", which they request: Kueue never admits them (\"resource " +
                       missing.front() +
                       " unavailable in ClusterQueue\", or no flavor matching their node "
                       "affinity); add " +
                       join(missing) + " to the coveredResources and to flavor " + first->name +
                       "'s resources",
                   flavor_path(*first) + ".resources"});
  }
}

std::string class_names(const QueueFlavor& f) {
  std::vector<std::string> names;
  for (const GpuClass* c : f.classes) names.push_back(c->name);
  return (names.size() == 1 ? "class " : "classes ") + join(names);
}

// warn: quota of an NVIDIA GPU name under a flavor whose classes' pods never request it.
void check_unused(const std::string& queue, const std::vector<QueueGroup>& groups,
                  std::vector<Violation>& out) {
  for (const QueueGroup& g : groups) {
    for (const QueueFlavor& f : g.flavors) {
      if (f.classes.empty() || f.resources == nullptr || !f.resources->is_array()) continue;
      for (size_t k = 0; k < f.resources->size(); ++k) {
        const Json& resource = (*f.resources)[k];
        const std::string name(resource.is_object() ? string_member(resource, "name") : "");
        if (!nvidia_gpu_name(name)) continue;
        if (std::any_of(f.classes.begin(), f.classes.end(),
                        [&](const GpuClass* c) { return class_may_request(*c, name); }))
          continue;
        std::vector<std::string> asked;
        for (const GpuClass* c : f.classes)
          for (const std::string& n : class_resource_names(*c))
            if (std::find(asked.begin(), asked.end(), n) == asked.end()) asked.push_back(n);
        out.push_back({"ClusterQueue " + queue + ": flavor " + f.name + " holds " + class_names(f) +
                           "'s workloads, whose pods never request " + name +
                           " (gpuadmit has them request " + join(asked) +
                           "): this quota is never used; quote " + join(asked) + " instead",
                       flavor_path(f) + ".resources[" + std::to_string(k) + "].name"});
      }
    }
  }
}

// What the queue may admit of GPU resources: nominalQuota summed, and the borrowing on top.
struct GpuCapacity {
  int64_t nominal = 0;
  int64_t borrowing = 0;
  bool unlimited_borrowing = false;  // a cohort, and a GPU resource without borrowingLimit
  bool any = false;                  // the queue quotes some GPU resource
  std::vector<std::string> parts;    // "nvidia.com/gpu 32 in flavor a100"
};

int64_t quantity_units(const Json* value) {
  if (value == nullptr) return 0;
  const std::optional<Quantity> q = parse_json_quantity(*value);
  return q && !q->is_negative() ? q->value() : 0;
}

GpuCapacity gpu_capacity(const std::vector<QueueGroup>& groups, const CompiledPolicy& policy,
                         bool cohort) {
  GpuCapacity cap;
  for (const QueueGroup& g : groups) {
    for (const QueueFlavor& f : g.flavors) {
      if (f.resources == nullptr || !f.resources->is_array()) continue;
      for (const Json& resource : *f.resources) {
        if (!resource.is_object()) continue;
        const std::string_view name = string_member(resource, "name");
        if (!policy.is_gpu_resource(name)) continue;
        cap.any = true;
        const int64_t nominal = quantity_units(find_member(resource, "nominalQuota"));
        cap.nominal = saturating_add(cap.nominal, nominal);
        cap.parts.push_back(std::string(name) + " " + std::to_string(nominal) + " in flavor " +
                            f.name);
        if (!cohort) continue;
        const Json* limit = find_member(resource, "borrowingLimit");
        if (limit == nullptr || limit->is_null()) {
          cap.unlimited_borrowing = true;
        } else {
          cap.borrowing = saturating_add(cap.borrowing, quantity_units(limit));
        }
      }
    }
  }
  return cap;
}

// The cohort: v1beta2's spec.cohortName, v1beta1's spec.cohort.
std::string cohort_of(const Json& spec) {
  std::string cohort(string_member(spec, "cohortName"));
  if (cohort.empty()) cohort = std::string(string_member(spec, "cohort"));
  return cohort;
}

std::string capacity_text(const GpuCapacity& cap, const std::string& cohort) {
  std::string text =
      "a GPU nominalQuota of " + std::to_string(cap.nominal) + " (" + join(cap.parts, "; ") + ")";
  if (cap.unlimited_borrowing)
    return text + " and may borrow GPUs from cohort " + cohort +
           " without limit (a GPU resource without borrowingLimit)";
  if (cap.borrowing > 0)
    return text + " and may borrow " + std::to_string(cap.borrowing) + " more from cohort " +
           cohort + " (borrowingLimit), " +
           std::to_string(saturating_add(cap.nominal, cap.borrowing)) + " in all";
  return text;
}

// warn: a tenant namespace's LocalQueue points here, and the queue may admit more GPUs than the
// tenant's quota.gpus.
void check_tenant_quota(const std::string& queue, const Json& spec,
                        const std::vector<QueueGroup>& groups, const DocumentContext& ctx,
                        std::vector<Violation>& out) {
  if (ctx.kueue == nullptr) return;
  const std::string cohort = cohort_of(spec);
  const GpuCapacity cap = gpu_capacity(groups, *ctx.policy, !cohort.empty());
  if (!cap.any) return;
  const int64_t most = saturating_add(cap.nominal, cap.borrowing);
  for (const auto& [key, lq] : ctx.kueue->local_queues) {
    if (lq.cluster_queue != queue) continue;
    const Tenant* tenant = ctx.policy->tenant_for(lq.ns);
    if (tenant == nullptr || !tenant->quota_gpus) continue;
    const int64_t quota = *tenant->quota_gpus;
    if (!cap.unlimited_borrowing && most <= quota) continue;
    out.push_back({"ClusterQueue " + queue + " has " + capacity_text(cap, cohort) +
                       ", more than tenant " + tenant->name + "'s quota.gpus of " +
                       std::to_string(quota) + ", and LocalQueue " + key + " sends namespace " +
                       lq.ns + "'s workloads to it: Kueue admits jobs there whose pods the " +
                       "namespace's ResourceQuota (gpuadmit render: requests.<GPU resource>: " +
                       std::to_string(quota) + ") then refuses at creation (the jobs admitted, " +
                       "their pods Forbidden); lower the " + "GPU quota to " +
                       std::to_string(quota) +
                       (cohort.empty() ? std::string() : " with borrowingLimit") +
                       ", or raise the tenant's quota.gpus",
                   "spec.resourceGroups"});
  }
}

class KueueClusterQueueRule final : public DocumentRule {
 public:
  std::string_view id() const override { return "GPU034"; }
  std::string_view name() const override { return "KueueClusterQueueMatchesPolicy"; }
  std::string_view summary() const override {
    return "a Kueue ClusterQueue must cover the GPU resources its classes' pods request, and "
           "admit no more GPUs than the quota.gpus of the tenants whose LocalQueues use it";
  }
  Action default_action() const override { return Action::kDeny; }
  bool handles(std::string_view api_version, std::string_view kind) const override {
    return kind == "ClusterQueue" && api_version.starts_with("kueue.x-k8s.io/");
  }

  void check(const Json& object, const DocumentContext& ctx,
             std::vector<Violation>& out) const override {
    const Json* spec = find_member(object, "spec");
    if (spec == nullptr || !spec->is_object()) return;
    const Json* metadata = find_member(object, "metadata");
    const std::string queue =
        metadata != nullptr ? std::string(string_member(*metadata, "name")) : std::string();
    const std::vector<GpuClass>& classes = ctx.policy->policy().classes;
    const std::vector<QueueGroup> groups = read_groups(*spec, classes, ctx.kueue);
    std::vector<Violation>& warnings = ctx.warnings != nullptr ? *ctx.warnings : out;
    check_coverage(queue, groups, classes, out);
    check_unused(queue, groups, warnings);
    check_tenant_quota(queue, *spec, groups, ctx, warnings);
  }
};

}  // namespace

std::unique_ptr<const DocumentRule> make_kueue_cluster_queue_rule() {
  return std::make_unique<KueueClusterQueueRule>();
}

}  // namespace gpuadmit
