#include "fleet/live_collect.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "engine/context.h"
#include "engine/pod_view.h"
#include "engine/quantity.h"
#include "engine/resources.h"
#include "fleet/collect.h"

namespace gpuadmit::fleet {
namespace {

std::string_view group_of(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
}

const Json* path(const Json& object, std::initializer_list<std::string_view> keys) {
  const Json* at = &object;
  for (std::string_view key : keys) {
    at = find_member(*at, key);
    if (at == nullptr) return nullptr;
  }
  return at;
}

// A Pod's spec as the scheduler reads it (Pod, not a template).
const PodSpecLocation& pod_location() {
  static const PodSpecLocation location = [] {
    PodSpecLocation l;
    l.spec = JsonPointer("/spec");
    l.metadata = JsonPointer("/metadata");
    l.is_template = false;
    l.replicas = 1;
    l.path = "spec";
    return l;
  }();
  return location;
}

// The pod's GPU requests as the scheduler counts them (k8s.io/component-helpers resource
// PodRequests): the engine's own walk, the one the webhook and the offline report use — called
// here and nowhere else in live mode, so that the engine's unification reaches it unchanged.
std::vector<PodGpuRequest> scheduler_gpu_requests(const PodView& pod,
                                                  const CompiledPolicy& policy) {
  std::vector<PodGpuRequest> requests = effective_pod_gpu_requests(pod, policy);
  std::erase_if(requests, [](const PodGpuRequest& r) { return r.units <= 0; });
  return requests;
}

// The controller ownerReference as "Kind/name", "" when there is none.
std::string controller_of(const Json* metadata) {
  const Json* owners = metadata != nullptr ? find_member(*metadata, "ownerReferences") : nullptr;
  if (owners == nullptr || !owners->is_array()) return "";
  for (const Json& owner : *owners) {
    const Json* controller = find_member(owner, "controller");
    if (controller != nullptr && controller->is_boolean() && controller->get<bool>()) {
      return std::string(string_member(owner, "kind")) + "/" +
             std::string(string_member(owner, "name"));
    }
  }
  return "";
}

// The Ready condition is True (k8s.io/api core/v1 NodeCondition, type Ready).
bool node_ready(const Json& node) {
  const Json* conditions = path(node, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return false;
  for (const Json& c : *conditions) {
    if (string_member(c, "type") == "Ready") return string_member(c, "status") == "True";
  }
  return false;
}

// Whole units of a resource quantity (the device plugin advertises integers; a fraction counts
// as the scheduler's Value(), rounded up).
int64_t whole(const Json& value) {
  std::optional<Quantity> q = parse_json_quantity(value);
  if (!q || q->is_negative()) return 0;
  return q->value();
}

// A DRA device's attribute as a string ("gpu" of {"type": {"string": "gpu"}}): the attribute
// map is the device's own (resource.k8s.io/v1) or under `basic` (v1beta1); an unqualified name
// is in the driver's domain, so "gpu.nvidia.com/type" is the same attribute.
std::string_view device_attribute(const Json& device, std::string_view driver,
                                  std::string_view name) {
  const Json* attributes = find_member(device, "attributes");
  if (attributes == nullptr) attributes = path(device, {"basic", "attributes"});
  if (attributes == nullptr || !attributes->is_object()) return "";
  const Json* value = find_member(*attributes, name);
  if (value == nullptr)
    value = find_member(*attributes, std::string(driver) + "/" + std::string(name));
  return value != nullptr ? string_member(*value, "string") : "";
}

// More of one GPU resource than a node can have (16 GPUs time-sliced 1,024 ways is 16,384): a
// corrupt export, refused rather than drawn and packed cell by cell.
constexpr int64_t kMaxNodeAmount = 65'536;

// NVIDIA's DRA driver publishes whole GPUs as devices of driver gpu.nvidia.com with attribute
// type "gpu" (its DeviceClass gpu.nvidia.com selects
// `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'`).
constexpr std::string_view kNvidiaGpuDriver = "gpu.nvidia.com";

std::string device_key(std::string_view driver, std::string_view pool, std::string_view device) {
  std::string key(driver);
  key.append("\x1f").append(pool).append("\x1f").append(device);
  return key;
}

}  // namespace

struct LiveCollector::Index {
  std::unordered_map<std::string, size_t> nodes;             // name → index in input.nodes
  std::unordered_map<std::string, size_t> pods;              // ns/name → index in input.pods
  std::unordered_map<std::string, std::string> gpu_devices;  // device key → node name
};

int64_t amount_of(const ResourceAmounts& amounts, std::string_view resource) {
  for (const ResourceAmount& a : amounts) {
    if (a.resource == resource) return a.amount;
  }
  return 0;
}

void add_amount(ResourceAmounts& amounts, std::string_view resource, int64_t amount) {
  for (ResourceAmount& a : amounts) {
    if (a.resource == resource) {
      a.amount = saturating_add(a.amount, amount);
      return;
    }
  }
  amounts.push_back({std::string(resource), amount});
}

std::string LivePod::label() const { return ns + "/" + name; }

LiveCollector::LiveCollector(const CompiledPolicy& policy)
    : policy_(policy), index_(std::make_unique<Index>()) {}

LiveCollector::~LiveCollector() = default;

uint32_t LiveCollector::file_index(const std::string& file) {
  if (input_.files.empty() || input_.files.back() != file) input_.files.push_back(file);
  return static_cast<uint32_t>(input_.files.size() - 1);
}

void LiveCollector::add(Json object, const std::string& file, int line) {
  if (!object.is_object()) return;
  const uint32_t f = file_index(file);
  if (!is_list(object)) {
    add_object(object, f, line);
    return;
  }
  for (Json& item : object["items"]) {
    if (item.is_object()) add_object(item, f, line);
  }
}

bool LiveCollector::wants(const Json& object) const {
  if (string_member(object, "kind") != "Pod") return true;
  const Json* spec = find_member(object, "spec");
  if (spec == nullptr || !spec->is_object()) return true;
  if (const Json* claims = find_member(*spec, "resourceClaims");
      claims != nullptr && !(claims->is_array() && claims->empty())) {
    return true;
  }
  for (std::string_view list : kContainerLists) {
    const Json* containers = find_member(*spec, list);
    if (containers == nullptr) continue;
    if (!containers->is_array()) return true;
    for (const Json& container : *containers) {
      const Json* resources = find_member(container, "resources");
      if (resources == nullptr) continue;
      if (!resources->is_object()) return true;
      for (std::string_view section : {"requests", "limits"}) {
        const Json* amounts = find_member(*resources, section);
        if (amounts == nullptr) continue;
        if (!amounts->is_object()) return true;
        for (auto it = amounts->begin(); it != amounts->end(); ++it) {
          if (policy_.is_gpu_resource(it.key())) return true;
        }
      }
    }
  }
  return false;
}

void LiveCollector::add_object(Json& object, uint32_t file, int line) {
  const std::string_view api_version = string_member(object, "apiVersion");
  const std::string_view kind = string_member(object, "kind");
  if (api_version == "v1" && kind == "Node") {
    add_node(object, file, line);
  } else if (api_version == "v1" && kind == "Pod") {
    add_pod(object, file, line);
  } else if (group_of(api_version) == "resource.k8s.io" && kind == "ResourceSlice") {
    add_slice(object);
  } else if (group_of(api_version) == "resource.k8s.io" && kind == "ResourceClaim") {
    add_claim(object);
  }
}

void LiveCollector::add_node(const Json& object, uint32_t file, int line) {
  LiveNode node;
  node.name = object_name(object);
  node.file = file;
  node.line = line;
  if (const Json* labels = path(object, {"metadata", "labels"}); labels && labels->is_object()) {
    for (auto it = labels->begin(); it != labels->end(); ++it) {
      if (it.value().is_string()) node.labels.emplace_back(it.key(), it.value().get<std::string>());
    }
  }
  if (const Json* spec = find_member(object, "spec")) {
    if (const Json* u = find_member(*spec, "unschedulable"); u && u->is_boolean())
      node.unschedulable = u->get<bool>();
    if (const Json* taints = find_member(*spec, "taints"); taints && taints->is_array()) {
      for (const Json& t : *taints) {
        node.taints.push_back({std::string(string_member(t, "key")),
                               std::string(string_member(t, "value")),
                               std::string(string_member(t, "effect"))});
      }
    }
  }
  node.ready = node_ready(object);
  node.gfd = read_gfd_labels(node.labels);
  if (const Json* alloc = path(object, {"status", "allocatable"}); alloc && alloc->is_object()) {
    for (auto it = alloc->begin(); it != alloc->end(); ++it) {
      if (!policy_.is_gpu_resource(it.key())) continue;
      const int64_t amount = whole(it.value());
      if (amount > kMaxNodeAmount) {
        errors_.push_back({input_.files[file], line,
                           "Node " + node.name + ": status.allocatable[\"" + it.key() + "\"] is " +
                               std::to_string(amount) + ", more than any node has (" +
                               std::to_string(kMaxNodeAmount) + "); check the export"});
        return;
      }
      add_amount(node.allocatable, it.key(), amount);
    }
  }
  auto [at, added] = index_->nodes.emplace(node.name, input_.nodes.size());
  if (added) {
    input_.nodes.push_back(std::move(node));
  } else {
    ++input_.replaced;
    input_.nodes[at->second] = std::move(node);
  }
}

void LiveCollector::add_pod(const Json& object, uint32_t file, int line) {
  ++input_.pods_read;
  if (terminated_pod(object)) {
    ++input_.terminal_pods;
    return;
  }
  const Json* status = find_member(object, "status");
  if (!wants(object)) return;  // no GPU resource, no claim, well formed: a CPU pod
  const Json* metadata = find_member(object, "metadata");
  Expected<PodView> view = PodView::make(object, pod_location());
  if (!view) {
    errors_.push_back({input_.files[file], line,
                       "Pod " + std::string(metadata ? string_member(*metadata, "namespace") : "") +
                           "/" + object_name(object) + ": " + view.error()});
    return;
  }
  LivePod pod;
  pod.requests = scheduler_gpu_requests(*view, policy_);
  const Json& spec = view->spec();
  const Json* claims = find_member(spec, "resourceClaims");
  pod.dra = claims != nullptr && claims->is_array() && !claims->empty();
  // A pod whose GPUs come from DRA claims only is a GPU pod when the webhook gave it a class.
  const std::optional<std::string> named_class = view->setting("gpuadmit.io/class");
  if (pod.requests.empty() && !(pod.dra && named_class)) return;
  pod.ns = metadata != nullptr ? std::string(string_member(*metadata, "namespace")) : "";
  pod.name = object_name(object);
  pod.owner = controller_of(metadata);
  pod.file = file;
  pod.line = line;
  pod.node_name = std::string(string_member(spec, "nodeName"));
  if (pod.node_name.empty()) read_pending(*view, spec, status, pod);
  auto [at, added] = index_->pods.emplace(pod.ns + "/" + pod.name, input_.pods.size());
  if (added) {
    input_.pods.push_back(std::move(pod));
  } else {
    ++input_.replaced;
    input_.pods[at->second] = std::move(pod);
  }
}

// What a pod without a node needs for its verdict: its placement, the class the webhook
// resolves (engine/context.h), its scheduling gates and the scheduler's message.
void LiveCollector::read_pending(const PodView& view, const Json& spec, const Json* status,
                                 LivePod& pod) const {
  pod.placement = Json::object();
  for (std::string_view key : {"nodeSelector", "affinity", "tolerations"}) {
    if (const Json* v = find_member(spec, key)) pod.placement[std::string(key)] = *v;
  }
  RequestContext request;
  request.policy = &policy_;
  request.ns = pod.ns;
  request.api_version = "v1";
  request.kind = "Pod";
  request.name = pod.name;
  PodContext context;
  context.request = &request;
  context.policy = &policy_;
  context.tenant = policy_.tenant_for(pod.ns);
  context.gpu_pod = true;
  resolve_pod_context(view, context);
  pod.class_name = context.class_name;
  pod.class_known = context.gpu_class != nullptr;
  if (const Json* gates = find_member(spec, "schedulingGates"); gates && gates->is_array()) {
    for (const Json& g : *gates) pod.scheduling_gates.emplace_back(string_member(g, "name"));
  }
  if (status == nullptr) return;
  pod.nominated_node = std::string(string_member(*status, "nominatedNodeName"));
  if (const Json* conditions = find_member(*status, "conditions");
      conditions && conditions->is_array()) {
    for (const Json& c : *conditions) {
      if (string_member(c, "type") == "PodScheduled" && string_member(c, "status") == "False")
        pod.scheduler_message = std::string(string_member(c, "message"));
    }
  }
}

void LiveCollector::add_slice(const Json& slice) {
  const Json* spec = find_member(slice, "spec");
  if (spec == nullptr) return;
  const std::string_view driver = string_member(*spec, "driver");
  const std::string_view node = string_member(*spec, "nodeName");
  const Json* pool = find_member(*spec, "pool");
  const std::string_view pool_name = pool != nullptr ? string_member(*pool, "name") : "";
  const Json* devices = find_member(*spec, "devices");
  if (driver != kNvidiaGpuDriver || node.empty() || devices == nullptr || !devices->is_array())
    return;
  for (const Json& d : *devices) {
    if (device_attribute(d, driver, "type") != "gpu") continue;
    const std::string_view name = string_member(d, "name");
    if (index_->gpu_devices.emplace(device_key(driver, pool_name, name), std::string(node)).second)
      input_.dra_devices.push_back(
          {std::string(driver), std::string(pool_name), std::string(name)});
  }
}

void LiveCollector::add_claim(const Json& claim) {
  const Json* results = path(claim, {"status", "allocation", "devices", "results"});
  if (results == nullptr || !results->is_array()) return;
  for (const Json& r : *results) {
    input_.dra_allocated.push_back({std::string(string_member(r, "driver")),
                                    std::string(string_member(r, "pool")),
                                    std::string(string_member(r, "device"))});
  }
}

LiveInput LiveCollector::finish() {
  // DRA: each published GPU device counts on its node, each allocated one as used there.
  for (const DraDevice& d : input_.dra_devices) {
    auto node = index_->nodes.find(index_->gpu_devices[device_key(d.driver, d.pool, d.device)]);
    if (node != index_->nodes.end()) ++input_.nodes[node->second].dra_devices;
  }
  for (const DraDevice& d : input_.dra_allocated) {
    auto device = index_->gpu_devices.find(device_key(d.driver, d.pool, d.device));
    if (device == index_->gpu_devices.end()) continue;  // not a whole GPU of a known slice
    auto node = index_->nodes.find(device->second);
    if (node != index_->nodes.end()) ++input_.nodes[node->second].dra_allocated;
  }
  index_ = std::make_unique<Index>();
  return std::move(input_);
}

}  // namespace gpuadmit::fleet
