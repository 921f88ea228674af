#include "engine/resources.h"

#include <algorithm>
#include <limits>

namespace gpuadmit {
namespace {

const Json* section_of(const Json& container, std::string_view section) {
  const Json* resources = find_member(container, "resources");
  if (resources == nullptr) return nullptr;
  const Json* s = find_member(*resources, section);
  return (s != nullptr && s->is_object()) ? s : nullptr;
}

// Whole units of a quantity, rounded up (Value()); negative counts as 0.
int64_t whole_units(const std::optional<Quantity>& q) {
  if (!q || q->is_negative()) return 0;
  return q->value();
}

int64_t saturating_add(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

}  // namespace

std::optional<Quantity> parse_json_quantity(const Json& value) {
  if (value.is_string()) return Quantity::parse(value.get_ref<const std::string&>());
  if (value.is_number_integer()) {
    return Quantity::parse(value.is_number_unsigned() ? std::to_string(value.get<uint64_t>())
                                                      : std::to_string(value.get<int64_t>()));
  }
  if (value.is_number_float()) return Quantity::parse(value.dump());
  return std::nullopt;
}

std::optional<Quantity> container_quantity(const Json& container, std::string_view section,
                                           std::string_view resource) {
  const Json* s = section_of(container, section);
  if (s == nullptr) return std::nullopt;
  const Json* v = find_member(*s, resource);
  if (v == nullptr) return std::nullopt;
  return parse_json_quantity(*v);
}

std::vector<GpuResourceUse> gpu_resources_of(const Json& container, const CompiledPolicy& policy) {
  std::vector<GpuResourceUse> uses;
  auto entry = [&](const std::string& name) -> GpuResourceUse& {
    for (GpuResourceUse& u : uses) {
      if (u.resource == name) return u;
    }
    uses.push_back(GpuResourceUse{name, std::nullopt, std::nullopt});
    return uses.back();
  };
  for (std::string_view section : {"requests", "limits"}) {
    const Json* s = section_of(container, section);
    if (s == nullptr) continue;
    for (auto it = s->begin(); it != s->end(); ++it) {
      if (!policy.is_gpu_resource(it.key())) continue;
      GpuResourceUse& u = entry(it.key());
      (section == "requests" ? u.request : u.limit) = parse_json_quantity(it.value());
    }
  }
  return uses;
}

void container_gpu_resources(const Json& container, const CompiledPolicy& policy,
                             std::vector<ContainerGpuResource>& out) {
  const size_t first = out.size();
  for (const bool requests : {true, false}) {
    const Json* s = section_of(container, requests ? "requests" : "limits");
    if (s == nullptr) continue;
    for (auto it = s->begin(); it != s->end(); ++it) {
      if (it.value().is_null() || !policy.is_gpu_resource(it.key())) continue;
      auto found =
          std::find_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                       [&](const ContainerGpuResource& r) { return r.resource == it.key(); });
      if (found == out.end()) {
        out.push_back(ContainerGpuResource{it.key(), nullptr, nullptr, std::nullopt, std::nullopt});
        found = out.end() - 1;
      }
      (requests ? found->request : found->limit) = &it.value();
      (requests ? found->request_quantity : found->limit_quantity) =
          parse_json_quantity(it.value());
    }
  }
}

PodGpuResources::PodGpuResources(const PodView& pod, const CompiledPolicy& policy) {
  ends_.reserve(pod.containers().size());
  for (const ContainerRef& ref : pod.containers()) {
    container_gpu_resources(pod.container(ref), policy, resources_);
    ends_.push_back(resources_.size());
  }
}

int64_t PodGpuResources::units(size_t container) const {
  // As container_gpu_units: the parsed request, else the parsed limit (an unparsable request
  // falls back to the limit there).
  int64_t total = 0;
  for (const ContainerGpuResource& r : of(container)) {
    total = saturating_add(total,
                           whole_units(r.request_quantity ? r.request_quantity : r.limit_quantity));
  }
  return total;
}

bool PodGpuResources::any_positive() const {
  auto positive = [](const std::optional<Quantity>& q) {
    return q && !q->is_zero() && !q->is_negative();
  };
  return std::any_of(resources_.begin(), resources_.end(), [&](const ContainerGpuResource& r) {
    return positive(r.request_quantity) || positive(r.limit_quantity);
  });
}

int64_t container_gpu_units(const Json& container, const CompiledPolicy& policy) {
  int64_t total = 0;
  for (const GpuResourceUse& u : gpu_resources_of(container, policy)) {
    total = saturating_add(total, whole_units(u.effective()));
  }
  return total;
}

bool container_requests_gpu(const PodView& pod, const ContainerRef& ref,
                            const CompiledPolicy& policy) {
  for (const GpuResourceUse& u : gpu_resources_of(pod.container(ref), policy)) {
    const bool positive_request = u.request && !u.request->is_zero() && !u.request->is_negative();
    const bool positive_limit = u.limit && !u.limit->is_zero() && !u.limit->is_negative();
    if (positive_request || positive_limit) return true;
  }
  return false;
}

bool container_may_get_gpus(const PodView& pod, const ContainerRef& ref,
                            const CompiledPolicy& policy) {
  if (container_requests_gpu(pod, ref, policy)) return true;
  const Json* resources = find_member(pod.container(ref), "resources");
  const Json* claims = resources != nullptr ? find_member(*resources, "claims") : nullptr;
  return claims != nullptr && claims->is_array() && !claims->empty();
}

bool is_gpu_pod(const PodView& pod, const CompiledPolicy& policy) {
  return std::any_of(
      pod.containers().begin(), pod.containers().end(),
      [&](const ContainerRef& ref) { return container_requests_gpu(pod, ref, policy); });
}

// Mirrors k8s.io/component-helpers/resource/helpers.go PodRequests / AggregateContainerRequests
// (v1.29+, with sidecars), which works per resource name:
//   reqs[r] = Σ app containers
//   for each init container in order:
//     restartable: reqs[r] += x; restartableInitReqs[r] += x
//     otherwise:  initReqs[r] = max(initReqs[r], x + restartableInitReqs[r])
//   result[r] = max(reqs[r], initReqs[r])          (maxResourceList, per key)
// The pod's GPU units are then Σ over the GPU resources of result[r]: an init container's
// nvidia.com/gpu does not hide the app containers' nvidia.com/mig-1g.10gb, as both are charged.
// Ephemeral containers declare no resources that count (the API forbids them).
std::vector<PodGpuRequest> effective_pod_gpu_requests(const PodView& pod,
                                                      const CompiledPolicy& policy) {
  struct PerResource {
    std::string resource;
    int64_t app = 0;               // app containers + restartable init containers
    int64_t restartable_init = 0;  // restartable init containers seen so far
    int64_t init_max = 0;          // max over non-restartable init containers
  };
  std::vector<PerResource> per_resource;
  auto entry = [&](const std::string& name) -> PerResource& {
    for (PerResource& r : per_resource) {
      if (r.resource == name) return r;
    }
    per_resource.push_back(PerResource{name});
    return per_resource.back();
  };
  for (const ContainerRef& ref : pod.containers()) {
    if (ref.kind == ContainerKind::kEphemeral) continue;
    for (const GpuResourceUse& u : gpu_resources_of(pod.container(ref), policy)) {
      const int64_t n = whole_units(u.effective());
      PerResource& r = entry(u.resource);
      if (ref.kind == ContainerKind::kApp) {
        r.app = saturating_add(r.app, n);
      } else if (ref.restartable) {
        r.app = saturating_add(r.app, n);
        r.restartable_init = saturating_add(r.restartable_init, n);
      } else {
        r.init_max = std::max(r.init_max, saturating_add(n, r.restartable_init));
      }
    }
  }
  std::vector<PodGpuRequest> out;
  out.reserve(per_resource.size());
  for (PerResource& r : per_resource) {
    out.push_back(PodGpuRequest{std::move(r.resource), std::max(r.app, r.init_max)});
  }
  return out;
}

int64_t effective_pod_gpus(const PodView& pod, const CompiledPolicy& policy) {
  int64_t total = 0;
  for (const PodGpuRequest& r : effective_pod_gpu_requests(pod, policy)) {
    total = saturating_add(total, r.units);
  }
  return total;
}

}  // namespace gpuadmit
