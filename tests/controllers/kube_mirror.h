#pragma once
// A mirror of what gpuadmit meets in a living cluster, for tests/controllers/: the API server's
// admission path (webhook routing by the rules `gpuadmit render` makes, the AdmissionReview
// gpuadmit's own codec answers, the JSON Patch applied to the object, the validating webhook,
// the immutability checks of the API's validation) and the controllers that copy pod templates,
// each function citing the Kubernetes code it mirrors (v1.28, the version the manual checks of
// ../shared/k8s-test/ run). Expectations in the tests come from that code, not from gpuadmit.
//
//   ApiServer api(policy);
//   api.create(deployment);                       // through both webhooks, patch applied
//   run_controllers(api);                         // Deployment + ReplicaSet controllers
//   api.list("ReplicaSet").size() <= 2;

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/admission.h"
#include "engine/quantity.h"
#include "engine/workload_kinds.h"
#include "mutators/all_mutators.h"
#include "render/webhook_configuration.h"
#include "rules/all_rules.h"

namespace gpuadmit::testing {

inline constexpr std::string_view kNamespace = "team-a";

// --- how Kubernetes compares templates -----------------------------------------------------

// apiequality.Semantic.DeepEqual (k8s.io/apimachinery/pkg/api/equality) on the JSON of typed
// objects: decoding gives an absent field, `null`, `[]` and `{}` the same nil/empty value and the
// forked reflect.DeepEqual takes nil and empty slices and maps as equal; resource.Quantity
// compares by value (Semantic's Cmp == 0); key order is the encoder's, not part of the value.
inline bool semantic_equal(const Json& a, const Json& b, bool quantities = false) {
  auto empty = [](const Json& j) { return j.is_null() || (j.is_structured() && j.empty()); };
  if (empty(a) && empty(b)) return true;
  if (a.is_object() && b.is_object()) {
    for (const Json* side : {&a, &b}) {
      const Json& other = side == &a ? b : a;
      for (auto it = side->begin(); it != side->end(); ++it) {
        const Json* there = find_member(other, it.key());
        const bool q = it.key() == "requests" || it.key() == "limits" || it.key() == "overhead";
        if (there == nullptr) {
          if (!empty(it.value())) return false;
        } else if (!semantic_equal(it.value(), *there, q)) {
          return false;
        }
      }
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!semantic_equal(a[i], b[i], false)) return false;
    }
    return true;
  }
  if (quantities && a.is_object() == false) {
    const std::string sa = a.is_string() ? a.get<std::string>() : a.dump();
    const std::string sb = b.is_string() ? b.get<std::string>() : b.dump();
    const auto qa = Quantity::parse(sa), qb = Quantity::parse(sb);
    if (qa && qb) return *qa == *qb;
  }
  return a == b;
}

inline constexpr std::string_view kPodTemplateHashLabel = "pod-template-hash";

// pkg/controller/deployment/util EqualIgnoreHash: the templates without their
// pod-template-hash label, Semantic.DeepEqual.
inline bool equal_ignore_hash(Json t1, Json t2) {
  for (Json* t : {&t1, &t2}) {
    if (Json* metadata = find_member(*t, "metadata")) {
      if (Json* labels = find_member(*metadata, "labels"); labels && labels->is_object()) {
        labels->erase(std::string(kPodTemplateHashLabel));
      }
    }
  }
  return semantic_equal(t1, t2);
}

// The JSON with every object's keys sorted: what the template's hash is taken over here.
inline std::string canonical(const Json& j) {
  if (j.is_object()) {
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    std::sort(keys.begin(), keys.end());
    std::string out = "{";
    for (const std::string& k : keys) {
      if (out.size() > 1) out += ",";
      out += Json(k).dump() + ":" + canonical(j.at(k));
    }
    return out + "}";
  }
  if (j.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < j.size(); ++i) out += (i ? "," : "") + canonical(j[i]);
    return out + "]";
  }
  return j.dump();
}

// pkg/controller/controller_utils.go ComputeHash: fnv32a over the template, then the collision
// count as 8 little-endian bytes (4 written), then rand.SafeEncodeString of the decimal sum.
// Kubernetes hashes spew's dump of the typed template (hashutil.DeepHashObject); this mirror
// hashes its canonical JSON, which gives equal templates equal hashes and different templates
// different ones just the same, which is all the controller's behaviour depends on.
inline std::string compute_hash(const Json& pod_template, std::optional<int32_t> collision_count) {
  uint32_t h = 2166136261u;
  auto write = [&](const std::string& bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 16777619u;
  };
  write(canonical(pod_template));
  if (collision_count) {
    std::string bytes(8, '\0');
    for (int i = 0; i < 4; ++i)
      bytes[i] = static_cast<char>((uint32_t(*collision_count) >> (8 * i)) & 0xff);
    write(bytes);
  }
  static constexpr std::string_view kAlphanums = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (char c : std::to_string(h))
    out += kAlphanums[static_cast<unsigned char>(c) % kAlphanums.size()];
  return out;
}

// --- the API server ---------------------------------------------------------------------------

inline std::string base64_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = value(c);
    if (v < 0) continue;  // padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

// One label-selector requirement list (metav1.LabelSelector matchExpressions) against labels.
inline bool selector_matches(const Json& selector, const Json& labels) {
  const Json* expressions = find_member(selector, "matchExpressions");
  if (expressions == nullptr) return true;
  for (const Json& e : *expressions) {
    const std::string key = e.at("key");
    const std::string op = e.at("operator");
    const Json* value = find_member(labels, key);
    const bool has = value != nullptr;
    bool in = false;
    for (const Json& v : e.value("values", Json::array())) in = in || (has && *value == v);
    if ((op == "In" && !in) || (op == "NotIn" && in) || (op == "Exists" && !has) ||
        (op == "DoesNotExist" && has)) {
      return false;
    }
  }
  return true;
}

struct Written {
  std::optional<std::string> error;  // refused: by a webhook, or by the API's validation
  Json object;                       // as stored
  Json mutating_patch;               // the mutating webhook's JSON Patch ([] when none / not sent)
  bool sent = false;                 // the mutating webhook was called
  bool ok() const { return !error; }
};

class ApiServer {
 public:
  explicit ApiServer(PolicyPtr policy)
      : policy_(std::move(policy)), pipeline_(default_mutators(), default_rules()) {}

  // gpuadmit registered with the configurations `gpuadmit render` prints, or not at all.
  void set_webhook(bool registered, TemplateMode templates = TemplateMode::kMutate) {
    webhook_ = registered;
    templates_ = templates;
  }
  // A new policy reaches the webhook (and `render`'s rules).
  void set_policy(PolicyPtr policy) { policy_ = std::move(policy); }
  const CompiledPolicy& policy() const { return *policy_; }
  // The negative control: a webhook that changes every ReplicaSet it sees created, as gpuadmit
  // did before it left controllers' copies alone.
  std::function<void(Json&)> child_mutation;

  Written create(Json object) {
    Json& metadata = object["metadata"];
    metadata["namespace"] = std::string(kNamespace);
    if (!metadata.contains("name")) {
      metadata["name"] =
          metadata.value("generateName", std::string("obj-")) + std::to_string(++serial_);
    }
    const std::string key = key_of(object);
    if (store_.count(key)) return refused("AlreadyExists: " + key);
    metadata["uid"] = "uid-" + std::to_string(++serial_);
    metadata["creationTimestamp"] = timestamp();
    Written w = admit("CREATE", "", object, nullptr);
    if (!w.ok()) return w;
    return commit(key, std::move(w));
  }

  // An UPDATE of the main resource (a PUT, or a PATCH already applied to the stored object).
  Written update(Json object) {
    const std::string key = key_of(object);
    auto it = store_.find(key);
    if (it == store_.end()) return refused("NotFound: " + key);
    const Json old = it->second;
    object["metadata"]["uid"] = old["metadata"]["uid"];
    object["metadata"]["creationTimestamp"] = old["metadata"]["creationTimestamp"];
    Written w = admit("UPDATE", "", object, &old);
    if (!w.ok()) return w;
    if (auto error = validate_update(w.object, old)) return refused(*error);
    return commit(key, std::move(w));
  }

  // `kubectl scale`: the scale subresource (a Scale, not the object), in the webhook rules or not.
  Written scale(const std::string& kind, const std::string& name, int64_t replicas) {
    Json object = get(kind, name);
    const Json old = object;
    object["spec"]["replicas"] = replicas;
    Written w = admit("UPDATE", "scale", object, &old);
    if (!w.ok()) return w;
    const std::string key = key_of(object);
    return commit(key, std::move(w));
  }

  // A controller's status write: the status subresource.
  void write_status(const std::string& kind, const std::string& name, const Json& status) {
    Json& object = store_[kind + "/" + name];
    if (object.value("status", Json()) == status) return;
    object["status"] = status;
    ++writes_;
  }

  // `kubectl debug`: the pods/ephemeralcontainers subresource. The API server keeps only the
  // Pod's ephemeralContainers from what the webhooks return (pkg/registry/core/pod strategy.go
  // dropNonEphemeralContainerUpdates), then refuses a change to an existing one
  // (pkg/apis/core/validation ValidatePodEphemeralContainersUpdate).
  Written add_ephemeral_container(const std::string& pod, const Json& container) {
    const Json old = get("Pod", pod);
    Json object = old;
    object["spec"]["ephemeralContainers"].push_back(container);
    Written w = admit("UPDATE", "ephemeralcontainers", object, &old);
    if (!w.ok()) return w;
    Json kept = old;
    kept["spec"]["ephemeralContainers"] = w.object["spec"]["ephemeralContainers"];
    for (const Json& before : old["spec"].value("ephemeralContainers", Json::array())) {
      bool same = false;
      for (const Json& after : kept["spec"]["ephemeralContainers"]) {
        same = same || (after["name"] == before["name"] && semantic_equal(after, before));
      }
      if (!same) return refused("existing ephemeral containers may not be changed");
    }
    w.object = std::move(kept);
    const std::string key = key_of(w.object);
    return commit(key, std::move(w));
  }

  void remove(const std::string& kind, const std::string& name) {
    store_.erase(kind + "/" + name);
    ++writes_;
  }

  Json get(const std::string& kind, const std::string& name) const {
    auto it = store_.find(kind + "/" + name);
    REQUIRE(it != store_.end());
    return it->second;
  }
  bool has(const std::string& kind, const std::string& name) const {
    return store_.count(kind + "/" + name) != 0;
  }
  // In creation order (the name breaks ties, as controller.ReplicaSetsByCreationTimestamp).
  std::vector<Json> list(const std::string& kind) const {
    std::vector<Json> out;
    for (const auto& [key, object] : store_) {
      if (key.rfind(kind + "/", 0) == 0) out.push_back(object);
    }
    std::sort(out.begin(), out.end(), [](const Json& a, const Json& b) {
      const std::string ta = a["metadata"]["creationTimestamp"],
                        tb = b["metadata"]["creationTimestamp"];
      return ta != tb ? ta < tb : a["metadata"]["name"] < b["metadata"]["name"];
    });
    return out;
  }
  int writes() const { return writes_; }
  int webhook_patches() const { return patches_; }
  const std::vector<std::string>& refusals() const { return refusals_; }

 private:
  static std::string key_of(const Json& object) {
    return object.value("kind", std::string()) + "/" +
           object["metadata"].value("name", std::string());
  }
  std::string timestamp() {
    const std::string n = std::to_string(++clock_);
    return "2024-01-01T00:00:" + std::string(8 - n.size(), '0') + n + "Z";
  }
  Written refused(std::string message) {
    refusals_.push_back(message);
    Written w;
    w.error = std::move(message);
    return w;
  }
  Written commit(const std::string& key, Written w) {
    store_[key] = w.object;
    ++writes_;
    return w;
  }

  // The rules of one webhook configuration (`gpuadmit render`), the namespace and object
  // selectors included: does this request reach it?
  bool routed(const Json& webhook, const Json& object, const std::string& operation,
              const std::string& subresource) const {
    const std::string api_version = object.value("apiVersion", std::string());
    const std::string group(api_group_of(api_version));
    const WorkloadKind* kind = find_workload_kind(api_version, object.value("kind", std::string()));
    if (kind == nullptr) return false;
    std::string resource(kind->resource);
    if (!subresource.empty()) resource += "/" + subresource;
    // An absent selector selects everything (admissionregistration/v1 defaults it to {}): read
    // with value(), as const operator[] on a missing key is undefined (an assertion under ASan).
    if (!selector_matches(webhook.value("namespaceSelector", Json::object()),
                          Json{{"kubernetes.io/metadata.name", std::string(kNamespace)}})) {
      return false;
    }
    const Json metadata = object.value("metadata", Json::object());
    if (!selector_matches(webhook.value("objectSelector", Json::object()),
                          metadata.value("labels", Json::object()))) {
      return false;
    }
    for (const Json& rule : webhook["rules"]) {
      bool op = false, res = false;
      for (const Json& o : rule["operations"]) op = op || o == operation;
      for (const Json& r : rule["resources"]) res = res || r == resource;
      if (op && res && rule["apiGroups"][0] == group) return true;
    }
    return false;
  }

  Json review(const std::string& operation, const std::string& subresource, const Json& object,
              const Json* old) {
    const std::string api_version = object["apiVersion"];
    const WorkloadKind* kind = find_workload_kind(api_version, object.value("kind", std::string()));
    const std::string version = api_version.substr(api_version.find('/') + 1);
    Json request = {
        {"uid", "review-" + std::to_string(++serial_)},
        {"kind",
         {{"group", api_group_of(api_version)}, {"version", version}, {"kind", object["kind"]}}},
        {"resource",
         {{"group", api_group_of(api_version)},
          {"version", version},
          {"resource", kind->resource}}},
        {"name", object["metadata"]["name"]},
        {"namespace", std::string(kNamespace)},
        {"operation", operation},
        {"userInfo", {{"username", "system:serviceaccount:kube-system:replicaset-controller"}}},
        {"object", object},
        {"oldObject", old != nullptr ? *old : Json()},
        {"dryRun", false},
        {"options",
         {{"apiVersion", "meta.k8s.io/v1"},
          {"kind", operation == "CREATE" ? "CreateOptions" : "UpdateOptions"}}}};
    if (!subresource.empty()) request["subResource"] = subresource;
    return {
        {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
  }

  // One webhook call through gpuadmit's AdmissionReview codec (the webhook's text path).
  std::optional<Json> call(Endpoint endpoint, const Json& review_json, std::string& denial) {
    const AdmissionResult result = handle_admission_review_text(
        review_json.dump(), endpoint, pipeline_, *policy_, nullptr, templates_);
    REQUIRE(result.outcome);
    const Json& response = result.outcome->response["response"];
    if (!response["allowed"].get<bool>()) {
      denial = response["status"]["message"].get<std::string>();
      return std::nullopt;
    }
    if (!response.contains("patch")) return Json::array();
    CHECK(response["patchType"] == "JSONPatch");
    return Json::parse(base64_decode(response["patch"].get<std::string>()));
  }

  // Mutating admission, then validating admission (k8s.io/apiserver admission chain).
  Written admit(const std::string& operation, const std::string& subresource, Json object,
                const Json* old) {
    Written w;
    w.mutating_patch = Json::array();
    if (webhook_) {
      render::WebhookTarget target;
      target.templates = templates_;
      const Json mutating = render::mutating_webhook_configuration(*policy_, target)["webhooks"][0];
      if (routed(mutating, object, operation, subresource)) {
        w.sent = true;
        std::string denial;
        const auto patch =
            call(Endpoint::kMutate, review(operation, subresource, object, old), denial);
        if (!patch) return refused("admission webhook \"mutate.gpuadmit.io\" denied: " + denial);
        if (!patch->empty()) {
          object = object.patch(*patch);  // RFC 6902, as the API server applies JSONPatch
          ++patches_;
        }
        w.mutating_patch = *patch;
      }
      if (child_mutation && operation == "CREATE" && object["kind"] == "ReplicaSet") {
        child_mutation(object);
      }
      const Json validating =
          render::validating_webhook_configuration(*policy_, target)["webhooks"][0];
      if (routed(validating, object, operation, subresource)) {
        std::string denial;
        if (!call(Endpoint::kValidate, review(operation, subresource, object, old), denial)) {
          return refused("admission webhook \"validate.gpuadmit.io\" denied: " + denial);
        }
      }
    }
    w.object = std::move(object);
    return w;
  }

  // The parts of the API's update validation a webhook's patch could break.
  // pkg/apis/batch/validation validatePodTemplateUpdate: a Job's template is immutable, but for
  // the scheduling directives of a suspended Job that never started; pkg/apis/apps/validation
  // ValidateStatefulSetUpdate: only replicas, ordinals, template, updateStrategy,
  // persistentVolumeClaimRetentionPolicy and minReadySeconds may change.
  static std::optional<std::string> validate_update(const Json& object, const Json& old) {
    const std::string kind = object["kind"];
    if (kind == "Job" && api_group_of(object.value("apiVersion", std::string())) == "batch") {
      Json t = object["spec"]["template"], o = old["spec"]["template"];
      // pkg/registry/batch/job strategy.go validationOptionsForJob: suspended and not started.
      const bool started = old.contains("status") && old["status"].contains("startTime");
      if (old["spec"].value("suspend", false) && !started) {
        for (const char* k : {"nodeSelector", "tolerations", "schedulingGates"}) {
          t["spec"].erase(k);
          o["spec"].erase(k);
        }
        for (Json* x : {&t, &o}) {
          if (x->contains("metadata")) {
            (*x)["metadata"].erase("labels");
            (*x)["metadata"].erase("annotations");
          }
          if ((*x)["spec"].contains("affinity")) (*x)["spec"]["affinity"].erase("nodeAffinity");
        }
      }
      if (!semantic_equal(t, o))
        return "Job.batch \"" + object["metadata"]["name"].get<std::string>() +
               "\" is invalid: spec.template: field is immutable";
    }
    if (kind == "StatefulSet") {
      Json s = object["spec"], o = old["spec"];
      for (const char* k : {"replicas", "ordinals", "template", "updateStrategy",
                            "persistentVolumeClaimRetentionPolicy", "minReadySeconds"}) {
        s.erase(k);
        o.erase(k);
      }
      if (!semantic_equal(s, o))
        return "StatefulSet: updates to statefulset spec for fields other than ... are forbidden";
    }
    return std::nullopt;
  }

  PolicyPtr policy_;
  Pipeline pipeline_;
  bool webhook_ = true;
  TemplateMode templates_ = TemplateMode::kMutate;
  std::map<std::string, Json> store_;
  std::vector<std::string> refusals_;
  int serial_ = 0, clock_ = 0, writes_ = 0, patches_ = 0;
};

// --- the controllers -------------------------------------------------------------------------

// The controllerRef (metav1.GetControllerOf) uid of an object, "" when none.
inline std::string controller_uid(const Json& object) {
  for (const Json& owner : object["metadata"].value("ownerReferences", Json::array())) {
    if (owner.value("controller", false)) return owner.value("uid", std::string());
  }
  return "";
}

// metav1.NewControllerRef.
inline Json controller_ref(const Json& owner) {
  return Json::array({{{"apiVersion", owner["apiVersion"]},
                       {"kind", owner["kind"]},
                       {"name", owner["metadata"]["name"]},
                       {"uid", owner["metadata"]["uid"]},
                       {"controller", true},
                       {"blockOwnerDeletion", true}}});
}

// --- the Deployment and ReplicaSet controllers (pkg/controller/deployment, replicaset) ---------

inline constexpr std::string_view kRevisionAnnotation = "deployment.kubernetes.io/revision";
inline constexpr std::string_view kDesiredReplicasAnnotation =
    "deployment.kubernetes.io/desired-replicas";
inline constexpr std::string_view kMaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";

inline int64_t spec_replicas(const Json& o) { return o["spec"].value("replicas", int64_t{1}); }
inline int64_t available_replicas(const Json& o) {
  return o.contains("status") ? o["status"].value("availableReplicas", int64_t{0}) : 0;
}
inline std::string annotation(const Json& o, std::string_view key) {
  const Json annotations = o["metadata"].value("annotations", Json::object());
  return annotations.value(std::string(key), std::string());
}

// deploymentutil.MaxSurge / MaxUnavailable with the default RollingUpdate strategy (25% each):
// ResolveFenceposts rounds the surge up and the unavailable count down, and makes the latter 1
// when both would be 0.
inline int64_t max_surge(const Json& d) { return (spec_replicas(d) * 25 + 99) / 100; }
inline int64_t max_unavailable(const Json& d) {
  const int64_t unavailable = spec_replicas(d) * 25 / 100;
  return unavailable == 0 && max_surge(d) == 0 ? 1 : unavailable;
}

// deploymentutil.SetReplicasAnnotations: true when it changed them.
inline bool set_replicas_annotations(Json& rs, int64_t desired, int64_t max) {
  Json& annotations = rs["metadata"]["annotations"];
  if (!annotations.is_object()) annotations = Json::object();
  const std::string d = std::to_string(desired), m = std::to_string(max);
  if (annotations.value(std::string(kDesiredReplicasAnnotation), std::string()) == d &&
      annotations.value(std::string(kMaxReplicasAnnotation), std::string()) == m) {
    return false;
  }
  annotations[std::string(kDesiredReplicasAnnotation)] = d;
  annotations[std::string(kMaxReplicasAnnotation)] = m;
  return true;
}

class DeploymentController {
 public:
  explicit DeploymentController(ApiServer& api) : api_(api) {}

  // DeploymentController.syncDeployment (deployment_controller.go): a scaling event is synced by
  // dc.sync, anything else by rolloutRolling (the default strategy).
  void sync(const std::string& name) {
    const Json d = api_.get("Deployment", name);
    if (is_scaling_event(d)) {
      scale_sync(d);
    } else {
      rollout_rolling(d);
    }
  }

 private:
  // The ReplicaSets the Deployment controls (getReplicaSetsForDeployment; no adoption here).
  std::vector<Json> replica_sets(const Json& d) const {
    std::vector<Json> out;
    const std::string uid = d["metadata"]["uid"];
    for (Json& rs : api_.list("ReplicaSet")) {
      if (controller_uid(rs) == uid) out.push_back(std::move(rs));
    }
    return out;
  }

  // deploymentutil.FindNewReplicaSet: the oldest ReplicaSet whose template EqualIgnoreHash the
  // Deployment's.
  static std::optional<Json> find_new(const Json& d, const std::vector<Json>& rs_list) {
    for (const Json& rs : rs_list) {
      if (equal_ignore_hash(rs["spec"]["template"], d["spec"]["template"])) return rs;
    }
    return std::nullopt;
  }

  static bool is_new(const Json& rs, const std::optional<Json>& new_rs) {
    return new_rs && rs["metadata"]["name"] == (*new_rs)["metadata"]["name"];
  }

  // deploymentutil.SetNewReplicaSetAnnotations: the Deployment's annotations (but for the
  // apply and revision ones), the revision, and on creation the replica annotations.
  static bool set_new_rs_annotations(const Json& d, Json& rs, int64_t new_revision, bool exists) {
    bool changed = false;
    Json& annotations = rs["metadata"]["annotations"];
    if (!annotations.is_object()) annotations = Json::object();
    const Json from = d["metadata"].value("annotations", Json::object());
    for (auto [k, v] : from.items()) {
      if (k == "kubectl.kubernetes.io/last-applied-configuration" || k == kRevisionAnnotation ||
          k == kDesiredReplicasAnnotation || k == kMaxReplicasAnnotation ||
          k == "deployment.kubernetes.io/revision-history") {
        continue;
      }
      if (annotations.value(k, Json()) != v) {
        annotations[k] = v;
        changed = true;
      }
    }
    const std::string old_revision = annotations.value(std::string(kRevisionAnnotation), "0");
    if (std::stoll(old_revision) < new_revision) {
      annotations[std::string(kRevisionAnnotation)] = std::to_string(new_revision);
      changed = true;
    }
    if (!exists &&
        set_replicas_annotations(rs, spec_replicas(d), spec_replicas(d) + max_surge(d))) {
      changed = true;
    }
    return changed;
  }

  struct Sets {
    bool ok = true;  // false: the sync stops here (a hash collision was recorded)
    std::optional<Json> new_rs;
    std::vector<Json> old;
  };

  // getAllReplicaSetsAndSyncRevision → getNewReplicaSet (sync.go).
  Sets all_replica_sets(const Json& d, bool create) {
    Sets sets;
    std::vector<Json> rs_list = replica_sets(d);
    const std::optional<Json> existing = find_new(d, rs_list);
    int64_t max_old_revision = 0;
    for (const Json& rs : rs_list) {
      if (is_new(rs, existing)) continue;
      sets.old.push_back(rs);
      const std::string revision = annotation(rs, kRevisionAnnotation);
      max_old_revision =
          std::max<int64_t>(max_old_revision, revision.empty() ? 0 : std::stoll(revision));
    }
    const int64_t new_revision = max_old_revision + 1;
    if (existing) {
      Json copy = *existing;
      if (set_new_rs_annotations(d, copy, new_revision, true)) {
        Written w = api_.update(copy);
        if (!w.ok()) {
          sets.ok = false;
          return sets;
        }
        copy = w.object;
      }
      sets.new_rs = copy;
      return sets;
    }
    if (!create) return sets;
    // A new ReplicaSet: the Deployment's template, its hash as the pod-template-hash label.
    Json rs_template = d["spec"]["template"];
    std::optional<int32_t> collisions;
    if (d.contains("status") && d["status"].contains("collisionCount")) {
      collisions = d["status"]["collisionCount"].get<int32_t>();
    }
    const std::string hash = compute_hash(rs_template, collisions);
    rs_template["metadata"]["labels"][std::string(kPodTemplateHashLabel)] = hash;
    Json selector = d["spec"]["selector"];
    selector["matchLabels"][std::string(kPodTemplateHashLabel)] = hash;
    Json rs = {{"apiVersion", "apps/v1"},
               {"kind", "ReplicaSet"},
               {"metadata",
                {{"name", d["metadata"]["name"].get<std::string>() + "-" + hash},
                 {"labels", rs_template["metadata"]["labels"]},
                 {"ownerReferences", controller_ref(d)}}},
               {"spec",
                {{"replicas", new_rs_new_replicas(d, sets.old, nullptr)},
                 {"selector", selector},
                 {"template", rs_template}}}};
    set_new_rs_annotations(d, rs, new_revision, false);
    Written w = api_.create(rs);
    if (!w.ok()) {
      if (w.error->rfind("AlreadyExists", 0) == 0) {
        const Json found = api_.get("ReplicaSet", rs["metadata"]["name"].get<std::string>());
        if (controller_uid(found) == d["metadata"]["uid"] &&
            equal_ignore_hash(d["spec"]["template"], found["spec"]["template"])) {
          sets.new_rs = found;
          return sets;
        }
        // A hash collision: bump collisionCount and requeue.
        Json status = d.value("status", Json::object());
        status["collisionCount"] = collisions.value_or(0) + 1;
        api_.write_status("Deployment", d["metadata"]["name"].get<std::string>(), status);
      }
      sets.ok = false;
      return sets;
    }
    sets.new_rs = w.object;
    return sets;
  }

  // deploymentutil.NewRSNewReplicas for RollingUpdate.
  static int64_t new_rs_new_replicas(const Json& d, const std::vector<Json>& old,
                                     const Json* new_rs) {
    int64_t current = new_rs != nullptr ? spec_replicas(*new_rs) : 0;
    for (const Json& rs : old) current += spec_replicas(rs);
    const int64_t max_total = spec_replicas(d) + max_surge(d);
    const int64_t mine = new_rs != nullptr ? spec_replicas(*new_rs) : 0;
    if (current >= max_total) return mine;
    return mine + std::min(max_total - current, spec_replicas(d) - mine);
  }

  // scaleReplicaSet (sync.go): the new size and the replica annotations, in one UPDATE.
  bool scale_rs(const Json& rs, int64_t to, const Json& d) {
    Json copy = rs;
    const bool size = spec_replicas(rs) != to;
    const bool annotations =
        set_replicas_annotations(copy, spec_replicas(d), spec_replicas(d) + max_surge(d));
    if (!size && !annotations) return false;
    copy["spec"]["replicas"] = to;
    return api_.update(copy).ok() && size;
  }

  // isScalingEvent (sync.go): an active ReplicaSet whose desired-replicas annotation is not the
  // Deployment's replicas.
  bool is_scaling_event(const Json& d) {
    Sets sets = all_replica_sets(d, false);
    if (!sets.ok) return false;
    std::vector<Json> all = sets.old;
    if (sets.new_rs) all.push_back(*sets.new_rs);
    for (const Json& rs : all) {
      if (spec_replicas(rs) == 0) continue;
      const std::string desired = annotation(rs, kDesiredReplicasAnnotation);
      if (!desired.empty() && std::stoll(desired) != spec_replicas(d)) return true;
    }
    return false;
  }

  // dc.sync → dc.scale (sync.go), for a scaling event.
  void scale_sync(const Json& d) {
    Sets sets = all_replica_sets(d, false);
    if (!sets.ok) return;
    // deploymentutil.FindActiveOrLatest
    std::vector<Json> active;
    for (const Json& rs : sets.old) {
      if (spec_replicas(rs) > 0) active.push_back(rs);
    }
    if (sets.new_rs && spec_replicas(*sets.new_rs) > 0) active.push_back(*sets.new_rs);
    std::optional<Json> target;
    if (active.size() == 1) target = active[0];
    if (active.empty()) {
      if (sets.new_rs) {
        target = sets.new_rs;
      } else if (!sets.old.empty()) {
        target = sets.old.back();  // the newest
      } else {
        return;
      }
    }
    if (target) {
      if (spec_replicas(*target) != spec_replicas(d)) scale_rs(*target, spec_replicas(d), d);
      return;
    }
    FAIL("proportional scaling of several active ReplicaSets is not mirrored");
  }

  // rolloutRolling (rolling.go): scale the new ReplicaSet up, else the old ones down.
  void rollout_rolling(const Json& d) {
    Sets sets = all_replica_sets(d, true);
    if (!sets.ok || !sets.new_rs) return;
    const Json& new_rs = *sets.new_rs;
    // reconcileNewReplicaSet
    if (spec_replicas(new_rs) > spec_replicas(d)) {
      scale_rs(new_rs, spec_replicas(d), d);
      return;
    }
    if (spec_replicas(new_rs) < spec_replicas(d)) {
      if (scale_rs(new_rs, new_rs_new_replicas(d, sets.old, &new_rs), d)) return;
    }
    // reconcileOldReplicaSets (every pod counts as available once created: no kubelet here, the
    // ReplicaSet mirror reports its pods available)
    int64_t old_pods = 0, all_pods = spec_replicas(new_rs), available = available_replicas(new_rs);
    for (const Json& rs : sets.old) {
      old_pods += spec_replicas(rs);
      available += available_replicas(rs);
    }
    all_pods += old_pods;
    if (old_pods == 0) return;
    const int64_t min_available = spec_replicas(d) - max_unavailable(d);
    const int64_t new_unavailable = spec_replicas(new_rs) - available_replicas(new_rs);
    if (all_pods - min_available - new_unavailable <= 0) return;
    // scaleDownOldReplicaSetsForRollingUpdate
    int64_t to_scale_down = available - min_available;
    for (const Json& rs : sets.old) {
      if (to_scale_down <= 0) break;
      if (spec_replicas(rs) == 0) continue;
      const int64_t n = std::min(spec_replicas(rs), to_scale_down);
      scale_rs(rs, spec_replicas(rs) - n, d);
      to_scale_down -= n;
    }
  }

  ApiServer& api_;
};

// ReplicaSetController.syncReplicaSet → manageReplicas (replica_set.go): pods from the template
// (controller.GetPodFromTemplate: its labels, annotations and spec), every one reported
// available (no kubelet in this mirror).
class ReplicaSetController {
 public:
  explicit ReplicaSetController(ApiServer& api) : api_(api) {}

  void sync(const std::string& name) {
    const Json rs = api_.get("ReplicaSet", name);
    std::vector<Json> pods;
    for (Json& pod : api_.list("Pod")) {
      if (controller_uid(pod) == rs["metadata"]["uid"]) pods.push_back(std::move(pod));
    }
    int64_t diff = static_cast<int64_t>(pods.size()) - spec_replicas(rs);
    for (; diff < 0; ++diff) {
      const Json& t = rs["spec"]["template"];
      const Json meta = t.value("metadata", Json::object());
      Json pod = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata",
                   {{"generateName", rs["metadata"]["name"].get<std::string>() + "-"},
                    {"labels", meta.value("labels", Json::object())},
                    {"ownerReferences", controller_ref(rs)}}},
                  {"spec", t["spec"]}};
      if (meta.contains("annotations")) pod["metadata"]["annotations"] = meta["annotations"];
      Written w = api_.create(pod);
      if (!w.ok()) break;  // FailedCreate: retried on the next sync
      pods.push_back(w.object);
    }
    for (; diff > 0; --diff) {
      api_.remove("Pod", pods.back()["metadata"]["name"].get<std::string>());
      pods.pop_back();
    }
    const auto n = static_cast<int64_t>(pods.size());
    api_.write_status("ReplicaSet", name,
                      {{"replicas", n}, {"readyReplicas", n}, {"availableReplicas", n}});
  }

 private:
  ApiServer& api_;
};

// The two controllers until a round writes nothing; the rounds it took, or `max_rounds` + 1
// when it never settled (the loop of issue 20).
inline int run_controllers(ApiServer& api, int max_rounds = 40) {
  DeploymentController deployments(api);
  ReplicaSetController replica_sets(api);
  for (int round = 1; round <= max_rounds; ++round) {
    const int before = api.writes();
    for (const Json& d : api.list("Deployment")) {
      deployments.sync(d["metadata"]["name"].get<std::string>());
    }
    for (const Json& rs : api.list("ReplicaSet")) {
      replica_sets.sync(rs["metadata"]["name"].get<std::string>());
    }
    if (api.writes() == before) return round;
  }
  return max_rounds + 1;
}

}  // namespace gpuadmit::testing
