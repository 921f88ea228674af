// A mutator that cannot complete, seen from the API server's side of a running webhook: the
// answer enforcement.mutationFailurePolicy gives (Fail: denied with the reason; Ignore: admitted
// with a warning and no patch), gpuadmit_mutation_errors_total{mutator} and the log line. The
// server runs in this process with a Pipeline holding a test-only mutator that always fails.

#include <catch2/catch.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/json.h"
#include "engine/mutator.h"
#include "engine/pipeline.h"
#include "tests/webhook/support.h"
#include "webhook/server.h"

namespace gpuadmit::testing {
namespace mutation_failure_test {
namespace {

// Appends an env entry, then gives up: the half-done edit must never reach the API server.
class AlwaysFailingMutator final : public Mutator {
 public:
  std::string_view name() const override { return "always-fails"; }
  MutationOutcome mutate(PodWriter& pod, PodContext& /*ctx*/) const override {
    for (const ContainerRef& ref : pod.containers()) {
      if (Json* env = pod.container(ref, ContainerMember::kEnv).array()) {
        env->push_back(Json{{"name", "HALF"}, {"value", "done"}});
      }
    }
    return MutationOutcome::failed("the test says no");
  }
};

const std::string kReview =
    R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-7",)"
    R"("kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"ml",)"
    R"("name":"p","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)"
    R"({"containers":[{"name":"c","image":"busybox"}]}}}})";

struct Answer {
  Json response;
  double errors = -1;  // gpuadmit_mutation_errors_total{mutator="always-fails"}
  Json log_line;       // the "mutation failed" line
};

// One review through a running server whose policy is `policy_yaml` ("": the embedded one).
Answer review_once(const std::string& policy_yaml) {
  TempDir dir;
  generate_certs(dir.path());
  webhook::ServerConfig config;
  config.cert_path = dir / "tls.crt";
  config.key_path = dir / "tls.key";
  config.listen = "127.0.0.1:0";
  config.metrics_listen = "127.0.0.1:0";
  if (!policy_yaml.empty()) {
    config.policy_path = dir / "policy.yaml";
    write_file(config.policy_path, policy_yaml);
  }
  std::vector<std::unique_ptr<const Mutator>> mutators;
  mutators.push_back(std::make_unique<AlwaysFailingMutator>());
  const Pipeline pipeline(std::move(mutators), {});
  std::FILE* log_file = std::tmpfile();
  REQUIRE(log_file != nullptr);
  Answer answer;
  {
    webhook::Logger logger(webhook::LogLevel::kWarn, log_file);
    auto created = webhook::Server::create(config, pipeline, logger);
    REQUIRE(created.has_value());
    std::unique_ptr<webhook::Server> server = std::move(*created);
    std::thread serving([&] { server->run(); });
    TlsClient client;
    TlsClient::Options options;
    options.ca_path = dir / "ca.crt";
    REQUIRE(client.connect(server->port(), options).empty());
    const auto response = client.request("POST", "/mutate", kReview);
    REQUIRE(response.has_value());
    CHECK(response->status == 200);
    answer.response = Json::parse(response->body)["response"];
    answer.errors = metric_value(plain_get(server->metrics_port(), "/metrics"),
                                 "gpuadmit_mutation_errors_total{mutator=\"always-fails\"}");
    client.close();
    server->shutdown();
    serving.join();
    logger.flush();
  }
  std::rewind(log_file);
  std::string text;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, log_file) != nullptr) text += buffer;
  std::fclose(log_file);
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    const Json line = Json::parse(text.substr(start, end - start));
    if (line.value("msg", "") == "mutation failed") answer.log_line = line;
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return answer;
}

// The log line's fields other than the timestamp.
Json without_ts(Json line) {
  line.erase("ts");
  return line;
}

const std::string kDenied =
    "MUTATION: mutator always-fails failed: the test says no; nothing was mutated and the object "
    "is denied (enforcement.mutationFailurePolicy: Fail)";
const std::string kAdmitted =
    "MUTATION: mutator always-fails failed: the test says no; admitted without any of gpuadmit's "
    "mutations (enforcement.mutationFailurePolicy: Ignore)";

TEST_CASE("webhook: a failing mutator with mutationFailurePolicy Fail (the default)",
          "[webhook][mutation-failure]") {
  const Answer a = review_once("");
  CHECK(a.response.dump() ==
        R"({"uid":"u-7","allowed":false,"status":{"code":403,"reason":"Forbidden","message":)"
        R"("gpuadmit denied Pod ml/p: )" +
            kDenied + "\"}}");
  CHECK(a.errors == 1);
  CHECK(without_ts(a.log_line).dump() ==
        R"({"level":"warn","msg":"mutation failed","uid":"u-7","kind":"Pod","namespace":"ml",)"
        R"("name":"p","mutator":"always-fails","path":"spec","reason":"the test says no",)"
        R"("allowed":false})");
}

TEST_CASE("webhook: a failing mutator with mutationFailurePolicy Ignore",
          "[webhook][mutation-failure]") {
  const Answer a = review_once(R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: open}
spec:
  enforcement:
    mutationFailurePolicy: Ignore
)YAML");
  // Admitted, with a warning and no patch: not even the half-done env entry.
  CHECK(a.response.dump() == R"({"uid":"u-7","allowed":true,"warnings":[")" + kAdmitted + "\"]}");
  CHECK(a.errors == 1);
  CHECK(without_ts(a.log_line).dump() ==
        R"({"level":"warn","msg":"mutation failed","uid":"u-7","kind":"Pod","namespace":"ml",)"
        R"("name":"p","mutator":"always-fails","path":"spec","reason":"the test says no",)"
        R"("allowed":true})");
}

}  // namespace
}  // namespace mutation_failure_test
}  // namespace gpuadmit::testing
