#include "kube/webhook_registration.h"

#include <array>
#include <charconv>
#include <optional>
#include <set>
#include <utility>
#include <variant>

#include "kube/admission_defaults.h"
#include "kube/api_client.h"
#include "kube/list.h"
#include "kube/service_endpoints.h"

namespace gpuadmit::kube {
namespace {

constexpr std::string_view kAdmissionGroupPrefix = "admissionregistration.k8s.io/";
constexpr const char* kClusterRoles = "/apis/rbac.authorization.k8s.io/v1/clusterroles/";

// The kinds gpuadmit registers, their resources (k8s.io/api/admissionregistration/v1 and v1beta1,
// register.go and the types' +genclient comments) and the versions the API server serves them
// in: the webhook configurations in v1 only (v1beta1 removed in 1.22), the admission policies in
// v1 (ValidatingAdmissionPolicy GA in 1.30, MutatingAdmissionPolicy in 1.36) and v1beta1.
struct KindResource {
  std::string_view kind, resource;
  bool beta;  // also served as v1beta1
};
constexpr std::array<KindResource, 6> kKinds{{
    {"MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false},
    {"ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false},
    {"ValidatingAdmissionPolicy", "validatingadmissionpolicies", true},
    {"ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", true},
    {"MutatingAdmissionPolicy", "mutatingadmissionpolicies", true},
    {"MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings", true},
}};

std::string answer_of(const ApiResponse& r) { return r.status == 0 ? r.error : describe_answer(r); }

bool is_webhook_configuration(std::string_view kind) {
  return kind == "MutatingWebhookConfiguration" || kind == "ValidatingWebhookConfiguration";
}

const Json& annotations_of(const Json& object) {
  static const Json kNone = Json::object();
  const Json* metadata = find_member(object, "metadata");
  const Json* annotations = metadata ? find_member(*metadata, "annotations") : nullptr;
  return annotations != nullptr && annotations->is_object() ? *annotations : kNone;
}

bool break_glass(const Json& object) {
  return string_member(annotations_of(object), kBreakGlassAnnotation) == "true";
}

// Every member of `want` is in `have` with the same value (gpuadmit's labels or annotations among
// everyone's).
bool includes(const Json& want, const Json& have) {
  if (!want.is_object()) return true;
  for (auto it = want.begin(); it != want.end(); ++it) {
    const Json* value = find_member(have, it.key());
    if (value == nullptr || *value != it.value()) return false;
  }
  return true;
}

Json metadata_member(const Json& object, const char* key) {
  const Json* metadata = find_member(object, "metadata");
  const Json* value = metadata ? find_member(*metadata, key) : nullptr;
  return value != nullptr ? *value : Json();
}

// An object as apply() writes it: the stamp's annotations and the owner reference set.
Json stamped(Json object, const PolicyStamp& stamp, const std::optional<Json>& owner_ref) {
  Json& metadata = object["metadata"];
  metadata["annotations"][kPolicyGenerationAnnotation] = std::to_string(stamp.generation);
  metadata["annotations"][kPolicyHashAnnotation] = stamp.hash;
  if (owner_ref) metadata["ownerReferences"] = Json::array({*owner_ref});
  return object;
}

// The cluster's object with what gpuadmit owns replaced: its content whole (members others added
// beside it removed), its labels and annotations key by key, the owner reference. The rest —
// resourceVersion (a concurrent write fails with 409), others' labels and annotations — is kept.
Json replaced(Json actual, const Json& desired, bool owned) {
  for (auto it = actual.begin(); it != actual.end();) {
    const std::string& key = it.key();
    const bool content =
        key != "apiVersion" && key != "kind" && key != "metadata" && key != "status";
    it = content ? actual.erase(it) : std::next(it);
  }
  for (auto it = desired.begin(); it != desired.end(); ++it) {
    if (it.key() != "apiVersion" && it.key() != "kind" && it.key() != "metadata") {
      actual[it.key()] = it.value();
    }
  }
  Json& metadata = actual["metadata"];
  for (const char* map : {"labels", "annotations"}) {
    const Json want = metadata_member(desired, map);
    if (!want.is_object()) continue;
    for (auto it = want.begin(); it != want.end(); ++it) metadata[map][it.key()] = it.value();
  }
  if (owned) metadata["ownerReferences"] = metadata_member(desired, "ownerReferences");
  return actual;
}

}  // namespace

std::optional<std::string> admission_collection(std::string_view api_version,
                                                std::string_view kind) {
  if (api_version.substr(0, kAdmissionGroupPrefix.size()) != kAdmissionGroupPrefix)
    return std::nullopt;
  const std::string_view version = api_version.substr(kAdmissionGroupPrefix.size());
  for (const KindResource& k : kKinds) {
    if (k.kind != kind) continue;
    if (version != "v1" && !(k.beta && version == "v1beta1")) return std::nullopt;
    return "/apis/" + std::string(api_version) + "/" + std::string(k.resource);
  }
  return std::nullopt;
}

struct WebhookRegistration::Impl {
  explicit Impl(WebhookRegistrationConfig c)
      : config(std::move(c)), api(config.access.endpoint(config.timeout)) {}

  WebhookRegistrationConfig config;
  ApiClient api;
  // What the API server stored for the last object gpuadmit wrote at each path, and what gpuadmit
  // asked for then (canonical_content of both): a cluster object that still reads as stored is
  // unchanged even if this Kubernetes defaults a field admission_defaults.h does not know —
  // otherwise such an object would be written again every round.
  std::map<std::string, std::pair<std::string, std::string>> written;

  // The service account token, read again for each pass (the kubelet rotates it); an error in
  // `result` when it cannot be read.
  std::optional<std::string> token(RegistrationResult& result) const {
    std::optional<std::string> token = read_token(config.access.token_path);
    if (!token)
      result.errors.push_back("cannot read the service account token " + config.access.token_path);
    return token;
  }

  // The owner reference, or an error.
  std::variant<Json, std::string> owner(const std::string& token) const {
    const ApiResponse r = api.get(kClusterRoles + config.owner_cluster_role, token);
    if (r.status != 200) {
      return "the owner ClusterRole " + config.owner_cluster_role + ": " +
             (r.status == 0 ? r.error : describe_answer(r));
    }
    const Json role = Json::parse(r.body, nullptr, false);
    const Json* metadata = find_member(role, "metadata");
    const std::string_view uid = metadata ? string_member(*metadata, "uid") : "";
    if (uid.empty()) return "the owner ClusterRole " + config.owner_cluster_role + " has no uid";
    return Json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "ClusterRole"},
                {"name", config.owner_cluster_role},
                {"uid", uid}};
  }

  enum class Step { kCreated, kUpdated, kUnchanged, kBreakGlass, kNewer, kWaiting, kFailed };

  // True when the cluster's object is what gpuadmit wants: the content (exactly, or as stored
  // after gpuadmit's own write of the same content), gpuadmit's labels and annotations, and the
  // owner reference.
  bool same(const std::string& path, const Json& desired, const Json& actual, bool owned) const {
    bool content = same_content(desired, actual);
    if (!content) {
      auto it = written.find(path);
      content = it != written.end() && it->second.first == canonical_content(desired) &&
                it->second.second == canonical_content(actual);
    }
    return content &&
           includes(metadata_member(desired, "labels"), metadata_member(actual, "labels")) &&
           includes(metadata_member(desired, "annotations"),
                    metadata_member(actual, "annotations")) &&
           (!owned || metadata_member(desired, "ownerReferences") ==
                          metadata_member(actual, "ownerReferences"));
  }

  // Remembers what the API server stored for `desired` (its answer to a POST or PUT).
  void remember(const std::string& path, const Json& desired, const std::string& answer) {
    const Json stored = Json::parse(answer, nullptr, false);
    if (stored.is_object()) written[path] = {canonical_content(desired), canonical_content(stored)};
  }

  // A missing object: created, a webhook configuration only once its Service is ready.
  Step create(const std::string& collection, const Json& desired, const std::string& token,
              std::string& error) {
    if (is_webhook_configuration(string_member(desired, "kind")) && !config.service_name.empty()) {
      const ServiceReadiness service =
          service_readiness(api, token, config.service_namespace, config.service_name);
      if (!service.ready) {
        error = service.reason;
        return Step::kWaiting;
      }
    }
    const ApiResponse made = api.send("POST", collection, token, desired.dump());
    if (made.status == 201 || made.status == 200) {
      remember(collection + "/" + object_name(desired), desired, made.body);
      return Step::kCreated;
    }
    error = "POST " + collection + ": " + answer_of(made);
    return Step::kFailed;
  }

  // One object; `error` says why when it failed or waits, and the generation found when newer.
  Step apply_one(const Json& desired, bool owned, const std::string& token, std::string& error) {
    const std::string kind(string_member(desired, "kind"));
    const std::string name = object_name(desired);
    if (name.empty()) {
      error = "a " + kind + " without a name";
      return Step::kFailed;
    }
    const std::optional<std::string> collection =
        admission_collection(string_member(desired, "apiVersion"), kind);
    if (!collection) {
      error = "not an admissionregistration.k8s.io object gpuadmit registers: " +
              std::string(string_member(desired, "apiVersion"));
      return Step::kFailed;
    }
    const std::string path = *collection + "/" + name;
    const ApiResponse got = api.get(path, token);
    if (got.status == 404) return create(*collection, desired, token, error);
    if (got.status != 200) {
      error = "GET " + path + ": " + answer_of(got);
      return Step::kFailed;
    }
    const Json actual = Json::parse(got.body, nullptr, false);
    if (!actual.is_object()) {
      error = "GET " + path + ": not an object";
      return Step::kFailed;
    }
    if (break_glass(actual)) return Step::kBreakGlass;
    if (const std::uint64_t theirs = stamped_generation(actual);
        theirs > stamped_generation(desired)) {
      error = "generation " + std::to_string(theirs);
      return Step::kNewer;
    }
    if (same(path, desired, actual, owned)) return Step::kUnchanged;
    const ApiResponse put = api.send("PUT", path, token, replaced(actual, desired, owned).dump());
    if (put.status == 200) {
      remember(path, desired, put.body);
      return Step::kUpdated;
    }
    error = "PUT " + path + ": " + answer_of(put);
    return Step::kFailed;
  }

  // An object the prune listed: its name, uid and annotations.
  struct Listed {
    std::string name, uid;
    Json object;  // metadata only
  };

  // The objects of `kind` that match the selector; false and `error` when the list failed (a
  // kind not served lists nothing).
  bool list(const AdmissionKind& kind, const std::string& collection, const std::string& selector,
            const std::string& token, std::vector<Listed>& out, std::string& error) const {
    ListOptions options;
    options.label_selector = selector;
    const ListResult r = list_all(api, token, collection, options, [&](const std::string& page) {
      const Json list = Json::parse(page, nullptr, false);
      const Json* items = find_member(list, "items");
      if (items == nullptr || !items->is_array()) return true;
      for (const Json& item : *items) {
        const Json* metadata = find_member(item, "metadata");
        if (metadata == nullptr) continue;
        out.push_back({std::string(string_member(*metadata, "name")),
                       std::string(string_member(*metadata, "uid")),
                       Json{{"metadata", *metadata}}});
      }
      return true;
    });
    if (r.ok() || r.status == 404) return true;
    error = kind.kind + ": " + r.error;
    return false;
  }

  // Deletes one listed object, the uid as precondition; "" or the error.
  std::string remove(const std::string& path, const std::string& uid,
                     const std::string& token) const {
    // DeleteOptions.preconditions.uid: the object listed, not one recreated since.
    const Json options = {
        {"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", {{"uid", uid}}}};
    const ApiResponse r = api.send("DELETE", path, token, options.dump());
    if (r.status == 200 || r.status == 202 || r.status == 404) return "";
    return "DELETE " + path + ": " + answer_of(r);
  }
};

std::uint64_t stamped_generation(const Json& object) {
  const std::string_view text = string_member(annotations_of(object), kPolicyGenerationAnnotation);
  std::uint64_t generation = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), generation);
  return ec == std::errc() && end == text.data() + text.size() ? generation : 0;
}

WebhookRegistration::WebhookRegistration(WebhookRegistrationConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {}

WebhookRegistration::~WebhookRegistration() = default;

RegistrationResult WebhookRegistration::prune(const std::vector<AdmissionKind>& kinds,
                                              const std::string& label_selector,
                                              const std::vector<Json>& desired,
                                              const PolicyStamp& stamp) const {
  RegistrationResult result;
  const std::optional<std::string> token = impl_->token(result);
  if (!token) return result;
  std::set<std::pair<std::string, std::string>> kept;  // kind, name
  for (const Json& object : desired)
    kept.emplace(string_member(object, "kind"), object_name(object));
  for (const AdmissionKind& kind : kinds) {
    const std::optional<std::string> collection = admission_collection(kind.api_version, kind.kind);
    std::vector<Impl::Listed> found;
    std::string error;
    if (!collection) {
      result.errors.push_back(kind.kind + ": not a kind gpuadmit registers in " + kind.api_version);
      continue;
    }
    if (!impl_->list(kind, *collection, label_selector, *token, found, error)) {
      result.errors.push_back(error);
      continue;
    }
    for (const Impl::Listed& item : found) {
      const std::string what = kind.kind + " " + item.name;
      if (kept.count({kind.kind, item.name})) continue;
      if (break_glass(item.object)) {
        result.break_glass.push_back(what);
      } else if (const std::uint64_t theirs = stamped_generation(item.object);
                 theirs > stamp.generation) {
        result.newer.push_back(what + " (generation " + std::to_string(theirs) + ")");
      } else if (std::string e = impl_->remove(*collection + "/" + item.name, item.uid, *token);
                 !e.empty()) {
        result.errors.push_back(what + ": " + e);
      } else {
        result.deleted.push_back(what);
      }
    }
  }
  return result;
}

RegistrationResult WebhookRegistration::apply(const std::vector<Json>& desired,
                                              const PolicyStamp& stamp) {
  RegistrationResult result;
  const std::optional<std::string> token = impl_->token(result);
  if (!token) return result;
  std::optional<Json> owner_ref;
  if (!impl_->config.owner_cluster_role.empty()) {
    auto owner = impl_->owner(*token);
    if (auto* error = std::get_if<std::string>(&owner)) {
      // Without the owner the objects would outlive an uninstall: not written.
      result.errors.push_back(*error);
      return result;
    }
    owner_ref = std::get<Json>(std::move(owner));
  }
  for (const Json& object : desired) {
    const std::string what = std::string(string_member(object, "kind")) + " " + object_name(object);
    std::string error;
    switch (
        impl_->apply_one(stamped(object, stamp, owner_ref), owner_ref.has_value(), *token, error)) {
      case Impl::Step::kCreated:
        result.created.push_back(what);
        break;
      case Impl::Step::kUpdated:
        result.updated.push_back(what);
        break;
      case Impl::Step::kUnchanged:
        result.unchanged.push_back(what);
        break;
      case Impl::Step::kBreakGlass:
        result.break_glass.push_back(what);
        break;
      case Impl::Step::kNewer:
        result.newer.push_back(what + " (" + error + ")");
        break;
      case Impl::Step::kWaiting:
        result.waiting.push_back(what + ": " + error);
        break;
      case Impl::Step::kFailed:
        result.errors.push_back(what + ": " + error);
        break;
    }
  }
  return result;
}

}  // namespace gpuadmit::kube
