// `gpuadmit register` against the simulated API server of tests/kube/fake_registry.h, as the
// chart runs it (docs/install.md, "Least privilege"): once (exit codes) and --watch (a deleted
// configuration comes back within a round, the break-glass annotation and a newer policy
// generation are respected, a removed tenant's native objects are pruned); the flags, and
// `serve` refusing the registration flags it no longer has.

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "engine/json.h"
#include "tests/kube/fake_registry.h"
#include "tests/support/process.h"

namespace register_command_test {

using namespace gpuadmit::testing;
using gpuadmit::Json;

namespace {

const std::string kMutating = kGroup + "mutatingwebhookconfigurations/gpuadmit";
const std::string kValidating = kGroup + "validatingwebhookconfigurations/gpuadmit";

// Waits (up to 20 s) until `done` holds.
bool eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 2000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A cluster: the fake API server, a service-account directory with a token, the webhook's CA.
struct Cluster {
  TempDir certs, account;
  FakeRegistry api{account.path()};
  Cluster() {
    generate_certs(certs.path());
    std::ofstream(account / "token") << "sa-token\n";
  }
  // The in-cluster environment `register` reads (kube/in_cluster.h).
  std::vector<std::pair<std::string, std::string>> environment() const {
    return {{"KUBERNETES_SERVICE_HOST", "127.0.0.1"},
            {"KUBERNETES_SERVICE_PORT", std::to_string(api.port())},
            {"GPUADMIT_SERVICE_ACCOUNT_DIR", account.path()}};
  }
  // `gpuadmit register ARGS` once, to its exit.
  ProcessResult once(const std::string& args) const {
    std::string command = "env";
    for (const auto& [name, value] : environment()) command += " " + name + "=" + value;
    return run_command(command + " " + GPUADMIT_BINARY + " register " + args);
  }
};

// `gpuadmit register --watch ...` in the background, its log in a file; killed at the end.
class Registrar {
 public:
  Registrar(const Cluster& cluster, std::vector<std::string> extra) {
    log_path_ = cluster.certs / "register.log";
    std::vector<std::string> args = {GPUADMIT_BINARY, "register", "--watch"};
    for (auto& a : extra) args.push_back(std::move(a));
    const auto environment = cluster.environment();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (const auto& [name, value] : environment) ::setenv(name.c_str(), value.c_str(), 1);
      const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(log, 2);
      ::dup2(log, 1);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Registrar() {
    if (pid_ > 0 && exit_code_ < -1) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  std::string log() const { return slurp(log_path_); }
  bool logged(const std::string& message) const {
    return eventually(
        [&] { return log().find("\"msg\":\"" + message + "\"") != std::string::npos; });
  }
  // SIGTERM, then the exit code.
  int stop() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }

 private:
  pid_t pid_ = -1;
  int exit_code_ = -2;
  std::string log_path_;
};

std::string webhook_flags(const Cluster& c) {
  return "--register-webhooks --webhook-service gpuadmit --webhook-namespace gpuadmit "
         "--webhook-ca-bundle " +
         (c.certs / "ca.crt") + " --webhook-owner gpuadmit --webhook-exclude-namespace batch";
}

}  // namespace

// Once, as a Job would: nothing while the Service has no ready Pod (exit 1 at --timeout), then
// render's two configurations, stamped with the policy's generation and digest.
TEST_CASE("register: once, render's configurations after the Service is ready") {
  Cluster c;
  const std::string policy = c.certs / "policy.yaml";
  std::string text = slurp(std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml");
  const std::string name_line = "  name: ";
  REQUIRE(text.find(name_line) != std::string::npos);
  text.insert(text.find(name_line), "  annotations:\n    gpuadmit.io/generation: \"12\"\n");
  std::ofstream(policy) << text;

  c.api.set_endpoints(FakeRegistry::Endpoints::kNotReady);
  ProcessResult r = c.once("--policy " + policy + " " + webhook_flags(c) + " --timeout 2");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("\"msg\":\"waiting for the webhook's Service to have a ready endpoint\"") !=
        std::string::npos);
  CHECK(r.err.find("\"msg\":\"not registered within --timeout\"") != std::string::npos);
  CHECK_FALSE(c.api.stored(kMutating).has_value());

  c.api.set_endpoints(FakeRegistry::Endpoints::kReady);
  r = c.once("--policy " + policy + " " + webhook_flags(c));
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("\"msg\":\"registered\"") != std::string::npos);
  const auto rendered =
      run_command(std::string(GPUADMIT_BINARY) + " render --policy " + policy +
                  " --namespace gpuadmit --service gpuadmit --ca-bundle " + (c.certs / "ca.crt"));
  REQUIRE(rendered.exit_code == 0);
  const std::string digest =
      run_command("sha256sum " + policy + " | cut -d' ' -f1").out.substr(0, 64);
  for (const std::string& path : {kMutating, kValidating}) {
    const Json stored = *c.api.stored(path);
    const Json& w = stored["webhooks"][0];
    CHECK(rendered.out.find("caBundle: " + w["clientConfig"]["caBundle"].get<std::string>()) !=
          std::string::npos);
    CHECK(w["namespaceSelector"]["matchExpressions"][0]["values"] ==
          Json::array({"batch", "gpu-operator", "gpuadmit", "kube-node-lease", "kube-public",
                       "kube-system"}));
    CHECK(stored["metadata"]["ownerReferences"][0]["uid"] == "owner-uid-1");
    CHECK(stored["metadata"]["annotations"]["gpuadmit.io/policy-generation"] == "12");
    CHECK(stored["metadata"]["annotations"]["gpuadmit.io/policy-hash"] == "sha256:" + digest);
  }
  // Again: nothing to do, exit 0.
  r = c.once("--policy " + policy + " " + webhook_flags(c));
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("\"msg\":\"registered\"") == std::string::npos);

  // A run whose policy is older (generation 11) than the one that wrote them: left alone, exit 1.
  std::string older = text;
  older.replace(older.find("\"12\""), 4, "\"11\"");
  std::ofstream(policy, std::ios::trunc) << older;
  r = c.once("--policy " + policy + " " + webhook_flags(c) + " --webhook-exclude-namespace ml");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("\"msg\":\"objects written for a newer policy generation are left alone; this "
                   "registrar's policy is older\"") != std::string::npos);
  CHECK(c.api.stored(kMutating)->at("metadata")["annotations"]["gpuadmit.io/policy-generation"] ==
        "12");
}

// --watch, as the chart's registrar Deployment: a deleted configuration is back within a round
// (the emergency delete alone is undone, docs/install.md "Break glass"), an annotated one is left
// as the operator edited it, and SIGTERM ends it with 0.
TEST_CASE("register --watch: repairs, respects break-glass, stops on SIGTERM") {
  Cluster c;
  std::vector<std::string> flags = {"--interval", "1"};
  {
    std::istringstream words(webhook_flags(c));
    for (std::string w; words >> w;) flags.push_back(w);
  }
  Registrar registrar(c, flags);
  REQUIRE(eventually([&] { return c.api.stored(kMutating) && c.api.stored(kValidating); }));
  CHECK(registrar.logged("registered"));

  c.api.remove(kValidating);
  CHECK(eventually([&] { return c.api.stored(kValidating).has_value(); }));
  c.api.edit(kMutating, [](Json& o) {
    o["webhooks"][0]["matchConditions"] =
        Json::parse(R"([{"name": "off", "expression": "false"}])");
  });
  CHECK(eventually(
      [&] { return !c.api.stored(kMutating)->at("webhooks")[0].contains("matchConditions"); }));

  // Break glass: annotated and switched to Ignore; stays so over several rounds.
  c.api.edit(kMutating, [](Json& o) {
    o["metadata"]["annotations"]["gpuadmit.io/break-glass"] = "true";
    o["webhooks"][0]["failurePolicy"] = "Ignore";
  });
  CHECK(registrar.logged(
      "break glass: objects annotated gpuadmit.io/break-glass=true are left alone"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  CHECK(c.api.stored(kMutating)->at("webhooks")[0]["failurePolicy"] == "Ignore");
  // The annotation removed: repaired.
  c.api.edit(kMutating,
             [](Json& o) { o["metadata"]["annotations"].erase("gpuadmit.io/break-glass"); });
  CHECK(eventually(
      [&] { return c.api.stored(kMutating)->at("webhooks")[0]["failurePolicy"] == "Fail"; }));
  CHECK(registrar.stop() == 0);
  CHECK(registrar.log().find("\"msg\":\"stopped\"") != std::string::npos);
}

namespace {

constexpr const char* kTeamsPolicy = R"(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: teams
spec:
  tenants:
    - name: ml
      namespaces: ["ml"]
      limits: {maxGPUsPerPod: 4}
      enforcement: {mode: audit}
)";

constexpr const char* kNoTenantsPolicy = R"(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: teams
spec:
  enforcement:
    exempt:
      namespaces: ["batch"]
)";

// The paths of a native policy and its binding: "deny", "warn", "audit" (validating) or "mutate".
std::vector<std::string> native_paths(const std::vector<std::string>& policies) {
  const std::string beta = "/apis/admissionregistration.k8s.io/v1beta1/";
  std::vector<std::string> out;
  for (const std::string& p : policies) {
    const std::string kind =
        p == "mutate" ? beta + "mutatingadmissionpolic" : kGroup + "validatingadmissionpolic";
    out.push_back(kind + "ies/gpuadmit-" + p);
    out.push_back(kind + "ybindings/gpuadmit-" + p);
  }
  return out;
}

}  // namespace

// render --native's objects registered, and what the policy no longer renders deleted: one set
// of policies whatever the tenants, the audit policy only while a tenant is in audit mode. No
// webhook configuration without --register-webhooks, and no wait for a Service.
TEST_CASE(
    "register --watch --register-native: render's native policies, the audit policy pruned when "
    "the last tenant in audit mode goes") {
  Cluster c;
  c.api.set_endpoints(FakeRegistry::Endpoints::kNone);
  const std::string policy = c.certs / "policy.yaml";
  std::ofstream(policy) << kTeamsPolicy;
  Registrar registrar(c,
                      {"--policy", policy, "--register-native", "full", "--native-api", "v1beta1",
                       "--webhook-namespace", "gpuadmit", "--webhook-owner", "gpuadmit"});
  const std::vector<std::string> all = native_paths({"deny", "warn", "audit", "mutate"});
  REQUIRE(eventually([&] {
    for (const std::string& path : all) {
      if (!c.api.stored(path)) return false;
    }
    return true;
  }));
  for (const std::string& path : all) {
    const Json stored = *c.api.stored(path);
    CHECK(stored["metadata"]["labels"]["gpuadmit.io/owner"] == "gpuadmit");
    CHECK(stored["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuadmit");
    CHECK(stored["metadata"]["ownerReferences"][0]["uid"] == "owner-uid-1");
    CHECK(stored["metadata"]["annotations"]["gpuadmit.io/policy-generation"] == "0");
  }
  CHECK(c.api.stored(native_paths({"audit"})[1])->at("spec")["policyName"] == "gpuadmit-audit");
  CHECK_FALSE(c.api.stored(kMutating).has_value());
  CHECK_FALSE(c.api.stored(kValidating).has_value());

  // The tenant leaves the policy: the audit policy and binding are deleted, the others stay.
  std::ofstream(policy, std::ios::trunc) << kNoTenantsPolicy;
  REQUIRE(eventually([&] {
    for (const std::string& path : native_paths({"audit"})) {
      if (c.api.stored(path)) return false;
    }
    return true;
  }));
  const std::vector<std::string> kept = native_paths({"deny", "warn", "mutate"});
  for (const std::string& path : kept) CHECK(c.api.stored(path));
  CHECK(registrar.logged("native policies the policy no longer renders deleted"));

  // An invalid policy: logged, what was registered stays.
  std::ofstream(policy, std::ios::trunc) << "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\n";
  CHECK(registrar.logged("the policy cannot be loaded; what was registered before stays"));
  for (const std::string& path : kept) CHECK(c.api.stored(path));
}

TEST_CASE("register: flag errors, and a policy or CA that cannot be read") {
  Cluster c;
  struct Case {
    std::string flags, error;
  };
  for (const Case& k : std::vector<Case>{
           {"",
            "gpuadmit register: nothing to register: give --register-webhooks, "
            "--register-native or both\n"},
           {"--register-native partial --webhook-namespace g --webhook-owner g",
            "gpuadmit register: --register-native must be full or fallback, not \"partial\"\n"},
           {"--register-native full --webhook-owner g",
            "gpuadmit register: --webhook-namespace is required\n"},
           {"--register-native full --webhook-namespace g",
            "gpuadmit register: --register-native needs --webhook-owner\n"},
           {"--register-native full --webhook-namespace g --webhook-owner g --native-api v2",
            "gpuadmit register: --native-api must be v1 (Kubernetes 1.36) or v1beta1 "
            "(1.34-1.35), not \"v2\"\n"},
           {"--register-webhooks --webhook-namespace g --native-api v1",
            "gpuadmit register: --native-api needs --register-native\n"},
           {"--register-native full --webhook-namespace g --webhook-owner g --webhook-service s",
            "gpuadmit register: --webhook-service needs --register-webhooks\n"},
           {"--register-native full --webhook-namespace g --webhook-owner g --templates validate",
            "gpuadmit register: --templates needs --register-webhooks\n"},
           {"--register-webhooks --webhook-namespace g --webhook-ca-bundle x",
            "gpuadmit register: --register-webhooks needs --webhook-service\n"},
           {"--register-webhooks --webhook-namespace g --webhook-service s --webhook-ca-bundle x "
            "--templates all",
            "gpuadmit register: --templates must be mutate or validate, not \"all\"\n"},
           {"--register-native full --webhook-namespace g --webhook-owner g --interval 5",
            "gpuadmit register: --interval needs --watch\n"},
           {"--register-native full --webhook-namespace g --webhook-owner g --watch --timeout 5",
            "gpuadmit register: --timeout is for a one-shot run, not --watch\n"},
           {"--register-native full --webhook-namespace g --webhook-owner g --timeout 0",
            "gpuadmit register: --timeout must be a whole number of seconds from 1 to 3600, not "
            "\"0\"\n"},
       }) {
    INFO(k.flags);
    const ProcessResult r = c.once(k.flags);
    CHECK(r.exit_code == 2);
    CHECK(r.err == k.error);
  }
  // Outside a pod.
  ProcessResult r = run_command(std::string(GPUADMIT_BINARY) +
                                " register --register-native full --webhook-namespace g "
                                "--webhook-owner g");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set") !=
        std::string::npos);
  // A policy with an error, a CA bundle that is not one: exit 2, the error named, nothing written.
  const std::string bad = c.certs / "bad.yaml";
  std::ofstream(bad) << "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicy\nmetadata:\n  name: x\n"
                        "  annotations: {gpuadmit.io/generation: \"next\"}\nspec: {}\n";
  r = c.once("--policy " + bad + " --register-native full --webhook-namespace g --webhook-owner g");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("metadata.annotations[gpuadmit.io/generation]: must be a whole number (a "
                   "string such as \\\"7\\\"), not \\\"next\\\"") != std::string::npos);
  r = c.once(webhook_flags(c).replace(webhook_flags(c).find(c.certs / "ca.crt"),
                                      (c.certs / "ca.crt").size(), bad));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("\"msg\":\"the CA bundle cannot be read; nothing registered\"") !=
        std::string::npos);
  CHECK(c.api.requests().empty());
}

// Registration left the server: its old flags fail with where they went, before anything else.
TEST_CASE("serve: the --register-* and --webhook-* flags say they moved to gpuadmit register") {
  for (const char* flag : {"--register-webhooks", "--register-native=full", "--webhook-owner",
                           "--native-api=v1", "--webhook-ca-bundle=/x"}) {
    INFO(flag);
    const ProcessResult r = run_command(std::string(GPUADMIT_BINARY) + " serve " + flag);
    CHECK(r.exit_code == 2);
    const std::string name = std::string(flag).substr(0, std::string(flag).find('='));
    CHECK(r.err == "gpuadmit serve: " + name +
                       " was removed from serve: webhook configurations and native policies are "
                       "registered by `gpuadmit register`, which takes the same flags and runs "
                       "apart from the server (docs/install.md, \"Least privilege\")\n");
  }
}
}  // namespace register_command_test
