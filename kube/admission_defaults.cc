#include "kube/admission_defaults.h"

#include <string>
#include <string_view>

namespace gpuadmit::kube {
namespace {

// A Go pointer field left nil is defaulted; a value present (even one the API would refuse) is
// kept, as the defaulter keeps it.
void set_default(Json& object, const char* key, Json value) {
  if (!object.is_object()) return;
  const Json* have = find_member(object, key);
  if (have == nullptr || have->is_null()) object[key] = std::move(value);
}

// v1 SetDefaults_Rule, which the generated defaulters apply to every rule a webhook, a policy's
// matchConstraints or a binding's matchResources holds.
void default_rules(Json* rules) {
  if (rules == nullptr || !rules->is_array()) return;
  for (Json& rule : *rules) set_default(rule, "scope", "*");
}

// SetDefaults_MatchResources (v1 and v1beta1 alike).
void default_match_resources(Json* match) {
  if (match == nullptr || !match->is_object()) return;
  set_default(*match, "matchPolicy", "Equivalent");
  set_default(*match, "namespaceSelector", empty_object());
  set_default(*match, "objectSelector", empty_object());
  default_rules(find_member(*match, "resourceRules"));
  default_rules(find_member(*match, "excludeResourceRules"));
}

// v1 SetDefaults_ValidatingWebhook and SetDefaults_MutatingWebhook, SetDefaults_ServiceReference.
void default_webhook(Json& webhook, bool mutating) {
  if (!webhook.is_object()) return;
  set_default(webhook, "failurePolicy", "Fail");
  set_default(webhook, "matchPolicy", "Equivalent");
  set_default(webhook, "namespaceSelector", empty_object());
  set_default(webhook, "objectSelector", empty_object());
  set_default(webhook, "timeoutSeconds", 10);
  if (mutating) set_default(webhook, "reinvocationPolicy", "Never");
  if (Json* client = find_member(webhook, "clientConfig")) {
    if (Json* service = find_member(*client, "service")) set_default(*service, "port", 443);
  }
  default_rules(find_member(webhook, "rules"));
}

void apply_defaults(std::string_view kind, Json& object) {
  if (kind == "MutatingWebhookConfiguration" || kind == "ValidatingWebhookConfiguration") {
    Json* webhooks = find_member(object, "webhooks");
    if (webhooks == nullptr || !webhooks->is_array()) return;
    for (Json& webhook : *webhooks)
      default_webhook(webhook, kind == "MutatingWebhookConfiguration");
    return;
  }
  Json* spec = find_member(object, "spec");
  if (spec == nullptr || !spec->is_object()) return;
  if (kind == "ValidatingAdmissionPolicy" || kind == "MutatingAdmissionPolicy") {
    set_default(*spec, "failurePolicy", "Fail");
    default_match_resources(find_member(*spec, "matchConstraints"));
  } else if (kind == "ValidatingAdmissionPolicyBinding" ||
             kind == "MutatingAdmissionPolicyBinding") {
    default_match_resources(find_member(*spec, "matchResources"));
  }
}

bool omitted(const Json& value) {
  if (value.is_null()) return true;
  if (value.is_string()) return value.get_ref<const std::string&>().empty();
  return (value.is_array() || value.is_object()) && value.empty();
}

// encoding/json's omitempty, which every optional member of these types carries: members whose
// value is empty are not written. List elements are kept (an empty one is still an element).
void drop_omitted(Json& value) {
  if (value.is_array()) {
    for (Json& item : value) drop_omitted(item);
    return;
  }
  if (!value.is_object()) return;
  for (auto it = value.begin(); it != value.end();) {
    drop_omitted(it.value());
    it = omitted(it.value()) ? value.erase(it) : std::next(it);
  }
}

}  // namespace

Json stored_content(const Json& object) {
  Json content = empty_object();
  if (!object.is_object()) return content;
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (key != "apiVersion" && key != "kind" && key != "metadata" && key != "status") {
      content[key] = it.value();
    }
  }
  apply_defaults(string_member(object, "kind"), content);
  drop_omitted(content);
  return content;
}

// nlohmann's std::map-backed json sorts the keys.
std::string canonical_content(const Json& object) {
  return nlohmann::json::parse(stored_content(object).dump()).dump();
}

bool same_content(const Json& desired, const Json& actual) {
  return canonical_content(desired) == canonical_content(actual);
}

}  // namespace gpuadmit::kube
