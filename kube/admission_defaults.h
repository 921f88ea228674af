#pragma once
// What the API server stores for an admissionregistration.k8s.io object gpuadmit writes, so that
// "the cluster's object is what gpuadmit wants" can be an exact comparison: every field gpuadmit
// owns compared whole (an added webhook, rule or matchConditions entry, a changed
// namespaceSelector is a difference), yet an object that differs only by the API server's
// defaulting is not changed forever.
//
//   if (!same_content(desired, actual)) put(desired);
//
// The defaults are Kubernetes' (pkg/apis/admissionregistration/v1/defaults.go and
// v1beta1/defaults.go, applied as zz_generated.defaults.go nests them):
//   webhooks[] (v1)         failurePolicy Fail, matchPolicy Equivalent, namespaceSelector {},
//                           objectSelector {}, timeoutSeconds 10, reinvocationPolicy Never
//                           (mutating), clientConfig.service.port 443, rules[].scope "*"
//                           (sideEffects and admissionReviewVersions have no default in v1:
//                           they are required, v1beta1's Unknown, 30 s and [v1beta1] are gone)
//   ValidatingAdmissionPolicy, MutatingAdmissionPolicy spec: failurePolicy Fail
//   a policy's spec.matchConstraints, a binding's spec.matchResources (MatchResources):
//                           matchPolicy Equivalent, namespaceSelector {}, objectSelector {},
//                           resourceRules[].scope and excludeResourceRules[].scope "*"
// and the JSON encoding's `omitempty`: an empty list, map or string and a null are not stored,
// so they compare equal to an absent member (an empty selector, `{}`, is defaulted in first and
// then dropped on both sides alike).

#include <string>

#include "engine/json.h"

namespace gpuadmit::kube {

// The members of `object` beside apiVersion, kind, metadata and status (a webhook
// configuration's `webhooks`, a policy's or binding's `spec`), defaulted as the API server
// defaults `object`'s kind and with empty values dropped.
Json stored_content(const Json& object);

// stored_content as text with every object's keys sorted: key order is not content (the API
// server writes Go's struct order, render its own), so two of these compare as the objects do.
std::string canonical_content(const Json& object);

// True when `desired` and `actual` have the same stored_content: gpuadmit's fields compared
// whole, the server's defaults not a difference.
bool same_content(const Json& desired, const Json& actual);

}  // namespace gpuadmit::kube
