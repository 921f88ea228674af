#pragma once
// Whether a Service has a Pod ready behind it, read from its EndpointSlices
// (discovery.k8s.io/v1, labelled kubernetes.io/service-name=<service> by the EndpointSlice
// controller): what the API server's service resolution and kube-proxy route to. `gpuadmit
// register` creates a webhook configuration only once its Service has one, so that the API
// server never calls a webhook nobody can answer yet (docs/install.md, "No install window").
//
//   ServiceReadiness r = service_readiness(api, token, "gpuadmit", "gpuadmit");
//   if (!r.ready) log(r.reason);   // "no ready endpoint in 1 EndpointSlice", or the API's error
//
// Request: GET /apis/discovery.k8s.io/v1/namespaces/NS/endpointslices
//              ?labelSelector=kubernetes.io/service-name%3DSERVICE   (paginated)

#include <string>

#include "kube/api_client.h"

namespace gpuadmit::kube {

struct ServiceReadiness {
  bool ready = false;
  std::string reason;  // when not ready: why, one line
};

// Ready when an endpoint of one of the Service's EndpointSlices has conditions.ready true or
// unset ("A nil value should be interpreted as true": discovery/v1 EndpointConditions).
ServiceReadiness service_readiness(const ApiClient& api, const std::string& token,
                                   const std::string& ns, const std::string& service);

}  // namespace gpuadmit::kube
