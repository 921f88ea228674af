#include "cli/webhook_registrar.h"

#include <fstream>
#include <sstream>

#include "certs/file_watch.h"
#include "policies/loader.h"

namespace gpuadmit::cli {
namespace {

using Clock = std::chrono::steady_clock;

Json names_of(const std::vector<std::string>& items) {
  Json out = Json::array();
  for (const std::string& item : items) out.push_back(item);
  return out;
}

// The kinds a native registration writes, bindings first so that a policy is never deleted
// under a binding that still names it.
std::vector<kube::AdmissionKind> native_kinds(const render::native::NativeOptions& native) {
  const std::string v1 = "admissionregistration.k8s.io/v1";
  const std::string mutating = "admissionregistration.k8s.io/" + native.mutating_api;
  return {{v1, "ValidatingAdmissionPolicyBinding"},
          {mutating, "MutatingAdmissionPolicyBinding"},
          {v1, "ValidatingAdmissionPolicy"},
          {mutating, "MutatingAdmissionPolicy"}};
}

}  // namespace

WebhookRegistrar::WebhookRegistrar(RegistrarSettings settings, const webhook::Server& server,
                                   const webhook::Logger& logger)
    : settings_(std::move(settings)),
      server_(server),
      logger_(logger),
      registration_(settings_.registration),
      thread_([this] { run(); }) {}

WebhookRegistrar::~WebhookRegistrar() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool WebhookRegistrar::render(std::vector<Json>& out) {
  render::WebhookTarget target = settings_.target;
  if (settings_.webhooks) {
    std::ifstream in(settings_.ca_bundle_path, std::ios::binary);
    std::stringstream pem;
    pem << in.rdbuf();
    auto bundle = render::ca_bundle_from_pem(in ? pem.str() : "");
    if (!bundle) {
      warn_once("webhook registration: the CA bundle cannot be read; nothing registered",
                {bundle.error() + " (" + settings_.ca_bundle_path + ")"});
      return false;
    }
    target.ca_bundle = *std::move(bundle);
  }
  CompiledLoadResult loaded = load_compiled_policy(settings_.policy_path);
  if (!loaded.policy) return false;  // the server logs the policy's errors and keeps its own
  out.clear();
  if (settings_.webhooks) {
    out = {render::mutating_webhook_configuration(*loaded.policy, target),
           render::validating_webhook_configuration(*loaded.policy, target)};
  }
  if (settings_.native) {
    for (Json& object : render::native::native_policies(*loaded.policy, *settings_.native)) {
      object["metadata"]["labels"][kNativeOwnerLabel] = settings_.registration.owner_cluster_role;
      out.push_back(std::move(object));
    }
  }
  return true;
}

bool WebhookRegistrar::apply(const std::vector<Json>& desired) {
  kube::RegistrationResult r = registration_.apply(desired);
  if (r.errors.empty() && settings_.native) {
    const std::string selector = "app.kubernetes.io/managed-by=gpuadmit," +
                                 std::string(kNativeOwnerLabel) + "=" +
                                 settings_.registration.owner_cluster_role;
    kube::RegistrationResult pruned =
        registration_.prune(native_kinds(*settings_.native), selector, desired);
    r.deleted = std::move(pruned.deleted);
    r.errors = std::move(pruned.errors);
  }
  if (!r.created.empty() || !r.updated.empty()) {
    logger_.info(
        settings_.webhooks ? "webhook configurations registered" : "native policies registered",
        {{"created", names_of(r.created)}, {"updated", names_of(r.updated)}});
  }
  if (!r.deleted.empty()) {
    logger_.info("native policies the policy no longer renders deleted",
                 {{"deleted", names_of(r.deleted)}});
  }
  if (!r.errors.empty()) {
    warn_once("registration failed; trying again", r.errors);
    return false;
  }
  logged_errors_.clear();
  return true;
}

// The same failure every second is logged once, until it changes or registration succeeds.
void WebhookRegistrar::warn_once(std::string_view message, const std::vector<std::string>& errors) {
  if (errors == logged_errors_) return;
  logged_errors_ = errors;
  logger_.warn(message, {{"errors", names_of(errors)}});
}

// Waits for the server to be ready, then applies whenever what it should register changed, and
// every reapply_interval; a failed apply is tried again at the next check.
void WebhookRegistrar::run() {
  certs::FileSignature policy_seen, ca_seen;
  std::optional<std::vector<Json>> desired;  // none until the first render
  Clock::time_point next_apply{};
  bool pending = true;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const certs::FileSignature policy_now = settings_.policy_path.empty()
                                                ? certs::FileSignature{}
                                                : certs::file_signature(settings_.policy_path);
    const certs::FileSignature ca_now = settings_.webhooks
                                            ? certs::file_signature(settings_.ca_bundle_path)
                                            : certs::FileSignature{};
    if (policy_now != policy_seen || ca_now != ca_seen || !desired) {
      std::vector<Json> rendered;
      if (render(rendered)) {
        pending |= rendered != desired;
        desired = std::move(rendered);
        policy_seen = policy_now;
        ca_seen = ca_now;
      }
    }
    if (server_.ready() && desired && (pending || Clock::now() >= next_apply)) {
      pending = !apply(*desired);
      next_apply = Clock::now() + settings_.reapply_interval;
    }
    lock.lock();
    wake_.wait_for(lock, settings_.check_interval, [this] { return stopping_; });
  }
}

}  // namespace gpuadmit::cli
