#pragma once
// `serve --register-webhooks` and `--register-native`: the server's own webhook configurations
// and native admission policies, written once it is ready and kept as they should be
// (kube/webhook_registration.h, docs/install.md "No install window", docs/native.md "Installed
// by the server"). What they say is `gpuadmit render`'s (render/webhook_configuration.h,
// render/native_policies.h) for the policy and CA the server reads: rendered again when either
// file changes, applied again every minute (so a deleted or edited object comes back). The
// native objects carry the label gpuadmit.io/owner=<owner ClusterRole>; those of that label that
// the current policy no longer renders (a removed tenant's binding) are deleted.
//
//   WebhookRegistrar registrar(settings, server, logger);   // a thread
//   ...                                                     // until it goes out of scope

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include <optional>
#include <vector>

#include "kube/webhook_registration.h"
#include "render/native_policies.h"
#include "render/webhook_configuration.h"
#include "webhook/log.h"
#include "webhook/server.h"

namespace gpuadmit::cli {

// The label that marks the native objects of one release: its value is the owner ClusterRole.
inline constexpr const char* kNativeOwnerLabel = "gpuadmit.io/owner";

struct RegistrarSettings {
  kube::WebhookRegistrationConfig registration;
  bool webhooks = true;          // --register-webhooks: the two webhook configurations
  render::WebhookTarget target;  // ca_bundle: read from ca_bundle_path
  std::string ca_bundle_path;    // PEM of the CA that signed the serving certificate
  // --register-native: the native policies and bindings (registration.owner_cluster_role set).
  std::optional<render::native::NativeOptions> native;
  std::string policy_path;  // the server's --policy ("": the embedded default)
  std::chrono::milliseconds check_interval{1000}, reapply_interval{60000};
};

class WebhookRegistrar {
 public:
  WebhookRegistrar(RegistrarSettings settings, const webhook::Server& server,
                   const webhook::Logger& logger);
  ~WebhookRegistrar();  // stops the thread; the configurations stay
  WebhookRegistrar(const WebhookRegistrar&) = delete;
  WebhookRegistrar& operator=(const WebhookRegistrar&) = delete;

 private:
  void run();
  // The configurations and native objects for the current policy and CA; false (and logged)
  // when either cannot be read.
  bool render(std::vector<Json>& out);
  // Applies `desired`, then (native) deletes the release's native objects it does not hold;
  // true when everything succeeded.
  bool apply(const std::vector<Json>& desired);
  void warn_once(std::string_view message, const std::vector<std::string>& errors);

  RegistrarSettings settings_;
  const webhook::Server& server_;
  const webhook::Logger& logger_;
  kube::WebhookRegistration registration_;
  std::vector<std::string> logged_errors_;  // the last errors logged (the registrar's thread)
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuadmit::cli
