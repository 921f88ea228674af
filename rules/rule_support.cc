#include "rules/rule_support.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "engine/resources.h"
#include "engine/workload.h"

namespace gpuadmit::rule_support {
namespace {

int64_t saturating_add(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

const Json* lookup(const Json* metadata, std::string_view section, std::string_view key) {
  if (metadata == nullptr) return nullptr;
  const Json* map = find_member(*metadata, section);
  if (map == nullptr) return nullptr;
  const Json* v = find_member(*map, key);
  return (v != nullptr && v->is_string()) ? v : nullptr;
}

const Json* metadata_at(const Json& object, const JsonPointer& pointer) {
  if (!object.contains(pointer)) return nullptr;
  const Json& m = object.at(pointer);
  return m.is_object() ? &m : nullptr;
}

}  // namespace

std::string container_label(const ContainerRef& ref) {
  std::string label;
  switch (ref.kind) {
    case ContainerKind::kInit:
      label = "init container ";
      break;
    case ContainerKind::kApp:
      label = "container ";
      break;
    case ContainerKind::kEphemeral:
      label = "ephemeral container ";
      break;
  }
  return label + (ref.name.empty() ? ref.path : ref.name);
}

std::string resource_path(const ContainerRef& ref, std::string_view section,
                          std::string_view resource) {
  std::string path = ref.path;
  path += ".resources.";
  path += section;
  path += "[\"";
  path += resource;
  path += "\"]";
  return path;
}

std::string written(const Json& value) {
  if (value.is_string()) return value.get_ref<const std::string&>();
  return json_text(value);
}

std::string json_text(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::vector<RawGpuResource> raw_gpu_resources(const Json& container, const CompiledPolicy& policy) {
  std::vector<RawGpuResource> out;
  container_gpu_resources(container, policy, out);
  return out;
}

std::optional<Quantity> parse_raw(const Json* value) {
  if (value == nullptr) return std::nullopt;
  return parse_json_quantity(*value);
}

bool is_positive(const Json* value) { return is_positive(parse_raw(value)); }

bool is_positive(const std::optional<Quantity>& q) {
  return q && !q->is_zero() && !q->is_negative();
}

GpuKind gpu_kind(std::string_view resource) {
  if (resource == kSharedGpuResource) return GpuKind::kShared;
  if (resource.starts_with(kMigResourcePrefix)) return GpuKind::kMig;
  return GpuKind::kWhole;
}

std::string_view gpu_kind_name(GpuKind kind) {
  switch (kind) {
    case GpuKind::kShared:
      return "shared GPUs";
    case GpuKind::kMig:
      return "MIG slices";
    case GpuKind::kWhole:
      break;
  }
  return "whole GPUs";
}

std::optional<std::string> mig_profile_of_resource(std::string_view resource) {
  if (!resource.starts_with(kMigResourcePrefix)) return std::nullopt;
  std::string profile(resource.substr(kMigResourcePrefix.size()));
  // The device plugin advertises the "+me" (media extensions) profiles as ".me" because "+" is
  // not valid in a resource name (k8s-device-plugin internal/rm/... MIG naming).
  constexpr std::string_view kMe = ".me";
  if (profile.size() > kMe.size() && profile.ends_with(kMe)) {
    profile.replace(profile.size() - kMe.size(), kMe.size(), "+me");
  }
  return profile;
}

std::string mig_resource_name(std::string_view profile) {
  std::string name(kMigResourcePrefix);
  name += profile;
  constexpr std::string_view kPlusMe = "+me";
  if (name.ends_with(kPlusMe)) name.replace(name.size() - kPlusMe.size(), kPlusMe.size(), ".me");
  return name;
}

std::optional<int64_t> mig_compute_slices(std::string_view profile) {
  const size_t g = profile.find('g');
  if (g == std::string_view::npos || g == 0) return std::nullopt;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(profile.data(), profile.data() + g, n);
  if (ec != std::errc() || end != profile.data() + g || n <= 0) return std::nullopt;
  return n;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::string setting_path(const PodView& pod, std::string_view key) {
  const PodSpecLocation& location = pod.location();
  const Json* pod_meta = pod.metadata();
  const Json* top_meta = metadata_at(pod.object(), JsonPointer("/metadata"));
  auto path_of = [&](const JsonPointer& meta, std::string_view section) {
    return dotted_path(meta) + "." + std::string(section) + "[\"" + std::string(key) + "\"]";
  };
  if (lookup(pod_meta, "annotations", key) != nullptr) {
    return path_of(location.metadata, "annotations");
  }
  if (lookup(pod_meta, "labels", key) != nullptr) return path_of(location.metadata, "labels");
  if (top_meta != pod_meta) {
    if (lookup(top_meta, "annotations", key) != nullptr) {
      return path_of(JsonPointer("/metadata"), "annotations");
    }
    if (lookup(top_meta, "labels", key) != nullptr) {
      return path_of(JsonPointer("/metadata"), "labels");
    }
  }
  return path_of(location.metadata, "annotations");
}

int64_t pod_gpu_total(const PodView& pod, const PodGpuResources& gpu,
                      const std::function<bool(std::string_view)>& counts) {
  // pod_gpu_count's walk, keeping only the amounts.
  struct PerResource {
    std::string_view resource;
    int64_t app_total = 0;
    int64_t sidecar_total = 0;
    int64_t init_max = 0;
  };
  std::vector<PerResource> per_resource;
  const std::vector<ContainerRef>& containers = pod.containers();
  for (size_t i = 0; i < containers.size(); ++i) {
    const ContainerRef& ref = containers[i];
    if (ref.kind == ContainerKind::kEphemeral) continue;
    for (const RawGpuResource& raw : gpu.of(i)) {
      if (counts && !counts(raw.resource)) continue;
      const std::optional<Quantity>& q = raw.effective_quantity();
      const int64_t n = q && !q->is_negative() ? q->value() : 0;
      auto r = std::find_if(per_resource.begin(), per_resource.end(),
                            [&](const PerResource& have) { return have.resource == raw.resource; });
      if (r == per_resource.end()) {
        per_resource.push_back(PerResource{raw.resource});
        r = per_resource.end() - 1;
      }
      if (ref.kind == ContainerKind::kApp || ref.restartable) {
        r->app_total = saturating_add(r->app_total, n);
        if (ref.kind == ContainerKind::kInit)
          r->sidecar_total = saturating_add(r->sidecar_total, n);
      } else {
        r->init_max = std::max(r->init_max, saturating_add(n, r->sidecar_total));
      }
    }
  }
  int64_t total = 0;
  for (const PerResource& r : per_resource) {
    total = saturating_add(total, std::max(r.app_total, r.init_max));
  }
  return total;
}

PodGpuCount pod_gpu_count(const PodView& pod, const PodGpuResources& gpu,
                          const std::function<bool(std::string_view)>& counts) {
  // Same walk as effective_pod_gpus (k8s.io/component-helpers resource.PodRequests, which takes
  // the max of init containers vs app containers per resource name), keeping the containers
  // behind each candidate so that the message can name them.
  struct Part {
    size_t order;  // position of the container in the pod spec
    std::string label;
    int64_t gpus;
  };
  struct PerResource {
    std::string resource;
    std::vector<Part> app;       // app containers and restartable init sidecars
    std::vector<Part> sidecars;  // restartable init sidecars seen so far
    std::vector<Part> init_best;
    int64_t app_total = 0;
    int64_t sidecar_total = 0;
    int64_t init_max = 0;
  };
  std::vector<PerResource> per_resource;
  auto entry = [&](const std::string& name) -> PerResource& {
    for (PerResource& r : per_resource) {
      if (r.resource == name) return r;
    }
    per_resource.push_back(PerResource{name, {}, {}, {}, 0, 0, 0});
    return per_resource.back();
  };
  size_t order = 0;
  const std::vector<ContainerRef>& containers = pod.containers();
  for (size_t i = 0; i < containers.size(); ++i) {
    const ContainerRef& ref = containers[i];
    ++order;
    if (ref.kind == ContainerKind::kEphemeral) continue;
    for (const RawGpuResource& raw : gpu.of(i)) {
      if (counts && !counts(raw.resource)) continue;
      const std::optional<Quantity>& q = raw.effective_quantity();
      const int64_t n = q && !q->is_negative() ? q->value() : 0;
      PerResource& r = entry(raw.resource);
      const Part part{order, container_label(ref), n};
      if (ref.kind == ContainerKind::kApp || ref.restartable) {
        r.app_total = saturating_add(r.app_total, n);
        if (n > 0) r.app.push_back(part);
        if (ref.kind == ContainerKind::kInit) {
          r.sidecar_total = saturating_add(r.sidecar_total, n);
          if (n > 0) r.sidecars.push_back(part);
        }
      } else if (saturating_add(n, r.sidecar_total) > r.init_max) {
        r.init_max = saturating_add(n, r.sidecar_total);
        r.init_best = r.sidecars;
        r.init_best.push_back(part);
      }
    }
  }
  PodGpuCount count;
  // The containers behind each resource's amount, merged per container in pod-spec order.
  // Sorted by position, then merged: linear after the sort even for a pod of 30,000 containers
  // (a lookup per part was quadratic: 0.8 s for such a review).
  std::vector<Part> parts;
  for (const PerResource& r : per_resource) {
    count.total = saturating_add(count.total, std::max(r.app_total, r.init_max));
    const std::vector<Part>& behind = r.init_max > r.app_total ? r.init_best : r.app;
    parts.insert(parts.end(), behind.begin(), behind.end());
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Part& a, const Part& b) { return a.order < b.order; });
  std::vector<std::string> items;
  for (size_t i = 0; i < parts.size();) {
    int64_t gpus = parts[i].gpus;
    size_t j = i + 1;
    for (; j < parts.size() && parts[j].order == parts[i].order; ++j) {
      gpus = saturating_add(gpus, parts[j].gpus);
    }
    items.push_back(parts[i].label + ": " + std::to_string(gpus));
    i = j;
  }
  count.breakdown = join(items);
  return count;
}

int64_t claim_units(const PodContext& ctx, size_t container) {
  if (ctx.dra == nullptr || container >= ctx.dra->container_units.size()) return 0;
  return ctx.dra->container_units[container];
}

int64_t pod_claim_units(const PodContext& ctx) {
  return ctx.dra == nullptr ? 0 : ctx.dra->pod_units;
}

PodGpuCount with_claims(PodGpuCount count, const PodContext& ctx) {
  if (ctx.dra == nullptr) return count;
  for (const PodClaim& claim : ctx.dra->claims) {
    if (claim.units <= 0) continue;
    count.total = saturating_add(count.total, claim.units);
    if (!count.breakdown.empty()) count.breakdown += ", ";
    count.breakdown +=
        "claim " + claim.name + " (" + claim.device_class + "): " + std::to_string(claim.units);
  }
  return count;
}

}  // namespace gpuadmit::rule_support
