#include "fleet/collect.h"

#include <algorithm>
#include <cstdint>
#include <unordered_set>
#include <utility>

#include "engine/controllers.h"
#include "engine/json_dump.h"
#include "engine/pod_view.h"
#include "engine/resources.h"
#include "engine/workload.h"
#include "fleet/gfd.h"
#include "policies/mig_profiles.h"

namespace gpuadmit::fleet {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string identity_by_uid(std::string_view uid) { return "uid:" + std::string(uid); }
std::string identity_by_name(std::string_view kind, std::string_view ns, std::string_view name) {
  std::string key = "obj:";
  key.append(kind).append("/").append(ns).append("/").append(name);
  return key;
}

// The largest profile of a MIG class (what a whole GPU asked for on it takes).
std::string largest_profile(const GpuClass& gpu_class) {
  std::string best;
  int best_compute = -1;
  for (const std::string& p : gpu_class.mig->profiles) {
    auto shape = parse_mig_profile(p);
    if (shape && shape->compute > best_compute) {
      best_compute = shape->compute;
      best = p;
    }
  }
  return best.empty() ? "7g.80gb" : best;
}

// Fills units (and mig) of a group from its effective requests, in the class's unit.
void fill_units(PodGroup& group, const std::vector<PodGpuRequest>& requests,
                const GpuClass* gpu_class, const std::string& mig_profile) {
  for (const PodGpuRequest& r : requests) group.gpus = saturating_add(group.gpus, r.units);
  if (gpu_class == nullptr || !gpu_class->mig) {
    group.units = group.gpus;  // whole GPUs, or time-slice replicas
    return;
  }
  const bool single = gpu_class->mig->strategy == MigConfig::Strategy::kSingle;
  for (const PodGpuRequest& r : requests) {
    if (r.units == 0) continue;
    std::string profile = mig_profile_of_resource(r.resource);
    // MIG strategy single: nvidia.com/gpu is one instance of the node's profile.
    if (profile.empty()) {
      profile = single && !mig_profile.empty() ? mig_profile : largest_profile(*gpu_class);
    }
    auto it = std::find_if(group.mig.begin(), group.mig.end(),
                           [&](const auto& m) { return m.first == profile; });
    if (it == group.mig.end()) {
      group.mig.emplace_back(profile, r.units);
    } else {
      it->second = saturating_add(it->second, r.units);
    }
    if (auto shape = parse_mig_profile(profile.substr(0, profile.find("gb") + 2))) {
      group.units = saturating_add(group.units, saturating_mul(shape->compute, r.units));
    }
  }
}

// GPU003's verdict for the fleet: a namespace of no tenant may use no class (unless it is exempt:
// the engine never judges it), a tenant without allowedClasses every class.
bool class_allowed(const CompiledPolicy& policy, const Tenant* tenant, const std::string& ns,
                   const std::string& class_name) {
  if (tenant == nullptr) return policy.is_exempt(ns);
  if (!tenant->allowed_classes) return true;
  const auto& allowed = *tenant->allowed_classes;
  return std::find(allowed.begin(), allowed.end(), class_name) != allowed.end();
}

void append_member(std::string& key, const Json* object, std::string_view member) {
  const Json* value = object != nullptr ? find_member(*object, member) : nullptr;
  if (value != nullptr) append_json(key, *value);
  key += '\x1f';
}

// Members of a scheduled pod's spec that differ from pod to pod of one template and that
// neither class resolution nor GPU requests read: where it was scheduled, its name in DNS and
// its volumes (each pod's projected service-account token volume has its own name).
bool per_pod_member(std::string_view member) {
  return member == "nodeName" || member == "hostname" || member == "volumes";
}

// The memo key's part for one pod spec: every member but per_pod_member's, and containers
// without their volumeMounts.
void append_spec(std::string& key, const Json& spec) {
  if (!spec.is_object()) {
    append_json(key, spec);
    return;
  }
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    if (per_pod_member(it.key())) continue;
    key.append(it.key()) += '\x1d';
    const bool containers = it.key() == "containers" || it.key() == "initContainers";
    if (!containers || !it.value().is_array()) {
      append_json(key, it.value());
      continue;
    }
    for (const Json& container : it.value()) {
      if (!container.is_object()) {
        append_json(key, container);
        continue;
      }
      for (auto c = container.begin(); c != container.end(); ++c) {
        if (c.key() == "volumeMounts") continue;
        key.append(c.key()) += '\x1d';
        append_json(key, c.value());
      }
      key += '\x1c';
    }
  }
}

// Everything an object's outcome depends on: the namespace, the kind, the object's and each pod
// template's annotations and labels, the controller (a DaemonSet's pods and a controller's
// copies are judged differently: engine/controllers.h), the specs (append_spec). Empty for
// invalid UTF-8, which cannot be written as a key: such an object is evaluated on its own.
std::string memo_key(const Json& object, const Json* metadata, std::string_view ns,
                     std::string_view api_version, std::string_view kind,
                     const std::vector<PodSpecLocation>& locations) {
  std::string key;
  try {
    key.append(ns).append("\x1f").append(api_version).append("\x1f").append(kind) += '\x1f';
    append_member(key, metadata, "annotations");
    append_member(key, metadata, "labels");
    if (const std::optional<OwnerReference> owner = controller_reference(object)) {
      key.append(owner->api_version).append("/").append(owner->kind);
    }
    key += '\x1f';
    for (const PodSpecLocation& loc : locations) {
      const Json* spec_metadata =
          object.contains(loc.metadata) ? &object.at(loc.metadata) : nullptr;
      append_member(key, spec_metadata, "annotations");
      append_member(key, spec_metadata, "labels");
      append_spec(key, object.at(loc.spec));
      key += '\x1e';
    }
  } catch (const Json::exception&) {
    key.clear();
  }
  return key;
}

}  // namespace

bool is_list(const Json& object) {
  if (!ends_with(string_member(object, "kind"), "List")) return false;
  const Json* items = find_member(object, "items");
  return items != nullptr && items->is_array();
}

bool terminated_pod(const Json& object) {
  if (string_member(object, "kind") != "Pod") return false;
  const Json* status = find_member(object, "status");
  if (status == nullptr) return false;
  const std::string_view phase = string_member(*status, "phase");
  return phase == "Succeeded" || phase == "Failed";
}

// One pod spec's result, without its replicas (those are the object's own).
struct Collector::Outcome {
  struct Spec {
    size_t location = 0;
    PodGroup group;  // workload, path and pods unset
  };
  std::vector<Spec> specs;
};

struct Collector::Identity {
  std::vector<std::string> controller;  // keys of the controller reference; empty when none
};

Collector::Collector(const CompiledPolicy& policy, const Pipeline& pipeline,
                     std::string default_namespace, bool memoize)
    : policy_(policy),
      pipeline_(pipeline),
      default_namespace_(std::move(default_namespace)),
      memoize_(memoize) {}

Collector::~Collector() = default;

void Collector::add(Json object, const std::string& file, int line) {
  if (!object.is_object()) return;
  if (!is_list(object)) {
    add_object(object, file, line);
    return;
  }
  for (Json& item : object["items"]) {
    if (item.is_object()) add_object(item, file, line);
  }
}

std::shared_ptr<const Collector::Outcome> Collector::evaluate(Json& object, const std::string& ns) {
  ++evaluations_;
  auto outcome = std::make_shared<Outcome>();
  EvaluateOptions options;
  options.ns = ns;
  options.patch = false;
  options.copy_unchanged = false;
  Evaluation e = pipeline_.evaluate(object, options, policy_);
  Json& mutated = e.mutated.is_null() ? object : e.mutated;
  const std::vector<PodSpecLocation> locations = find_pod_specs(mutated, policy_);
  const Tenant* tenant = policy_.tenant_for(ns);
  for (const PodSpecOutcome& spec : e.pod_specs) {
    if (!spec.gpu_pod || spec.location >= locations.size()) continue;
    auto made = PodView::make(mutated, locations[spec.location]);
    if (!made) continue;
    Outcome::Spec out;
    out.location = spec.location;
    PodGroup& group = out.group;
    group.class_name = spec.class_name;
    const GpuClass* gpu_class = spec.class_known ? policy_.find_class(spec.class_name) : nullptr;
    if (gpu_class == nullptr) {
      group.blocked = Unplaceable::kNoClass;
    } else if (!class_allowed(policy_, tenant, ns, spec.class_name)) {
      group.blocked = Unplaceable::kClassNotAllowed;
    }
    fill_units(group, effective_pod_gpu_requests(*made, policy_), gpu_class, spec.mig_profile);
    outcome->specs.push_back(std::move(out));
  }
  return outcome;
}

void Collector::add_object(Json& object, const std::string& file, int line) {
  if (terminated_pod(object)) return;
  const Json* metadata = find_member(object, "metadata");
  std::string ns(metadata != nullptr ? string_member(*metadata, "namespace") : "");
  if (ns.empty()) ns = default_namespace_;
  const std::string_view kind = string_member(object, "kind");
  const std::string_view name = metadata != nullptr ? string_member(*metadata, "name") : "";
  const std::string_view uid = metadata != nullptr ? string_member(*metadata, "uid") : "";
  // What may be a controller: anything but a Pod (no kind lists a Pod as its controller), so
  // an export of many Pods does not keep a key per Pod.
  if (kind != "Pod") {
    if (!uid.empty()) present_.push_back(identity_by_uid(uid));
    present_.push_back(identity_by_name(kind, ns, name));
  }

  const std::string_view api_version = string_member(object, "apiVersion");
  if (!is_workload_kind(api_version, kind, policy_)) return;
  const std::vector<PodSpecLocation> locations = find_pod_specs(object, policy_);
  if (locations.empty()) return;

  std::shared_ptr<const Outcome> outcome;
  std::string key;
  if (memoize_) {
    key = memo_key(object, metadata, ns, api_version, kind, locations);
    if (!key.empty()) {
      auto found = memo_.find(key);
      if (found != memo_.end()) outcome = found->second;
    }
  }
  if (!outcome) {
    outcome = evaluate(object, ns);
    if (!key.empty()) memo_.emplace(std::move(key), outcome);
  }
  if (outcome->specs.empty()) return;

  Workload workload;
  workload.api_version = std::string(api_version);
  workload.kind = std::string(kind);
  workload.ns = ns;
  workload.name = std::string(name);
  if (input_.files.empty() || input_.files.back() != file) input_.files.push_back(file);
  workload.file = static_cast<uint32_t>(input_.files.size() - 1);
  workload.line = line;
  if (const Tenant* tenant = policy_.tenant_for(ns)) workload.tenant = tenant->name;
  Identity identity;
  if (const std::optional<OwnerReference> owner = controller_reference(object)) {
    if (!owner->uid.empty()) identity.controller.push_back(identity_by_uid(owner->uid));
    identity.controller.push_back(identity_by_name(owner->kind, ns, owner->name));
  }
  const size_t index = input_.workloads.size();
  input_.workloads.push_back(std::move(workload));
  identities_.push_back(std::move(identity));
  for (const Outcome::Spec& spec : outcome->specs) {
    PodGroup group = spec.group;
    group.workload = index;
    group.path = locations[spec.location].path;
    group.pods = locations[spec.location].replicas;
    input_.groups.push_back(std::move(group));
  }
}

void Collector::expect_bytes(size_t bytes) {
  constexpr size_t kMaxReserved = size_t{1} << 22;
  const size_t objects = std::min(bytes / 512, kMaxReserved) + input_.workloads.size();
  input_.workloads.reserve(objects);
  input_.groups.reserve(objects);
  identities_.reserve(objects);
}

FleetInput Collector::finish() {
  const std::unordered_set<std::string> present(present_.begin(), present_.end());
  // Workloads whose controller is in the input are dropped: its own pod specs stand for them.
  // Compacted in place (no second copy of what may be 100,000 workloads).
  std::vector<size_t> renumber(input_.workloads.size(), SIZE_MAX);
  size_t kept = 0;
  for (size_t i = 0; i < input_.workloads.size(); ++i) {
    bool drop = false;
    for (const std::string& key : identities_[i].controller) drop = drop || present.count(key) > 0;
    if (drop) continue;
    if (kept != i) input_.workloads[kept] = std::move(input_.workloads[i]);
    renumber[i] = kept++;
  }
  input_.workloads.resize(kept);
  size_t groups = 0;
  for (size_t i = 0; i < input_.groups.size(); ++i) {
    PodGroup& group = input_.groups[i];
    if (renumber[group.workload] == SIZE_MAX || group.pods == 0) continue;
    group.workload = renumber[group.workload];
    if (groups != i) input_.groups[groups] = std::move(group);
    ++groups;
  }
  input_.groups.resize(groups);
  identities_.clear();
  present_.clear();
  return std::move(input_);
}

}  // namespace gpuadmit::fleet
