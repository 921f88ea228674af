#include "render/webhook_configuration.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "engine/admission.h"  // base64_encode
#include "engine/dra.h"
#include "engine/pod_update.h"
#include "engine/workload_kinds.h"
#include "render/cluster_objects.h"
#include "render/native_cel.h"
#include "render/native_model.h"

namespace gpuadmit::render {
namespace {

std::string_view version_of(std::string_view api_version) {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? api_version : api_version.substr(slash + 1);
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

// The kinds one webhook receives: with TemplateMode::kValidate the mutating webhook leaves
// workload templates to the validating one.
std::vector<AdmittedKind> kinds_for(const CompiledPolicy& policy, bool mutating,
                                    TemplateMode templates) {
  std::vector<AdmittedKind> kinds = admitted_kinds(policy);
  if (mutating && templates == TemplateMode::kValidate) {
    std::erase_if(kinds, [](const AdmittedKind& k) { return k.templated; });
  }
  return kinds;
}

Json webhook(std::string_view name, std::string_view path, int timeout_seconds,
             const CompiledPolicy& policy, const WebhookTarget& target, bool mutating) {
  Json client_config = Json::object();
  client_config["service"] = {
      {"namespace", target.ns}, {"name", target.service}, {"path", path}, {"port", 443}};
  if (!target.ca_bundle.empty()) client_config["caBundle"] = target.ca_bundle;
  Json excluded = Json::array();
  for (const std::string& ns : excluded_namespaces(policy, target)) excluded.push_back(ns);
  Json w = Json::object();
  w["name"] = name;
  w["admissionReviewVersions"] = Json::array({"v1"});
  w["clientConfig"] = std::move(client_config);
  w["rules"] = webhook_rules(kinds_for(policy, mutating, target.templates));
  w["failurePolicy"] = target.failure_policy;
  w["matchPolicy"] = "Equivalent";
  // kubernetes.io/metadata.name is set on every namespace by the API server (1.21+,
  // NamespaceDefaultLabelName), so the namespaces are excluded by name.
  w["namespaceSelector"] = {
      {"matchExpressions", Json::array({{{"key", "kubernetes.io/metadata.name"},
                                         {"operator", "NotIn"},
                                         {"values", std::move(excluded)}}})}};
  if (target.opt_out_label) {
    w["objectSelector"] = {
        {"matchExpressions",
         Json::array({{{"key", kIgnoreLabel}, {"operator", "NotIn"}, {"values", {"true"}}}})}};
  }
  w["sideEffects"] = "None";
  w["timeoutSeconds"] = timeout_seconds;
  if (!mutating) {
    w["rules"].push_back(pod_update_rule());
    w["matchConditions"] = Json::array({pod_update_condition()});
  }
  return w;
}

Json configuration(std::string_view kind, const WebhookTarget& target, Json webhook) {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", kind},
          {"metadata",
           {{"name", target.service}, {"labels", {{"app.kubernetes.io/name", "gpuadmit"}}}}},
          {"webhooks", Json::array({std::move(webhook)})}};
}

}  // namespace

std::string plural_resource(std::string_view kind) {
  std::string lower(kind);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ends_with(lower, "s") || ends_with(lower, "x") || ends_with(lower, "z") ||
      ends_with(lower, "ch") || ends_with(lower, "sh")) {
    return lower + "es";
  }
  if (lower.size() >= 2 && lower.back() == 'y' && !is_vowel(lower[lower.size() - 2])) {
    return lower.substr(0, lower.size() - 1) + "ies";
  }
  return lower + "s";
}

std::vector<AdmittedKind> admitted_kinds(const CompiledPolicy& policy) {
  std::vector<AdmittedKind> kinds;
  auto add = [&](std::string_view group, std::string_view version, std::string_view kind,
                 std::string resource, std::vector<std::string> operations, bool templated) {
    for (const AdmittedKind& k : kinds) {
      if (k.group == group && k.resource == resource &&
          (k.version == "*" || k.version == version)) {
        return;
      }
    }
    kinds.push_back({std::string(group), std::string(version), std::string(kind),
                     std::move(resource), std::move(operations), templated});
  };
  for (const WorkloadKind& k : workload_kinds()) {
    // Known as a controller only: nothing to evaluate, but for a queued kind's queue (GPU025).
    if (k.pod_specs.empty() && !queued_without_pod_specs(k)) continue;
    const bool pod = k.group.empty() && k.kind == "Pod";
    if (pod) {
      add(k.group, "*", k.kind, std::string(k.resource), {"CREATE"}, false);
    } else {
      add(k.group, "*", k.kind, std::string(k.resource), {"CREATE", "UPDATE"}, true);
    }
    for (std::string_view sub : k.subresources) {
      add(k.group, "*", k.kind, std::string(k.resource) + "/" + std::string(sub), {"UPDATE"},
          false);
    }
  }
  for (std::string_view kind : kClaimKinds) {
    add(kResourceApiGroup, "*", kind, plural_resource(kind), {"CREATE"}, false);
  }
  for (const WorkloadDecl& w : policy.policy().workloads) {
    if (w.pod_specs.empty()) continue;
    add(api_group_of(w.api_version), version_of(w.api_version), w.kind, plural_resource(w.kind),
        {"CREATE", "UPDATE"}, true);
  }
  return kinds;
}

Json webhook_rules(const std::vector<AdmittedKind>& kinds) {
  Json rules = Json::array();
  for (const AdmittedKind& k : kinds) {
    const Json operations = k.operations;
    Json* rule = nullptr;
    for (Json& r : rules) {
      if (r["apiGroups"][0] == k.group && r["apiVersions"][0] == k.version &&
          r["operations"] == operations) {
        rule = &r;
      }
    }
    if (rule == nullptr) {
      rules.push_back({{"apiGroups", {k.group}},
                       {"apiVersions", {k.version}},
                       {"operations", operations},
                       {"resources", Json::array()},
                       {"scope", "Namespaced"}});
      rule = &rules.back();
    }
    (*rule)["resources"].push_back(k.resource);
  }
  return rules;
}

Json pod_update_rule() {
  return {{"apiGroups", {""}},
          {"apiVersions", {"*"}},
          {"operations", {"UPDATE"}},
          {"resources", {"pods"}},
          {"scope", "Namespaced"}};
}

Json pod_update_condition() {
  using native::map_field;
  using native::quote;
  std::vector<std::string> fields;
  for (const std::string_view f : kPodPlacementFields) fields.emplace_back(f);
  // s, o: the two specs; a, b: the two annotations. A member differs when one has it and the
  // other not, or both have it unequal (CEL's == on the unstructured maps and lists).
  const std::string spec_changed =
      native::string_list(fields) + ".exists(f, (f in s) != (f in o) || (f in s && s[f] != o[f]))";
  const std::string prefix = quote(kCdiAnnotationPrefix);
  const std::string cdi_changed = "a.exists(k, k.startsWith(" + prefix +
                                  ") && (!(k in b) || a[k] != b[k])) || "
                                  "b.exists(k, k.startsWith(" +
                                  prefix + ") && !(k in a))";
  // l, m: the two labels; a label of kPodKueueLabels differs as a spec member does.
  std::vector<std::string> labels;
  for (const std::string_view l : kPodKueueLabels) labels.emplace_back(l);
  const std::string kueue_changed =
      native::string_list(labels) + ".exists(k, (k in l) != (k in m) || (k in l && l[k] != m[k]))";
  const std::string changed = native::let(
      "s", map_field("object", "spec"),
      native::let(
          "o", map_field("oldObject", "spec"),
          native::let("a", map_field(map_field("object", "metadata"), "annotations"),
                      native::let("b", map_field(map_field("oldObject", "metadata"), "annotations"),
                                  spec_changed + " || " + cdi_changed))));
  const std::string labels_changed = native::let(
      "l", map_field(map_field("object", "metadata"), "labels"),
      native::let("m", map_field(map_field("oldObject", "metadata"), "labels"), kueue_changed));
  // A Pod released or orphaned by its controller may be left standalone (GPU025): judged too
  // (engine/admission.cc pod_update_scope).
  return {{"name", "gpuadmit-pod-update-changes-placement"},
          {"expression",
           "request.operation != 'UPDATE' || request.resource.group != '' || "
           "request.resource.resource != 'pods' || "
           "(has(request.subResource) && request.subResource != '') || " +
               changed + " || " + labels_changed + " || " +
               native::cel::controller_released("object", "oldObject")}};
}

std::vector<std::string> excluded_namespaces(const CompiledPolicy& policy,
                                             const WebhookTarget& target) {
  std::set<std::string> names{target.ns};
  for (const std::string_view ns : kAlwaysExcluded) names.emplace(ns);
  for (const std::string& pattern : policy.policy().enforcement.exempt_namespaces) {
    if (is_literal_namespace(pattern)) names.insert(pattern);
  }
  names.insert(target.excluded.begin(), target.excluded.end());
  return {names.begin(), names.end()};
}

Expected<std::string, std::string> ca_bundle_from_pem(std::string_view pem) {
  if (pem.find("-----BEGIN CERTIFICATE-----") == std::string_view::npos) {
    return Unexpected<std::string>(
        "not a PEM certificate (no \"-----BEGIN CERTIFICATE-----\"); give the CA that signed "
        "the serving certificate, e.g. ca.crt from gpuadmit certs");
  }
  return base64_encode(pem);
}

Json mutating_webhook_configuration(const CompiledPolicy& policy, const WebhookTarget& target) {
  Json w = webhook("mutate.gpuadmit.io", "/mutate", target.mutating_timeout, policy, target, true);
  // A later webhook may add a container or a toleration gpuadmit must see again.
  w["reinvocationPolicy"] = "IfNeeded";
  return configuration("MutatingWebhookConfiguration", target, std::move(w));
}

Json validating_webhook_configuration(const CompiledPolicy& policy, const WebhookTarget& target) {
  return configuration("ValidatingWebhookConfiguration", target,
                       webhook("validate.gpuadmit.io", "/validate", target.validating_timeout,
                               policy, target, false));
}

}  // namespace gpuadmit::render
