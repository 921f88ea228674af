#include "engine/dra.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "engine/saturating.h"
#include "engine/scheduling.h"
#include "policies/mig_profiles.h"

namespace gpuadmit {
namespace {

std::string index_path(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// The literal MIG profiles a CEL expression compares the profile attribute with:
// `device.attributes['gpu.nvidia.com'].profile == '1g.5gb'` (either quote, either side of ==
// not needed: NVIDIA's examples and docs write it this way).
std::vector<std::string> literal_mig_profiles(std::string_view cel) {
  std::vector<std::string> out;
  constexpr std::string_view kAttribute = ".profile";
  for (size_t at = cel.find(kAttribute); at != std::string_view::npos;
       at = cel.find(kAttribute, at + 1)) {
    size_t i = at + kAttribute.size();
    auto skip_spaces = [&] {
      while (i < cel.size() && (cel[i] == ' ' || cel[i] == '\t' || cel[i] == '\n')) ++i;
    };
    skip_spaces();
    if (cel.substr(i, 2) != "==") continue;
    i += 2;
    skip_spaces();
    if (i >= cel.size() || (cel[i] != '\'' && cel[i] != '"')) continue;
    const char quote = cel[i];
    const size_t end = cel.find(quote, i + 1);
    if (end == std::string_view::npos) continue;
    std::string_view literal = cel.substr(i + 1, end - i - 1);
    if (is_mig_profile_syntax(literal)) out.emplace_back(literal);
  }
  return out;
}

// Reads the device-selecting fields of an ExactDeviceRequest / DeviceSubRequest / v1beta1
// DeviceRequest object into `r`.
void read_device_fields(const Json& fields, const std::string& path, DraRequest& r) {
  r.path = path;
  r.device_class = std::string(string_member(fields, "deviceClassName"));
  r.all = string_member(fields, "allocationMode") == kAllocationModeAll;
  if (const Json* count = find_member(fields, "count");
      count != nullptr && count->is_number_integer() && count->get<int64_t>() > 0) {
    r.count = count->get<int64_t>();
  }
  if (const Json* admin = find_member(fields, "adminAccess");
      admin != nullptr && admin->is_boolean()) {
    r.admin_access = admin->get<bool>();
  }
  const Json* selectors = find_member(fields, "selectors");
  if (selectors == nullptr || !selectors->is_array()) return;
  for (size_t i = 0; i < selectors->size(); ++i) {
    const Json* cel = find_member((*selectors)[i], "cel");
    if (cel == nullptr) continue;
    const std::string_view expression = string_member(*cel, "expression");
    for (std::string& p : literal_mig_profiles(expression)) {
      r.mig_profiles.emplace_back(std::move(p), index_path(path + ".selectors", i) + ".cel");
    }
  }
}

const Json* string_map_value(const Json* map, std::string_view key) {
  if (map == nullptr || !map->is_object()) return nullptr;
  const Json* v = find_member(*map, key);
  return v != nullptr && v->is_string() ? v : nullptr;
}

}  // namespace

bool is_claim_object(std::string_view api_version, std::string_view kind) {
  if (std::find(std::begin(kClaimKinds), std::end(kClaimKinds), kind) == std::end(kClaimKinds)) {
    return false;
  }
  const size_t slash = api_version.find('/');
  return slash != std::string_view::npos && api_version.substr(0, slash) == kResourceApiGroup;
}

// Exemption scheduler-claim (docs/security.md): believed from the scheduler's identity only.
bool is_scheduler_extended_resource_claim(const Json& object, std::string_view kind,
                                          std::string_view username) {
  if (kind != "ResourceClaim" || username != kSchedulerUser) return false;
  const Json* metadata = find_member(object, "metadata");
  if (metadata == nullptr) return false;
  const Json* annotations = find_member(*metadata, "annotations");
  if (annotations == nullptr ||
      string_member(*annotations, kExtendedResourceClaimAnnotation) != "true") {
    return false;
  }
  const Json* owners = find_member(*metadata, "ownerReferences");
  if (owners == nullptr || !owners->is_array() || owners->size() != 1) return false;
  const Json& owner = (*owners)[0];
  const Json* controller = find_member(owner, "controller");
  return string_member(owner, "apiVersion") == "v1" && string_member(owner, "kind") == "Pod" &&
         !string_member(owner, "name").empty() && controller != nullptr &&
         controller->is_boolean() && controller->get<bool>();
}

const Json* claim_spec_of(const Json& object, std::string_view kind, std::string* path) {
  const Json* spec = find_member(object, "spec");
  if (spec == nullptr || !spec->is_object()) return nullptr;
  if (kind == "ResourceClaimTemplate") {
    spec = find_member(*spec, "spec");
    if (spec == nullptr || !spec->is_object()) return nullptr;
    if (path != nullptr) *path = "spec.spec";
  } else if (path != nullptr) {
    *path = "spec";
  }
  return spec;
}

std::vector<DraRequest> claim_requests(const Json& claim_spec, const std::string& spec_path) {
  std::vector<DraRequest> out;
  const Json* devices = find_member(claim_spec, "devices");
  if (devices == nullptr || !devices->is_object()) return out;
  const Json* requests = find_member(*devices, "requests");
  if (requests == nullptr || !requests->is_array()) return out;
  const std::string requests_path = spec_path + ".devices.requests";
  for (size_t i = 0; i < requests->size(); ++i) {
    const Json& request = (*requests)[i];
    if (!request.is_object()) continue;
    const std::string name(string_member(request, "name"));
    const std::string path = index_path(requests_path, i);
    if (const Json* alternatives = find_member(request, "firstAvailable");
        alternatives != nullptr && alternatives->is_array()) {
      for (size_t j = 0; j < alternatives->size(); ++j) {
        const Json& sub = (*alternatives)[j];
        if (!sub.is_object()) continue;
        DraRequest r;
        r.request = name;
        r.name = name + "/" + std::string(string_member(sub, "name"));
        r.alternative = true;
        read_device_fields(sub, index_path(path + ".firstAvailable", j), r);
        if (!r.device_class.empty()) out.push_back(std::move(r));
      }
      continue;
    }
    DraRequest r;
    r.request = r.name = name;
    // v1 / v1beta2 nest the fields under `exactly`; v1beta1 has them on the request.
    const Json* exactly = find_member(request, "exactly");
    if (exactly != nullptr && exactly->is_object()) {
      read_device_fields(*exactly, path + ".exactly", r);
    } else {
      read_device_fields(request, path, r);
    }
    if (!r.device_class.empty()) out.push_back(std::move(r));
  }
  return out;
}

int64_t request_gpu_units(const DraRequest& r, const CompiledPolicy& policy) {
  const auto match = policy.find_device_class(r.device_class);
  if (match.gpu_class == nullptr) return 0;
  if (r.all && match.gpu_class->gpus_per_node) return *match.gpu_class->gpus_per_node;
  const int64_t count = r.all ? kAllocationResultsMaxSize : r.count;
  const int64_t per = std::max<int64_t>(1, match.mapping->devices_per_gpu);
  return count / per + (count % per != 0 ? 1 : 0);
}

int64_t claim_gpu_units(const std::vector<DraRequest>& requests, const CompiledPolicy& policy) {
  int64_t total = 0;
  for (size_t i = 0; i < requests.size();) {
    int64_t units = request_gpu_units(requests[i], policy);
    size_t j = i + 1;
    // The alternatives of one firstAvailable request: the largest counts.
    for (; j < requests.size() && requests[i].alternative && requests[j].alternative &&
           requests[j].request == requests[i].request;
         ++j) {
      units = std::max(units, request_gpu_units(requests[j], policy));
    }
    total = saturating_add(total, units);
    i = j;
  }
  return total;
}

const PodClaim* PodDra::first_gpu_claim() const {
  for (const PodClaim& c : claims) {
    if (c.gpu_class != nullptr) return &c;
  }
  return nullptr;
}

namespace {

// The GPU units and DeviceClass a container's `resources.claims` entry gives it: the named
// request of the claim (a firstAvailable request: its largest alternative), else the whole claim.
ClaimUse claim_use(const PodClaim& claim, size_t index, std::string_view request,
                   const CompiledPolicy& policy) {
  ClaimUse use{index, std::string(request), claim.units, claim.device_class};
  if (request.empty()) return use;
  // "<request>/<subrequest>" names one alternative (KEP-4816); its top-level request counts.
  const std::string_view top = request.substr(0, request.find('/'));
  std::vector<DraRequest> named;
  for (const DraRequest& r : claim.requests) {
    if (r.request == top) named.push_back(r);
  }
  use.units = claim_gpu_units(named, policy);
  use.device_class.clear();
  for (const DraRequest& r : named) {
    if (policy.find_device_class(r.device_class).gpu_class == nullptr) continue;
    use.device_class = r.device_class;
    break;
  }
  return use;
}

// The (claim, request) entries of a container's resources.claims, each once; a request of a claim
// the container also uses whole is in the whole claim already.
std::vector<std::pair<std::string_view, std::string_view>> claim_references(const Json& refs) {
  std::vector<std::string_view> whole;
  for (const Json& ref : refs) {
    if (string_member(ref, "request").empty()) whole.push_back(string_member(ref, "name"));
  }
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (const Json& ref : refs) {
    const std::pair entry(string_member(ref, "name"), string_member(ref, "request"));
    if (!entry.second.empty() &&
        std::find(whole.begin(), whole.end(), entry.first) != whole.end()) {
      continue;
    }
    if (std::find(out.begin(), out.end(), entry) == out.end()) out.push_back(entry);
  }
  return out;
}

void count_containers(const PodView& pod, const CompiledPolicy& policy, PodDra& dra) {
  const std::vector<ContainerRef>& containers = pod.containers();
  dra.container_units.assign(containers.size(), 0);
  dra.container_claims.assign(containers.size(), {});
  dra.container_unknown.assign(containers.size(), false);
  for (size_t i = 0; i < containers.size(); ++i) {
    const Json* resources = find_member(pod.container(containers[i]), "resources");
    const Json* refs = resources != nullptr ? find_member(*resources, "claims") : nullptr;
    if (refs == nullptr || !refs->is_array()) continue;
    for (const auto& [name, request] : claim_references(*refs)) {
      // A copy: clang 14 does not let a lambda capture a structured binding.
      const std::string_view claim_name = name;
      const auto declared = std::find_if(dra.claims.begin(), dra.claims.end(),
                                         [&](const PodClaim& c) { return c.name == claim_name; });
      if (declared == dra.claims.end() || declared->status != ClaimLookup::kFound) {
        dra.container_unknown[i] = true;
      }
      for (size_t c = 0; c < dra.claims.size(); ++c) {
        if (dra.claims[c].name != name) continue;
        ClaimUse use = claim_use(dra.claims[c], c, request, policy);
        if (use.units <= 0) continue;
        dra.container_units[i] = saturating_add(dra.container_units[i], use.units);
        dra.container_claims[i].push_back(std::move(use));
      }
    }
  }
}

}  // namespace

PodDra resolve_pod_claims(const PodView& pod, const CompiledPolicy& policy,
                          const ClaimResolver* resolver, std::string_view ns) {
  PodDra dra;  // no claims (nearly every pod): nothing allocated, container_units stays empty
  const Json* claims = find_member(pod.spec(), "resourceClaims");
  if (claims == nullptr || !claims->is_array() || claims->empty()) return dra;
  const std::string base = pod.location().path + ".resourceClaims";
  for (size_t i = 0; i < claims->size(); ++i) {
    const Json& entry = (*claims)[i];
    PodClaim c;
    c.name = std::string(string_member(entry, "name"));
    c.path = index_path(base, i);
    if (const Json* n = string_map_value(&entry, "resourceClaimTemplateName")) {
      c.kind = ClaimKind::kTemplate;
      c.reference = n->get<std::string>();
    } else if (const Json* n2 = string_map_value(&entry, "resourceClaimName")) {
      c.kind = ClaimKind::kClaim;
      c.reference = n2->get<std::string>();
    } else {
      continue;  // neither: the API server rejects it; nothing is allocated
    }
    if (resolver == nullptr) {
      c.status = ClaimLookup::kUnavailable;
      c.error = "claim lookup is off";
    } else {
      ResolvedClaim resolved = resolver->resolve(c.kind, ns, c.reference);
      c.status = resolved.status;
      c.error = std::move(resolved.error);
      if (c.status == ClaimLookup::kFound) {
        c.requests =
            claim_requests(resolved.spec, c.kind == ClaimKind::kTemplate ? "spec.spec" : "spec");
      }
    }
    if (c.status == ClaimLookup::kFound) {
      c.units = claim_gpu_units(c.requests, policy);
      for (const DraRequest& r : c.requests) {
        const auto match = policy.find_device_class(r.device_class);
        if (match.gpu_class == nullptr) continue;
        c.gpu_class = match.gpu_class;
        c.device_class = r.device_class;
        break;
      }
      dra.any_gpu = dra.any_gpu || c.gpu_class != nullptr;
    } else {
      dra.any_unresolved = true;
    }
    dra.pod_units = saturating_add(dra.pod_units, c.units);
    dra.claims.push_back(std::move(c));
  }
  count_containers(pod, policy, dra);
  return dra;
}

bool targets_gpu_pool(const Json& spec, const CompiledPolicy& policy) {
  const Json* tolerations = find_member(spec, "tolerations");
  for (const GpuClass& c : policy.policy().classes) {
    for (const Taint& taint : c.taints) {
      if (any_tolerates(tolerations, taint)) return true;
    }
  }
  const Json* selector = find_member(spec, "nodeSelector");
  auto selects = [&](std::string_view key, const Json* values) {
    for (const GpuClass& c : policy.policy().classes) {
      for (const auto& [label, allowed] : c.node_selector) {
        if (label != key) continue;
        if (values == nullptr) return true;
        for (const Json& v : *values) {
          if (v.is_string() && std::find(allowed.begin(), allowed.end(),
                                         v.get_ref<const std::string&>()) != allowed.end()) {
            return true;
          }
        }
      }
    }
    return false;
  };
  if (selector != nullptr && selector->is_object()) {
    for (auto it = selector->begin(); it != selector->end(); ++it) {
      if (!it.value().is_string()) continue;
      const Json one = Json::array({it.value()});
      if (selects(it.key(), &one)) return true;
    }
  }
  const Json* terms = required_node_selector_terms(spec);
  if (terms == nullptr) return false;
  for (const Json& term : *terms) {
    const Json* expressions = find_member(term, "matchExpressions");
    if (expressions == nullptr || !expressions->is_array()) continue;
    for (const Json& e : *expressions) {
      const std::string_view op = string_member(e, "operator");
      const Json* values = find_member(e, "values");
      if (op == "Exists" && selects(string_member(e, "key"), nullptr)) return true;
      if (op == "In" && values != nullptr && values->is_array() &&
          selects(string_member(e, "key"), values)) {
        return true;
      }
    }
  }
  return false;
}

// Whether `pod` (an item of a PodList) waits for the claim or template `name`: not scheduled
// (spec.nodeName empty: the list's field selector asks for these, checked again), not being
// deleted (the scheduler skips a Pod with a deletionTimestamp), and naming it in
// spec.resourceClaims.
bool pod_waits_for_claim(const Json& pod, ClaimKind kind, std::string_view name) {
  const Json* metadata = find_member(pod, "metadata");
  if (metadata == nullptr || find_member(*metadata, "deletionTimestamp") != nullptr) return false;
  const Json* spec = find_member(pod, "spec");
  if (spec == nullptr || !string_member(*spec, "nodeName").empty()) return false;
  const Json* claims = find_member(*spec, "resourceClaims");
  if (claims == nullptr || !claims->is_array()) return false;
  const std::string_view field =
      kind == ClaimKind::kTemplate ? "resourceClaimTemplateName" : "resourceClaimName";
  for (const Json& c : *claims) {
    if (c.is_object() && string_member(c, field) == name) return true;
  }
  if (kind == ClaimKind::kTemplate) return false;
  // The claim the resource-claim controller made from a template for the Pod, by the name it
  // recorded in status.resourceClaimStatuses: the scheduler allocates the claim of that name
  // (k8s.io/dynamic-resource-allocation resourceclaim.Name), whoever created it last.
  const Json* status = find_member(pod, "status");
  const Json* made = status != nullptr ? find_member(*status, "resourceClaimStatuses") : nullptr;
  if (made == nullptr || !made->is_array()) return false;
  for (const Json& c : *made) {
    if (c.is_object() && string_member(c, "resourceClaimName") == name) return true;
  }
  return false;
}

}  // namespace gpuadmit
