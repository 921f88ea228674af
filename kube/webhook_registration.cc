#include "kube/webhook_registration.h"

#include <optional>
#include <variant>

#include "kube/api_client.h"

namespace gpuadmit::kube {
namespace {

constexpr const char* kGroupPath = "/apis/admissionregistration.k8s.io/v1/";
constexpr const char* kClusterRoles = "/apis/rbac.authorization.k8s.io/v1/clusterroles/";

std::string collection_of(std::string_view kind) {
  return kind == "MutatingWebhookConfiguration" ? "mutatingwebhookconfigurations"
                                                : "validatingwebhookconfigurations";
}

}  // namespace

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
    if (owner_ref) desired["metadata"]["ownerReferences"] = Json::array({*owner_ref});
    const std::string collection = kGroupPath + collection_of(kind);
    const ApiResponse got = api.get(collection + "/" + name, token);
    if (got.status == 404) {
      const ApiResponse made = api.send("POST", collection, token, desired.dump());
      if (made.status == 201 || made.status == 200) return Step::kCreated;
      return fail("POST " + collection + ": " +
                  (made.status == 0 ? made.error : describe_answer(made)));
    }
    if (got.status != 200) {
      return fail("GET " + collection + "/" + name + ": " +
                  (got.status == 0 ? got.error : describe_answer(got)));
    }
    Json actual = Json::parse(got.body, nullptr, false);
    if (!actual.is_object()) return fail("GET " + collection + "/" + name + ": not an object");
    const Json& want_meta = desired["metadata"];
    Json& have_meta = actual["metadata"];
    const Json want_labels = want_meta.value("labels", Json::object());
    const bool same = sets_equal(desired["webhooks"], actual["webhooks"]) &&
                      sets_equal(want_labels, have_meta.value("labels", Json::object())) &&
                      (!owner_ref || sets_equal(want_meta["ownerReferences"],
                                                have_meta.value("ownerReferences", Json())));
    if (same) return Step::kUnchanged;
    // The object as read (its resourceVersion: a concurrent write fails with 409), with what
    // gpuadmit sets replaced.
    actual["webhooks"] = desired["webhooks"];
    for (auto it = want_labels.begin(); it != want_labels.end(); ++it) {
      have_meta["labels"][it.key()] = it.value();
    }
    if (owner_ref) have_meta["ownerReferences"] = want_meta["ownerReferences"];
    const ApiResponse put = api.send("PUT", collection + "/" + name, token, actual.dump());
    if (put.status == 200) return Step::kUpdated;
    return fail("PUT " + collection + "/" + name + ": " +
                (put.status == 0 ? put.error : describe_answer(put)));
  }
};

WebhookRegistration::WebhookRegistration(WebhookRegistrationConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {}

WebhookRegistration::~WebhookRegistration() = default;

RegistrationResult WebhookRegistration::apply(const std::vector<Json>& desired) const {
  RegistrationResult result;
  const std::optional<std::string> token = read_token(impl_->config.access.token_path);
  if (!token) {
    result.errors.push_back("cannot read the service account token " +
                            impl_->config.access.token_path);
    return result;
  }
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
