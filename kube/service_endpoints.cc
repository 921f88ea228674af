#include "kube/service_endpoints.h"

#include "engine/json.h"
#include "kube/list.h"

namespace gpuadmit::kube {
namespace {

// The ready endpoints of one EndpointSlice.
bool has_ready_endpoint(const Json& slice) {
  const Json* endpoints = find_member(slice, "endpoints");
  if (endpoints == nullptr || !endpoints->is_array()) return false;
  for (const Json& endpoint : *endpoints) {
    const Json* conditions = find_member(endpoint, "conditions");
    const Json* ready = conditions ? find_member(*conditions, "ready") : nullptr;
    if (ready == nullptr || ready->is_null() || (ready->is_boolean() && ready->get<bool>())) {
      return true;
    }
  }
  return false;
}

}  // namespace

ServiceReadiness service_readiness(const ApiClient& api, const std::string& token,
                                   const std::string& ns, const std::string& service) {
  ListOptions options;
  options.label_selector = "kubernetes.io/service-name=" + service;
  int slices = 0;
  bool ready = false;
  const std::string path = "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices";
  const ListResult r = list_all(api, token, path, options, [&](const std::string& page) {
    const Json list = Json::parse(page, nullptr, false);
    const Json* items = find_member(list, "items");
    if (items == nullptr || !items->is_array()) return true;
    for (const Json& slice : *items) {
      ++slices;
      ready = ready || has_ready_endpoint(slice);
    }
    return true;
  });
  ServiceReadiness out;
  if (!r.ok()) {
    out.reason = "the EndpointSlices of Service " + ns + "/" + service + ": " + r.error;
    return out;
  }
  out.ready = ready;
  if (!ready) {
    out.reason = "Service " + ns + "/" + service + " has no ready endpoint (" +
                 std::to_string(slices) + (slices == 1 ? " EndpointSlice)" : " EndpointSlices)");
  }
  return out;
}

}  // namespace gpuadmit::kube
