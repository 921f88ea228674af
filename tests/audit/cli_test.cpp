// `gpuadmit audit` end to end: the binary on the hand-made export in each output, standard
// input, a bad document among good ones, and usage errors, with lint's exit codes (0 nothing
// deny-level, 1 a deny- or error-level finding, 2 an input or usage error).

#include <catch2/catch.hpp>

#include <string>

#include "engine/json.h"
#include "tests/audit/expected.h"
#include "tests/support/process.h"

namespace gpuadmit::audit {
namespace cli_test {
namespace {

using testing::run_command;

// The binary run in tests/audit/data, so that the export is named export.yaml.
std::string in_data(const std::string& args) {
  return std::string("cd '") + GPUADMIT_SOURCE_DIR + "/tests/audit/data' && '" + GPUADMIT_BINARY +
         "' audit " + args;
}

constexpr const char* kPod = R"(apiVersion: v1
kind: Pod
metadata: {name: a, namespace: web}
spec:
  containers:
  - name: c
    resources:
      limits: {nvidia.com/gpu: 1}
)";

TEST_CASE("audit cli: text, JSON and PolicyReports of the export", "[audit][cli]") {
  SECTION("text") {
    const auto r = run_command(in_data("--policy policy.yaml export.yaml"));
    CHECK(r.exit_code == 1);
    CHECK(r.out == expected::export_text("export.yaml"));
    CHECK(r.err.empty());
  }
  SECTION("json") {
    const auto r = run_command(in_data("--policy policy.yaml --output json export.yaml"));
    CHECK(r.exit_code == 1);
    const Json j = Json::parse(r.out);
    CHECK(j["summary"] == Json::parse(R"({"objects": 16, "reported": 7, "owned": 9, "deny": 4,
        "warn": 1, "error": 0, "wouldChange": 2, "inputErrors": 0, "exitCode": 1})"));
    CHECK(j["objects"].size() == 6);
  }
  SECTION("policyreport") {
    const auto r = run_command(in_data("--policy policy.yaml --output policyreport export.yaml"));
    CHECK(r.exit_code == 1);
    const Json j = Json::parse(r.out);
    REQUIRE(j["items"].size() == 2);
    for (const Json& report : j["items"]) {
      CHECK(report["apiVersion"] == "wgpolicyk8s.io/v1alpha2");
      CHECK(report["kind"] == "PolicyReport");
      CHECK(report["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuadmit");
      for (const Json& result : report["results"]) {
        CHECK(result["policy"] == "audit-test");  // the policy's metadata.name
        CHECK(result["timestamp"]["seconds"].get<int64_t>() > 1700000000);
      }
    }
    CHECK(j["items"][0]["metadata"]["namespace"] == "ml");
    CHECK(j["items"][1]["metadata"]["namespace"] == "web");
  }
}

TEST_CASE("audit cli: a bad document is reported and the rest still audited", "[audit][cli]") {
  const std::string input = std::string(kPod) + "---\nkind: [\n---\n" + kPod;
  const auto r = run_command(in_data("--policy policy.yaml -"), input);
  CHECK(r.exit_code == 2);
  const std::string gpu003 =
      std::string("deny GPU003 Pod web/a: ") + expected::kGpu003Web + " [spec]\n";
  // The unreadable document (lines 10-11) is named at the reader's error line; the pods around
  // it, at lines 1 and 12, are judged.
  REQUIRE(r.out.find('\n') != std::string::npos);
  CHECK(r.out.rfind("<stdin>:11: error PARSE: cannot read this document: ", 0) == 0);
  CHECK(r.out.substr(r.out.find('\n') + 1) ==
        "<stdin>:1: " + gpu003 + "<stdin>:12: " + gpu003 +
            "2 deny, 0 warn, 0 errors in 2 objects (0 more reported at their owner); 0 would be "
            "changed by the webhook; 1 input error\n");
}

TEST_CASE("audit cli: exit codes", "[audit][cli]") {
  struct Case {
    std::string args, input;
    int exit_code;
    std::string err;  // the start of standard error
  };
  const Case cases[] = {
      {"--policy policy.yaml -", kPod, 1, ""},
      // A non-GPU pod that already has the GPU-visibility variable: nothing to say.
      {"--policy policy.yaml -",
       "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ml\"},"
       "\"spec\":{\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":\"NVIDIA_VISIBLE_DEVICES\","
       "\"value\":\"void\"}]}]}}",
       0, ""},
      {"--policy policy.yaml", "", 2, "gpuadmit audit: no export given"},
      {"--policy policy.yaml --output sarif export.yaml", "", 2,
       "gpuadmit audit: --output must be text, json or policyreport, not \"sarif\""},
      {"--policy policy.yaml - -", "", 2,
       "gpuadmit audit: - (standard input) may be given only once"},
      {"--policy policy.yaml missing.yaml", "", 2, "gpuadmit audit: missing.yaml: no such file"},
      {"--policy nope.yaml export.yaml", "", 2, ""},
      {"--help", "", 0, ""},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const auto r = run_command(in_data(c.args), c.input);
    CHECK(r.exit_code == c.exit_code);
    CHECK(r.err.rfind(c.err, 0) == 0);
  }
}

}  // namespace
}  // namespace cli_test
}  // namespace gpuadmit::audit
