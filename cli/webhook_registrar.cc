#include "cli/webhook_registrar.h"

#include <fstream>
#include <sstream>

#include "certs/digest.h"
#include "policies/loader.h"

namespace gpuadmit::cli {
namespace {

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

bool read_text(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  out = text.str();
  return true;
}

// The policy the registrar renders from: compiled, with its stamp (its generation, the digest of
// the text read — the same text that was compiled). Errors, one line each, when it cannot be.
PolicyPtr load_stamped(const std::string& path, kube::PolicyStamp& stamp,
                       std::vector<std::string>& errors) {
  std::string text(path.empty() ? default_policy_text() : std::string_view());
  if (!path.empty() && !read_text(path, text)) {
    errors.push_back(path + ": cannot read the policy file");
    return nullptr;
  }
  PolicyLoadResult loaded = load_policy(text, path.empty() ? "<embedded default policy>" : path);
  for (const PolicyError& e : loaded.errors) errors.push_back(e.to_string());
  if (!loaded.policy) return nullptr;
  stamp.generation = loaded.policy->generation;
  stamp.hash = "sha256:" + certs::sha256_hex(text);
  try {
    return CompiledPolicy::compile(std::move(*loaded.policy));
  } catch (const std::exception& e) {
    errors.push_back(std::string("cannot compile the policy: ") + e.what());
    return nullptr;
  }
}

}  // namespace

WebhookRegistrar::WebhookRegistrar(RegistrarSettings settings, const webhook::Logger& logger)
    : settings_(std::move(settings)), logger_(logger), registration_(settings_.registration) {}

bool WebhookRegistrar::render(std::vector<Json>& out, kube::PolicyStamp& stamp) {
  render::WebhookTarget target = settings_.target;
  render_errors_.clear();
  if (settings_.webhooks) {
    std::string pem;
    auto bundle = render::ca_bundle_from_pem(read_text(settings_.ca_bundle_path, pem) ? pem : "");
    if (!bundle) {
      render_errors_.push_back(bundle.error() + " (" + settings_.ca_bundle_path + ")");
      log_once(webhook::LogLevel::kWarn, "the CA bundle cannot be read; nothing registered",
               "errors", render_errors_);
      return false;
    }
    target.ca_bundle = *std::move(bundle);
  }
  const PolicyPtr policy = load_stamped(settings_.policy_path, stamp, render_errors_);
  if (!policy) {
    log_once(webhook::LogLevel::kError,
             "the policy cannot be loaded; what was registered before stays", "errors",
             render_errors_);
    return false;
  }
  for (const char* message : {"the CA bundle cannot be read; nothing registered",
                              "the policy cannot be loaded; what was registered before stays"}) {
    logged_.erase(std::string(message));  // a later failure is logged again
  }
  out.clear();
  if (settings_.webhooks) {
    out = {render::mutating_webhook_configuration(*policy, target),
           render::validating_webhook_configuration(*policy, target)};
  }
  if (settings_.native) {
    for (Json& object : render::native::native_policies(*policy, *settings_.native)) {
      object["metadata"]["labels"][kNativeOwnerLabel] = settings_.registration.owner_cluster_role;
      out.push_back(std::move(object));
    }
  }
  return true;
}

RoundResult WebhookRegistrar::apply() {
  kube::RegistrationResult r = registration_.apply(*desired_, stamp_);
  if (r.errors.empty() && settings_.native) {
    const std::string selector = "app.kubernetes.io/managed-by=gpuadmit," +
                                 std::string(kNativeOwnerLabel) + "=" +
                                 settings_.registration.owner_cluster_role;
    kube::RegistrationResult pruned =
        registration_.prune(native_kinds(*settings_.native), selector, *desired_, stamp_);
    r.deleted = std::move(pruned.deleted);
    r.errors = std::move(pruned.errors);
    r.break_glass.insert(r.break_glass.end(), pruned.break_glass.begin(), pruned.break_glass.end());
    r.newer.insert(r.newer.end(), pruned.newer.begin(), pruned.newer.end());
  }
  log_result(r);
  RoundResult out;
  out.rendered = true;
  out.settled = r.errors.empty() && r.waiting.empty();
  out.superseded = !r.newer.empty();
  return out;
}

void WebhookRegistrar::log_result(const kube::RegistrationResult& r) {
  if (!r.created.empty() || !r.updated.empty()) {
    logger_.info("registered", {{"created", names_of(r.created)},
                                {"updated", names_of(r.updated)},
                                {"policy_generation", stamp_.generation},
                                {"policy_hash", stamp_.hash}});
  }
  if (!r.deleted.empty()) {
    logger_.info("native policies the policy no longer renders deleted",
                 {{"deleted", names_of(r.deleted)}});
  }
  log_once(webhook::LogLevel::kWarn,
           "break glass: objects annotated gpuadmit.io/break-glass=true are left alone", "objects",
           r.break_glass);
  log_once(webhook::LogLevel::kWarn,
           "objects written for a newer policy generation are left alone; this registrar's "
           "policy is older",
           "objects", r.newer);
  log_once(webhook::LogLevel::kInfo, "waiting for the webhook's Service to have a ready endpoint",
           "objects", r.waiting);
  log_once(webhook::LogLevel::kWarn, "registration failed; trying again", "errors", r.errors);
}

// The same list every second is logged once, until it changes (an empty list ends it quietly).
void WebhookRegistrar::log_once(webhook::LogLevel level, std::string_view message,
                                const char* field, const std::vector<std::string>& items) {
  auto it = logged_.find(message);
  if (it == logged_.end())
    it = logged_.emplace(std::string(message), std::vector<std::string>()).first;
  if (items == it->second) return;
  it->second = items;
  if (items.empty()) return;
  logger_.log(level, message, {{field, names_of(items)}});
}

RoundResult WebhookRegistrar::round(Clock::time_point now) {
  const certs::FileSignature policy_now = settings_.policy_path.empty()
                                              ? certs::FileSignature{}
                                              : certs::file_signature(settings_.policy_path);
  const certs::FileSignature ca_now =
      settings_.webhooks ? certs::file_signature(settings_.ca_bundle_path) : certs::FileSignature{};
  if (policy_now != policy_seen_ || ca_now != ca_seen_ || !desired_) {
    std::vector<Json> rendered;
    kube::PolicyStamp stamp;
    if (render(rendered, stamp)) {
      pending_ |= rendered != desired_ || stamp.hash != stamp_.hash ||
                  stamp.generation != stamp_.generation;
      desired_ = std::move(rendered);
      stamp_ = std::move(stamp);
      policy_seen_ = policy_now;
      ca_seen_ = ca_now;
    }
  }
  if (!desired_) return last_;
  if (pending_ || now >= next_apply_) {
    last_ = apply();
    pending_ = !last_.settled;
    next_apply_ = now + settings_.reapply_interval;
  }
  return last_;
}

}  // namespace gpuadmit::cli
