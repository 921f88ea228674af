// gpuadmit test: suite loading (every error with file:line), the runner's failure lines, the
// reports, and the command's exit codes.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "mutators/all_mutators.h"
#include "policies/loader.h"
#include "policytest/report.h"
#include "policytest/runner.h"
#include "policytest/suite.h"
#include "rules/all_rules.h"
#include "tests/support/process.h"

namespace gpuadmit::policytest {
namespace policytest_test {
namespace {

const std::string kGke = std::string(GPUADMIT_SOURCE_DIR) + "/policies/examples/gke.yaml";
const std::string kBinary = GPUADMIT_BINARY;

std::string header(const std::string& policy = kGke) {
  return "apiVersion: gpuadmit.io/v1alpha1\nkind: GPUPolicyTest\nmetadata: {name: s}\nspec:\n"
         "  policy: " +
         policy + "\n  cases:\n";
}

const std::string kPod =
    "    object:\n      apiVersion: v1\n      kind: Pod\n      metadata: {name: p}\n"
    "      spec: {containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: "
    "\"4\"}}}]}\n";

std::vector<std::string> load_errors(const std::string& text) {
  std::vector<std::string> out;
  for (const SuiteError& e : load_suite(text, "t.test.yaml").errors) out.push_back(e.to_string());
  return out;
}

TEST_CASE("policytest: bad suites are errors with file, line and field path") {
  struct Row {
    std::string text;
    std::vector<std::string> errors;
  };
  const std::vector<Row> rows = {
      // yaml-cpp 0.7's LoadAll loops forever on this (issue 11); the suite reader terminates.
      {",a: 1", {"t.test.yaml:1: did not find expected node content (found \",\")"}},
      {"", {"t.test.yaml: no document (the file is empty, holds only comments, or is not YAML)"}},
      {"a: [1\n", {"t.test.yaml:2: end of sequence flow not found"}},
      {header() + "  - name: c\n" + kPod + "    expect: {allowd: true}\n",
       {"t.test.yaml:13: spec.cases[0].expect.allowd: unknown field \"allowd\" (known: allowed, "
        "auditAnnotations, fields, messageContains, mutations, rules, unchanged, warnings)"}},
      {header() + "  - name: c\n" + kPod,
       {"t.test.yaml:7: spec.cases[0]: the case asserts nothing: add expect (allowed, rules, "
        "warnings, mutations, unchanged, fields, messageContains, auditAnnotations)"}},
      {header() + "  - name: c\n" + kPod + "    expect: {}\n",
       {"t.test.yaml:13: spec.cases[0].expect: the case asserts nothing: give at least one of "
        "allowed, rules, warnings, mutations, unchanged, fields, messageContains, "
        "auditAnnotations"}},
      {header() + "  - name: c\n    review: {}\n" + kPod + "    expect: {allowed: true}\n",
       {"t.test.yaml:7: spec.cases[0]: give exactly one of object, objectFile, review, "
        "reviewFile"}},
      {header() + "  - name: c\n" + kPod + "    expect: {allowed: true}\n  - name: c\n" + kPod +
           "    expect: {allowed: true}\n",
       {"t.test.yaml:14: spec.cases[1].name: duplicate case name \"c\""}},
      {header() + "  - name: c\n    operation: PATCH\n    endpoint: both\n" + kPod +
           "    expect: {allowed: \"true\", rules: GPU001}\n",
       {"t.test.yaml:8: spec.cases[0].operation: must be CREATE, UPDATE, DELETE or CONNECT, got "
        "\"PATCH\"",
        "t.test.yaml:9: spec.cases[0].endpoint: must be mutate or validate, got \"both\"",
        "t.test.yaml:15: spec.cases[0].expect.allowed: must be true or false",
        "t.test.yaml:15: spec.cases[0].expect.rules: must be a list of strings (empty: none)"}},
      {"apiVersion: v1\nkind: GPUPolicy\nspec: {policy: p.yaml, cases: []}\n",
       {"t.test.yaml:1: apiVersion: must be \"gpuadmit.io/v1alpha1\", got \"v1\"",
        "t.test.yaml:2: kind: must be \"GPUPolicyTest\", got \"GPUPolicy\"",
        "t.test.yaml: metadata: is required (metadata.name names the suite in reports)",
        "t.test.yaml:3: spec.cases: must be a non-empty list of cases"}},
      {header() + "  - name: c\n" + kPod + "    expect: {allowed: true}\n---\na: 1\n",
       {"t.test.yaml:15: a second document starts here; the file must hold exactly one"}},
      {header() + "  - name: c\n    objectFile: missing.yaml\n    expect: {allowed: true}\n",
       {"t.test.yaml:8: spec.cases[0].objectFile: cannot read missing.yaml: No such file or "
        "directory"}},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK(load_errors(row.text) == row.errors);
  }
}

TEST_CASE("policytest: a good suite loads with each case's line and its review") {
  const SuiteLoadResult r =
      load_suite(header("../gke.yaml") + "  - name: c\n    namespace: train-x\n" + kPod +
                     "    expect: {allowed: true}\n",
                 "dir/t.test.yaml");
  REQUIRE(r.errors.empty());
  const Suite& s = *r.suite;
  CHECK(s.name == "s");
  CHECK(s.policy_file == "gke.yaml");
  REQUIRE(s.cases.size() == 1);
  CHECK(s.cases[0].line == 7);
  CHECK(
      s.cases[0].review.dump() ==
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"gpuadmit-test","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"train-x","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"nvidia.com/gpu":"4"}}}]}}}})");
}

std::vector<std::string> run_one(const std::string& ns, const std::string& expect) {
  const SuiteLoadResult r = load_suite(
      header() + "  - name: c\n    namespace: " + ns + "\n" + kPod + "    expect:\n" + expect,
      "t.test.yaml");
  std::string errors;
  for (const SuiteError& e : r.errors) errors += e.to_string() + "\n";
  INFO(errors);
  REQUIRE(r.errors.empty());
  const CompiledLoadResult policy = load_compiled_policy(kGke);
  REQUIRE(policy.policy);
  const Pipeline pipeline(default_mutators(), default_rules());
  return run_case(r.suite->cases[0], pipeline, *policy.policy).failures;
}

TEST_CASE("policytest: each expectation not met is one exact line") {
  struct Row {
    std::string ns, expect;
    std::vector<std::string> failures;
  };
  const std::vector<Row> rows = {
      {"train-x",
       "      allowed: true\n      rules: []\n      mutations: [class, defaults, "
       "node-affinity, priority, queue, requests-equal-limits, tolerations]\n"
       "      auditAnnotations: {class: a100}\n      fields:\n"
       "        spec.containers[0].resources.requests.cpu: \"40\"\n"
       "        spec.nodeSelector: null\n        spec.tolerations[0]: {effect: NoSchedule, key: "
       "nvidia.com/gpu, value: present, operator: Equal}\n",
       {}},
      {"web",
       "      allowed: true\n      rules: [GPU005]\n      warnings: [GPU014]\n"
       "      unchanged: false\n      messageContains: [quota]\n",
       {"allowed: got false, want true (gpuadmit denied Pod web/p: GPU003: tenant everyone-else "
        "may not use GPUs (its allowedClasses is empty); remove the GPU requests, or ask the "
        "platform team to allow a class)",
        "rules: got [GPU003], want [GPU005]", "warnings: got [], want [GPU014]",
        "unchanged: got no patch, want one",
        "messageContains: \"quota\" is in neither the denial message nor a warning"}},
      {"train-x",
       "      unchanged: true\n      mutations: []\n      auditAnnotations: {class: h100, foo: "
       "bar}\n"
       "      fields:\n        spec.containers[0].resources.requests.cpu: 40\n"
       "        spec.priorityClassName: null\n        spec.containers[3].name: c\n",
       {"mutations: got [class, defaults, node-affinity, priority, queue, requests-equal-limits, "
        "tolerations], want []",
        "unchanged: got a patch of 8 operations, want none",
        "fields: spec.containers[0].resources.requests.cpu: got \"40\", want 40",
        "fields: spec.priorityClassName: got \"gpu-training\", want absent",
        "fields: spec.containers[3].name: absent, want \"c\"",
        "auditAnnotations.class: got \"a100\", want \"h100\"",
        "auditAnnotations.foo: absent, want \"bar\""}},
  };
  for (const Row& row : rows) {
    INFO(row.expect);
    CHECK(run_one(row.ns, row.expect) == row.failures);
  }
}

TEST_CASE("policytest: find_path and base64_decode") {
  const Json object = Json::parse(R"({"a":{"b.c":[{"d":1}]}})");
  CHECK(find_path(object, "a[\"b.c\"][0].d")->dump() == "1");
  CHECK(find_path(object, "a[\"b.c\"][1].d") == nullptr);
  CHECK(find_path(object, "a[\"b.c\"].x") == nullptr);
  CHECK(find_path(object, "a.b") == nullptr);
  CHECK(base64_decode("W3sib3AiOiJhZGQifV0=") == std::optional<std::string>(R"([{"op":"add"}])"));
  CHECK(base64_decode("YQ==") == std::optional<std::string>("a"));
  CHECK(base64_decode("YWI=") == std::optional<std::string>("ab"));
  CHECK(base64_decode("YWJj") == std::optional<std::string>("abc"));
  CHECK(base64_decode("YQ=") == std::nullopt);
  CHECK(base64_decode("Y=Q=") == std::nullopt);
  CHECK(base64_decode("YQ*=") == std::nullopt);
}

std::vector<SuiteOutcome> sample_outcomes() {
  SuiteOutcome good{"a.test.yaml", "a", {}, {{"one", 7, {}}, {"two", 12, {}}}};
  SuiteOutcome failing{
      "b.test.yaml",
      "b",
      {},
      {{"x", 9, {}},
       {"y <z>", 20, {"allowed: got true, want false", "rules: got [], want [GPU003]"}}}};
  SuiteOutcome bad{"c.test.yaml", "c.test.yaml", {{"c.test.yaml", 3, "spec", "is required"}}, {}};
  return {good, failing, bad};
}

TEST_CASE("policytest: go-test text and JUnit XML") {
  const std::vector<SuiteOutcome> o = sample_outcomes();
  CHECK(suite_text(o[0], false) == "ok  \ta.test.yaml\t2 cases\n");
  CHECK(suite_text(o[0], true) ==
        "=== RUN   a/one\n--- PASS: a/one\n=== RUN   a/two\n--- PASS: a/two\n"
        "ok  \ta.test.yaml\t2 cases\n");
  CHECK(suite_text(o[1], false) ==
        "--- FAIL: b/y <z> (b.test.yaml:20)\n    allowed: got true, want false\n"
        "    rules: got [], want [GPU003]\nFAIL\tb.test.yaml\t1 of 2 cases failed\n");
  CHECK(suite_text(o[2], false) == "FAIL\tc.test.yaml\t[bad suite]\n");
  CHECK(summary_text({o[0]}) == "ok\t1 suite, 2 cases\n");
  CHECK(summary_text(o) == "FAIL\t1 of 4 cases failed, 1 bad suite\n");
  CHECK(junit_xml(o) == R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="gpuadmit test" tests="5" failures="1" errors="1">
  <testsuite name="a" file="a.test.yaml" tests="2" failures="0" errors="0">
    <testcase classname="a" name="one" file="a.test.yaml" line="7"/>
    <testcase classname="a" name="two" file="a.test.yaml" line="12"/>
  </testsuite>
  <testsuite name="b" file="b.test.yaml" tests="2" failures="1" errors="0">
    <testcase classname="b" name="x" file="b.test.yaml" line="9"/>
    <testcase classname="b" name="y &lt;z&gt;" file="b.test.yaml" line="20">
      <failure message="allowed: got true, want false">allowed: got true, want false
rules: got [], want [GPU003]
</failure>
    </testcase>
  </testsuite>
  <testsuite name="c.test.yaml" file="c.test.yaml" tests="1" failures="0" errors="1">
    <testcase classname="c.test.yaml" name="(suite)" file="c.test.yaml">
      <error message="c.test.yaml:3: spec: is required">c.test.yaml:3: spec: is required
</error>
    </testcase>
  </testsuite>
</testsuites>
)xml");
}

// A temporary folder with the given files.
std::string write_files(const std::vector<std::pair<std::string, std::string>>& files) {
  char dir_template[] = "/tmp/gpuadmit-policytest-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  for (const auto& [name, text] : files) std::ofstream(dir + "/" + name) << text;
  return dir;
}

TEST_CASE("policytest: gpuadmit test exit codes") {
  const std::string passing =
      header() + "  - name: ok\n    namespace: train-x\n" + kPod + "    expect: {allowed: true}\n";
  const std::string failing = header() + "  - name: nope\n    namespace: train-x\n" + kPod +
                              "    expect: {allowed: false}\n";
  const std::string dir = write_files(
      {{"pass.test.yaml", passing}, {"fail.test.yaml", failing}, {"comma.test.yaml", ",a: 1"}});

  auto r = testing::run_command(kBinary + " test " + dir + "/pass.test.yaml");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "ok  \t" + dir + "/pass.test.yaml\t1 case\nok\t1 suite, 1 case\n");

  r = testing::run_command(kBinary + " test " + dir + "/pass.test.yaml " + dir + "/fail.test.yaml");
  CHECK(r.exit_code == 1);
  CHECK(r.out == "ok  \t" + dir + "/pass.test.yaml\t1 case\n--- FAIL: s/nope (" + dir +
                     "/fail.test.yaml:7)\n    allowed: got true, want false\nFAIL\t" + dir +
                     "/fail.test.yaml\t1 of 1 case failed\nFAIL\t1 of 2 cases failed\n");

  // `,a: 1` made yaml-cpp 0.7's LoadAll loop forever (issue 11): here it is a bad suite, exit 2.
  r = testing::run_command("timeout 20 " + kBinary + " test " + dir + "/comma.test.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err == dir + "/comma.test.yaml:1: did not find expected node content (found \",\")\n");

  // A folder: every *.test.yaml in it, sorted; the bad suite wins over the failed case.
  r = testing::run_command(kBinary + " test " + dir);
  CHECK(r.exit_code == 2);
  CHECK(r.out.substr(r.out.rfind("FAIL\t1 of")) == "FAIL\t1 of 2 cases failed, 1 bad suite\n");

  r = testing::run_command(kBinary + " test --output junit " + dir + "/fail.test.yaml");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("<failure message=\"allowed: got true, want false\">") != std::string::npos);

  r = testing::run_command(kBinary + " test " + dir + "/nothing-here");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "gpuadmit test: " + dir + "/nothing-here: no such file or folder\n");
  r = testing::run_command(kBinary + " test");
  CHECK(r.exit_code == 2);
  const std::string policy_error = header(dir + "/pass.test.yaml") +
                                   "  - name: ok\n    namespace: train-x\n" + kPod +
                                   "    expect: {allowed: true}\n";
  const std::string bad_policy_dir = write_files({{"p.test.yaml", policy_error}});
  r = testing::run_command(kBinary + " test " + bad_policy_dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind(bad_policy_dir + "/p.test.yaml: spec.policy: ", 0) == 0);
  std::system(("rm -rf " + dir + " " + bad_policy_dir).c_str());
}

}  // namespace
}  // namespace policytest_test
}  // namespace gpuadmit::policytest
