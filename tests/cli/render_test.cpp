// `gpuadmit render` end to end: a YAML stream of the policy's objects, the flags, and every bad
// input with its message and exit code 2 (SPEC §8). The objects themselves: tests/render/; their
// schema validation and `render | lint`: tests/k8s/chart_test.mjs.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/process.h"

namespace gpuadmit {
namespace render_test {
namespace {

const std::string kBinary = GPUADMIT_BINARY;
const std::string kDefaultPolicy = std::string(GPUADMIT_SOURCE_DIR) + "/policies/default.yaml";

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_CASE("render: the default policy's objects as one YAML stream") {
  auto r = testing::run_command(kBinary + " render");
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(count(r.out, "---\n") == 5);
  CHECK(count(r.out, "\nkind: PriorityClass\n") == 3);
  CHECK(count(r.out, "\nkind: MutatingWebhookConfiguration\n") == 1);
  CHECK(count(r.out, "\nkind: ValidatingWebhookConfiguration\n") == 1);
  CHECK(r.out.find("caBundle") == std::string::npos);
  auto same = testing::run_command(kBinary + " render --policy " + kDefaultPolicy);
  CHECK(same.out == r.out);
}

// Issue 34, point 10: a tenant whose namespaces are a pattern gets no ResourceQuota (it lives in
// one named namespace); render says so on standard error and still prints only the objects.
TEST_CASE("render: quota.gpus of a namespace pattern is a warning on standard error") {
  const std::string policy = "/tmp/gpuadmit-render-test-pattern-policy.yaml";
  std::ofstream(policy) << R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: pattern}
spec:
  classes:
    a100:
      gpusPerNode: 8
      deviceClasses: {gpu.nvidia.com: {}}
  tenants:
    - name: ml
      namespaces: ["ml", "ml-.*"]
      quota: {gpus: 16}
)YAML";
  auto r = testing::run_command(kBinary + " render --policy " + policy);
  CHECK(r.exit_code == 0);
  CHECK(r.err ==
        "gpuadmit render: warning: tenant ml: no ResourceQuota for namespace pattern \"ml-.*\" (a "
        "ResourceQuota lives in one named namespace): create one in each namespace it matches "
        "(its keys: docs/install.md, \"What render makes\"); without it the webhook's GPU013 "
        "checks each pod against quota.gpus 16, but nothing caps the namespace's total\n");
  CHECK(count(r.out, "\nkind: ResourceQuota\n") == 1);  // for "ml"
  CHECK(count(r.out, "    gpu.nvidia.com.deviceclass.resource.k8s.io/devices: \"16\"\n") == 1);
  CHECK(r.out.find("warning") == std::string::npos);
  std::remove(policy.c_str());
}

TEST_CASE("render: --namespace, --service, --failure-policy and --ca-bundle") {
  const std::string ca = "/tmp/gpuadmit-render-test-ca.crt";
  std::ofstream(ca) << "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n";
  auto r = testing::run_command(kBinary +
                                " render --namespace gpu-system --service hook "
                                "--failure-policy Ignore --ca-bundle " +
                                ca);
  CHECK(r.exit_code == 0);
  CHECK(count(r.out, "      namespace: gpu-system\n      name: hook\n") == 2);
  CHECK(count(r.out, "  failurePolicy: Ignore\n") == 2);
  CHECK(
      count(r.out,
            "    caBundle: "
            "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClEwRT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=\n") ==
      2);
  CHECK(count(r.out, "    - gpu-system\n") == 2);
  std::remove(ca.c_str());
}

// GitOps (docs/install.md): with --templates validate the mutating webhook is sent Pods, their
// ephemeral containers and the DRA claims; the validating one every kind.
TEST_CASE("render: --templates validate keeps workload kinds out of the mutating webhook") {
  auto r = testing::run_command(kBinary + " render --templates validate");
  CHECK(r.exit_code == 0);
  const size_t mutating = r.out.find("kind: MutatingWebhookConfiguration");
  const size_t validating = r.out.find("kind: ValidatingWebhookConfiguration");
  REQUIRE(mutating != std::string::npos);
  REQUIRE(validating != std::string::npos);
  const std::string m = r.out.substr(mutating, validating - mutating);
  const std::string v = r.out.substr(validating);
  for (const char* resource : {"- pods\n", "- pods/ephemeralcontainers\n", "- resourceclaims\n"}) {
    CHECK(count(m, resource) == 1);
  }
  // The validating webhook has Pods twice: CREATE, and UPDATE behind the matchCondition that
  // sends only placement changes (docs/decisions.md, "Pod UPDATE").
  CHECK(count(v, "- pods\n") == 2);
  CHECK(count(v, "- pods/ephemeralcontainers\n") == 1);
  CHECK(count(v, "- resourceclaims\n") == 1);
  for (const char* resource : {"- deployments\n", "- jobs\n", "- jaxjobs\n"}) {
    CHECK(count(m, resource) == 0);
    CHECK(count(v, resource) >= 1);
  }
  const auto mutate = testing::run_command(kBinary + " render --templates mutate");
  CHECK(mutate.out == testing::run_command(kBinary + " render").out);
}

TEST_CASE("render: bad input exits 2 with a message") {
  struct Case {
    std::string args, err;
  };
  const std::string not_pem = "/tmp/gpuadmit-render-test-not-pem";
  std::ofstream(not_pem) << "hello\n";
  const Case cases[] = {
      {"--namespace Bad_NS",
       "gpuadmit render: --namespace must be a DNS label (lower-case letters, digits and '-', "
       "at most 63), not \"Bad_NS\"\n"},
      {"--service ''",
       "gpuadmit render: --service must be a DNS label (lower-case letters, digits and '-', at "
       "most 63), not \"\"\n"},
      {"--failure-policy Maybe",
       "gpuadmit render: --failure-policy must be Fail or Ignore, not \"Maybe\"\n"},
      {"--ca-bundle /nonexistent/ca.crt",
       "gpuadmit render: /nonexistent/ca.crt: cannot read the CA bundle\n"},
      {"--ca-bundle " + not_pem,
       "gpuadmit render: " + not_pem +
           ": not a PEM certificate (no \"-----BEGIN CERTIFICATE-----\"); give the CA that "
           "signed the serving certificate, e.g. ca.crt from gpuadmit certs\n"},
      {"--templates sometimes",
       "gpuadmit render: --templates must be mutate or validate, not \"sometimes\"\n"},
      {"--colour blue", "gpuadmit render: unknown flag --colour\n"},
      {"--native-static /tmp/x",
       "gpuadmit render: --native-static writes the native policies: it needs --native full or "
       "--native fallback\n"},
      {"--native full --native-static-root /etc/k",
       "gpuadmit render: --native-static-root needs --native-static DIR\n"},
      {"--native full --native-api v1beta1 --native-static /tmp/gpuadmit-render-test-never",
       "gpuadmit render: manifest-based admission loads only admissionregistration.k8s.io/v1 "
       "objects, not MutatingAdmissionPolicy admissionregistration.k8s.io/v1beta1 (leave out "
       "--native-api v1beta1)\n"},
      {"--native full --native-static /tmp/gpuadmit-render-test-static --native-static-root etc",
       "gpuadmit render: the static manifests' directory must be an absolute path (the API "
       "server's staticManifestsDir), not \"etc\"\n"},
      {"extra", "gpuadmit render: unexpected argument \"extra\"\n"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    auto r = testing::run_command(kBinary + " render " + c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.out == "");
    CHECK(r.err.substr(0, c.err.size()) == c.err);
  }
  auto r = testing::run_command(kBinary + " render --policy /nonexistent/policy.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.out == "");
  CHECK(r.err.find("/nonexistent/policy.yaml") != std::string::npos);
  std::remove(not_pem.c_str());
}

// Manifest-based admission (KEP-5793): the admission policies into the two plugins'
// directories, the AdmissionConfiguration naming them, the rest on standard output. That the
// API server's loader takes the files and the policies admit as the API objects do is the
// native harness's `static` command (scripts/native-test.sh native).
TEST_CASE("render: --native-static writes the manifests and the AdmissionConfiguration") {
  const std::string dir = "/tmp/gpuadmit-render-test-static";
  std::filesystem::remove_all(dir);
  auto r = testing::run_command(kBinary + " render --native full --native-static " + dir +
                                " --native-static-root /etc/kubernetes/gpuadmit");
  CHECK(r.exit_code == 0);
  CHECK(r.err == "");
  // Standard output: the PriorityClasses the priority mutation needs, no admission policy.
  CHECK(count(r.out, "\nkind: PriorityClass\n") == 3);
  CHECK(r.out.find("AdmissionPolicy") == std::string::npos);
  const std::string validating = testing::slurp(dir + "/validating-policies/gpuadmit.yaml");
  CHECK(count(validating, "\nkind: ValidatingAdmissionPolicy\n") == 2);
  CHECK(count(validating, "\nkind: ValidatingAdmissionPolicyBinding\n") == 2);
  CHECK(count(validating, "  name: gpuadmit-deny.static.k8s.io\n") == 2);
  CHECK(count(validating, "  policyName: gpuadmit-deny.static.k8s.io\n") == 1);
  CHECK(count(validating, "  policyName: gpuadmit-warn.static.k8s.io\n") == 1);
  CHECK(validating.find("Mutating") == std::string::npos);
  const std::string mutating = testing::slurp(dir + "/mutating-policies/gpuadmit.yaml");
  CHECK(count(mutating, "\nkind: MutatingAdmissionPolicy\n") == 2);
  CHECK(count(mutating, "  policyName: gpuadmit-mutate.static.k8s.io\n") == 1);
  CHECK(count(mutating, "  policyName: gpuadmit-mutate-non-gpu-pods.static.k8s.io\n") == 1);
  CHECK(testing::slurp(dir + "/admission-configuration.yaml") ==
        "---\n"
        "apiVersion: apiserver.config.k8s.io/v1\n"
        "kind: AdmissionConfiguration\n"
        "plugins:\n"
        "- name: ValidatingAdmissionPolicy\n"
        "  configuration:\n"
        "    apiVersion: apiserver.config.k8s.io/v1\n"
        "    kind: ValidatingAdmissionPolicyConfiguration\n"
        "    staticManifestsDir: /etc/kubernetes/gpuadmit/validating-policies\n"
        "- name: MutatingAdmissionPolicy\n"
        "  configuration:\n"
        "    apiVersion: apiserver.config.k8s.io/v1\n"
        "    kind: MutatingAdmissionPolicyConfiguration\n"
        "    staticManifestsDir: /etc/kubernetes/gpuadmit/mutating-policies\n");
  // fallback: validating policies only (the full render's mutating file removed); the root
  // defaults to the directory, made absolute.
  r = testing::run_command("cd /tmp && " + kBinary +
                           " render --native fallback --native-static gpuadmit-render-test-static");
  CHECK(r.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(dir + "/mutating-policies/gpuadmit.yaml"));
  const std::string config = testing::slurp(dir + "/admission-configuration.yaml");
  CHECK(config.find("staticManifestsDir: " + dir + "/validating-policies\n") != std::string::npos);
  CHECK(config.find("MutatingAdmissionPolicy") == std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace render_test
}  // namespace gpuadmit
