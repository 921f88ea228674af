#include "kube/webhook_registration.h"

#include <array>
#include <optional>
#include <set>
#include <utility>
#include <variant>

#include "kube/api_client.h"
#include "kube/list.h"

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

// What gpuadmit sets beside metadata: `webhooks` (the configurations) or `spec` (the policies).
bool is_content(const std::string& member) {
  return member != "apiVersion" && member != "kind" && member != "metadata" && member != "status";
}

std::string answer_of(const ApiResponse& r) { return r.status == 0 ? r.error : describe_answer(r); }

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

bool sets_equal(const Json& desired, const Json& actual) {
  if (desired.is_object()) {
    if (!actual.is_object()) return false;
    for (auto it = desired.begin(); it != desired.end(); ++it) {
      const Json* other = find_member(actual, it.key());
      if (other == nullptr || !sets_equal(it.value(), *other)) return false;
    }
    return true;
  }
  if (desired.is_array()) {
    if (!actual.is_array() || actual.size() != desired.size()) return false;
    for (std::size_t i = 0; i < desired.size(); ++i) {
      if (!sets_equal(desired[i], actual[i])) return false;
    }
    return true;
  }
  return desired == actual;
}

struct WebhookRegistration::Impl {
  explicit Impl(WebhookRegistrationConfig c)
      : config(std::move(c)), api(config.access.endpoint(config.timeout)) {}

  WebhookRegistrationConfig config;
  ApiClient api;

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

  enum class Step { kCreated, kUpdated, kUnchanged, kFailed };

  // One object; `error` says why when it failed.
  Step apply_one(Json desired, const std::optional<Json>& owner_ref, const std::string& token,
                 std::string& error) const {
    auto fail = [&error](std::string why) {
      error = std::move(why);
      return Step::kFailed;
    };
    const std::string kind(string_member(desired, "kind"));
    const Json* metadata = find_member(desired, "metadata");
    const std::string name(metadata ? string_member(*metadata, "name") : "");
    if (name.empty()) return fail("a " + kind + " without a name");
    const std::optional<std::string> collection =
        admission_collection(string_member(desired, "apiVersion"), kind);
    if (!collection) {
      return fail("not an admissionregistration.k8s.io object gpuadmit registers: " +
                  std::string(string_member(desired, "apiVersion")));
    }
    if (owner_ref) desired["metadata"]["ownerReferences"] = Json::array({*owner_ref});
    const ApiResponse got = api.get(*collection + "/" + name, token);
    if (got.status == 404) {
      const ApiResponse made = api.send("POST", *collection, token, desired.dump());
      if (made.status == 201 || made.status == 200) return Step::kCreated;
      return fail("POST " + *collection + ": " + answer_of(made));
    }
    if (got.status != 200) return fail("GET " + *collection + "/" + name + ": " + answer_of(got));
    Json actual = Json::parse(got.body, nullptr, false);
    if (!actual.is_object()) return fail("GET " + *collection + "/" + name + ": not an object");
    if (same(desired, actual, owner_ref.has_value())) return Step::kUnchanged;
    // The object as read (its resourceVersion: a concurrent write fails with 409), with what
    // gpuadmit sets replaced.
    for (auto it = desired.begin(); it != desired.end(); ++it) {
      if (is_content(it.key())) actual[it.key()] = it.value();
    }
    Json& have_meta = actual["metadata"];
    const Json want_labels = desired["metadata"].value("labels", Json::object());
    for (auto it = want_labels.begin(); it != want_labels.end(); ++it) {
      have_meta["labels"][it.key()] = it.value();
    }
    if (owner_ref) have_meta["ownerReferences"] = desired["metadata"]["ownerReferences"];
    const ApiResponse put = api.send("PUT", *collection + "/" + name, token, actual.dump());
    if (put.status == 200) return Step::kUpdated;
    return fail("PUT " + *collection + "/" + name + ": " + answer_of(put));
  }

  // True when the cluster's object has what `desired` sets: its content, labels and owner.
  static bool same(const Json& desired, const Json& actual, bool owned) {
    for (auto it = desired.begin(); it != desired.end(); ++it) {
      if (!is_content(it.key())) continue;
      const Json* have = find_member(actual, it.key());
      if (have == nullptr || !sets_equal(it.value(), *have)) return false;
    }
    const Json& want_meta = desired["metadata"];
    const Json have_meta = actual.value("metadata", Json::object());
    return sets_equal(want_meta.value("labels", Json::object()),
                      have_meta.value("labels", Json::object())) &&
           (!owned ||
            sets_equal(want_meta["ownerReferences"], have_meta.value("ownerReferences", Json())));
  }

  // The names of `kind`'s objects that match the selector, with their uids; false and `error`
  // when the list failed (a kind not served lists nothing).
  bool list(const AdmissionKind& kind, const std::string& collection, const std::string& selector,
            const std::string& token, std::vector<std::pair<std::string, std::string>>& out,
            std::string& error) const {
    ListOptions options;
    options.label_selector = selector;
    const ListResult r = list_all(api, token, collection, options, [&](const std::string& page) {
      const Json list = Json::parse(page, nullptr, false);
      const Json* items = find_member(list, "items");
      if (items == nullptr || !items->is_array()) return true;
      for (const Json& item : *items) {
        const Json* metadata = find_member(item, "metadata");
        if (metadata == nullptr) continue;
        out.emplace_back(string_member(*metadata, "name"), string_member(*metadata, "uid"));
      }
      return true;
    });
    if (r.ok() || r.status == 404) return true;
    error = kind.kind + ": " + r.error;
    return false;
  }
};

WebhookRegistration::WebhookRegistration(WebhookRegistrationConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {}

WebhookRegistration::~WebhookRegistration() = default;

RegistrationResult WebhookRegistration::prune(const std::vector<AdmissionKind>& kinds,
                                              const std::string& label_selector,
                                              const std::vector<Json>& desired) const {
  RegistrationResult result;
  const std::optional<std::string> token = impl_->token(result);
  if (!token) return result;
  std::set<std::pair<std::string, std::string>> kept;  // kind, name
  for (const Json& object : desired) {
    const Json* metadata = find_member(object, "metadata");
    kept.emplace(string_member(object, "kind"), metadata ? string_member(*metadata, "name") : "");
  }
  for (const AdmissionKind& kind : kinds) {
    const std::optional<std::string> collection = admission_collection(kind.api_version, kind.kind);
    std::vector<std::pair<std::string, std::string>> found;
    std::string error;
    if (!collection) {
      result.errors.push_back(kind.kind + ": not a kind gpuadmit registers in " + kind.api_version);
      continue;
    }
    if (!impl_->list(kind, *collection, label_selector, *token, found, error)) {
      result.errors.push_back(error);
      continue;
    }
    for (const auto& [name, uid] : found) {
      if (kept.count({kind.kind, name})) continue;
      // DeleteOptions.preconditions.uid: the object listed, not one recreated since.
      const Json options = {
          {"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", {{"uid", uid}}}};
      const std::string path = *collection + "/" + name;
      const ApiResponse r = impl_->api.send("DELETE", path, *token, options.dump());
      if (r.status == 200 || r.status == 202 || r.status == 404) {
        if (r.status != 404) result.deleted.push_back(kind.kind + " " + name);
      } else {
        result.errors.push_back(kind.kind + " " + name + ": DELETE " + path + ": " + answer_of(r));
      }
    }
  }
  return result;
}

RegistrationResult WebhookRegistration::apply(const std::vector<Json>& desired) const {
  RegistrationResult result;
  const std::optional<std::string> token = impl_->token(result);
  if (!token) return result;
  std::optional<Json> owner_ref;
  if (!impl_->config.owner_cluster_role.empty()) {
    auto owner = impl_->owner(*token);
    if (auto* error = std::get_if<std::string>(&owner)) {
      // Without the owner the configurations would outlive an uninstall: not written.
      result.errors.push_back(*error);
      return result;
    }
    owner_ref = std::get<Json>(std::move(owner));
  }
  for (const Json& object : desired) {
    const std::string what = std::string(string_member(object, "kind")) + " " +
                             std::string(string_member(object["metadata"], "name"));
    std::string error;
    switch (impl_->apply_one(object, owner_ref, *token, error)) {
      case Impl::Step::kCreated:
        result.created.push_back(what);
        break;
      case Impl::Step::kUpdated:
        result.updated.push_back(what);
        break;
      case Impl::Step::kUnchanged:
        result.unchanged.push_back(what);
        break;
      case Impl::Step::kFailed:
        result.errors.push_back(what + ": " + error);
        break;
    }
  }
  return result;
}

}  // namespace gpuadmit::kube
