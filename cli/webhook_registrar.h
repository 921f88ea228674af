#pragma once
// `gpuadmit register`'s work (cli/register_command.cc): the webhook configurations
// (--register-webhooks) and native admission policies (--register-native) that `gpuadmit render`
// makes for the policy and CA it reads, kept as they should be in the cluster
// (kube/webhook_registration.h; docs/install.md "Least privilege", docs/native.md "Installed by
// the registrar"). Rendered again when the policy or CA file changes; applied when that changed
// what it should register, when the last apply did not finish (an API error, the webhook's
// Service not ready yet), and every reapply_interval (so an edited or deleted object comes back).
// The native objects carry the label gpuadmit.io/owner=<owner ClusterRole>; those of that label
// that the current policy no longer renders (a removed tenant's binding) are deleted. Every
// object carries the policy's generation and digest (kube::PolicyStamp).
//
//   WebhookRegistrar registrar(settings, logger);
//   while (!stopping) { RoundResult r = registrar.round(Clock::now()); sleep(1s); }

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "certs/file_watch.h"
#include "kube/webhook_registration.h"
#include "render/native_policies.h"
#include "render/webhook_configuration.h"
#include "webhook/log.h"

namespace gpuadmit::cli {

// The label that marks the native objects of one release: its value is the owner ClusterRole.
inline constexpr const char* kNativeOwnerLabel = "gpuadmit.io/owner";

struct RegistrarSettings {
  kube::WebhookRegistrationConfig registration;
  bool webhooks = false;         // --register-webhooks: the two webhook configurations
  render::WebhookTarget target;  // ca_bundle: read from ca_bundle_path
  std::string ca_bundle_path;    // PEM of the CA that signed the serving certificate
  // --register-native: the native policies and bindings (registration.owner_cluster_role set).
  std::optional<render::native::NativeOptions> native;
  std::string policy_path;  // --policy ("": the embedded default)
  std::chrono::milliseconds reapply_interval{60000};
};

// Where the registration stands after a round.
struct RoundResult {
  bool rendered = false;    // a policy and CA have been read (else: nothing to apply yet)
  bool settled = false;     // the last apply finished: every object as rendered, or left alone
  bool superseded = false;  // an object was written for a newer policy generation
};

class WebhookRegistrar {
 public:
  using Clock = std::chrono::steady_clock;
  WebhookRegistrar(RegistrarSettings settings, const webhook::Logger& logger);

  // Renders when the policy or CA file changed (or nothing was rendered yet), applies when due
  // (above). Called every second by `register --watch`, until settled by a one-shot run.
  RoundResult round(Clock::time_point now);

  // Why the last render failed (empty after one that succeeded): why a one-shot run gives up.
  const std::vector<std::string>& render_errors() const { return render_errors_; }

 private:
  // The configurations and native objects for the current policy and CA, and the policy's
  // stamp; false (and logged) when either cannot be read.
  bool render(std::vector<Json>& out, kube::PolicyStamp& stamp);
  // Applies the objects rendered, then (native) deletes the release's native objects they do
  // not include.
  RoundResult apply();
  void log_result(const kube::RegistrationResult& r);
  // `items` under `message` (as the member `field`) logged once, until the list changes.
  void log_once(webhook::LogLevel level, std::string_view message, const char* field,
                const std::vector<std::string>& items);

  RegistrarSettings settings_;
  const webhook::Logger& logger_;
  kube::WebhookRegistration registration_;
  certs::FileSignature policy_seen_, ca_seen_;
  std::optional<std::vector<Json>> desired_;  // none until the first render
  kube::PolicyStamp stamp_;
  std::vector<std::string> render_errors_;
  bool pending_ = true;
  Clock::time_point next_apply_{};
  RoundResult last_;
  std::map<std::string, std::vector<std::string>, std::less<>> logged_;  // message → items
};

}  // namespace gpuadmit::cli
