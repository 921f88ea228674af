#pragma once
// `serve --register-webhooks`: the server's own webhook configurations written once it is ready
// and kept as they should be (kube/webhook_registration.h, docs/install.md "No install window").
// What they say is `gpuadmit render`'s (render/webhook_configuration.h) for the policy and CA
// the server reads: rendered again when either file changes, applied again every minute (so a
// deleted or edited configuration comes back).
//
//   WebhookRegistrar registrar(settings, server, logger);   // a thread
//   ...                                                     // until it goes out of scope

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "kube/webhook_registration.h"
#include "render/webhook_configuration.h"
#include "webhook/log.h"
#include "webhook/server.h"

namespace gpuadmit::cli {

struct RegistrarSettings {
  kube::WebhookRegistrationConfig registration;
  render::WebhookTarget target;  // ca_bundle: read from ca_bundle_path
  std::string ca_bundle_path;    // PEM of the CA that signed the serving certificate
  std::string policy_path;       // the server's --policy ("": the embedded default)
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
  // The two configurations for the current policy and CA; false (and logged) when either cannot
  // be read.
  bool render(std::vector<Json>& out);
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
