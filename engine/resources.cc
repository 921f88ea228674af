#include "engine/resources.h"

#include <algorithm>

#include "engine/dra.h"
#include "engine/saturating.h"

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

bool positive(const std::optional<Quantity>& q) { return q && !q->is_zero() && !q->is_negative(); }

// Appends the GPU entries of one ResourceList (a map of resource name to quantity) as requests
// (`as_request`) or limits, merging with entries already read from `first` on.
void read_resource_list(const Json& list, bool as_request, const CompiledPolicy& policy,
                        size_t first, std::vector<ContainerGpuResource>& out) {
  // Not a structured binding: the lambda below captures the name, which clang 14 refuses.
  for (const auto& member : list.get_ref<const Json::object_t&>()) {
    const std::string& name = member.first;
    const Json& value = member.second;
    if (value.is_null() || !policy.is_gpu_resource(name)) continue;
    auto found = std::find_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                              [&](const ContainerGpuResource& r) { return r.resource == name; });
    if (found == out.end()) {
      out.push_back(ContainerGpuResource{name, nullptr, nullptr, std::nullopt, std::nullopt});
      found = out.end() - 1;
    }
    (as_request ? found->request : found->limit) = &value;
    (as_request ? found->request_quantity : found->limit_quantity) = parse_json_quantity(value);
  }
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

int64_t ContainerGpuResource::units() const {
  return whole_units(request_quantity ? request_quantity : limit_quantity);
}

void container_gpu_resources(const Json& container, const CompiledPolicy& policy,
                             std::vector<ContainerGpuResource>& out) {
  const size_t first = out.size();
  for (const bool requests : {true, false}) {
    if (const Json* s = section_of(container, requests ? "requests" : "limits")) {
      read_resource_list(*s, requests, policy, first, out);
    }
  }
}

PodGpuResources::PodGpuResources(const PodView& pod, const CompiledPolicy& policy) {
  ends_.reserve(pod.containers().size());
  for (const ContainerRef& ref : pod.containers()) {
    container_gpu_resources(pod.container(ref), policy, resources_);
    ends_.push_back(resources_.size());
  }
  if (const Json* overhead = find_member(pod.spec(), "overhead");
      overhead != nullptr && overhead->is_object()) {
    read_resource_list(*overhead, true, policy, 0, overhead_);
  }
}

int64_t PodGpuResources::units(size_t container) const {
  int64_t total = 0;
  for (const ContainerGpuResource& r : of(container)) total = saturating_add(total, r.units());
  return total;
}

namespace {

bool any_positive_in(std::span<const ContainerGpuResource> resources) {
  return std::any_of(resources.begin(), resources.end(), [](const ContainerGpuResource& r) {
    return positive(r.request_quantity) || positive(r.limit_quantity);
  });
}

// The container uses some of the pod's DRA claims (`resources.claims` not empty).
bool uses_claims(const Json& container) {
  const Json* resources = find_member(container, "resources");
  const Json* claims = resources != nullptr ? find_member(*resources, "claims") : nullptr;
  return claims != nullptr && claims->is_array() && !claims->empty();
}

}  // namespace

bool PodGpuResources::any_positive() const { return any_positive_in(resources_); }

int64_t container_gpu_units(const Json& container, const CompiledPolicy& policy) {
  std::vector<ContainerGpuResource> resources;
  container_gpu_resources(container, policy, resources);
  int64_t total = 0;
  for (const ContainerGpuResource& r : resources) total = saturating_add(total, r.units());
  return total;
}

bool container_requests_gpu(const PodView& pod, const ContainerRef& ref,
                            const CompiledPolicy& policy) {
  std::vector<ContainerGpuResource> resources;
  container_gpu_resources(pod.container(ref), policy, resources);
  return any_positive_in(resources);
}

bool container_may_get_gpus(const PodView& pod, size_t container, const PodGpuResources& gpu,
                            const PodDra* dra) {
  if (any_positive_in(gpu.of(container))) return true;
  if (!uses_claims(pod.container(pod.containers()[container]))) return false;
  if (dra == nullptr || dra->container_units.size() != pod.containers().size()) return true;
  return dra->container_units[container] > 0 || dra->container_unknown[container];
}

bool is_gpu_pod(const PodView& pod, const CompiledPolicy& policy) {
  return std::any_of(
      pod.containers().begin(), pod.containers().end(),
      [&](const ContainerRef& ref) { return container_requests_gpu(pod, ref, policy); });
}

namespace {

// One resource's running sums in the PodRequests walk (engine/resources.h pod_requests).
struct ResourceWalk {
  std::string_view resource;
  int64_t app = 0;       // reqs[r]: app containers + sidecars
  int64_t sidecars = 0;  // sidecars declared so far
  int64_t init_max = 0;  // init[r]
  using Parts = std::vector<std::pair<size_t, int64_t>>;
  Parts app_parts, sidecar_parts, init_parts;  // with_parts only

  void add(const ContainerRef& ref, size_t index, int64_t n, bool with_parts) {
    if (ref.kind == ContainerKind::kApp || ref.restartable) {
      app = saturating_add(app, n);
      if (with_parts && n > 0) app_parts.emplace_back(index, n);
      if (ref.kind == ContainerKind::kInit) {
        sidecars = saturating_add(sidecars, n);
        if (with_parts && n > 0) sidecar_parts.emplace_back(index, n);
      }
      return;
    }
    const int64_t running = saturating_add(n, sidecars);  // InitContainerUse(i), KEP-753
    if (running <= init_max) return;
    init_max = running;
    if (!with_parts) return;
    init_parts = sidecar_parts;
    if (n > 0) init_parts.emplace_back(index, n);
  }
};

ResourceWalk& walk_entry(std::vector<ResourceWalk>& walks, std::string_view resource) {
  for (ResourceWalk& w : walks) {
    if (w.resource == resource) return w;
  }
  walks.emplace_back();
  walks.back().resource = resource;
  return walks.back();
}

}  // namespace

std::vector<PodResourceRequest> pod_requests(const PodView& pod, const PodGpuResources& gpu,
                                             const std::function<bool(std::string_view)>& counts,
                                             bool with_parts) {
  std::vector<ResourceWalk> walks;
  const std::vector<ContainerRef>& containers = pod.containers();
  for (size_t i = 0; i < containers.size(); ++i) {
    if (containers[i].kind == ContainerKind::kEphemeral) continue;
    for (const ContainerGpuResource& r : gpu.of(i)) {
      if (counts && !counts(r.resource)) continue;
      walk_entry(walks, r.resource).add(containers[i], i, r.units(), with_parts);
    }
  }
  std::vector<PodResourceRequest> out;
  out.reserve(walks.size());
  for (ResourceWalk& w : walks) {
    // maxResourceList keeps reqs[r] unless init[r] is strictly greater.
    const bool init_wins = w.init_max > w.app;
    PodResourceRequest request{w.resource, init_wins ? w.init_max : w.app, {}};
    if (with_parts) request.parts = std::move(init_wins ? w.init_parts : w.app_parts);
    out.push_back(std::move(request));
  }
  for (const ContainerGpuResource& r : gpu.overhead()) {
    if (counts && !counts(r.resource)) continue;
    const int64_t n = r.units();
    auto it = std::find_if(out.begin(), out.end(), [&](const PodResourceRequest& have) {
      return have.resource == r.resource;
    });
    if (it == out.end()) {
      out.push_back(PodResourceRequest{r.resource, 0, {}});
      it = out.end() - 1;
    }
    it->units = saturating_add(it->units, n);
    if (with_parts && n > 0) it->parts.emplace_back(kPodOverheadPart, n);
  }
  return out;
}

int64_t pod_requests_total(const PodView& pod, const PodGpuResources& gpu,
                           const std::function<bool(std::string_view)>& counts) {
  int64_t total = 0;
  for (const PodResourceRequest& r : pod_requests(pod, gpu, counts)) {
    total = saturating_add(total, r.units);
  }
  return total;
}

int64_t effective_pod_gpus(const PodView& pod, const CompiledPolicy& policy) {
  return pod_requests_total(pod, PodGpuResources(pod, policy));
}

std::vector<PodGpuRequest> effective_pod_gpu_requests(const PodView& pod,
                                                      const CompiledPolicy& policy) {
  const PodGpuResources gpu(pod, policy);
  std::vector<PodGpuRequest> out;
  for (const PodResourceRequest& r : pod_requests(pod, gpu)) {
    out.push_back(PodGpuRequest{std::string(r.resource), r.units});
  }
  return out;
}

}  // namespace gpuadmit
